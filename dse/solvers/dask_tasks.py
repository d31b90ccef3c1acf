"""What the Dask drivers share (:mod:`~dse.solvers.cpsat_distributed`, :mod:`~dse.solvers.nsga2_islands`): how
often a driver looks at its stop token and a task at its stop events, how long a stopped driver waits for
its running tasks, the stop token that a task polls, the name of the worker that runs a task, the
clock that times a driver's tasks and its own work (:class:`TaskClock`, for :class:`~dse.pareto.DriverTimings`),
and the worker plugin that loads a family's compiled kernels into every worker once
(:func:`load_kernels_on_workers`).

A Dask task that is already running cannot be cancelled: a driver tells it to stop by setting a named Dask
event, which the task's :class:`EventToken` polls at its safe points (at most every :data:`STOP_POLL_S`
seconds), and then waits up to :data:`STOP_GRACE_S` seconds for what the task found so far.
"""

from __future__ import annotations

import asyncio
import functools
import time
from concurrent.futures import CancelledError
from typing import Any

import numpy as np

from dse.mapping.base import MappingProblem
from dse.mapping.registry import family, family_of
from dse.pareto import NO_RESULT, DriverTimings, FoundBy, TaskSpan
from dse.solvers.registry import collect_seeds
from dse.util.interrupt import StopToken
from dse.util.jit import cache_is_warm

__all__ = ["POLL_S", "STOP_GRACE_S", "STOP_POLL_S", "EventToken", "TaskClock", "done_futures", "load_kernels",
           "load_kernels_on_workers", "scattered", "worker_name"]

#: Seconds between two looks at the stop token while waiting for results.
POLL_S = 0.2
#: Seconds between two looks of a running task at the run's stop event.
STOP_POLL_S = 0.25
#: After a stop, the seconds the driver waits for the running tasks (told to stop) to bring their results.
STOP_GRACE_S = 10.0


def scattered(client: Any, problem: MappingProblem, shared: Any = None) -> Any:
    """``shared``, the future of ``problem`` scattered to the workers, while a worker still holds it; else
    ``problem`` scattered to every worker again. A broadcast does not keep a copy on every worker: Dask's
    active memory manager drops the replicas that no task waits for (every 2 s by default), so a worker
    that dies may take the last copy with it, and every task given it is then cancelled."""
    if shared is not None and shared.status == "finished":
        return shared
    return client.scatter(problem, broadcast=True, hash=False)


def done_futures(futures: list[Any], timeout: float, first: bool = True) -> set[Any]:
    """The ``futures`` done (finished, failed or cancelled: their input lost with a worker) once the first
    of them is (``first``) or all of them are, within ``timeout`` seconds; raises TimeoutError past it.
    Unlike ``distributed.wait``, which raises when one of them was cancelled, it returns the cancelled ones
    with the others."""
    from distributed import wait

    try:
        wait(futures, timeout=timeout, return_when="FIRST_COMPLETED" if first else "ALL_COMPLETED")
    except CancelledError:
        pass
    return {fut for fut in futures if fut.status != "pending"}


def load_kernels_on_workers(client: Any, problem: MappingProblem) -> str | None:
    """Register on the Dask ``client`` the worker plugin that loads the compiled kernels of ``problem``'s
    family into every worker process, when the family has any (``Family.compiled_kernels``): the workers
    present, before this returns, and those that join later, as they start. Registered once per client,
    under a name of its family's (``dse-kernels-dag``): a later run finds it there, and nothing runs again.
    Returns that name, or None (nothing registered) for a family without compiled kernels."""
    if not family_of(problem).compiled_kernels:
        return None
    name = f"dse-kernels-{problem.family}"
    client.register_plugin(_kernel_loader_class()(problem.family), name=name)
    return name


def load_kernels(family_name: str) -> float | None:
    """Load the compiled kernels of the family ``family_name`` into this process from numba's cache, by
    collecting the heuristic seeds of its small example (``examples(0)``) and evaluating them: the kernels
    that every run of the family loads (the decoder, the heuristics'); the exact mode's lower bounds load
    with a worker's first model. Returns the seconds it took, or None when the cache is cold
    (:func:`~dse.util.jit.cache_is_warm`): nothing is compiled then (tens of seconds), and the tasks compile
    the kernels on first use, as they would have."""
    if not cache_is_warm():
        return None
    start = time.perf_counter()
    example = family(family_name).examples(0)
    example.evaluate(np.array(collect_seeds(example), dtype=np.int64))
    return time.perf_counter() - start


@functools.cache
def _kernel_loader_class() -> type[Any]:
    """The worker plugin's class, made on first use: ``distributed`` is imported only by a run on a cluster."""
    from distributed import WorkerPlugin

    class KernelLoader(WorkerPlugin):
        """Loads the compiled kernels of the family ``family_name`` (:func:`load_kernels`) into the worker it
        is set up on, in a thread of the worker's (its event loop goes on answering the scheduler meanwhile).
        ``loaded_s``: the seconds it took there (None: the cache was cold, nothing was loaded)."""

        idempotent = True  # the scheduler keeps the plugin first registered under its name

        def __init__(self, family_name: str) -> None:
            self.family_name = family_name
            self.loaded_s: float | None = None

        async def setup(self, worker: Any) -> None:
            self.loaded_s = await asyncio.get_running_loop().run_in_executor(None, load_kernels, self.family_name)

    return KernelLoader


class EventToken(StopToken):
    """A worker's stop token that also asks, at most every :data:`STOP_POLL_S` seconds, whether the
    driver set one of the Dask events ``names``: the run's (a stop or the deadline) or the task's own (say,
    its region became dominated)."""

    def __init__(self, *names: str) -> None:
        from distributed import Event

        super().__init__()
        self._events = [Event(name) for name in names]
        self._next = 0.0

    @property
    def stopped(self) -> bool:
        if self.signum is None and time.monotonic() >= self._next:
            self._next = time.monotonic() + STOP_POLL_S
            if any(event.is_set() for event in self._events):
                self.request()
        return self.signum is not None


def worker_name() -> str:
    """The name of the Dask worker running the caller (``local`` outside a worker: the synchronous scheduler)."""
    from distributed import get_worker

    try:
        return str(get_worker().name)
    except ValueError:  # not on a worker (the synchronous scheduler)
        return "local"


class TaskClock:
    """A driver's record of where its time went (:class:`~dse.pareto.DriverTimings`), a few
    ``time.perf_counter`` calls per task: :meth:`submitted` when a task leaves (it gets its number),
    :meth:`took` when its result is taken (with the worker that ran it, when it started there and the
    compute time the task measured), :meth:`lost` when it is cancelled or failed, :meth:`woke` and
    :meth:`waits` around the driver's work between two waits, :meth:`regions` for the open boxes after a
    result. Workers get labels ``worker 1``, ``worker 2``, ... in the order their first result is taken
    (:meth:`ran_by`); a task's span on its worker is the worker's wall clock (``time.time()`` when it
    started) less the driver's at the clock's creation."""

    def __init__(self) -> None:
        self._zero = time.perf_counter()
        self._epoch = time.time()  # the driver's wall clock at its start: the origin of the tasks' spans
        self._sent: dict[Any, float] = {}
        self._tasks: dict[Any, tuple[int, str]] = {}  # a task in flight: its number and what it does
        self._spans: list[TaskSpan] = []
        self._labels: dict[str, str] = {}
        self._task: list[float] = []
        self._trip: list[float] = []
        self._driver: list[float] = []
        self._busy: list[tuple[float, float, int]] = []
        self._regions: list[tuple[float, int]] = []
        self._start: float | None = None
        self._last = 0.0
        self._since: float | None = None
        self._results = 0

    def submitted(self, fut: Any, name: str, at: float | None = None) -> int:
        """A task doing ``name`` (a region, an island's epoch) left at ``at`` (``time.perf_counter()`` read
        before ``client.submit``: a worker thread may start it before the call returns; None: now); returns
        its number (1 = the first)."""
        self._sent[fut] = now = time.perf_counter() if at is None else at
        number = len(self._spans) + len(self._tasks) + 1
        self._tasks[fut] = (number, name)
        if self._start is None:
            self._start = now
        return number

    def ran_by(self, fut: Any, dask_worker: str) -> FoundBy:
        """The label of the worker named ``dask_worker`` (given now when it is new) and ``fut``'s task number."""
        label = self._labels.setdefault(dask_worker, f"worker {len(self._labels) + 1}")
        number = self._tasks[fut][0] if fut in self._tasks else None
        return FoundBy(label, number)

    def took(self, fut: Any, dask_worker: str, started_at: float, compute_s: float, outcome: str) -> None:
        """A task's result taken now: it ran on ``dask_worker`` from ``started_at`` (the worker's
        ``time.time()``) for ``compute_s`` seconds and ended with ``outcome``; its round trip since submission."""
        sent = self._sent.pop(fut, None)
        if sent is None:
            return
        label = self.ran_by(fut, dask_worker).worker
        number, name = self._tasks.pop(fut)
        start = started_at - self._epoch
        self._spans.append(TaskSpan(number, label, dask_worker, name, outcome, start, start + compute_s))
        self._last = time.perf_counter()
        self._task.append(compute_s)
        self._trip.append(self._last - sent)
        self._results += 1

    def lost(self, fut: Any, outcome: str) -> None:
        """A task cancelled or failed (``outcome`` says which): no result of it is counted, and its span is
        its time from submission to now on the driver's clock (which worker ran it is not known)."""
        sent = self._sent.pop(fut, None)
        if sent is None:
            return
        number, name = self._tasks.pop(fut)
        self._spans.append(TaskSpan(number, NO_RESULT, "", name, outcome, sent - self._zero,
                                    time.perf_counter() - self._zero))

    def woke(self) -> None:
        """The driver's wait returned: its own work starts."""
        self._since, self._results = time.perf_counter(), 0

    def waits(self) -> None:
        """The driver goes back to waiting: its work since :meth:`woke` is shared out over the results taken."""
        if self._since is not None:
            now = time.perf_counter()
            self._busy.append((self._since - self._zero, now - self._zero, self._results))
            if self._results:
                self._driver.extend([(now - self._since) / self._results] * self._results)
        self._since = None

    def regions(self, open_boxes: int) -> None:
        if self._start is not None:
            self._regions.append((time.perf_counter() - self._start, open_boxes))

    def timings(self) -> DriverTimings:
        span = self._last - self._start if self._start is not None and self._last else 0.0
        tasks = sorted(self._spans, key=lambda t: t.task)
        return DriverTimings(tuple(self._task), tuple(self._trip), tuple(self._driver), tuple(self._regions),
                             span, tuple(tasks), tuple(self._busy))
