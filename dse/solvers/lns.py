"""Large-neighbourhood search with exact repairs: CP-SAT re-solves windows of one schedule.

For one objective (the makespan of a ``dag`` problem). The incumbent is the best seed (heuristics,
baselines, ``resume``) after the memetic critical-path local search has had ``warm_share`` of the
time (:mod:`dse.solvers.memetic`). Then, until the time runs out, one window at a time:

* a window of the incumbent's schedule is drawn: a random interval ``width`` of the makespan wide;
  the tasks that run in it are *free*, every other task keeps its device (the family's
  ``pinned(genome, free)`` problem; all start times stay free);
* CP-SAT builds and solves that problem within ``step_seconds`` of wall time (a window whose model
  does not build in time, or is too large, counts as unfinished; all cores by default: on the
  TF paper's graphs one worker rarely improves a window within seconds, and CP-SAT's deterministic
  time ran nine times past the wall clock on a conv-graph window), hinted with the incumbent and bounded by its makespan;
* a better schedule becomes the incumbent. A window CP-SAT proves optimal widens the next ones by a
  quarter (up to the whole schedule); one it cannot finish narrows them by a fifth.

Windows are exact where single-task moves are blind: a run of tasks that only pays off when it moves
and reorders together. A window that frees every task is the whole problem: once CP-SAT proves one
optimal, so is the incumbent, and the search ends there (status ``optimal``, the point proven; on
small graphs, within the first seconds). Otherwise nothing is proven about the whole problem: the
result is the incumbent (none when no feasible schedule was found, status ``time_limit``). A stop request (Ctrl-C) ends the
current window's search at once (a model being built finishes first, within the window's
seconds) and keeps the best schedule so far. The same seed draws the same windows;
what a window finds within its seconds can differ between runs, as with the time-limited searches.
The windows are :mod:`dse.solvers.lns_windows`'; with a Dask client the search runs as islands on its
workers (:mod:`dse.solvers.lns_islands`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.base import MappingProblem
from dse.pareto import OPTIMAL, TIME_LIMIT, ParetoSet, SolveStats
from dse.solvers.common import result
from dse.solvers.context import CLIENT, RESUME, SolveContext
from dse.solvers.lns_islands import LnsOptions, solve_lns_islands
from dse.solvers.lns_windows import (
    LAST_WINDOW_S,
    MIN_WIDTH,
    START_WIDTH,
    repair_window,
    search_windows,
)
from dse.solvers.local_search import local_search, local_search_unsupported
from dse.solvers.registry import Solver, best_seed, collect_seeds, register_solver

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

#: The windows' public names stay importable from here, where they were first defined.
__all__ = ["LAST_WINDOW_S", "MIN_WIDTH", "START_WIDTH", "LnsOptions", "repair_window", "run_lns", "solve_lns"]


def solve_lns(problem: MappingProblem, ctx: SolveContext, options: LnsOptions) -> ParetoSet:
    """The module docstring's search from the best of the heuristics, the baselines and ``ctx.resume``;
    returns the incumbent: status ``optimal`` (proven) once a window of every task is solved to optimality,
    else ``time_limit`` or ``interrupted`` (nothing proven). ``options.warm_share``
    of the time limit goes to the memetic local search first (in a context derived from ``ctx``)."""
    dag: DagProblem = problem  # type: ignore[assignment]
    rng = np.random.default_rng(ctx.seed)
    first = best_seed(problem, [np.asarray(g, dtype=np.int64) for g in ctx.resume] + collect_seeds(problem))
    if first is None:  # no seed to improve (a dag problem always has its single-device baselines)
        return result(problem, np.zeros((0, problem.n_genes), dtype=np.int64), "lns", TIME_LIMIT,
                      SolveStats(wall_s=ctx.elapsed(), message="no seed to start from"))
    warm = ctx.derived(deadline=ctx.start + ctx.time_limit * options.warm_share)
    incumbent, evaluations, steps = local_search(dag, first, warm, rng, 48)
    workers = options.workers or min(8, os.cpu_count() or 1)
    out = search_windows(dag, incumbent, rng, START_WIDTH, options.step_seconds, workers, ctx.token,
                         go_on=lambda _: ctx.stop_status() is None, remaining=ctx.remaining,
                         report=ctx.progress.update)
    stats = SolveStats(wall_s=ctx.elapsed(), evaluations=evaluations,
                       message=f"{steps} local-search steps, {out.windows} windows re-solved, {out.improved} improved")
    feasible = bool(problem.evaluate(out.incumbent[None, :]).feasible[0])
    genomes = out.incumbent[None, :] if feasible else np.zeros((0, problem.n_genes), dtype=np.int64)
    return result(problem, genomes, "lns", OPTIMAL if out.whole else ctx.cut_status(), stats, proven=out.whole)


def run_lns(problem: MappingProblem, ctx: SolveContext, options: LnsOptions) -> ParetoSet:
    """The ``lns`` solver: in this process (:func:`solve_lns`), or with a Dask ``ctx.client`` as islands on its
    workers (:func:`~dse.solvers.lns_islands.solve_lns_islands`)."""
    if ctx.client is not None:
        return solve_lns_islands(problem, ctx, options, ctx.client)
    return solve_lns(problem, ctx, options)


def _supports(problem: MappingProblem) -> str | None:
    reason = local_search_unsupported(problem)
    if reason is not None:
        return reason
    if len(problem.objectives) != 1:
        return "the large-neighbourhood search optimizes one objective (use memetic or nsga2 for a front)"
    if not callable(getattr(problem, "pinned", None)) or problem.exact_unsupported() is not None:
        return "the large-neighbourhood search needs the family's CP-SAT model and pinned(genome, free) windows"
    return None


register_solver(Solver(
    "lns", run_lns, options=LnsOptions, inputs=frozenset({RESUME, CLIENT}), supports=_supports, in_all=False,
    imports=("ortools.sat.python.cp_model",),
    description="dag, one objective: memetic local search, then CP-SAT re-solves windows of the schedule; "
                "nothing proven",
))
