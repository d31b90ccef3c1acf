"""The large-neighbourhood search as islands on a Dask cluster: each task re-solves ``island_windows``
windows of one island from the incumbent it is given, the driver keeps the global incumbent and starts
every island's next epoch from it.

First, for ``warm_share`` of the time, the local-search islands of the memetic search
(:class:`~dse.solvers.memetic_islands.LocalSearchDriver`) improve the best seed, as the serial run's local
search does. Then an island is a window search (:func:`~dse.solvers.lns_windows.search_windows`) with a
random stream and a window width of its own: a task (:func:`lns_island_task`) runs one *epoch*, up to
``island_windows`` windows (each within ``step_seconds`` and the run's remaining time, one CP-SAT search
worker each), from the incumbent it is given, and returns its best schedule, its next width and whether
a window that freed every task was proven optimal. The driver (:class:`LnsDriver`, on
:class:`~dse.solvers.island_driver.IslandDriver`) keeps the global incumbent (the shortest makespan,
feasible first, over all islands; the first found on ties) and who found it; each island's next epoch
starts from it (the migration of a one-objective search). A proof of the whole problem ends the run
(status ``optimal``). The epochs run asynchronously, or synchronously (merged in island order): each
epoch's windows and CP-SAT seeds come from its own seed (the run's seed, the island, the epoch's number),
and each window is bounded by ``window_dtime`` of CP-SAT's deterministic time, so with ``epochs`` set the
same seed gives the same incumbent on any number of workers, as far as CP-SAT is deterministic: with one
search worker it is under a deterministic limit, not under a wall-clock one (a window cut by
``step_seconds``, a model that does not build within them, or the time limit, make a run differ).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from dse.mapping.base import MappingProblem
from dse.pareto import (
    FEASIBLE,
    INTERRUPTED,
    OPTIMAL,
    RESUME,
    SEED,
    TIME_LIMIT,
    UNKNOWN,
    FoundBy,
    ParetoSet,
    SolveStats,
)
from dse.solvers.common import result
from dse.solvers.context import SolveContext
from dse.solvers.dask_tasks import EventToken, TaskClock, worker_name
from dse.solvers.island_driver import GlobalArchive, IslandDriver, epoch_seed
from dse.solvers.lns_windows import START_WIDTH, search_windows
from dse.solvers.memetic_islands import (
    LocalEpochResult,
    LocalSearchDriver,
    LocalSearchSettings,
    local_search_task,
)
from dse.solvers.registry import SolverOptions, best_seed, collect_seeds

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

__all__ = ["LnsDriver", "LnsEpoch", "LnsEpochResult", "LnsOptions", "WindowSettings", "lns_island_task",
           "solve_lns_islands"]


class LnsOptions(SolverOptions):
    """The large-neighbourhood search's settings, its islands' included (read only with a Dask client)."""

    warm_share: float = Field(default=0.5, ge=0, lt=1, description="share of the time limit for the memetic "
                              "local search first")
    step_seconds: float = Field(default=10.0, gt=0, allow_inf_nan=False,
                                description="the most seconds one window builds and solves")
    workers: int | None = Field(default=None, ge=1, description="CP-SAT's search workers (null: one per core, at most "
                                "8; islands: one per window)")
    islands: int | None = Field(default=None, ge=1, description="islands on a Dask client (null: one per worker "
                                "thread)")
    island_windows: int = Field(default=1, ge=1, description="windows of an island per Dask task (an epoch), after "
                                "which it starts again from the best schedule of all islands")
    island_steps: int = Field(default=500, ge=1, description="local-search steps of an island per Dask task in the "
                              "warm-up (warm_share)")
    epochs: int | None = Field(default=None, ge=1, description="window epochs per island on a Dask client (null: "
                               "until the time limit or a proof)")
    synchronous: bool = Field(default=False, description="islands wait for each other after every epoch, each window "
                              "bounded by window_dtime: the same incumbent for the same seed on any number of workers "
                              "as far as CP-SAT is deterministic")
    window_dtime: float = Field(default=1.0, gt=0, allow_inf_nan=False, description="CP-SAT's deterministic time "
                                "limit of a window in synchronous islands")


@dataclass(frozen=True)
class WindowSettings:
    """What every window epoch shares: a window's most wall-clock seconds and its deterministic time limit
    (None: none)."""

    step_seconds: float
    deterministic_s: float | None = None


@dataclass(frozen=True)
class LnsEpoch:
    """One task's work: island ``island``'s epoch number ``number``, ``windows`` windows from the genome
    ``incumbent``, the first ``width`` of its makespan wide, random draws from ``seed``."""

    island: int
    number: int
    incumbent: np.ndarray
    width: float
    windows: int
    seed: int


@dataclass(frozen=True)
class LnsEpochResult:
    """What an epoch's task returns: the best schedule (``incumbent``), the island's next ``width``, the
    ``windows`` re-solved and those that ``improved``, whether a window that freed every task was proven
    optimal (``whole``), the worker, the task's compute time on it and when it started there (the worker's
    ``time.time()``)."""

    island: int
    number: int
    incumbent: np.ndarray
    width: float
    windows: int
    improved: int
    whole: bool
    worker: str
    compute_s: float = 0.0
    started_at: float = 0.0


def lns_island_task(problem: MappingProblem, epoch: LnsEpoch, settings: WindowSettings, budget: float,
                    stop_event: str) -> LnsEpochResult:
    """Run one island's ``epoch`` on a worker: up to ``epoch.windows`` windows with one CP-SAT search worker,
    ending early once the driver set the Dask event ``stop_event`` (the current window stops within
    milliseconds) or ``budget`` seconds passed. Returns the :class:`LnsEpochResult`."""
    dag: DagProblem = problem  # type: ignore[assignment]
    started_at, start = time.time(), time.perf_counter()
    end = time.monotonic() + budget
    token = EventToken(stop_event)
    out = search_windows(dag, epoch.incumbent, np.random.default_rng(epoch.seed), epoch.width, settings.step_seconds,
                         1, token, go_on=lambda n: n < epoch.windows and not token.stopped,
                         remaining=lambda: max(0.0, end - time.monotonic()), deterministic_s=settings.deterministic_s)
    return LnsEpochResult(epoch.island, epoch.number, out.incumbent, out.width, out.windows, out.improved, out.whole,
                          worker_name(), time.perf_counter() - start, started_at)


class LnsDriver(IslandDriver[LnsEpoch, LnsEpochResult]):
    """The window islands on the driver's side (module docstring), from ``incumbent`` (found ``by``). After
    :meth:`run`: ``incumbent``, ``by``, ``whole`` (a window of every task proven optimal), ``windows``
    and ``improved`` (over all epochs merged), ``merged``."""

    def __init__(self, problem: MappingProblem, ctx: SolveContext, client: Any, task: Callable[..., LnsEpochResult],
                 options: LnsOptions, incumbent: np.ndarray, by: FoundBy, clock: TaskClock | None = None) -> None:
        settings = WindowSettings(options.step_seconds, options.window_dtime if options.synchronous else None)
        super().__init__(problem, ctx, client, task, settings, options.islands, options.synchronous, clock)
        self.options = options
        self.incumbent, self.by = incumbent, by
        self.value = self.ranking(incumbent)
        self.widths = [START_WIDTH] * self.count
        self.island_epochs = [0] * self.count
        self.windows = self.improved = self.merged = 0
        self.whole = False
        self.by_worker: dict[str, int] = {}

    def ranking(self, genome: np.ndarray) -> tuple[bool, float]:
        """``(infeasible, makespan)`` of ``genome``: the smaller, the better."""
        ev = self.problem.evaluate(genome[None, :])
        return not bool(ev.feasible[0]), float(ev.F[0, 0])

    def next_epoch(self, i: int) -> None:
        """Submit island ``i``'s next epoch from the global incumbent, unless its epochs are done or the run
        halted (a proof, or a stop)."""
        n = self.island_epochs[i]
        if self.halted or (self.options.epochs is not None and n >= self.options.epochs):
            return
        self.submit(LnsEpoch(i, n, self.incumbent, self.widths[i], self.options.island_windows,
                             epoch_seed(self.ctx.seed, i, n)))

    def absorb(self, res: LnsEpochResult, by: FoundBy) -> None:
        """Take an epoch's schedule as the global incumbent when it is better; a proof halts the run."""
        self.island_epochs[res.island] += 1
        self.widths[res.island] = res.width
        self.windows += res.windows
        self.improved += res.improved
        self.merged += 1
        self.by_worker[by.worker] = self.by_worker.get(by.worker, 0) + 1
        value = self.ranking(res.incumbent)
        if value < self.value:
            self.incumbent, self.value, self.by = res.incumbent, value, by
        if res.whole:  # the whole problem solved to optimality: its schedule is as short as any
            self.whole = self.halted = True
        if self.ctx.progress.due():
            self.ctx.progress.update(f"{self.merged} island epochs, {self.windows} windows, makespan "
                                     f"{int(self.value[1]):,}, {len(self.running)} running")

    def outcome(self, epoch: LnsEpoch, res: LnsEpochResult) -> str:
        end = " (whole problem proven optimal)" if res.whole else (
            " (stopped early)" if res.windows < epoch.windows else "")
        return f"{res.windows} windows, {res.improved} improved{end}"

    def message(self) -> str:
        """The stats' message: the islands, the epochs, the windows, the failures, who ran what."""
        mode = "synchronous" if self.synchronous else "asynchronous"
        runs = ", ".join(f"{w}: {n}" for w, n in sorted(self.by_worker.items())) or "none"
        return (f"{self.count} islands on {self.slots} worker threads, {mode} epochs of "
                f"{self.options.island_windows} windows: {self.merged} epochs merged, {self.windows} windows "
                f"re-solved, {self.improved} improved, {self.resubmitted} failed tasks submitted again; epochs run "
                f"by {runs}")


def solve_lns_islands(problem: MappingProblem, ctx: SolveContext, options: LnsOptions, client: Any,
                      task: Callable[..., LnsEpochResult] = lns_island_task,
                      warm_task: Callable[..., LocalEpochResult] = local_search_task) -> ParetoSet:
    """The large-neighbourhood search as islands on the Dask ``client``'s workers (module docstring), from the
    best of the heuristics, the baselines and ``ctx.resume``; ``task`` and ``warm_task`` are what the
    workers run (a test wraps them). Returns the global incumbent with who found it: status ``optimal``
    (proven) once a window of every task is proven optimal, ``feasible`` once every island ran ``epochs``
    epochs, else ``time_limit`` or ``interrupted`` (nothing proven). Raises what a task raised once its
    epoch failed :data:`~dse.solvers.island_driver.RESUBMITS` times more."""
    seeds = collect_seeds(problem)
    pool = [np.asarray(g, dtype=np.int64) for g in ctx.resume] + seeds
    first = best_seed(problem, pool)
    if first is None:  # no seed to improve (a dag problem always has its single-device baselines)
        return result(problem, np.zeros((0, problem.n_genes), dtype=np.int64), "lns", TIME_LIMIT,
                      SolveStats(wall_s=ctx.elapsed(), message="no seed to start from"))
    resumed = any(np.array_equal(first, g) for g in ctx.resume)
    incumbent, by, clock, warm_message = first, FoundBy(RESUME if resumed else SEED), TaskClock(), ""
    if options.warm_share > 0:
        warm = LocalSearchDriver(problem, ctx.derived(deadline=ctx.start + ctx.time_limit * options.warm_share),
                                 client, warm_task, LocalSearchSettings(), options.islands, options.synchronous,
                                 options.island_steps, None, [first], GlobalArchive.start(problem, ctx.resume, seeds),
                                 clock)
        warm.run()
        incumbent, by = warm.best, warm.best_by
        warm_message = f"local search: {warm.message()}; "
    driver = LnsDriver(problem, ctx, client, task, options, incumbent, by, clock)
    status = driver.run()
    if driver.whole:
        status = OPTIMAL
    elif ctx.token.stopped:
        status = INTERRUPTED
    stats = SolveStats(wall_s=ctx.elapsed(), message=f"{warm_message}windows: {driver.message()}",
                       timings=clock.timings())
    feasible = not driver.value[0]
    genomes = driver.incumbent[None, :] if feasible else np.zeros((0, problem.n_genes), dtype=np.int64)
    if status == FEASIBLE and not feasible:
        status = UNKNOWN  # no feasible schedule found; not a proof of infeasibility
    return result(problem, genomes, "lns", status, stats, proven=driver.whole, found_by=[driver.by] if feasible else [])
