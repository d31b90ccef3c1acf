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
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from dse.mapping.base import MappingProblem
from dse.mapping.cpsat_common import ModelBuildTimeout
from dse.pareto import OPTIMAL, TIME_LIMIT, ParetoSet, SolveStats
from dse.solvers.common import result
from dse.solvers.context import RESUME, SolveContext
from dse.solvers.local_search import local_search, local_search_unsupported
from dse.solvers.registry import Solver, SolverOptions, best_seed, collect_seeds, register_solver
from dse.util.interrupt import StopToken, run_cpsat

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

#: Narrowest and starting window, as shares of the incumbent's makespan.
MIN_WIDTH = 0.05
START_WIDTH = 0.25
#: No window starts with fewer seconds left.
LAST_WINDOW_S = 0.05


def repair_window(problem: DagProblem, incumbent: np.ndarray, free: np.ndarray, step_seconds: float,
                  wall_seconds: float, seed: int, workers: int, token: StopToken) -> tuple[np.ndarray | None, bool]:
    """CP-SAT on ``problem`` with the tasks outside ``free`` on their ``incumbent`` devices, built and
    solved within ``step_seconds`` and never past ``wall_seconds``: ``(genome or None, proven)``, the
    genome only when it is better than the incumbent (feasible where the incumbent is not, else shorter)."""
    from ortools.sat.python import cp_model

    window = problem.pinned(incumbent, free)
    try:  # the build counts against the window's seconds (a large window may not fit them)
        form = window.cpsat(seeds=[incumbent], deadline=time.monotonic() + min(step_seconds, wall_seconds))
    except ModelBuildTimeout:
        return None, False
    form.model.minimize(form.objective_vars[0])
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.max_time_in_seconds = max(0.01, min(step_seconds, wall_seconds))
    params.random_seed = seed
    params.num_workers = workers
    status = run_cpsat(solver, form.model, token)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, False
    found = form.to_genome(solver)
    ev = problem.evaluate(np.stack([found, incumbent]))
    better = bool(ev.feasible[0] and (not ev.feasible[1] or ev.F[0, 0] < ev.F[1, 0]))  # feasibility first
    return (found if better else None), status == cp_model.OPTIMAL


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
    windows = improved = 0
    whole = False
    width = START_WIDTH
    warm = ctx.derived(deadline=ctx.start + ctx.time_limit * options.warm_share)
    incumbent, evaluations, steps = local_search(dag, first, warm, rng, 48)
    best = float(problem.evaluate(incumbent[None, :]).F[0, 0])
    workers = options.workers or min(8, os.cpu_count() or 1)
    while ctx.stop_status() is None and ctx.remaining() > LAST_WINDOW_S:
        schedule = dag.schedule(incumbent, insertion=False)
        span = max(int(schedule.makespan), 1)
        low = rng.uniform(0.0, max(1.0 - width, 0.0)) * span
        free = (schedule.finish >= low) & (schedule.start <= low + width * span)
        found, proven = repair_window(dag, incumbent, free, options.step_seconds, ctx.remaining(),
                                      int(rng.integers(1 << 30)), workers, ctx.token)
        windows += 1
        if found is not None:
            incumbent, improved = found, improved + 1
            best = float(problem.evaluate(incumbent[None, :]).F[0, 0])
        ctx.progress.update(f"window {windows} ({int(free.sum())} tasks free), makespan {int(best):,}")
        if proven and free.all():  # the whole problem, solved to optimality: nothing left to search
            whole = True
            break
        width = min(1.0, width * 1.25) if proven else max(MIN_WIDTH, width * 0.8)
    stats = SolveStats(wall_s=ctx.elapsed(), evaluations=evaluations,
                       message=f"{steps} local-search steps, {windows} windows re-solved, {improved} improved")
    feasible = bool(problem.evaluate(incumbent[None, :]).feasible[0])
    genomes = incumbent[None, :] if feasible else np.zeros((0, problem.n_genes), dtype=np.int64)
    return result(problem, genomes, "lns", OPTIMAL if whole else ctx.cut_status(), stats, proven=whole)


def _supports(problem: MappingProblem) -> str | None:
    reason = local_search_unsupported(problem)
    if reason is not None:
        return reason
    if len(problem.objectives) != 1:
        return "the large-neighbourhood search optimizes one objective (use memetic or nsga2 for a front)"
    if not callable(getattr(problem, "pinned", None)) or problem.exact_unsupported() is not None:
        return "the large-neighbourhood search needs the family's CP-SAT model and pinned(genome, free) windows"
    return None


class LnsOptions(SolverOptions):
    """The large-neighbourhood search's settings."""

    warm_share: float = Field(default=0.5, ge=0, lt=1, description="share of the time limit for the memetic "
                              "local search first")
    step_seconds: float = Field(default=10.0, gt=0, allow_inf_nan=False,
                                description="the most seconds one window builds and solves")
    workers: int | None = Field(default=None, ge=1, description="CP-SAT's search workers (null: one per core, at most 8)")


register_solver(Solver(
    "lns", solve_lns, options=LnsOptions, inputs=frozenset({RESUME}), supports=_supports, in_all=False,
    imports=("ortools.sat.python.cp_model",),
    description="dag, one objective: memetic local search, then CP-SAT re-solves windows of the schedule; "
                "nothing proven",
))
