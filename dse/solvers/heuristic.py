"""One classic heuristic as a solver: ``solve(problem, "heuristic:heft")``.

The front holds the single mapping that the problem family's heuristic
provider (:class:`~dse.solvers.registry.HeuristicProvider`) returns. Its
objectives are those of the problem's own evaluation, so they are directly
comparable with every other solver's; the stats message holds the provider's
account (for the dag family: the heuristic's own makespan and whether the
evaluated one differs).
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager

import numpy as np
from pydantic import Field

from dse.mapping.base import MappingProblem
from dse.pareto import FEASIBLE, UNKNOWN, ParetoSet, SolveStats
from dse.solvers.common import baseline_points, result
from dse.solvers.context import SolveContext
from dse.solvers.registry import Solver, SolverOptions, heuristics_for, register_solver
from dse.util.interrupt import Cut
from dse.util.jit import one_off


class HeuristicOptions(SolverOptions):
    """The heuristic to run: set by the solver's name (``heuristic:NAME``), never by a spec's options."""

    name: str = Field(description="the heuristic, one of the family's (heuristic:NAME)")


def solve_heuristic(problem: MappingProblem, ctx: SolveContext, options: HeuristicOptions) -> ParetoSet:
    """Run heuristic ``options.name`` of the problem's family (deterministic and fast: ``ctx.seed`` plays
    no part; the stopping rule is asked before it runs and in its loops: a run stopped there returns no
    mapping, with that status).

    Raises ``ValueError`` when the family has no heuristics or none of that name.
    """
    provider = heuristics_for(problem)
    if provider is None:
        raise ValueError(f"the {problem.family} family has no heuristics")
    solver = f"heuristic:{options.name}"
    stop = ctx.stop_status()
    if stop is not None:
        return result(problem, np.zeros((0, problem.n_genes), dtype=np.int64), solver, stop,
                      SolveStats(wall_s=ctx.elapsed(), message="stopped before the heuristic ran"))
    start = time.monotonic()
    with small_one_off(problem):
        try:
            genome, message = provider.run(problem, options.name)
        except Cut as exc:  # the heuristic checks the stopping rule in its loops
            return result(problem, np.zeros((0, problem.n_genes), dtype=np.int64), solver, ctx.cut_status(),
                          SolveStats(wall_s=ctx.elapsed(), message=f"the heuristic was cut short: {exc}"))
        baselines, points = baseline_points(problem, genome[None, :], solver)  # one evaluation: mapping, baselines
    feasible = points[0].feasible
    if not feasible:
        message += "; the mapping violates a constraint"
    stats = SolveStats(wall_s=time.monotonic() - start, evaluations=1, message=message)
    # a violating mapping is kept (marked infeasible) but the front then holds no feasible point: status unknown
    status = FEASIBLE if feasible else UNKNOWN
    return result(problem, genome[None, :], solver, status, stats, proven=False, points=points, baselines=baselines)


def small_one_off(problem: MappingProblem) -> AbstractContextManager[None]:
    """:func:`dse.util.jit.one_off` for a run of one heuristic on ``problem`` and the evaluation, report
    and trace of its mapping: a small problem's kernels run interpreted in a process without numba."""
    tables = problem.tables
    return one_off(tables.time.size + len(tables.edges) * tables.time.shape[1])


def _supports(problem: MappingProblem) -> str | None:
    return None if heuristics_for(problem) is not None else f"the {problem.family} family has no heuristics"


register_solver(Solver(
    "heuristic", solve_heuristic, options=HeuristicOptions, supports=_supports,
    description="one classic heuristic of the problem's family, as heuristic:NAME",
))
