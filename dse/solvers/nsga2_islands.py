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
archive so far, never less than the ``resume`` and seed genomes (which start it). The loop that submits,
takes back and submits again, and the global archive, are :mod:`~dse.solvers.island_driver`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import Field

from dse.mapping.base import MappingProblem
from dse.pareto import FEASIBLE, INTERRUPTED, UNKNOWN, FoundBy, ParetoSet, SolveStats
from dse.solvers.common import result
from dse.solvers.context import SolveContext
from dse.solvers.dask_tasks import EventToken, TaskClock, worker_name
from dse.solvers.evolution import (
    Nsga2Options,
    feasible_members,
    hypervolume,
    initial_population,
    merge_archive,
    nsga2_algorithm,
)
from dse.solvers.island_driver import RESUBMITS, GlobalArchive, IslandDriver, epoch_seed
from dse.solvers.registry import collect_seeds

__all__ = ["RESUBMITS", "Epoch", "EpochResult", "IslandOptions", "island_task", "solve_nsga2_islands"]

# the random streams of a run, apart from its seed: an island's first population, the migrants (an epoch's:
# :func:`~dse.solvers.island_driver.epoch_seed`)
_FIRST_POPULATION, _MIGRANTS = 0, 1


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


class _Driver(IslandDriver[Epoch, EpochResult]):
    """One NSGA-II islands run on the driver's side: the islands, the global archive, the migration
    (module docstring); :meth:`run` returns the status the run ended with."""

    def __init__(self, problem: MappingProblem, ctx: SolveContext, options: IslandOptions, client: Any,
                 task: Callable[..., EpochResult], seeds: list[np.ndarray], clock: TaskClock | None = None) -> None:
        super().__init__(problem, ctx, client, task, options, options.islands, options.synchronous, clock)
        self.options = options
        self.islands = [_Island(initial_population(problem, options.pop_size, seeds,
                                                   np.random.default_rng([ctx.seed, _FIRST_POPULATION, i]),
                                                   ctx.resume)) for i in range(self.count)]
        self.archive = GlobalArchive.start(problem, ctx.resume, seeds)
        self.migration = np.random.default_rng([ctx.seed, _MIGRANTS])
        self.patience = None if options.patience is None else options.patience * self.count
        self.settled = False  # the front has not changed for ``patience``: no epoch starts any more

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
                          min(self.options.island_generations, left), epoch_seed(self.ctx.seed, i, island.epochs)))

    def absorb(self, res: EpochResult, by: FoundBy) -> None:
        """Merge an epoch's result (returned by the task ``by``) into its island and the global archive; report
        progress, ask the callback."""
        island, archive, ctx = self.islands[res.island], self.archive, self.ctx
        island.X, island.F, island.G = res.X, res.F, res.G
        island.epochs += 1
        island.generations += res.generations
        archive.merge(res.front_X, res.front_F, res.evaluations, res.generations, by)
        self.settled = self.settled or (self.patience is not None and archive.stalled >= self.patience)
        if ctx.progress.due():
            hv = hypervolume(archive.F) if len(archive.F) else 0.0
            rate = archive.evaluations / max(ctx.elapsed(), 1e-9)
            ctx.progress.update(f"{archive.merged} island epochs, {archive.evaluations:,} evaluations "
                                f"({rate:,.0f}/s), {len(archive.X)} front points, hypervolume {hv:.4g}, "
                                f"{len(self.running)} running")
        if ctx.callback is not None and ctx.callback(archive.merged, ctx.elapsed(), archive.X, archive.F):
            self.halted = True

    def outcome(self, epoch: Epoch, res: EpochResult) -> str:
        stopped = " (stopped early)" if res.generations < epoch.generations else ""
        return f"{res.generations} generations, {res.evaluations} evaluations{stopped}"

    def message(self) -> str:
        """The stats' message: the islands, the epochs, the failures, who ran what."""
        options, archive = self.options, self.archive
        mode = "synchronous" if options.synchronous else "asynchronous"
        return (f"{self.count} islands on {self.slots} worker threads, {mode} epochs of "
                f"{options.island_generations} generations with {options.migrants} migrants: "
                f"{archive.merged} epochs merged, {self.resubmitted} failed tasks submitted again; "
                f"epochs run by {archive.by_workers()}")


def solve_nsga2_islands(problem: MappingProblem, ctx: SolveContext, options: IslandOptions, client: Any,
                        task: Callable[..., EpochResult] = island_task, clock: TaskClock | None = None) -> ParetoSet:
    """NSGA-II as ``options.islands`` islands (default: one per worker thread) on the Dask ``client``'s workers
    (module docstring); ``task`` is what the workers run (:func:`island_task`; a test wraps it); ``clock``
    times the tasks (a new one unless an earlier phase of the run hands its own: the memetic search's).

    Each island runs up to ``options.generations`` generations, ``options.island_generations`` per task;
    ``options.patience``: stop once the global front has not changed for that many generations of every
    island (``patience`` times the islands, counted over the epochs merged). ``ctx.callback(epochs,
    elapsed_s, front_X, front_F)`` is called after each epoch merged (True stops the run). Returns the global
    archive's front as a :class:`ParetoSet` (nothing proven), never less than the ``resume`` and seed genomes;
    status ``time_limit`` or ``interrupted`` when cut short. Raises what a task raised once its epoch failed
    :data:`RESUBMITS` times more.
    """
    seeds = list(ctx.seeds) + (collect_seeds(problem) if options.use_heuristic_seeds else [])
    driver = _Driver(problem, ctx, options, client, task, seeds, clock)
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
