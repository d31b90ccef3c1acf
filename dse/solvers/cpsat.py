"""Exact Pareto fronts with OR-Tools CP-SAT: epsilon-constraint enumeration over any Formulation.

For two objectives f1, f2 (both minimized, integers) the loop is

1. minimize f1 subject to f2 <= eps            (eps starts unbounded)
2. minimize f2 subject to f1 <= f1*            (removes weakly dominated points)
3. record (f1*, f2*), set eps = f2* - 1, repeat until step 1 is infeasible.

It walks the front from the best f1 (e.g. the highest throughput) towards
the best f2. Starting there matters: step 2 then always runs with f1
bounded, which keeps CP-SAT's relaxation of products such as
``idle power x period`` tight.

Because the objectives are integers this enumerates every point of the
nondominated front exactly once. A point is *proven* when both of its solves
ended OPTIMAL; the front is *complete* when every point is proven and the
last step-1 solve proved infeasibility. Bounds are changed on the objective
variables' domains in place, so one model serves the whole enumeration.

For three or more objectives :func:`solve_cpsat_boxes` keeps the search region
as a set of *local upper bounds* (Klamroth, Lacour and Vanderpooten, EJOR 2015):
boxes ``f < u`` that together hold every nondominated point not found yet.
Each box is searched by a lexicographic minimization (f1, then f2 with f1
fixed, ...), whose optimum is a nondominated point of the whole problem; the
point then splits every box that contains it into one child per objective
(``u`` with ``u_j := f_j``), and children inside another box are dropped.
A box whose solve proves infeasibility is closed. The front is complete,
and each of its points proven, when every box is closed. Resuming is
splitting the region by a previous front's points before the first solve.

Each box search gets a share of the time left in proportion to what it
may win the certificate (:func:`~dse.solvers.certificate.box_stakes`: the
volume between its corners, up to the reference point; equal shares where
no box has any), at least :data:`~dse.solvers.cpsat_boxes.BOX_FLOOR_S`
(:func:`~dse.solvers.cpsat_boxes.box_budget`): one box alone gets all of
it, and the box beyond the fastest point a good front leaves, worth most
of its gap, gets most of the time rather than an even share with the many
thin boxes between the front's points. A box whose search runs out of its
share without a point stays open and is searched again, with at least
twice the time, after the boxes not searched yet.

What a search proves empty (the box, or the part of it better in the
objective minimized first than the proven bound) raises the lower corners
of the boxes below it in every objective but one
(:func:`~dse.solvers.cpsat_boxes.close_box`): a proof that no mapping is
faster than the fastest point found lifts the corner of every box along
the front, which is what a certificate's gap is made of.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.base import MappingProblem
from dse.mapping.cpsat_common import ModelBuildTimeout
from dse.pareto import (
    FEASIBLE,
    INFEASIBLE,
    INTERRUPTED,
    OPTIMAL,
    STOPPED,
    ParetoSet,
    SolveStats,
    nondominated,
)
from dse.solvers.certificate import Box, box_stakes, front_certificate, reference_point
from dse.solvers.checkpoint import Checkpointer, RegionState, resumable
from dse.solvers.common import STOPPED_BEFORE_BUILD, build_timed_out, result, unsearched, with_seeds
from dse.solvers.context import CHECKPOINT, CLIENT, RESUME, SolveContext
from dse.solvers.cpsat_boxes import (
    CpSatRunner,
    box_budget,
    box_priority,
    box_shares,
    certificate_boxes,
    close_box,
    found_points,
    proven_empty,
    search_box,
    split_with_lowers,
)
from dse.solvers.cpsat_distributed import solve_cpsat_distributed
from dse.solvers.cpsat_single import CpsatOptions, default_workers, solve_cpsat_single
from dse.solvers.evolution import Nsga2Options, solve_nsga2
from dse.solvers.registry import Solver, best_seed, collect_seeds, register_solver
from dse.util.rounding import ceil_int

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

__all__ = ["CPSAT", "CpSatRunner", "CpsatOptions", "default_workers", "solve_cpsat", "solve_cpsat_boxes",
           "warm_started"]


def solve_cpsat(problem: MappingProblem, ctx: SolveContext, options: CpsatOptions) -> ParetoSet:
    """Exact front of a two-objective problem (see module docstring); one objective: a single proven optimum;
    three or more, or ``ctx.resume`` genomes from a previous run's front, or a ``ctx.checkpoint`` with a
    previous run's state: :func:`solve_cpsat_boxes` (search-region boxes, which continue from those points
    or that state; only the box searches keep a checkpoint); two or more with a Dask ``ctx.client``: the
    same boxes farmed out to its workers (:func:`~dse.solvers.cpsat_distributed.solve_cpsat_distributed`).
    With ``options.warm_start_s``, two or more objectives first get an NSGA-II front (:func:`warm_started`),
    whose points are resumed ones.

    Returns a :class:`ParetoSet`; on a time limit, Ctrl-C or SIGTERM the points
    found so far, each marked proven or not (status ``time_limit`` or
    ``interrupted``; see :mod:`dse.util.interrupt`). The model build counts
    against the time limit. ``options.deterministic`` uses interleaved
    search so repeated runs with the same seed explore identically.

    Raises ``NotImplementedError`` if the family has no exact formulation.
    """
    if len(problem.objectives) == 1:
        return solve_cpsat_single(problem, ctx, options)
    if options.warm_start_s > 0 and ctx.stop_status() is None:
        ctx = warm_started(problem, ctx, options.warm_start_s)
    if ctx.client is not None:
        return solve_cpsat_distributed(problem, ctx, options, ctx.client)
    if len(problem.objectives) > 2 or len(ctx.resume) or resumable(ctx.checkpoint):
        return solve_cpsat_boxes(problem, ctx, options)
    progress = ctx.progress
    seeds = collect_seeds(problem) if options.hints else []
    stop = ctx.stop_status()
    if stop is not None:
        return unsearched(problem, ctx, stop, STOPPED_BEFORE_BUILD, seeds)
    try:
        form = problem.cpsat(seeds=seeds, deadline=ctx.deadline)
    except ModelBuildTimeout as exc:
        return build_timed_out(problem, exc, ctx, seeds)
    # imported once there is a model: a model too large to build is refused without OR-Tools
    from ortools.sat.python import cp_model

    own_bounds = problem.objective_lower_bounds()  # before the search: a stop only bounds the open boxes
    runner = CpSatRunner(form, ctx.seed, options.workers, options.deterministic, ctx.token)
    f1, f2 = form.objective_vars
    hint = best_seed(problem, seeds)
    genomes: list[np.ndarray] = []
    values: list[tuple[int, ...]] = []
    proven: list[bool] = []
    steps: list[_Step] = []
    cut_bound: float | None = None  # the f1 bound of a first solve cut short before any solution
    status, eps, exhausted = OPTIMAL, None, False
    try:
        while True:
            if eps is not None and eps < runner.lower(f2):
                exhausted = True
                break
            stop = ctx.stop_status()
            if stop is not None:
                status = stop
                break
            runner.set_upper(f2, eps)
            runner.set_upper(f1, None)
            first = runner.minimize(f1, ctx.remaining(), hint)
            if first.status == cp_model.INFEASIBLE:
                exhausted = True
                break
            if first.genome is None or first.values is None:
                status = ctx.cut_status()
                cut_bound = first.bound
                break
            second = first
            if not ctx.token.stopped:
                runner.set_upper(f1, first.values[0])
                second = runner.minimize(f2, max(ctx.remaining(), 0.01), first.genome)
            best = second if second.genome is not None and second.values is not None else first
            assert best.genome is not None and best.values is not None
            genomes.append(best.genome)
            values.append(best.values)
            proven.append(first.status == cp_model.OPTIMAL and second.status == cp_model.OPTIMAL)
            steps.append(_Step(
                None if eps is None else eps + 1, runner.proven_bound(f1, first), first.values[0],
                runner.proven_bound(f2, second) if second is not first else runner.lower(f2), proven[-1]))
            progress.update(f"{len(genomes)} front points, last {tuple(best.values)} "
                            f"(bound {first.bound:.6g} on the first objective), {runner.calls} solves")
            hint = best.genome
            eps = best.values[1] - 1
    except KeyboardInterrupt:
        status = INTERRUPTED
    runner.set_upper(f1, None)
    runner.set_upper(f2, None)
    if exhausted and not genomes:
        status = INFEASIBLE
    elif exhausted and not all(proven):
        status = FEASIBLE
    X = np.array(genomes, dtype=np.int64).reshape(-1, problem.n_genes)
    if len(X):
        keep = nondominated(np.array(values))
        X = X[keep]
        proven = [proven[k] for k in keep]
    if status in STOPPED:  # cut short: never less than the seeds it was handed
        X, proven = with_seeds(problem, X, proven, seeds)
    stats = SolveStats(wall_s=ctx.elapsed(), solver_calls=runner.calls,
                       message=f"{runner.workers} workers; " + "; ".join(form.notes))
    front = result(problem, X, "cpsat", status, stats, proven=proven, exact=True)
    boxes = _open_boxes(steps, exhausted, eps, cut_bound, runner, f1, f2)
    return dataclasses.replace(front, certified=front_certificate(problem, front.internal(), boxes, own_bounds))


@dataclass(frozen=True)
class _Step:
    """What one epsilon step proved: in the region ``f2 < upper`` (None: everywhere) no point has
    ``f1 < f1_bound``; none with ``f1 <= f1_value`` has ``f2 < f2_bound``; ``closed`` when both solves
    were optimal (the bounds are then the found point's values)."""

    upper: int | None
    f1_bound: int
    f1_value: int
    f2_bound: int
    closed: bool


def _open_boxes(steps: Sequence[_Step], exhausted: bool, eps: int | None, cut_bound: float | None,
                runner: CpSatRunner, f1: cp_model.IntVar, f2: cp_model.IntVar) -> list[Box]:
    """The regions an epsilon walk left open, each with its proven lower corner (:mod:`.certificate`):
    per step not closed, the part of its region at or left of its point; unless the walk was exhausted,
    the region below the last point, right of everything the last step ruled out."""
    boxes: list[Box] = [((s.f1_bound, s.f2_bound), (s.f1_value + 1, s.upper)) for s in steps if not s.closed]
    if not exhausted:
        low = runner.lower(f1)
        if steps:
            last = steps[-1]
            low = max(low, last.f1_value + 1 if last.closed else last.f1_bound)
        if cut_bound is not None and np.isfinite(cut_bound):
            low = max(low, ceil_int(cut_bound))
        boxes.append(((low, runner.lower(f2)), (None, None if eps is None else eps + 1)))
    return boxes


def warm_started(problem: MappingProblem, ctx: SolveContext, seconds: float) -> SolveContext:
    """``ctx`` with the feasible points of an NSGA-II front (``seconds``, at most half the time left, the same
    seed and stop token) added to its resumed genomes (``CpsatOptions.warm_start_s``)."""
    inner = ctx.derived(time_limit=min(seconds, ctx.remaining() / 2))
    front = solve_nsga2(problem, inner, Nsga2Options())
    found = [np.array(p.genome, dtype=np.int64) for p in front.points if p.feasible]
    ctx.progress.update(f"warm start: NSGA-II found {len(found)} points in {inner.elapsed():.1f} s", force=True)
    return dataclasses.replace(ctx, resume=(*ctx.resume, *found))


def solve_cpsat_boxes(problem: MappingProblem, ctx: SolveContext, options: CpsatOptions) -> ParetoSet:
    """Exact front of a problem with any number of objectives by search-region boxes (module docstring).

    Returns a :class:`ParetoSet` like :func:`solve_cpsat`: status ``optimal`` (complete, every point
    proven) once every box is proven empty, else ``time_limit`` or ``interrupted`` with the points found
    so far (none proven); ``infeasible`` when the whole region is proven empty. ``ctx.resume`` genomes (a
    previous front) count as found: their feasible points split the region before the first solve, so a
    resumed run continues where the previous one stopped, and they hint the first solve.

    A point whose lexicographic solves were cut short is still kept; it stays unproven until every box
    is closed, when no point can dominate it any more.
    """
    progress = ctx.progress
    resume = list(ctx.resume)
    seeds = collect_seeds(problem) if options.hints else []
    stop = ctx.stop_status()
    if stop is not None:
        return unsearched(problem, ctx, stop, STOPPED_BEFORE_BUILD, [*resume, *seeds])
    try:
        form = problem.cpsat(seeds=[*resume, *seeds], deadline=ctx.deadline)
    except ModelBuildTimeout as exc:
        return build_timed_out(problem, exc, ctx, [*resume, *seeds])
    own_bounds = problem.objective_lower_bounds()  # before the search: a stop only bounds the open boxes
    runner = CpSatRunner(form, ctx.seed, options.workers, options.deterministic, ctx.token)
    objs = form.objective_vars
    top = tuple(runner.upper(v) + 1 for v in objs)  # "unbounded": past every value
    hint = best_seed(problem, [*resume, *seeds])
    boxes: list[tuple[int, ...]] = [top]
    lowers = {top: tuple(runner.lower(v) for v in objs)}  # per box: its proven lower corner
    genomes: list[np.ndarray] = []
    values: list[tuple[int, ...]] = []
    keeper = Checkpointer(ctx.checkpoint)
    restored = keeper.restore(top, problem.n_genes, lambda note: progress.update(note, force=True))
    if restored is not None:  # a previous run's state: its points, and only the boxes it left open
        boxes, lowers = [u for u, _ in restored.boxes], restored.lowers()
        genomes = [np.array(g, dtype=np.int64) for g in restored.genomes]
        values = list(restored.values)
    for genome, z in found_points(problem, resume, top):  # a previous front: found already, splits the region
        if restored is not None and (z in values or not any(all(a < b for a, b in zip(z, u, strict=True))
                                                            for u in boxes)):
            continue  # known to the restored state, or in a part of the region it closed already
        genomes.append(genome)
        values.append(z)
        boxes, lowers = split_with_lowers(boxes, lowers, z)

    def state() -> RegionState:
        return RegionState.of(top, boxes, lowers, genomes, values)

    reference = reference_point(problem, np.array(values, dtype=np.int64).reshape(-1, len(objs)))
    status = OPTIMAL
    budgets: dict[tuple[int, ...], tuple[float, ...]] = {}  # per box: the budgets its searches ran out of
    try:
        while boxes:
            if keeper.due():
                keeper.write(state)
            stop = ctx.stop_status()
            if stop is not None:
                status = stop
                break
            shares = box_shares(box_stakes(problem, certificate_boxes(boxes, lowers, top), reference))
            # the boxes searched fewest times first, then by their priority (the largest share first)
            pick = min(range(len(boxes)), key=lambda k: (len(budgets.get(boxes[k], ())),
                                                          *box_priority(boxes[k], float(shares[k]))))
            box = boxes[pick]
            if any(u - 1 < runner.lower(v) for u, v in zip(box, objs, strict=True)):
                boxes.remove(box)  # empty by the objectives' own lower bounds
                continue
            budget = box_budget(ctx.remaining(), float(shares[pick]), 2 * budgets[box][-1] if box in budgets else 0.0)
            solves = search_box(runner, box, ctx.derived(time_limit=budget).remaining, hint)
            for closed in proven_empty(runner, box, 0, solves):
                boxes, lowers = close_box(boxes, lowers, closed)
            best = solves[-1]
            if best.genome is None:  # proven empty, or out of its budget (searched again after the others)
                if box in boxes:
                    budgets[box] = (*budgets.get(box, ()), budget)
                continue
            assert best.genome is not None and best.values is not None
            z = tuple(int(val) for val in best.values)
            genomes.append(best.genome)
            values.append(z)
            boxes, lowers = split_with_lowers(boxes, lowers, z)
            hint = best.genome
            progress.update(f"{len(genomes)} front points, last {z}, {len(boxes)} open boxes, "
                            f"{runner.calls} solves")
    except KeyboardInterrupt:
        status = INTERRUPTED
    keeper.write(state)
    if status == OPTIMAL and not genomes:
        status = INFEASIBLE
    X = np.array(genomes, dtype=np.int64).reshape(-1, problem.n_genes)
    if len(X):
        X = X[nondominated(np.array(values))]
    if status in STOPPED:  # cut short: never less than the seeds it was handed
        X = with_seeds(problem, X, [False] * len(X), [*resume, *seeds])[0]
    # every box closed by a proof of emptiness: no point can dominate a kept one, so all are proven
    stats = SolveStats(wall_s=ctx.elapsed(), solver_calls=runner.calls,
                       message=f"{runner.workers} workers; search-region boxes, {len(boxes)} left open; "
                       + keeper.summary()
                       + "; ".join(form.notes))
    front = result(problem, X, "cpsat", status, stats, proven=status == OPTIMAL, exact=True)
    return dataclasses.replace(front, certified=front_certificate(problem, front.internal(),
                                                                  certificate_boxes(boxes, lowers, top), own_bounds))



#: The ``cpsat`` solver's registry entry (:func:`dse.certify` checks its options against it).
CPSAT = register_solver(Solver(
    "cpsat", solve_cpsat, options=CpsatOptions, inputs=frozenset({RESUME, CLIENT, CHECKPOINT}),
    supports=lambda problem: problem.exact_unsupported(), exact=True, in_all=True,
    imports=("ortools.sat.python.cp_model",), needs_imports=lambda problem: problem.exact_model_too_large() is None,
    description="OR-Tools CP-SAT: the exact front by epsilon-constraint enumeration, each point proven or not",
))
