"""What the islands drivers share (:mod:`~dse.solvers.nsga2_islands`, :mod:`~dse.solvers.memetic_islands`,
:mod:`~dse.solvers.lns_islands`): the loop that submits one task per island and epoch, takes the results
back and submits again, and the global archive of nondominated genomes with who found each.

:class:`IslandDriver` has the family's compiled kernels loaded into every worker
(:func:`~dse.solvers.dask_tasks.load_kernels_on_workers`), scatters the problem to every worker once (again
when a dead worker took its last copy: :func:`~dse.solvers.dask_tasks.scattered`; the epochs that Dask
cancelled then count as failed), submits each island's first epoch, then
takes the results as they come: **asynchronously** (each merged and its island's next epoch submitted at
once) or **synchronously** (merged in island order once every island's epoch is back, then the next epochs
submitted). A failed task is submitted again with the same epoch, up to :data:`RESUBMITS` times. A stop
(the time limit, Ctrl-C, the callback) sets the run's Dask event, which the tasks poll
(:class:`~dse.solvers.dask_tasks.EventToken`); the driver waits up to
:data:`~dse.solvers.dask_tasks.STOP_GRACE_S` for what the running tasks found and merges it. A subclass
says what an epoch is (:meth:`IslandDriver.next_epoch`), how a result joins the run
(:meth:`IslandDriver.absorb`) and what a task's span says (:meth:`IslandDriver.outcome`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from dse.mapping.base import MappingProblem
from dse.pareto import FEASIBLE, INTERRUPTED, RESUME, SEED, FoundBy
from dse.solvers.context import SolveContext
from dse.solvers.dask_tasks import (
    POLL_S,
    STOP_GRACE_S,
    TaskClock,
    done_futures,
    load_kernels_on_workers,
    scattered,
)
from dse.solvers.evolution import merge_archive, starting_archive

__all__ = ["RESUBMITS", "GlobalArchive", "IslandDriver", "epoch_seed", "genome_key"]

#: Times the driver submits an epoch again after its task failed, before it raises what the task raised.
RESUBMITS = 2

# the random stream of an epoch, apart from the run's seed (the NSGA-II islands' first populations and
# migrants use 0 and 1)
_EPOCH = 2


class Epoch(Protocol):
    """What every epoch says: its island and its number on that island."""

    @property
    def island(self) -> int: ...

    @property
    def number(self) -> int: ...


class Result(Protocol):
    """What every epoch's result says: its island, the worker that ran it, when it started there (the
    worker's ``time.time()``) and its compute time."""

    @property
    def island(self) -> int: ...

    @property
    def worker(self) -> str: ...

    @property
    def started_at(self) -> float: ...

    @property
    def compute_s(self) -> float: ...


E = TypeVar("E", bound=Epoch)
R = TypeVar("R", bound=Result)


def epoch_seed(seed: int, island: int, number: int) -> int:
    """The seed of an epoch's random draws, from the run's seed, the island and the epoch's number."""
    return int(np.random.SeedSequence([seed, _EPOCH, island, number]).generate_state(1)[0])


def genome_key(genome: np.ndarray | Sequence[int]) -> tuple[int, ...]:
    """A genome as a tuple of ints (a dictionary key)."""
    return tuple(int(g) for g in genome)


@dataclass
class GlobalArchive:
    """The global archive (nondominated feasible genomes and their internal values), who found each of its
    genomes (``found``, by the genome's genes) and what the run counted: the evaluations, the epochs
    merged, the island steps (generations, local-search steps) since the front last changed
    (``stalled``) and the epochs per worker label."""

    X: np.ndarray
    F: np.ndarray
    found: dict[tuple[int, ...], FoundBy] = field(default_factory=dict)
    evaluations: int = 0
    merged: int = 0
    stalled: int = 0
    by_worker: dict[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, problem: MappingProblem, resume: Sequence[np.ndarray], seeds: Sequence[np.ndarray]) -> GlobalArchive:
        """The archive of the (repaired) ``resume`` and ``seeds`` genomes, each found by ``resume`` or
        ``seed``, their evaluations counted."""
        archive = cls(*starting_archive(problem, [*resume, *seeds]))
        archive.evaluations = len(resume) + len(seeds)
        resumed = {tuple(row) for row in problem.repair(np.array(resume, dtype=np.int64).reshape(
            -1, problem.n_genes)).tolist()} if len(resume) else set()
        archive.found = {key: FoundBy(RESUME if key in resumed else SEED) for key in archive.keys()}
        return archive

    def merge(self, X: np.ndarray, F: np.ndarray, evaluations: int, steps: int, by: FoundBy) -> None:
        """Add an epoch's feasible genomes ``X`` (internal values ``F``), found ``by`` its task unless the
        archive had them, after ``evaluations`` evaluations and ``steps`` island steps."""
        self.X, self.F, changed = merge_archive(self.X, self.F, X, F)
        self.found = {key: self.found.get(key, by) for key in self.keys()}
        self.stalled = 0 if changed else self.stalled + steps
        self.evaluations += evaluations
        self.merged += 1
        self.by_worker[by.worker] = self.by_worker.get(by.worker, 0) + 1

    def keys(self) -> list[tuple[int, ...]]:
        """The archive's genomes as tuples of ints, in its order."""
        return [tuple(row) for row in self.X.tolist()]

    def by_workers(self) -> str:
        """``worker 1: 3, worker 2: 3``: the epochs merged per worker label (``none`` before any)."""
        return ", ".join(f"{w}: {n}" for w, n in sorted(self.by_worker.items())) or "none"


class IslandDriver(Generic[E, R]):
    """One islands run on the driver's side (module docstring): ``count`` islands (None: one per worker
    thread of ``client``), each epoch a ``task(shared_problem, epoch, task_options, budget_s, stop_event)``
    returning its result, ``synchronous`` or not; ``clock`` times the tasks (a new one unless a run of
    several phases shares one). :meth:`run` returns the status the run ended with."""

    def __init__(self, problem: MappingProblem, ctx: SolveContext, client: Any, task: Callable[..., R],
                 task_options: Any, count: int | None, synchronous: bool, clock: TaskClock | None = None) -> None:
        from distributed import Event

        self.problem, self.ctx, self.client, self.task = problem, ctx, client, task
        self.task_options, self.synchronous = task_options, synchronous
        self.slots = max(1, sum(client.nthreads().values()))
        self.count = count or self.slots
        self.stop_name = f"dse-stop-{uuid.uuid4().hex}"
        self.stop_event = Event(self.stop_name, client=client)
        self.shared: Any = None  # the problem, scattered to every worker once the run starts
        self.running: dict[Any, E] = {}
        self.failures: dict[tuple[int, int], int] = {}
        self.resubmitted = 0
        self.held: list[tuple[R, FoundBy]] = []  # results not merged yet (synchronous: until the epoch is
        # over), each with the task that returned it
        self.halted = False  # the callback (or a proof) asked to stop
        self.clock = clock or TaskClock()

    def next_epoch(self, i: int) -> None:
        """Submit island ``i``'s next epoch (:meth:`submit`), unless the run says no more."""
        raise NotImplementedError

    def absorb(self, res: R, by: FoundBy) -> None:
        """Merge an epoch's result (returned by the task ``by``) into its island and the run."""
        raise NotImplementedError

    def outcome(self, epoch: E, res: R) -> str:
        """What the task's span says about its result (``6 generations, 96 evaluations``)."""
        raise NotImplementedError

    def submit(self, epoch: E) -> None:
        sent = time.perf_counter()
        fut = self.client.submit(self.task, self.shared, epoch, self.task_options, max(self.ctx.remaining(), 0.01),
                                 self.stop_name, pure=False)
        self.running[fut] = epoch
        self.clock.submitted(fut, f"island {epoch.island} epoch {epoch.number}", sent)

    def take(self, fut: Any, again: bool) -> tuple[R, FoundBy] | None:
        """``fut``'s result and the task that returned it, or None when its task failed: then the epoch is
        submitted again (``again``), or what the task raised is raised once the epoch failed
        :data:`RESUBMITS` times more."""
        epoch = self.running.pop(fut)
        try:
            res: R = fut.result()
        except Exception as exc:
            self.clock.lost(fut, f"failed: {type(exc).__name__}")
            tries = self.failures.get((epoch.island, epoch.number), 0) + 1
            self.failures[(epoch.island, epoch.number)] = tries
            if tries > RESUBMITS:
                raise
            if again:
                self.shared = scattered(self.client, self.problem, self.shared)  # again if lost with a worker
                self.submit(epoch)
                self.resubmitted += 1
            return None
        by = self.clock.ran_by(fut, res.worker)
        self.clock.took(fut, res.worker, res.started_at, res.compute_s, self.outcome(epoch, res))
        return res, by

    def merge_held(self) -> None:
        """Merge the results held back, in island order."""
        back = sorted(self.held, key=lambda held: held[0].island)
        self.held.clear()
        for res, by in back:
            self.absorb(res, by)

    def run(self) -> str:
        """Run the islands until no epoch is submitted any more, the callback or a proof halts them, the
        time limit or a stop ends them; returns the status (``feasible``, ``time_limit`` or ``interrupted``)."""
        status = self.ctx.stop_status() or FEASIBLE
        if status != FEASIBLE:
            return status
        load_kernels_on_workers(self.client, self.problem)
        self.shared = scattered(self.client, self.problem)
        for i in range(self.count):
            self.next_epoch(i)
        try:
            while self.running and not self.halted:
                stop = self.ctx.stop_status()
                if stop is not None:
                    status = stop
                    break
                self.clock.waits()
                try:
                    done = done_futures(list(self.running), POLL_S)
                except TimeoutError:
                    continue
                self.clock.woke()
                for fut in sorted(done, key=lambda f: self.running[f].island):
                    taken = self.take(fut, again=True)
                    if taken is not None:
                        self.held.append(taken)
                        if not self.synchronous:  # merged and on to its next epoch at once
                            self.merge_held()
                            self.next_epoch(taken[0].island)
                if self.synchronous and not self.running:  # the epoch is over: merge, then go on
                    back = sorted(res.island for res, _ in self.held)
                    self.merge_held()
                    for i in back:
                        self.next_epoch(i)
        except KeyboardInterrupt:
            status = INTERRUPTED
        finally:
            self.clock.waits()
            self.stop_event.set()  # the running tasks return at their next safe point
            if self.running:
                try:
                    done_futures(list(self.running), STOP_GRACE_S, first=False)
                except TimeoutError:
                    pass
                for fut in [f for f in self.running if f.status == "finished"]:
                    taken = self.take(fut, again=False)
                    if taken is not None:
                        self.held.append(taken)
                for fut in self.running:
                    self.clock.lost(fut, "cancelled at the stop")
                self.client.cancel(list(self.running))
            self.merge_held()
        return status
