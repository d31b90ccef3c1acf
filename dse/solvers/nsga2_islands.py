"""NSGA-II as islands on a Dask cluster: each task evolves one island for an epoch, the driver keeps the
global archive and sends migrants from it.

The problem is scattered to every worker once, and the compiled kernels of its family are loaded into each
worker by a plugin (:func:`~dse.solvers.dask_tasks.load_kernels_on_workers`), outside the tasks. An island is a population of its own, started like the
serial run's (:func:`~dse.solvers.evolution.initial_population`, from the island's own random stream). A
task (:func:`island_task`) runs one *epoch* of one island: ``island_generations`` NSGA-II generations
(:func:`~dse.solvers.evolution.nsga2_algorithm`, the serial run's operators) from the island's population
plus the migrants sent with it, and returns the final population (with its objective and constraint
values, so nothing is evaluated twice) and the island's archive of the epoch: the feasible nondominated
genomes it saw. The driver (:func:`solve_nsga2_islands`) merges each archive into the global one (the
result, nondominated, as the serial run's archive is), draws ``migrants`` random members of it and submits
the island's next epoch:

* **asynchronous** (the default): as soon as an island's epoch comes back, without waiting for the others;
* **synchronous**: once every island's epoch is back, merging them in island order and drawing the migrants
  from a seeded stream in that order, so the same seed gives the same front on any number of workers.

Each epoch's random draws come from a seed of its own (the run's seed, the island, the epoch's number), so
an epoch run again gives the same result. A failed task (its worker lost, or an error) is submitted again,
up to :data:`RESUBMITS` times; Dask itself reruns the tasks of a worker that dies. A task cancelled because
the worker that died held the last copy of the scattered problem counts as failed: the problem is scattered
again (:func:`~dse.solvers.dask_tasks.scattered`) and the epoch submitted again. A stop (time limit,
Ctrl-C, SIGTERM, the callback) sets the run's Dask event, which the tasks look at after every generation
(:class:`~dse.solvers.dask_tasks.EventToken`); they return what they found, and the front is the global
archive so far, never less than the ``resume`` and seed genomes (which start it).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import Field

from dse.mapping.base import MappingProblem
from dse.pareto import FEASIBLE, INTERRUPTED, RESUME, SEED, UNKNOWN, FoundBy, ParetoSet, SolveStats
from dse.solvers.common import result
from dse.solvers.context import SolveContext
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
from dse.solvers.evolution import (
    Nsga2Options,
    feasible_members,
    hypervolume,
    initial_population,
    merge_archive,
    nsga2_algorithm,
    starting_archive,
)
from dse.solvers.registry import collect_seeds

__all__ = ["RESUBMITS", "Epoch", "EpochResult", "IslandOptions", "island_task", "solve_nsga2_islands"]

#: Times the driver submits an epoch again after its task failed, before it raises what the task raised.
RESUBMITS = 2

# the random streams of a run, apart from its seed: an island's first population, the migrants, an epoch's
_FIRST_POPULATION, _MIGRANTS, _EPOCH = 0, 1, 2


class IslandOptions(Nsga2Options):
    """NSGA-II's settings, with those of its islands (read only with a Dask client)."""

    islands: int | None = Field(default=None, ge=1, description="islands on a Dask client, each a population of "
                                "pop_size (null: one per worker thread)")
    island_generations: int = Field(default=10, ge=1, description="generations of an island per Dask task (an "
                                    "epoch), after which migrants join it")
    migrants: int = Field(default=4, ge=0, description="random members of the global front sent into an island "
                          "at each epoch")
    synchronous: bool = Field(default=False, description="islands wait for each other after every epoch: the "
                              "same front for the same seed on any number of workers")


@dataclass(frozen=True)
class Epoch:
    """One task's work: island ``island``'s epoch number ``number``, from the population ``X`` (genomes) with
    its objective values ``F`` and constraint values ``G`` as pymoo holds them (None: not evaluated yet, the
    first epoch) and the ``migrants`` (genomes) joining it; ``generations`` to run, random draws from
    ``seed``."""

    island: int
    number: int
    X: np.ndarray
    F: np.ndarray | None
    G: np.ndarray | None
    migrants: np.ndarray
    generations: int
    seed: int


@dataclass(frozen=True)
class EpochResult:
    """What an epoch's task returns: the island's final population (``X``, ``F``, ``G`` as in
    :class:`Epoch`), its archive of the epoch (``front_X``, the feasible nondominated genomes it saw, and
    their internal objective values ``front_F``), the evaluations and generations it ran, the worker, the
    task's compute time on it (``compute_s``) and when it started there (``started_at``, the worker's
    ``time.time()``)."""

    island: int
    number: int
    X: np.ndarray
    F: np.ndarray | None
    G: np.ndarray | None
    front_X: np.ndarray
    front_F: np.ndarray
    evaluations: int
    generations: int
    worker: str
    compute_s: float = 0.0
    started_at: float = 0.0


def _evaluated(X: np.ndarray, F: np.ndarray, G: np.ndarray) -> Any:
    """A pymoo population of the genomes ``X`` marked as evaluated, with the values ``F`` and ``G``."""
    from pymoo.core.population import Population

    pop = Population.new(X=X.astype(float), F=F, G=G, H=np.zeros((len(X), 0)))
    for ind in pop:
        ind.evaluated = {"F", "G", "H"}
    return pop


def island_task(problem: MappingProblem, epoch: Epoch, options: Nsga2Options, budget: float,
                stop_event: str) -> EpochResult:
    """Run one island's ``epoch`` on a worker: NSGA-II from its population and migrants for
    ``epoch.generations`` generations, ending early after the generation during which the driver set the
    Dask event ``stop_event`` or ``budget`` seconds passed. Returns the :class:`EpochResult`."""
    from pymoo.core.population import Population

    started_at, start = time.time(), time.perf_counter()
    end = time.monotonic() + budget
    token = EventToken(stop_event)
    if epoch.F is not None and epoch.G is not None:
        # a population carried over: its first step only ranks it again (and evaluates the migrants)
        sampling = Population.merge(_evaluated(epoch.X, epoch.F, epoch.G),
                                    Population.new(X=epoch.migrants.astype(float)))
        ranking = 1
    else:
        sampling, ranking = np.vstack([epoch.X, epoch.migrants]).astype(float), 0
    algorithm, adapter = nsga2_algorithm(problem, options, sampling, epoch.generations + ranking, epoch.seed)
    front_X = np.zeros((0, problem.n_genes), dtype=np.int64)
    front_F = np.zeros((0, len(problem.objectives)), dtype=np.int64)
    ran = 0
    while algorithm.has_next() and not token.stopped and time.monotonic() < end:
        algorithm.next()
        ran += 1
        front_X, front_F, _ = merge_archive(front_X, front_F, *feasible_members(problem, adapter, algorithm.pop))
    X, F, G = epoch.X, epoch.F, epoch.G
    if ran:
        pop = algorithm.pop
        X, F, G = np.rint(pop.get("X")).astype(np.int64), pop.get("F"), pop.get("G")
    return EpochResult(epoch.island, epoch.number, X, F, G, front_X, front_F, adapter.evaluations,
                       max(0, ran - ranking), worker_name(), time.perf_counter() - start, started_at)


@dataclass
class _Island:
    """The driver's view of one island: its population (as :class:`Epoch` holds it), the epochs merged and
    the generations they ran."""

    X: np.ndarray
    F: np.ndarray | None = None
    G: np.ndarray | None = None
    epochs: int = 0
    generations: int = 0


@dataclass
class _Archive:
    """The global archive (nondominated feasible genomes and their internal values), who found each of its
    genomes (``found``, by the genome's genes) and what the run counted."""

    X: np.ndarray
    F: np.ndarray
    found: dict[tuple[int, ...], FoundBy] = field(default_factory=dict)
    evaluations: int = 0
    merged: int = 0
    stalled: int = 0
    by_worker: dict[str, int] = field(default_factory=dict)

    def merge(self, res: EpochResult, by: FoundBy) -> None:
        """Add an epoch's archive, its genomes found ``by`` its task unless the archive had them; ``stalled``
        counts the island generations since the front last changed."""
        self.X, self.F, changed = merge_archive(self.X, self.F, res.front_X, res.front_F)
        self.found = {key: self.found.get(key, by) for key in self.keys()}
        self.stalled = 0 if changed else self.stalled + res.generations
        self.evaluations += res.evaluations
        self.merged += 1
        self.by_worker[by.worker] = self.by_worker.get(by.worker, 0) + 1

    def keys(self) -> list[tuple[int, ...]]:
        """The archive's genomes as tuples of ints, in its order."""
        return [tuple(row) for row in self.X.tolist()]


def _epoch_seed(seed: int, island: int, number: int) -> int:
    """The seed of an epoch's random draws, from the run's seed, the island and the epoch's number."""
    return int(np.random.SeedSequence([seed, _EPOCH, island, number]).generate_state(1)[0])


class _Driver:
    """One islands run on the driver's side: the islands, the global archive, the tasks running (module
    docstring). :meth:`run` returns the status the run ended with."""

    def __init__(self, problem: MappingProblem, ctx: SolveContext, options: IslandOptions, client: Any,
                 task: Callable[..., EpochResult], seeds: list[np.ndarray]) -> None:
        from distributed import Event

        self.problem, self.ctx, self.options, self.client, self.task = problem, ctx, options, client, task
        self.slots = max(1, sum(client.nthreads().values()))
        self.count = options.islands or self.slots
        self.islands = [_Island(initial_population(problem, options.pop_size, seeds,
                                                   np.random.default_rng([ctx.seed, _FIRST_POPULATION, i]),
                                                   ctx.resume)) for i in range(self.count)]
        self.archive = _Archive(*starting_archive(problem, [*ctx.resume, *seeds]))
        self.archive.evaluations = len(ctx.resume) + len(seeds)
        resumed = {tuple(row) for row in problem.repair(np.array(ctx.resume, dtype=np.int64).reshape(
            -1, problem.n_genes)).tolist()} if len(ctx.resume) else set()
        self.archive.found = {key: FoundBy(RESUME if key in resumed else SEED) for key in self.archive.keys()}
        self.migration = np.random.default_rng([ctx.seed, _MIGRANTS])
        self.patience = None if options.patience is None else options.patience * self.count
        self.stop_name = f"dse-stop-{uuid.uuid4().hex}"
        self.stop_event = Event(self.stop_name, client=client)
        self.shared: Any = None  # the problem, scattered to every worker once the run starts
        self.running: dict[Any, Epoch] = {}
        self.failures: dict[tuple[int, int], int] = {}
        self.resubmitted = 0
        self.held: list[tuple[EpochResult, FoundBy]] = []  # results not merged yet (synchronous: until the
        # epoch is over), each with the task that returned it
        self.halted = False  # the callback asked to stop
        self.settled = False  # the front has not changed for ``patience``: no epoch starts any more
        self.clock = TaskClock()

    def submit(self, epoch: Epoch) -> None:
        fut = self.client.submit(self.task, self.shared, epoch, self.options, max(self.ctx.remaining(), 0.01),
                                 self.stop_name, pure=False)
        self.running[fut] = epoch
        self.clock.submitted(fut, f"island {epoch.island} epoch {epoch.number}")

    def next_epoch(self, i: int) -> None:
        """Submit island ``i``'s next epoch, with migrants after its first, unless its generations, the
        run's patience or the callback say no."""
        island, archive = self.islands[i], self.archive
        left = self.options.generations - island.generations
        if left <= 0 or self.halted or self.settled:
            return
        k = min(self.options.migrants, len(archive.X)) if island.epochs else 0  # the seeds start the islands
        migrants = archive.X[np.sort(self.migration.choice(len(archive.X), size=k, replace=False))]
        self.submit(Epoch(i, island.epochs, island.X, island.F, island.G, migrants,
                          min(self.options.island_generations, left), _epoch_seed(self.ctx.seed, i, island.epochs)))

    def absorb(self, res: EpochResult, by: FoundBy) -> None:
        """Merge an epoch's result (returned by the task ``by``) into its island and the global archive; report
        progress, ask the callback."""
        island, archive, ctx = self.islands[res.island], self.archive, self.ctx
        island.X, island.F, island.G = res.X, res.F, res.G
        island.epochs += 1
        island.generations += res.generations
        archive.merge(res, by)
        self.settled = self.settled or (self.patience is not None and archive.stalled >= self.patience)
        if ctx.progress.due():
            hv = hypervolume(archive.F) if len(archive.F) else 0.0
            rate = archive.evaluations / max(ctx.elapsed(), 1e-9)
            ctx.progress.update(f"{archive.merged} island epochs, {archive.evaluations:,} evaluations "
                                f"({rate:,.0f}/s), {len(archive.X)} front points, hypervolume {hv:.4g}, "
                                f"{len(self.running)} running")
        if ctx.callback is not None and ctx.callback(archive.merged, ctx.elapsed(), archive.X, archive.F):
            self.halted = True

    def take(self, fut: Any, again: bool) -> tuple[EpochResult, FoundBy] | None:
        """``fut``'s result and the task that returned it, or None when its task failed: then the epoch is
        submitted again (``again``), or what the task raised is raised once the epoch failed
        :data:`RESUBMITS` times more."""
        epoch = self.running.pop(fut)
        try:
            res: EpochResult = fut.result()
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
        stopped = " (stopped early)" if res.generations < epoch.generations else ""
        self.clock.took(fut, res.worker, res.started_at, res.compute_s,
                        f"{res.generations} generations, {res.evaluations} evaluations{stopped}")
        return res, by

    def merge_held(self) -> None:
        """Merge the results held back, in island order."""
        back = sorted(self.held, key=lambda held: held[0].island)
        self.held.clear()
        for res, by in back:
            self.absorb(res, by)

    def run(self) -> str:
        """Run the islands until their generations, the patience, the callback, the time limit or a stop
        end them; returns the status (``feasible``, ``time_limit`` or ``interrupted``)."""
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
                        if not self.options.synchronous:  # merged and on to its next epoch at once
                            self.merge_held()
                            self.next_epoch(taken[0].island)
                if self.options.synchronous and not self.running:  # the epoch is over: merge, then go on
                    back = sorted(res.island for res, _ in self.held)
                    self.merge_held()
                    for i in back:
                        self.next_epoch(i)
        except KeyboardInterrupt:
            status = INTERRUPTED
        finally:
            self.clock.waits()
            self.stop_event.set()  # the running tasks return after their current generation
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

    def message(self) -> str:
        """The stats' message: the islands, the epochs, the failures, who ran what."""
        options, archive = self.options, self.archive
        mode = "synchronous" if options.synchronous else "asynchronous"
        runs = ", ".join(f"{w}: {n}" for w, n in sorted(archive.by_worker.items()))
        return (f"{self.count} islands on {self.slots} worker threads, {mode} epochs of "
                f"{options.island_generations} generations with {options.migrants} migrants: "
                f"{archive.merged} epochs merged, {self.resubmitted} failed tasks submitted again; "
                f"epochs run by {runs or 'none'}")


def solve_nsga2_islands(problem: MappingProblem, ctx: SolveContext, options: IslandOptions, client: Any,
                        task: Callable[..., EpochResult] = island_task) -> ParetoSet:
    """NSGA-II as ``options.islands`` islands (default: one per worker thread) on the Dask ``client``'s workers
    (module docstring); ``task`` is what the workers run (:func:`island_task`; a test wraps it).

    Each island runs up to ``options.generations`` generations, ``options.island_generations`` per task;
    ``options.patience``: stop once the global front has not changed for that many generations of every
    island (``patience`` times the islands, counted over the epochs merged). ``ctx.callback(epochs,
    elapsed_s, front_X, front_F)`` is called after each epoch merged (True stops the run). Returns the global
    archive's front as a :class:`ParetoSet` (nothing proven), never less than the ``resume`` and seed genomes;
    status ``time_limit`` or ``interrupted`` when cut short. Raises what a task raised once its epoch failed
    :data:`RESUBMITS` times more.
    """
    seeds = list(ctx.seeds) + (collect_seeds(problem) if options.use_heuristic_seeds else [])
    driver = _Driver(problem, ctx, options, client, task, seeds)
    status = driver.run()
    if ctx.token.stopped:  # a stop requested as the run ended (a callback's or the last epoch's)
        status = INTERRUPTED
    archive = driver.archive
    if len(archive.X) == 0 and status == FEASIBLE:
        status = UNKNOWN  # no feasible genome found; not a proof of infeasibility
    order = np.lexsort(archive.F.T[::-1]) if len(archive.F) else np.zeros(0, dtype=np.int64)
    stats = SolveStats(wall_s=ctx.elapsed(), evaluations=archive.evaluations,
                       generations=sum(island.generations for island in driver.islands), message=driver.message(),
                       timings=driver.clock.timings())
    keys = archive.keys()
    return result(problem, archive.X[order], "nsga2", status, stats, proven=False,
                  found_by=[archive.found[keys[k]] for k in order])
