"""The memetic search as islands on a Dask cluster: each task runs the critical-path local search of one
island for an epoch, the driver keeps the best schedule and the global front and restarts the islands from
the best; with more than one objective, NSGA-II islands then go on from everything found.

An island is a local search (:func:`~dse.solvers.local_search.local_search`) with a random stream of its
own: a task (:func:`local_search_task`) runs one *epoch*, ``island_steps`` steps from the schedule it is
given (island ``i``'s first epoch: the ``i``-th of the ``starts`` best seeds, in turn; every later epoch:
the global best), and returns the best schedule it found with its score (the makespan, ties broken by the
summed finish times, :func:`~dse.solvers.local_search.scores`) and, when feasible, its objective values.
The driver (:class:`LocalSearchDriver`, on :class:`~dse.solvers.island_driver.IslandDriver`) keeps the
best schedule over all islands (what migrates: the next epochs start from it) and the global archive of
the nondominated feasible schedules, started from the seeds and ``resume`` genomes. The epochs run
asynchronously, or synchronously (merged in island order): each epoch's kicks and moves come from its own
seed (the run's seed, the island, the epoch's number), so with ``epochs`` set the same seed gives the same
result on any number of workers. The local search has ``local_share`` of the time limit; with more than
one objective the rest goes to the NSGA-II islands (:func:`~dse.solvers.nsga2_islands.solve_nsga2_islands`),
resumed from the seeds and every schedule the epochs returned, timed by the same clock (one trace, task
numbers running on). A stop keeps the best so far, never less than the seeds and ``resume`` genomes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from dse.mapping.base import MappingProblem
from dse.pareto import (
    FEASIBLE,
    INTERRUPTED,
    SEED,
    STOPPED,
    FoundBy,
    ParetoSet,
    SolveStats,
    nondominated,
)
from dse.solvers.common import result
from dse.solvers.context import SolveContext
from dse.solvers.dask_tasks import EventToken, TaskClock, worker_name
from dse.solvers.island_driver import GlobalArchive, IslandDriver, epoch_seed, genome_key
from dse.solvers.local_search import local_search, scores
from dse.solvers.nsga2_islands import IslandOptions, solve_nsga2_islands
from dse.solvers.registry import collect_seeds
from dse.util.progress import silent

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

__all__ = ["LocalEpoch", "LocalEpochResult", "LocalSearchDriver", "LocalSearchSettings", "MemeticOptions",
           "local_search_task", "ranked_starts", "solve_memetic_islands"]


class MemeticOptions(IslandOptions):
    """The memetic search's settings, NSGA-II's (it runs after the local search) and its islands' included."""

    local_share: float | None = Field(default=None, ge=0, le=1, description="share of the time limit for the local "
                                      "search (null: all of it with one objective, else half)")
    starts: int = Field(default=1, ge=1, description="best seeds improved one after another (islands: the first "
                        "epochs start from them in turn)")
    batch: int = Field(default=48, ge=1, description="neighbours evaluated a step")
    kick_tasks: int = Field(default=8, ge=0, description="critical-path tasks sent to random devices by a kick "
                            "(after 5 steps without improvement)")
    restart_steps: int = Field(default=100, ge=1, description="steps without a new best after which a kick "
                               "starts from the best schedule")
    island_steps: int = Field(default=500, ge=1, description="local-search steps of an island per Dask task (an "
                              "epoch), after which it starts again from the best schedule of all islands")
    epochs: int | None = Field(default=None, ge=1, description="local-search epochs per island on a Dask client "
                               "(null: until the local search's share of the time ends)")

    def share_of_time(self, objectives: int) -> float:
        """The local search's share of the time limit: ``local_share``, else all of it with one objective and
        half with more."""
        return (1.0 if objectives == 1 else 0.5) if self.local_share is None else float(self.local_share)


@dataclass(frozen=True)
class LocalSearchSettings:
    """The local search's settings that every epoch shares (see :func:`local_search`)."""

    batch: int = 48
    kick_tasks: int = 8
    restart_steps: int = 100


@dataclass(frozen=True)
class LocalEpoch:
    """One task's work: island ``island``'s epoch number ``number``, ``steps`` local-search steps from the
    genome ``start``, random draws from ``seed``."""

    island: int
    number: int
    start: np.ndarray
    steps: int
    seed: int


@dataclass(frozen=True)
class LocalEpochResult:
    """What an epoch's task returns: the ``best`` genome it found and its ``score`` (:func:`scores`: the
    makespan, ties broken by the summed finish times; inf when infeasible), that genome as a front
    (``front_X``, one row when feasible, none otherwise; ``front_F`` its internal values), the evaluations
    and steps it ran, the worker, the task's compute time on it and when it started there (the worker's
    ``time.time()``)."""

    island: int
    number: int
    best: np.ndarray
    score: float
    front_X: np.ndarray
    front_F: np.ndarray
    evaluations: int
    steps: int
    worker: str
    compute_s: float = 0.0
    started_at: float = 0.0


def local_search_task(problem: MappingProblem, epoch: LocalEpoch, settings: LocalSearchSettings, budget: float,
                      stop_event: str) -> LocalEpochResult:
    """Run one island's ``epoch`` on a worker: the local search from ``epoch.start`` for ``epoch.steps``
    steps, ending early after the step during which the driver set the Dask event ``stop_event`` or
    ``budget`` seconds passed. Returns the :class:`LocalEpochResult`."""
    dag: DagProblem = problem  # type: ignore[assignment]
    started_at, start = time.time(), time.perf_counter()
    ctx = SolveContext(seed=epoch.seed, time_limit=budget, start=time.monotonic(), token=EventToken(stop_event),
                       progress=silent())
    best, evaluations, steps = local_search(dag, epoch.start, ctx, np.random.default_rng(epoch.seed), settings.batch,
                                            settings.kick_tasks, settings.restart_steps, max_steps=epoch.steps)
    ev = problem.evaluate(best[None, :])
    return LocalEpochResult(epoch.island, epoch.number, best, float(scores(dag, best[None, :])[0]),
                            best[None, :][ev.feasible], ev.F[ev.feasible].astype(np.int64), evaluations, steps,
                            worker_name(), time.perf_counter() - start, started_at)


def ranked_starts(problem: MappingProblem, pool: Sequence[np.ndarray], starts: int) -> list[np.ndarray]:
    """The ``starts`` best genomes of ``pool`` (feasible first, then by the first objective), as the serial
    memetic search ranks them."""
    if not len(pool):
        return []
    X = np.array(pool, dtype=np.int64)
    ev = problem.evaluate(X)
    return list(X[np.lexsort((ev.F[:, 0], ~ev.feasible))[: max(starts, 1)]])


class LocalSearchDriver(IslandDriver[LocalEpoch, LocalEpochResult]):
    """The local-search islands on the driver's side (module docstring): ``count`` islands of epochs of
    ``island_steps`` steps, at most ``epochs`` each (None: until the time limit or a stop), the first from
    ``starts`` in turn, the global ``archive`` (found by its labels) updated with every result. After
    :meth:`run`: ``best`` (the best genome found, from the starts on), ``best_by`` (who found it),
    ``found`` (who first returned each genome, the archive's labels included), ``returned`` (every
    genome an epoch returned, in the order merged) and ``steps``."""

    def __init__(self, problem: MappingProblem, ctx: SolveContext, client: Any, task: Callable[..., LocalEpochResult],
                 settings: LocalSearchSettings, count: int | None, synchronous: bool, island_steps: int,
                 epochs: int | None, starts: Sequence[np.ndarray], archive: GlobalArchive,
                 clock: TaskClock | None = None) -> None:
        super().__init__(problem, ctx, client, task, settings, count, synchronous, clock)
        dag: DagProblem = problem  # type: ignore[assignment]
        self.island_steps, self.epochs = island_steps, epochs
        self.starts = list(problem.repair(np.array(starts, dtype=np.int64).reshape(-1, problem.n_genes)))
        self.archive = archive
        self.found: dict[tuple[int, ...], FoundBy] = dict(archive.found)
        ranked = scores(dag, np.array(self.starts)) if self.starts else np.array([np.inf])
        first = int(np.argmin(ranked))
        self.best = self.starts[first] if self.starts else np.zeros(problem.n_genes, dtype=np.int64)
        self.best_score = float(ranked[first])
        self.best_by = self.found.get(genome_key(self.best), FoundBy(SEED))
        self.returned: list[np.ndarray] = []
        self.island_epochs = [0] * self.count
        self.steps = 0

    def next_epoch(self, i: int) -> None:
        """Submit island ``i``'s next epoch: from its start (the first) or the global best, unless the
        epochs are done or the run halted."""
        n = self.island_epochs[i]
        if self.halted or not self.starts or (self.epochs is not None and n >= self.epochs):
            return
        start = self.starts[i % len(self.starts)] if n == 0 else self.best
        self.submit(LocalEpoch(i, n, start, self.island_steps, epoch_seed(self.ctx.seed, i, n)))

    def absorb(self, res: LocalEpochResult, by: FoundBy) -> None:
        """Merge an epoch's best into the global archive and the best schedule; report progress."""
        archive, ctx = self.archive, self.ctx
        self.island_epochs[res.island] += 1
        self.steps += res.steps
        archive.merge(res.front_X, res.front_F, res.evaluations, res.steps, by)
        self.found.setdefault(genome_key(res.best), by)
        self.returned.append(res.best)
        if res.score < self.best_score:
            self.best, self.best_score, self.best_by = res.best, res.score, self.found[genome_key(res.best)]
        if ctx.progress.due():
            best = f"makespan {int(self.best_score):,}" if np.isfinite(self.best_score) else "no feasible schedule yet"
            ctx.progress.update(f"{archive.merged} island epochs, {self.steps:,} local-search steps, {best}, "
                                f"{len(self.running)} running")

    def outcome(self, epoch: LocalEpoch, res: LocalEpochResult) -> str:
        stopped = " (stopped early)" if res.steps < epoch.steps else ""
        return f"{res.steps} steps, {res.evaluations} evaluations{stopped}"

    def message(self) -> str:
        """The stats' message: the islands, the epochs, the steps, the failures, who ran what."""
        mode = "synchronous" if self.synchronous else "asynchronous"
        return (f"{self.count} islands on {self.slots} worker threads, {mode} epochs of {self.island_steps} "
                f"local-search steps: {self.archive.merged} epochs merged, {self.steps} local-search steps, "
                f"{self.resubmitted} failed tasks submitted again; epochs run by {self.archive.by_workers()}")


def solve_memetic_islands(problem: MappingProblem, ctx: SolveContext, options: MemeticOptions, client: Any,
                          task: Callable[..., LocalEpochResult] = local_search_task) -> ParetoSet:
    """The memetic search as islands on the Dask ``client``'s workers (module docstring): ``options.islands``
    local-search islands (default: one per worker thread) for ``local_share`` of the time limit (or
    ``epochs`` epochs each), then, with more than one objective, NSGA-II islands with ``options``'
    settings; ``task`` is what the workers run in the local search (a test wraps it). Returns the
    nondominated union (nothing proven) with who found each point; status ``time_limit`` or
    ``interrupted`` when cut short. Raises what a task raised once its epoch failed
    :data:`~dse.solvers.island_driver.RESUBMITS` times more."""
    single = len(problem.objectives) == 1
    share = options.share_of_time(len(problem.objectives))
    seeds = collect_seeds(problem)
    pool = [np.asarray(g, dtype=np.int64) for g in ctx.resume] + seeds
    archive = GlobalArchive.start(problem, ctx.resume, seeds)
    phase = ctx.derived(deadline=ctx.start + ctx.time_limit * share)
    driver = LocalSearchDriver(problem, phase, client, task, LocalSearchSettings(options.batch, options.kick_tasks,
                               options.restart_steps), options.islands, options.synchronous, options.island_steps,
                               options.epochs, ranked_starts(problem, pool, options.starts), archive)
    driver.run()
    stop = ctx.stop_status()
    status = stop or FEASIBLE
    labels = dict(driver.found)
    genomes = [*archive.X]
    evaluations, generations, message = archive.evaluations, 0, driver.message()
    if not single and stop is None:
        front = solve_nsga2_islands(problem, ctx.derived(resume=[*pool, *driver.returned]), options, client,
                                    clock=driver.clock)
        for p in front.points:
            labels.setdefault(genome_key(p.genome), p.found_by or FoundBy(SEED))
        genomes += [np.array(p.genome) for p in front.points]
        evaluations += front.stats.evaluations
        generations = front.stats.generations
        message += f"; then NSGA-II islands: {front.stats.message}"
        status = front.status if front.status in STOPPED else status
    if ctx.token.stopped:
        status = INTERRUPTED
    X = np.array(genomes, dtype=np.int64).reshape(-1, problem.n_genes)
    if len(X):
        F = problem.evaluate(X).F  # the archive and the front hold feasible genomes only
        X = X[nondominated(F)]  # one genome per distinct value, the archive's first
    stats = SolveStats(wall_s=ctx.elapsed(), evaluations=evaluations, generations=generations, message=message,
                       timings=driver.clock.timings())
    return result(problem, X, "memetic", status, stats, proven=False,
                  found_by=[labels.get(genome_key(x), FoundBy(SEED)) for x in X])
