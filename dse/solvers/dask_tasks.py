"""What the Dask drivers share (:mod:`~dse.solvers.cpsat_distributed`, :mod:`~dse.solvers.nsga2_islands`): how
often a driver looks at its stop token and a task at its stop events, how long a stopped driver waits for
its running tasks, the stop token that a task polls, the name of the worker that runs a task, and the
clock that times a driver's tasks and its own work (:class:`TaskClock`, for :class:`~dse.pareto.DriverTimings`).

A Dask task that is already running cannot be cancelled: a driver tells it to stop by setting a named Dask
event, which the task's :class:`EventToken` polls at its safe points (at most every :data:`STOP_POLL_S`
seconds), and then waits up to :data:`STOP_GRACE_S` seconds for what the task found so far.
"""

from __future__ import annotations

import time
from typing import Any

from dse.pareto import DriverTimings
from dse.util.interrupt import StopToken

__all__ = ["POLL_S", "STOP_GRACE_S", "STOP_POLL_S", "EventToken", "TaskClock", "worker_name"]

#: Seconds between two looks at the stop token while waiting for results.
POLL_S = 0.2
#: Seconds between two looks of a running task at the run's stop event.
STOP_POLL_S = 0.25
#: After a stop, the seconds the driver waits for the running tasks (told to stop) to bring their results.
STOP_GRACE_S = 10.0


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
    ``time.perf_counter`` calls per task: :meth:`submitted` when a task leaves, :meth:`took` when its
    result is taken (with the compute time the task measured), :meth:`busy` around the driver's work
    between two waits, :meth:`regions` for the open boxes after a result."""

    def __init__(self) -> None:
        self._sent: dict[Any, float] = {}
        self._task: list[float] = []
        self._trip: list[float] = []
        self._driver: list[float] = []
        self._regions: list[tuple[float, int]] = []
        self._start: float | None = None
        self._last = 0.0
        self._since: float | None = None
        self._results = 0

    def submitted(self, fut: Any) -> None:
        self._sent[fut] = now = time.perf_counter()
        if self._start is None:
            self._start = now

    def took(self, fut: Any, compute_s: float) -> None:
        """A task's result taken now: its compute time ``compute_s`` and its round trip since submission."""
        sent = self._sent.pop(fut, None)
        if sent is not None:
            self._last = time.perf_counter()
            self._task.append(compute_s)
            self._trip.append(self._last - sent)
            self._results += 1

    def forget(self, fut: Any) -> None:
        """A task cancelled or failed: no result of it is counted."""
        self._sent.pop(fut, None)

    def woke(self) -> None:
        """The driver's wait returned: its own work starts."""
        self._since, self._results = time.perf_counter(), 0

    def waits(self) -> None:
        """The driver goes back to waiting: its work since :meth:`woke` is shared out over the results taken."""
        if self._since is not None and self._results:
            share = (time.perf_counter() - self._since) / self._results
            self._driver.extend([share] * self._results)
        self._since = None

    def regions(self, open_boxes: int) -> None:
        if self._start is not None:
            self._regions.append((time.perf_counter() - self._start, open_boxes))

    def timings(self) -> DriverTimings:
        span = self._last - self._start if self._start is not None and self._last else 0.0
        return DriverTimings(tuple(self._task), tuple(self._trip), tuple(self._driver), tuple(self._regions),
                             span)
