"""Exact fronts with the search-region boxes farmed out to a Dask cluster, with the serial run's certificate.

The driver (:func:`solve_cpsat_distributed`) keeps what :func:`~dse.solvers.cpsat.solve_cpsat_boxes`
keeps: the open boxes (local upper bounds), each with its proven lower corner, and the points found.
Each box is one Dask task (:func:`region_task`): the lexicographic search of that box
(:func:`~dse.solvers.cpsat_boxes.search_box`) with a time budget and a hint from the found point nearest
to the box, on a formulation that each worker thread builds once per problem (the problem itself is
scattered to every worker once, and the compiled kernels of its family are loaded into each worker by a
plugin, :func:`~dse.solvers.dask_tasks.load_kernels_on_workers`, outside the tasks). A task whose search
ends on a point goes on, for up to ``options.chain_s`` seconds, with the boxes its own points split off
its box (:func:`_go_on`), and returns every search it made (:class:`RegionResult`'s ``more``): boxes of a
few milliseconds each would cost more in the round trip through the driver and Dask's scheduler than in
CP-SAT. Each search speaks of its own box, and the driver applies it as a task's result. Results are
applied in whatever order they come:

* a point inside the open region splits the boxes (:func:`~dse.solvers.cpsat_boxes.split_with_lowers`);
* a proof that a region is empty (the task's box, or the part of it better in the objective minimized
  first than the search's proven bound) closes every open box inside it and raises the lower corner of
  every box below it in all objectives but one (:func:`~dse.solvers.cpsat_boxes.close_box`);
* a running task whose box no longer meets the open region (every open box, cut to it, is empty by its
  lower corner) is cancelled: the points found dominate or close all of it; since Dask cannot cancel a
  task already running, the driver also sets the task's own stop event, which its search polls every
  :data:`~dse.solvers.dask_tasks.STOP_POLL_S` seconds (it then stops CP-SAT within milliseconds);
* a task that ran out of budget without a point is resubmitted with at least twice the budget;
* a task whose worker dies is run again elsewhere by Dask; one that Dask cancels because the dead worker
  held the last copy of the scattered problem (a broadcast keeps no copy on every worker:
  :func:`~dse.solvers.dask_tasks.scattered`) is lost: the problem is scattered again and its box, still
  open, is searched again;
* racing (``options.race``, on by default): while worker threads are left free once every open box is
  searched from each end (:func:`_choose`), duplicates of those searches (:func:`_duplicates`), the same
  box and the same objective first, run with other CP-SAT seeds (the run's seed plus the copy's number).
  The first result of a box and objective is applied as any result; its running copies are then told to
  stop (their own stop events, as for dominated boxes) and are *beaten*. Their slots stay counted until
  they return (a running Dask task holds its thread), and what they return is applied by the same rules:
  a point is kept when it is new and lies in the open region; a proof (emptiness, a bound) speaks of the
  box the copy was given, whatever became of it since. A copy stopped before it found anything is not out
  of budget: its budget is not doubled.

Why a late result is sound: a task proves facts about the region ``f < box`` it was given, and a fact
stays true whatever happened to the box since. A proof that the region is empty (``INFEASIBLE``) closes
every open box inside it: the parts of a box split since lie inside it, empty by the same proof (a point
splits only the boxes holding it, so with a correct solver a region proven empty is never split at all).
A box only overlapping the region may hold points outside it and stays open; where it lies below the
region in every objective but ``j``, none of its points is better in ``j`` than the region's corner
(such a point would lie in the region), and its lower corner rises there. A bound (no point of the
region has a smaller first objective) is the proof that the region cut at the bound in that objective is
empty, and applies the same way. No open box is ever larger than the box it came from, so nothing closed
is reopened, and a box closed since is simply not there to close again. So results apply in any order,
a beaten copy's as an original's, and the open boxes with their lower corners, hence the certificate,
never claim more than some task proved. Only a proof counts: an ``INFEASIBLE`` of presolve
that a stop kept from being confirmed proves nothing (:func:`~dse.util.interrupt.run_cpsat` returns
``UNKNOWN``, with no bound), which matters here since beaten copies are stopped often.

With a ``ctx.checkpoint`` the driver writes its state (the points, the open boxes and their lower corners:
:mod:`dse.solvers.checkpoint`) at most every second and when it ends, and goes on from a previous run's
state: a driver killed midway and run again searches only what was still open (the boxes its running tasks
held are searched again).

A new task goes to a box that no running task's box holds where there is one (a task goes on with the
boxes split off its own, and two tasks in one region tend to end on the same points), and minimizes
first the objective that the fewest running tasks do (:func:`_choose`): two tasks that both minimize
objective 1 on overlapping boxes tend to end on the same point; with different first objectives they end
on different ones. A box is searched from several ends at once only when every open box is held by some
task (one box and two threads, at the start); each search ends on a nondominated point. Since every box
is closed only by a proof, the complete front is the serial one (its objective values; genomes may
differ where several map to one point), and a run cut short by its time
limit or a stop certifies, with :func:`~dse.solvers.certificate.front_certificate`, the points found and
the open boxes, as the serial run does; the results that came back before the stop are all kept.

Every point records who found it (:class:`~dse.pareto.FoundBy`: the worker's label and the task's number,
or a seed or resumed point), and ``front.stats.timings.tasks`` every task's span on its worker and how it
ended (:class:`~dse.pareto.TaskSpan`), which ``dse solve`` draws in ``trace.json``.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dse.mapping.base import MappingProblem
from dse.mapping.cpsat_common import ModelBuildTimeout
from dse.pareto import (
    INFEASIBLE,
    INTERRUPTED,
    OPTIMAL,
    RESUME,
    SEED,
    STOPPED,
    FoundBy,
    ParetoSet,
    SolveStats,
    nondominated,
)
from dse.solvers.certificate import Box, box_stakes, front_certificate, reference_point
from dse.solvers.checkpoint import Checkpointer, RegionState
from dse.solvers.common import STOPPED_BEFORE_BUILD, result, unsearched, with_seeds
from dse.solvers.context import SolveContext
from dse.solvers.cpsat_boxes import (
    CpSatRunner,
    box_budget,
    box_priority,
    box_shares,
    certificate_boxes,
    close_box,
    empty_box,
    found_points,
    search_box,
    split_with_lowers,
)
from dse.solvers.cpsat_single import CpsatOptions
from dse.solvers.dask_tasks import (
    POLL_S,
    STOP_GRACE_S,
    EventToken,
    TaskClock,
    done_futures,
    load_kernels_on_workers,
    scattered,
    worker_name,
)
from dse.solvers.registry import best_seed, collect_seeds

__all__ = ["BEATEN", "CANCELLED", "CUT_OFF", "EMPTY", "KNOWN_POINT", "LOST", "NEW_POINT", "OUT_OF_BUDGET",
           "BoxSearch", "DriverHooks", "RegionResult", "region_task", "solve_cpsat_distributed"]


@dataclass(frozen=True)
class BoxSearch:
    """One box searched by a region's task after its own (``CpsatOptions.chain_s``): the box ``f < box``,
    the objective minimized first, and what :class:`RegionResult` says of the task's own box (status,
    point, bound)."""

    box: tuple[int, ...]
    first: int
    status: int
    genome: np.ndarray | None
    values: tuple[int, ...] | None
    bound: int | None


@dataclass(frozen=True)
class RegionResult:
    """What one region's task returns: the CP-SAT status of its head solve, the point it ended on
    (``genome`` and ``values``, None when none was found), the proven lower bound of the objective it
    minimized first (None: the box was proven empty), the solves it ran, the worker that ran them, the
    task's compute time on it (``compute_s``), when it started there (``started_at``, the worker's
    ``time.time()``), and the boxes it went on to search, in order (``more``: inside its own box, split
    off by its points)."""

    status: int
    genome: np.ndarray | None
    values: tuple[int, ...] | None
    bound: int | None
    calls: int
    worker: str
    compute_s: float = 0.0
    started_at: float = 0.0
    more: tuple[BoxSearch, ...] = ()


@dataclass(frozen=True)
class DriverHooks:
    """The driver's seams: ``on_cancel(box, first)`` after each task cancelled as dominated, and the
    ``task`` function the workers run (:func:`region_task`; a test wraps it)."""

    on_cancel: Callable[[tuple[int, ...], int], None] | None = None
    task: Callable[..., RegionResult] | None = None


@dataclass(frozen=True)
class _Settings:
    """A region task's CP-SAT settings: its seed, search workers, deterministic search, heuristic hints."""

    seed: int
    workers: int
    deterministic: bool
    hints: bool


@dataclass(frozen=True)
class _Task:
    """A region task in flight: its box, the objective it minimizes first, its copy (0: the search of that box
    and objective; 1, 2, ...: duplicates racing it, with the run's seed plus the copy) and its budget."""

    box: tuple[int, ...]
    first: int
    copy: int = 0
    budget: float | None = None

    @property
    def key(self) -> tuple[tuple[int, ...], int]:
        """What its copies share: the box and the objective minimized first."""
        return self.box, self.first


# per worker thread: the problem key it holds a runner for, and that runner (one model per thread: a
# runner changes its model's bounds in place)
_RUNNERS: dict[int, tuple[str, CpSatRunner]] = {}
_LOCK = threading.Lock()


def _runner(problem: MappingProblem, key: str, settings: _Settings, budget: float) -> CpSatRunner:
    """This thread's runner for the problem ``key``, built on first use (the build gets ``budget``
    seconds; raises :class:`ModelBuildTimeout` past it)."""
    ident = threading.get_ident()
    with _LOCK:
        held = _RUNNERS.get(ident)
    if held is None or held[0] != key:
        seeds = collect_seeds(problem) if settings.hints else []
        form = problem.cpsat(seeds=seeds, deadline=time.monotonic() + budget)
        held = (key, CpSatRunner(form, settings.seed, settings.workers, settings.deterministic))
        with _LOCK:
            _RUNNERS[ident] = held
    held[1].seed = settings.seed
    return held[1]


def domains_task(problem: MappingProblem, key: str, settings: _Settings,
                 budget: float) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The objectives' domains (lower and upper ends) in the worker's model, which it builds now; None when
    the build ran past ``budget`` seconds."""
    try:
        runner = _runner(problem, key, settings, budget)
    except ModelBuildTimeout:
        return None
    objs = runner.form.objective_vars
    return tuple(runner.lower(v) for v in objs), tuple(runner.upper(v) for v in objs)


def region_task(problem: MappingProblem, key: str, box: tuple[int, ...], first: int, hint: np.ndarray | None,
                settings: _Settings, budget: float, task_event: str | None = None, chain_s: float = 0.0,
                lower: tuple[int, ...] | None = None) -> RegionResult:
    """One region's task, run on a worker: the lexicographic search of ``f < box`` starting with objective
    ``first``, hinted with ``hint``, within ``budget`` seconds (the model's build included), then, while
    less than ``chain_s`` seconds have passed, the boxes its points split off (:func:`_go_on`; ``lower``:
    the box's proven lower corner, None: the objectives' own). It ends early, with what it found, once the
    driver sets the run's stop event or the task's own ``task_event`` (its region became dominated: a
    running Dask task cannot be cancelled, so it is told to stop)."""
    from ortools.sat.python import cp_model
    started_at, start = time.time(), time.perf_counter()
    end = time.monotonic() + budget
    try:
        runner = _runner(problem, key, settings, budget)
    except ModelBuildTimeout:
        return RegionResult(int(cp_model.UNKNOWN), None, None, None, 0, worker_name(),
                            time.perf_counter() - start, started_at)
    calls = runner.calls
    runner.token = EventToken(f"dse-stop-{key}", *([task_event] if task_event else []))
    head = _search(runner, box, first, hint, end)
    more: tuple[BoxSearch, ...] = ()
    if chain_s > 0 and head.values is not None:
        objs = runner.form.objective_vars
        more = _go_on(runner, head, lower or tuple(runner.lower(v) for v in objs), end, start + chain_s)
    return RegionResult(head.status, head.genome, head.values, head.bound, runner.calls - calls, worker_name(),
                        time.perf_counter() - start, started_at, more)


def _search(runner: CpSatRunner, box: tuple[int, ...], first: int, hint: np.ndarray | None,
            end: float) -> BoxSearch:
    """The lexicographic search of ``f < box``, objective ``first`` first, until ``time.monotonic()`` passes
    ``end``: its head solve's status and bound, and the point it ended on."""
    from ortools.sat.python import cp_model
    solves = search_box(runner, box, lambda: max(0.0, end - time.monotonic()), hint, first)
    head, best = solves[0], solves[-1]
    bound = None if head.status == cp_model.INFEASIBLE else runner.proven_bound(
        runner.form.objective_vars[first], head)
    return BoxSearch(box, first, int(head.status), best.genome, best.values, bound)


#: Who found a point in a task's own bookkeeping of the boxes it goes on with (never reaches the driver).
_CHAINED = FoundBy("this task")


def _go_on(runner: CpSatRunner, head: BoxSearch, lower: tuple[int, ...], end: float,
           until: float) -> tuple[BoxSearch, ...]:
    """The boxes a region's task searches after its own (``head``, which found a point): the task keeps the
    boxes its own points split off ``head.box`` (with ``lower``, the box's lower corner) as the driver
    does (:class:`_Regions`) and searches, objective ``head.first`` first, the one reaching furthest in that
    objective, while ``time.perf_counter()`` is before ``until``, no stop came and a search found a new
    point or proved its box empty. Returns those searches in order; the driver applies each as a task's
    result, on its own box (module docstring): many boxes of a few milliseconds each cost one round trip."""
    from ortools.sat.python import cp_model
    mine = _Regions([head.box], {head.box: lower}, math.inf)
    mine.apply(head.box, head.first, head, _CHAINED)
    out: list[BoxSearch] = []
    while time.perf_counter() < until and not runner.token.stopped:
        mine.drop_empty()
        if not mine.boxes:
            break
        box = max(mine.boxes, key=lambda u: (u[head.first], u))
        found = _search(runner, box, head.first, mine.hint(box, None), end)
        out.append(found)
        if mine.apply(box, head.first, found, _CHAINED) not in (NEW_POINT, EMPTY) \
                or found.status not in (cp_model.OPTIMAL, cp_model.INFEASIBLE):  # cut short: the driver decides
            break
    return tuple(out)


#: How a region's task ended (:meth:`_Regions.apply`), and how one without a result did.
NEW_POINT, KNOWN_POINT, EMPTY, OUT_OF_BUDGET = "new point", "point known or dominated", "empty", "out of budget"
BEATEN = "stopped, beaten by a copy"
CANCELLED, CUT_OFF, LOST = "cancelled as dominated", "cancelled at the stop", "lost with a worker"


@dataclass
class _Regions:
    """The driver's state: open boxes with their lower corners, the points found and who found each
    (``found``), the budgets."""

    boxes: list[tuple[int, ...]]
    lowers: dict[tuple[int, ...], tuple[int, ...]]
    budget: float
    genomes: list[np.ndarray] = field(default_factory=list)
    values: list[tuple[int, ...]] = field(default_factory=list)
    found: list[FoundBy] = field(default_factory=list)
    budgets: dict[tuple[tuple[int, ...], int], float] = field(default_factory=dict)
    finders: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)

    def _count(self, outcome: str) -> str:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        return outcome

    def add(self, genome: np.ndarray, z: tuple[int, ...], by: FoundBy) -> bool:
        """Record the point ``z``, found ``by`` a task or given, and split the boxes by it, when it lies in
        the open region."""
        if z in self.values or not any(all(a < b for a, b in zip(z, u, strict=True)) for u in self.boxes):
            return False
        self.genomes.append(genome)
        self.values.append(z)
        self.found.append(by)
        self.boxes, self.lowers = split_with_lowers(self.boxes, self.lowers, z)
        return True

    def certificate_boxes(self, top: tuple[int, ...]) -> list[Box]:
        """The open boxes as a certificate takes them (:func:`~dse.solvers.cpsat_boxes.certificate_boxes`)."""
        return certificate_boxes(self.boxes, self.lowers, top)

    def drop_empty(self) -> None:
        """Close the boxes that their proven lower corners leave empty."""
        self.boxes = [u for u in self.boxes if not empty_box(u, self.lowers[u])]
        self.lowers = {u: self.lowers[u] for u in self.boxes}

    def dominated(self, box: tuple[int, ...]) -> bool:
        """Whether ``box`` no longer meets the open region: every open box, cut to it, is empty."""
        return all(empty_box(tuple(min(a, b) for a, b in zip(c, box, strict=True)), self.lowers[c])
                   for c in self.boxes)

    def apply(self, box: tuple[int, ...], first: int, res: RegionResult | BoxSearch, by: FoundBy,
              beaten: bool = False, budget: float | None = None) -> str:
        """Apply one task's result (module docstring), its point found ``by`` that task; returns its outcome:
        :data:`EMPTY`, :data:`OUT_OF_BUDGET` (empty-handed), :data:`NEW_POINT` or :data:`KNOWN_POINT`; a
        ``beaten`` copy (told to stop: another copy's result came first) empty-handed: :data:`BEATEN`,
        its budget left as it was. Out of budget, the next search of that box and objective gets at least twice
        ``budget`` (the seconds this task had; None: the budget it was given by :attr:`budgets`)."""
        from ortools.sat.python import cp_model
        if res.status == cp_model.INFEASIBLE:  # the whole box is empty: so is every open box inside it
            self.boxes, self.lowers = close_box(self.boxes, self.lowers, box)
            return self._count(EMPTY)
        if res.bound is not None:  # the part of the box better in objective `first` than the bound is empty
            self.boxes, self.lowers = close_box(self.boxes, self.lowers, (*box[:first], res.bound, *box[first + 1:]))
        if res.genome is None or res.values is None:
            if beaten:
                return self._count(BEATEN)
            ran = budget if budget is not None else self.budgets.get((box, first), self.budget)
            self.budgets[(box, first)] = 2 * ran
            return self._count(OUT_OF_BUDGET)
        if self.add(res.genome, tuple(int(v) for v in res.values), by):
            self.finders[by.worker] = self.finders.get(by.worker, 0) + 1
            return self._count(NEW_POINT)
        return self._count(KNOWN_POINT)

    def hint(self, box: tuple[int, ...], fallback: np.ndarray | None) -> np.ndarray | None:
        """The genome of the found point nearest to the box (least total excess over its upper corner)."""
        if not self.values:
            return fallback
        F = np.array(self.values, dtype=np.float64)
        excess = np.maximum(F - (np.array(box, dtype=np.float64) - 1), 0).sum(axis=1)
        return self.genomes[int(np.argmin(excess))]


def solve_cpsat_distributed(problem: MappingProblem, ctx: SolveContext, options: CpsatOptions, client: Any,
                            hooks: DriverHooks | None = None) -> ParetoSet:
    """The exact front of ``problem`` (two or more objectives) with its regions run as tasks on the Dask
    ``client``'s workers (module docstring).

    Returns a :class:`ParetoSet` like :func:`~dse.solvers.cpsat.solve_cpsat_boxes`: status ``optimal``
    once every box is proven empty, else ``time_limit`` or ``interrupted`` with every point found so far
    and the certificate of the boxes left open; ``infeasible`` when the whole region is proven empty. Each
    task's CP-SAT gets ``options.workers`` search workers (default 1: one per Dask thread) and first
    ``options.region_time`` seconds (None, the default: the time left times the Dask threads, shared out
    over the open boxes as the serial search shares it, :func:`~dse.solvers.cpsat_boxes.box_budget`);
    ``options.race`` races duplicates on threads left free. Raises what a task raised.
    """
    from distributed import Event, wait

    hooks = hooks or DriverHooks()
    run_task = hooks.task or region_task
    resume = list(ctx.resume)
    seeds = collect_seeds(problem) if options.hints else []
    settings = _Settings(ctx.seed, options.workers or 1, options.deterministic, options.hints)
    stop = ctx.stop_status()
    if stop is not None:
        return unsearched(problem, ctx, stop, STOPPED_BEFORE_BUILD, [*resume, *seeds])
    own_bounds = problem.objective_lower_bounds()
    key = uuid.uuid4().hex
    stop_event = Event(f"dse-stop-{key}", client=client)
    load_kernels_on_workers(client, problem)
    shared = scattered(client, problem)
    domains = _await(client.submit(domains_task, shared, key, settings, max(ctx.remaining(), 0.01), pure=False),
                     ctx, wait)
    if domains is None:
        return unsearched(problem, ctx, ctx.cut_status(), "stopped before the model was built",
                          [*resume, *seeds])
    lows, highs = domains
    top = tuple(h + 1 for h in highs)  # "unbounded": past every value
    first_budget = math.inf if options.region_time is None else options.region_time  # capped by the time left
    state = _Regions([top], {top: lows}, first_budget)
    keeper = Checkpointer(ctx.checkpoint)
    restored = keeper.restore(top, problem.n_genes, lambda note: ctx.progress.update(note, force=True))
    if restored is not None:  # a previous run's state: its points, and only the boxes it left open
        state = _Regions([u for u, _ in restored.boxes], restored.lowers(), first_budget,
                         [np.array(g, dtype=np.int64) for g in restored.genomes], list(restored.values),
                         [FoundBy(RESUME)] * len(restored.values))
    for genome, z in found_points(problem, resume, top):
        state.add(genome, z, FoundBy(RESUME))

    def snapshot() -> RegionState:
        return RegionState.of(top, state.boxes, state.lowers, state.genomes, state.values)

    fallback = best_seed(problem, [*resume, *seeds])
    reference = reference_point(problem, np.array(state.values, dtype=np.int64).reshape(-1, len(top)))
    slots = max(1, sum(client.nthreads().values()))
    running: dict[Any, _Task] = {}
    events: dict[Any, str] = {}  # each running task's own stop event
    beaten: set[Any] = set()  # running copies told to stop: another copy's result came first
    status, calls, submitted, cancelled, retried, lost = OPTIMAL, 0, 0, 0, 0, 0
    raced, won, stopped_copies, chained = 0, 0, 0, 0
    clock = TaskClock()

    def take(fut: Any) -> None:
        nonlocal calls, retried, won, stopped_copies, chained
        task = running.pop(fut)
        events.pop(fut, None)
        late = fut in beaten
        beaten.discard(fut)
        res = fut.result()  # raises what the task raised
        if not late:  # the first result of its box and objective: its copies are beaten
            rivals = [f for f, t in running.items() if t.key == task.key and f not in beaten]
            for rival in rivals:
                Event(events[rival], client=client).set()  # a running search stops within STOP_POLL_S
                beaten.add(rival)
            stopped_copies += len(rivals)
            won += bool(rivals) and task.copy > 0
        by = clock.ran_by(fut, res.worker)
        outcomes = [state.apply(task.box, task.first, res, by, beaten=late, budget=task.budget)]
        outcomes += [state.apply(more.box, more.first, more, by, beaten=late) for more in res.more]
        chained += len(res.more)
        clock.took(fut, res.worker, res.started_at, res.compute_s,
                   NEW_POINT if NEW_POINT in outcomes else outcomes[0])
        calls += res.calls
        retried += outcomes.count(OUT_OF_BUDGET)
        clock.regions(sum(not empty_box(u, state.lowers[u]) for u in state.boxes))  # the boxes left open

    try:
        while True:
            state.drop_empty()
            for fut, task in list(running.items()):
                if fut not in beaten and state.dominated(task.box):  # a beaten copy is stopping already
                    Event(events.pop(fut), client=client).set()  # a running search stops within STOP_POLL_S
                    fut.cancel()
                    del running[fut]
                    clock.lost(fut, CANCELLED)
                    cancelled += 1
                    if hooks.on_cancel is not None:
                        hooks.on_cancel(task.box, task.first)
            if not state.boxes and not running:
                break
            stop = ctx.stop_status()
            if stop is not None:
                status = stop
                break
            live = [t.key for f, t in running.items() if f not in beaten]
            free = slots - len(running)
            stakes = box_stakes(problem, state.certificate_boxes(top), reference) if free > 0 else np.zeros(0)
            shares = box_shares(stakes).tolist()
            share_of = dict(zip(state.boxes, shares, strict=False))  # empty while no thread is free
            plan = _choose(state.boxes, len(top), live, free, shares or None)
            if options.race:
                plan += _duplicates(state.boxes, len(top), [*live, *plan], free - len(plan))
            copies = Counter(live)
            for box, first in plan:
                copy = copies[(box, first)]
                copies[(box, first)] += 1
                if options.region_time is None:  # the threads' time left, shared out over the open boxes
                    budget = box_budget(ctx.remaining() * slots, share_of[box], state.budgets.get((box, first), 0.0))
                    budget = max(min(budget, ctx.remaining()), 0.01)
                else:
                    budget = min(state.budgets.get((box, first), state.budget), max(ctx.remaining(), 0.01))
                sent = time.perf_counter()
                fut = client.submit(run_task, shared, key, box, first, state.hint(box, fallback),
                                    dataclasses.replace(settings, seed=settings.seed + copy), budget,
                                    task_event=f"dse-stop-{key}-task{submitted}", chain_s=options.chain_s,
                                    lower=state.lowers.get(box), pure=False)
                running[fut] = _Task(box, first, copy, budget)
                events[fut] = f"dse-stop-{key}-task{submitted}"
                clock.submitted(fut, _region_name(box, first, top) + (f", copy {copy}" if copy else ""), sent)
                submitted += 1
                raced += copy > 0
            clock.waits()
            try:
                done = done_futures(list(running), POLL_S)
            except TimeoutError:
                continue
            clock.woke()
            for fut in done:
                if fut not in running:
                    continue
                if fut.status != "cancelled":
                    try:
                        take(fut)
                        continue
                    except CancelledError:  # its result died with its worker, and the problem's last copy too
                        pass
                running.pop(fut, None)  # cancelled by Dask: its box is open and chosen again
                events.pop(fut, None)
                beaten.discard(fut)
                clock.lost(fut, LOST)
                lost += 1
                shared = scattered(client, problem, shared)
            if keeper.due():
                state.drop_empty()
                keeper.write(snapshot)
            if ctx.progress.due():
                gap = front_certificate(problem, np.array(state.values), state.certificate_boxes(top), own_bounds).gap
                ctx.progress.update(f"{len(state.values)} front points, {len(state.boxes)} open boxes (regions), "
                                    f"gap {gap:.2%}, {len(running)} tasks running, {calls} solves")
    except KeyboardInterrupt:
        status = INTERRUPTED
    finally:
        clock.waits()
        if running:  # told to stop, the running tasks return what they found: nothing found is lost
            stop_event.set()
            try:
                done_futures(list(running), STOP_GRACE_S, first=False)
            except TimeoutError:
                pass
            for fut in [f for f in running if f.status == "finished"]:
                try:
                    take(fut)
                except CancelledError:  # its result was lost with its worker
                    clock.lost(fut, LOST)
            for fut in running:
                clock.lost(fut, CUT_OFF)
            client.cancel(list(running))
        stop_event.set()
    state.drop_empty()
    keeper.write(snapshot)
    if status == OPTIMAL and not state.values:
        status = INFEASIBLE
    X = np.array(state.genomes, dtype=np.int64).reshape(-1, problem.n_genes)
    if len(X):
        X = X[nondominated(np.array(state.values))]
    if status in STOPPED:  # cut short: never less than the seeds it was handed
        X = with_seeds(problem, X, [False] * len(X), [*resume, *seeds])[0]
    finder = {tuple(int(g) for g in genome): by for genome, by in zip(state.genomes, state.found, strict=True)}
    found = [finder.get(tuple(int(g) for g in row), FoundBy(SEED)) for row in X]
    found_by = ", ".join(f"{w}: {n}" for w, n in sorted(state.finders.items()))
    stats = SolveStats(wall_s=ctx.elapsed(), solver_calls=calls,
                       message=f"distributed over {slots} worker threads: {submitted} region tasks"
                       + (f" (and {chained} boxes searched on by them)" if chained else "") + ", "
                       f"{cancelled} cancelled as dominated, {retried} searches out of budget"
                       + (f", {lost} lost with a worker and searched again" if lost else "") + "; "
                       + (f"{raced} duplicates raced with other seeds, {won} of them first, {stopped_copies} "
                          "copies stopped as beaten; " if options.race else "racing off; ")
                       + "outcomes "
                       + ", ".join(f"{name} {n}" for name, n in sorted(state.outcomes.items())) + "; "
                       f"search-region boxes, {len(state.boxes)} left open; {keeper.summary()}"
                       f"points found by {found_by or 'none'}", timings=clock.timings())
    front = result(problem, X, "cpsat", status, stats, proven=status == OPTIMAL, exact=True, found_by=found)
    return dataclasses.replace(front, certified=front_certificate(problem, front.internal(),
                                                                  state.certificate_boxes(top), own_bounds))


def _region_name(box: tuple[int, ...], first: int, top: tuple[int, ...]) -> str:
    """What a region's task searches, as its trace span names it: ``f < (12, 40, -), f2 first`` (``-``:
    unbounded)."""
    corner = ", ".join("-" if b >= t else str(b) for b, t in zip(box, top, strict=True))
    return f"f < ({corner}), f{first + 1} first"


def _choose(boxes: list[tuple[int, ...]], k: int, running: list[tuple[tuple[int, ...], int]],
            free: int, shares: Sequence[float] | None = None) -> list[tuple[tuple[int, ...], int]]:
    """Up to ``free`` new tasks (box, objective minimized first), none already ``running``: each time on a
    box that the fewest running or chosen tasks hold (a task's box holds the boxes split off it since, which
    its own search goes on with), with the objective that the fewest of them minimize first (concurrent
    searches then end on different points), on the box with the largest of ``shares`` (one per box; None:
    all equal), then the one reaching furthest in objective 1 (the serial order), objective 1 on ties. So a
    box is searched from a second end only when every box is held by some task."""
    busy = set(running)
    used = [sum(1 for _, first in running if first == j) for j in range(k)]
    share = dict(zip(boxes, shares if shares is not None else [0.0] * len(boxes), strict=True))
    order = sorted(boxes, key=lambda u: box_priority(u, share[u]))
    holders = [sum(_holds(task, box) for task, _ in running) for box in order]
    chosen: list[tuple[tuple[int, ...], int]] = []
    for _ in range(free):
        candidates = [(holders[rank], used[j], rank, j) for j in range(k) for rank, box in enumerate(order)
                      if (box, j) not in busy]
        if not candidates:
            break
        _, _, rank, j = min(candidates)
        chosen.append((order[rank], j))
        busy.add((order[rank], j))
        used[j] += 1
        holders = [n + _holds(order[rank], box) for n, box in zip(holders, order, strict=True)]
    return chosen


def _holds(task_box: tuple[int, ...], box: tuple[int, ...]) -> bool:
    """Whether ``box`` lies inside a task's box (the task may go on with it)."""
    return all(a <= b for a, b in zip(box, task_box, strict=True))


def _duplicates(boxes: list[tuple[int, ...]], k: int, live: list[tuple[tuple[int, ...], int]],
                free: int) -> list[tuple[tuple[int, ...], int]]:
    """Up to ``free`` duplicates (box, objective minimized first) of the searches of open ``boxes`` in
    ``live`` (one entry per running copy, beaten ones left out): each time one with the fewest copies, on
    the box reaching furthest in objective 1, objective 1 first on ties (:func:`_choose`'s order)."""
    copies = Counter(live)
    searches = [(box, j) for box in sorted(boxes, reverse=True) for j in range(k) if (box, j) in copies]
    chosen: list[tuple[tuple[int, ...], int]] = []
    for _ in range(free if searches else 0):
        search = min(searches, key=lambda s: copies[s])  # the first of the fewest
        chosen.append(search)
        copies[search] += 1
    return chosen


def _await(fut: Any, ctx: SolveContext, wait: Callable[..., Any]) -> Any:
    """``fut``'s result, or None when a stop or the deadline comes first (the future is then cancelled)."""
    while ctx.stop_status() is None:
        try:
            wait([fut], timeout=POLL_S)
        except TimeoutError:
            continue
        return fut.result()
    fut.cancel()
    return None
