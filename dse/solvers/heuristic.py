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

from dse.mapping.base import MappingProblem
from dse.pareto import ParetoSet, SolveStats
from dse.solvers.common import baseline_points, result
from dse.solvers.registry import Solver, heuristics_for, register_solver
from dse.util.progress import Progress


def solve_heuristic(problem: MappingProblem, name: str, time_limit: float | None = None, seed: int = 0,
                    progress: Progress | None = None) -> ParetoSet:
    """Run heuristic ``name`` of the problem's family; ``time_limit``, ``seed`` and ``progress`` are accepted
    for the common signature and unused (the heuristics are deterministic and fast).

    Raises ``ValueError`` when the family has no heuristics or none of that name.
    """
    del time_limit, seed, progress
    provider = heuristics_for(problem)
    if provider is None:
        raise ValueError(f"the {problem.family} family has no heuristics")
    start = time.monotonic()
    genome, message = provider.run(problem, name)
    solver = f"heuristic:{name}"
    baselines, points = baseline_points(problem, genome[None, :], solver)  # one evaluation: mapping and baselines
    feasible = points[0].feasible
    if not feasible:
        message += "; the mapping violates a constraint"
    stats = SolveStats(wall_s=time.monotonic() - start, evaluations=1, message=message)
    # a violating mapping is kept (marked infeasible) but the front then holds no feasible point: status unknown
    status = "feasible" if feasible else "unknown"
    return result(problem, genome[None, :], solver, status, stats, proven=False, points=points, baselines=baselines)


def _supports(problem: MappingProblem) -> str | None:
    return None if heuristics_for(problem) is not None else f"the {problem.family} family has no heuristics"


register_solver(Solver(
    "heuristic", solve_heuristic, supports=_supports,
    description="one classic heuristic of the problem's family, as heuristic:NAME",
))
