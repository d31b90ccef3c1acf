"""What the Dask drivers share (:mod:`~dse.solvers.cpsat_distributed`, :mod:`~dse.solvers.nsga2_islands`): how
often a driver looks at its stop token and a task at its stop events, how long a stopped driver waits for
its running tasks, the stop token that a task polls, and the name of the worker that runs a task.

A Dask task that is already running cannot be cancelled: a driver tells it to stop by setting a named Dask
event, which the task's :class:`EventToken` polls at its safe points (at most every :data:`STOP_POLL_S`
seconds), and then waits up to :data:`STOP_GRACE_S` seconds for what the task found so far.
"""

from __future__ import annotations

import time

from dse.util.interrupt import StopToken

__all__ = ["POLL_S", "STOP_GRACE_S", "STOP_POLL_S", "EventToken", "worker_name"]

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
