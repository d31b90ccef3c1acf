"""The discrete-event core shared by the run-time simulators.

* :class:`EventQueue`: events at float times (seconds), ordered by time, then by
  the order they were pushed (so equal times are deterministic);
* :class:`IntEventQueue`: the same order for events at integer times (the real-time
  simulator's nanoseconds), exact at any horizon;
* :class:`Trace`: one row per executed job (or per dropped one); every summary
  metric of a simulation is computed from it, so it can be re-derived;
* :func:`energy_j`: per-resource energy of a trace, idle power included.

Example::

    q = EventQueue()
    q.push(2.0, "done", job=1)
    q.push(1.0, "arrive", job=2)
    q.pop()   # Event(time=1.0, seq=1, kind='arrive', data={'job': 2})
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, SupportsIndex

import numpy as np


@dataclass(frozen=True, order=True)
class Event:
    """One event: ``time`` (seconds of simulated time), ``kind`` and its ``data``."""

    time: float
    seq: int
    kind: str = field(compare=False)
    data: Mapping[str, Any] = field(compare=False, default_factory=dict)


class EventQueue:
    """A time-ordered queue of :class:`Event`; ties break by push order."""

    def __init__(self) -> None:
        self._heap: list[Event] = []
        self._seq = 0
        self.now = 0.0

    def push(self, time: float, kind: str, **data: Any) -> Event:
        """Schedule ``kind`` at ``time``; raises ``ValueError`` for a time before ``now``."""
        if time < self.now:
            raise ValueError(f"event {kind!r} at {time} is before the current time {self.now}")
        event = Event(float(time), self._seq, kind, data)
        self._seq += 1
        heapq.heappush(self._heap, event)
        return event

    def pop(self) -> Event:
        """The earliest event (advancing ``now`` to its time); raises ``IndexError`` when empty."""
        event = heapq.heappop(self._heap)
        self.now = event.time
        return event

    def peek_time(self) -> float:
        """The time of the earliest event, ``inf`` when the queue is empty."""
        return self._heap[0].time if self._heap else float("inf")

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)


class IntEvent(NamedTuple):
    """One event of an :class:`IntEventQueue`: integer ``time``, push order ``seq``, ``kind`` and its ``item``.

    Compared as a tuple: by time, then by ``seq`` (unique, so ``kind`` and ``item`` are never compared).
    """

    time: int
    seq: int
    kind: str
    item: Any


class IntEventQueue:
    """A queue of :class:`IntEvent` at integer times (e.g. nanoseconds); ties break by push order.

    Times stay Python integers, so events 1 apart are ordered and reported exactly at any horizon (a float
    clock in seconds stops telling single nanoseconds apart after about 2**50 ns, 13 days).
    """

    def __init__(self) -> None:
        self._heap: list[IntEvent] = []
        self._seq = 0
        self.now = 0

    def push(self, time: SupportsIndex, kind: str, item: Any = None) -> IntEvent:
        """Schedule ``kind`` (with ``item``) at ``time``, a Python or numpy integer.

        Raises ``TypeError`` for a time that is not an integer (a float) and ``ValueError`` for a time
        before ``now``.
        """
        try:
            at = operator.index(time)
        except TypeError:
            raise TypeError(f"event {kind!r} at {time!r}: the time must be an integer") from None
        if at < self.now:
            raise ValueError(f"event {kind!r} at {at} is before the current time {self.now}")
        event = IntEvent(at, self._seq, kind, item)
        self._seq += 1
        heapq.heappush(self._heap, event)
        return event

    def pop(self) -> IntEvent:
        """The earliest event (advancing ``now`` to its time); raises ``IndexError`` when empty."""
        event = heapq.heappop(self._heap)
        self.now = event.time
        return event

    def peek_time(self) -> int:
        """The time of the earliest event; raises ``IndexError`` when the queue is empty."""
        return self._heap[0].time

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)


class Trace:
    """Rows of a simulation, appended as dicts; :meth:`to_frame` returns them as a DataFrame."""

    def __init__(self, columns: Iterable[str]) -> None:
        self.columns = tuple(columns)
        self._rows: list[tuple[Any, ...]] = []

    def add(self, **row: Any) -> None:
        """Append one row; every column must be given (a missing one is a ``KeyError``)."""
        self._rows.append(tuple(row[c] for c in self.columns))

    def __len__(self) -> int:
        return len(self._rows)

    def truncate(self, length: int) -> None:
        """Keep the first ``length`` rows (drop what a cut-short run appended after them)."""
        del self._rows[length:]

    def to_frame(self):
        """The rows as a pandas DataFrame with the trace's columns."""
        import pandas as pd

        return pd.DataFrame(self._rows, columns=list(self.columns))


def energy_j(busy_s: np.ndarray, active_w: np.ndarray, idle_w: np.ndarray, horizon_s: float) -> np.ndarray:
    """Energy per resource in joules: active power while busy, idle power for the rest of ``horizon_s``.

    ``busy_s``, ``active_w``, ``idle_w``: arrays of one value per resource. Raises
    ``ValueError`` when a resource is busy longer than the horizon.
    """
    busy = np.asarray(busy_s, dtype=float)
    if np.any(busy > horizon_s * (1 + 1e-9) + 1e-12):
        raise ValueError(f"busy time {busy.max()} s exceeds the horizon {horizon_s} s")
    idle = np.clip(horizon_s - busy, 0.0, None)
    return busy * np.asarray(active_w, dtype=float) + idle * np.asarray(idle_w, dtype=float)
