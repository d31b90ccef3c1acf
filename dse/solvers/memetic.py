"""Memetic search for the ``dag`` family: critical-path local search around the best seeds, then NSGA-II.

The local search (:mod:`dse.solvers.local_search`: critical-path moves evaluated a batch at a
time, kicks and restarts) improves the makespan of the best seeds; the schedules found seed
NSGA-II (:mod:`dse.solvers.evolution`), which spends the rest of the time on the whole front
(with one objective only the local search runs). Same seed, same result, unless the time limit
cuts it. With a Dask client it runs as islands on the client's workers
(:mod:`dse.solvers.memetic_islands`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.base import MappingProblem
from dse.pareto import FEASIBLE, STOPPED, ParetoSet, SolveStats, nondominated
from dse.solvers.common import result
from dse.solvers.context import CLIENT, RESUME, SolveContext
from dse.solvers.evolution import solve_nsga2
from dse.solvers.local_search import (
    CriticalPath,
    critical_path,
    group_leaders,
    local_search,
    local_search_unsupported,
    neighbours,
    scores,
)
from dse.solvers.memetic_islands import MemeticOptions, ranked_starts, solve_memetic_islands
from dse.solvers.registry import Solver, collect_seeds, register_solver

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

#: The local search's public names stay importable from here, where they were first defined.
__all__ = ["CriticalPath", "MemeticOptions", "critical_path", "group_leaders", "local_search", "neighbours",
           "run_memetic", "scores", "solve_memetic"]


def solve_memetic(problem: MappingProblem, ctx: SolveContext, options: MemeticOptions) -> ParetoSet:
    """Critical-path local search from the ``options.starts`` best seeds (heuristics, baselines,
    ``ctx.resume``), then NSGA-II seeded with everything found; returns the nondominated union (nothing
    proven).

    ``options.local_share``: fraction of the time limit for the local search (default: all of it with one
    objective, half with more); ``batch``, ``kick_tasks`` and ``restart_steps``: see :func:`local_search`.
    NSGA-II (:func:`dse.solvers.nsga2.solve_nsga2`) runs in a context derived from ``ctx`` with NSGA-II's
    settings of ``options``.
    """
    dag: DagProblem = problem  # type: ignore[assignment]
    rng = np.random.default_rng(ctx.seed)
    single = len(problem.objectives) == 1
    pool = [np.asarray(g, dtype=np.int64) for g in ctx.resume] + collect_seeds(problem)
    found: list[np.ndarray] = list(pool)
    evaluations, steps = 0, 0
    starts = ranked_starts(problem, pool, options.starts)
    budget = ctx.time_limit * options.share_of_time(len(problem.objectives))
    for j, start in enumerate(starts):
        phase = ctx.derived(deadline=ctx.start + budget * (j + 1) / len(starts))
        best, spent, taken = local_search(dag, start, phase, rng, options.batch, options.kick_tasks,
                                          options.restart_steps)
        found.append(best)
        evaluations += spent
        steps += taken
    stop = ctx.stop_status()
    status = stop or FEASIBLE
    generations = 0
    if not single and stop is None:
        front = solve_nsga2(problem, ctx.derived(resume=found), options)
        found += [np.array(p.genome) for p in front.points]
        evaluations += front.stats.evaluations
        generations = front.stats.generations
        status = front.status if front.status in STOPPED else status
    X = np.array(found, dtype=np.int64).reshape(-1, problem.n_genes)
    genomes = np.zeros((0, problem.n_genes), dtype=np.int64)
    if len(X):
        ev = problem.evaluate(X)
        X, F = X[ev.feasible], ev.F[ev.feasible]
        genomes = X[nondominated(F)]
    stats = SolveStats(wall_s=ctx.elapsed(), evaluations=evaluations, generations=generations,
                       message=f"{steps} local-search steps")
    return result(problem, genomes, "memetic", status, stats, proven=False)


_supports = local_search_unsupported


def run_memetic(problem: MappingProblem, ctx: SolveContext, options: MemeticOptions) -> ParetoSet:
    """The ``memetic`` solver: in this process (:func:`solve_memetic`), or with a Dask ``ctx.client`` as islands
    on its workers (:func:`~dse.solvers.memetic_islands.solve_memetic_islands`)."""
    if ctx.client is not None:
        return solve_memetic_islands(problem, ctx, options, ctx.client)
    return solve_memetic(problem, ctx, options)


register_solver(Solver(
    "memetic", run_memetic, options=MemeticOptions, inputs=frozenset({RESUME, CLIENT}), supports=_supports, in_all=False,
    description="dag: critical-path local search from the heuristics' schedules, then NSGA-II; nothing proven",
))
