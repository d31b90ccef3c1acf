"""One objective with CP-SAT: minimize it once, report the proven lower bound and the gap; CP-SAT's settings
(:class:`CpsatOptions`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from pydantic import Field

from dse.mapping.base import MappingProblem
from dse.mapping.cpsat_common import ModelBuildTimeout
from dse.pareto import INFEASIBLE, OPTIMAL, ParetoSet, SolveStats
from dse.solvers.certificate import single_certificate
from dse.solvers.common import STOPPED_BEFORE_BUILD, build_timed_out, result, unsearched
from dse.solvers.context import SolveContext
from dse.solvers.registry import SolverOptions, collect_seeds
from dse.util.interrupt import run_cpsat


def default_workers() -> int:
    """8 search workers: CP-SAT's portfolio (LNS, core-based, fixed search) pays off even on 2 cores."""
    return 8


# here, below dse.solvers.cpsat (which exports it), since the single-objective run takes them too
class CpsatOptions(SolverOptions):
    """CP-SAT's settings (``solver.options.cpsat`` or ``dse.solve(..., **options)``)."""

    workers: int | None = Field(default=None, ge=1, description="CP-SAT's search workers (null: 8, its portfolio, whatever the cores)")
    deterministic: bool = Field(default=False, description="a run that repeats exactly, at some speed")
    hints: bool = Field(default=True, description="hint the search with the family's heuristic mappings")
    region_time: float | None = Field(default=None, gt=0, le=30 * 24 * 3600,
                                      description="on a Dask cluster: each region's first time budget in "
                                      "seconds, doubled when it runs out (null: the time left times the "
                                      "threads, shared out over the open boxes as the serial search shares it)")
    race: bool = Field(default=True, description="on a Dask cluster: while worker threads are left free "
                       "once every open box is searched from each end, race duplicates of those searches "
                       "with other CP-SAT seeds (the first result wins; the other copies are stopped)")
    warm_start_s: float = Field(default=0, ge=0, le=30 * 24 * 3600,
                                description="two or more objectives: seconds of NSGA-II (at most half the "
                                "time limit, the same seed) run first; its front joins the resumed points, "
                                "which split the search region before any box is searched. 0: none. On "
                                "large models (ResNet-50 with DVFS: 1,454 variables) the boxes between a "
                                "good front's points are proven where whole-front searches never end")
    chain_s: float = Field(default=0.5, ge=0, le=3600,
                           description="on a Dask cluster: seconds a region's task goes on searching the boxes "
                           "its own points split off (in the serial order) before it returns them all; 0: one "
                           "box per task. Boxes of a few ms to tens of ms each cost less than a task's "
                           "round trip through the driver and Dask's scheduler")


def solve_cpsat_single(problem: MappingProblem, ctx: SolveContext, options: CpsatOptions) -> ParetoSet:
    """Minimize the first objective; status ``optimal`` (proven), ``time_limit``, ``interrupted`` or ``infeasible``.

    ``stats.best_bound`` holds the proven lower bound; ``stats.message`` the gap. ``ctx.resume`` genomes (a
    previous run's front) join the heuristic seeds: the best feasible one hints the search and bounds
    the horizon, and a run cut short returns it when CP-SAT found nothing better (never worse than its
    seeds). ``options.deterministic`` plays no part (one solve).
    """
    seeds = [*ctx.resume, *(collect_seeds(problem) if options.hints else [])]
    stop = ctx.stop_status()
    if stop is not None:
        best = _better(problem, None, seeds)
        return unsearched(problem, ctx, stop, STOPPED_BEFORE_BUILD, [] if best is None else [best])
    try:
        form = problem.cpsat(seeds=seeds, deadline=ctx.deadline)
    except ModelBuildTimeout as exc:
        best = _better(problem, None, seeds)
        return build_timed_out(problem, exc, ctx, [] if best is None else [best])
    # imported once there is a model: a model too large to build is refused without OR-Tools
    from ortools.sat.python import cp_model

    objective = form.objective_vars[0]
    form.model.minimize(objective)
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.max_time_in_seconds = max(0.01, ctx.remaining())
    params.random_seed = int(ctx.seed)
    params.num_workers = options.workers or default_workers()
    status = run_cpsat(solver, form.model, ctx.token)
    wall = ctx.elapsed()
    stopped = ctx.cut_status()
    if status == cp_model.INFEASIBLE:
        stats = SolveStats(wall_s=wall, solver_calls=1, message="INFEASIBLE; " + "; ".join(form.notes))
        return result(problem, np.zeros((0, problem.n_genes), dtype=np.int64), "cpsat", INFEASIBLE, stats, exact=True)
    found = form.to_genome(solver) if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None
    if status != cp_model.OPTIMAL:  # cut short: never worse than the best seed it was handed
        found = _better(problem, found, seeds)
    if found is None:
        stats = SolveStats(wall_s=wall, solver_calls=1, message=solver.status_name(status) + "; "
                           + "; ".join(form.notes))
        return result(problem, np.zeros((0, problem.n_genes), dtype=np.int64), "cpsat", stopped, stats, exact=True)
    value = float(problem.evaluate(found[None, :]).F[0, 0])
    bound = float(np.nanmax([solver.best_objective_bound, form.model.proto.variables[objective.index].domain[0]]))
    gap = (value - bound) / max(abs(value), 1e-9)
    ctx.progress.update(f"objective {value:.6g}, bound {bound:.6g}, gap {gap:.2%}", force=True)
    stats = SolveStats(wall_s=wall, solver_calls=1, best_bound=(bound,),
                       message=f"objective {value:.6g}, lower bound {bound:.6g}, gap {gap:.2%}; " + "; ".join(form.notes))
    label = OPTIMAL if status == cp_model.OPTIMAL else stopped
    front = result(problem, found[None, :], "cpsat", label, stats, proven=status == cp_model.OPTIMAL, exact=True)
    certificate = single_certificate(problem, int(value), bound, status == cp_model.OPTIMAL)
    return dataclasses.replace(front, certified=certificate)


def _better(problem: MappingProblem, genome: np.ndarray | None, seeds: Sequence[np.ndarray]) -> np.ndarray | None:
    """The best feasible of ``genome`` and ``seeds`` by the first objective (``genome`` on ties; None if none)."""
    X = np.array([g for g in ([genome] if genome is not None else []) + list(seeds)],
                 dtype=np.int64).reshape(-1, problem.n_genes)
    if not len(X):
        return None
    ev = problem.evaluate(X)
    ok = np.flatnonzero(ev.feasible)
    if not len(ok):
        return genome
    return X[ok[np.argmin(ev.F[ok, 0])]]  # first of the ties: ``genome`` before the seeds
