"""The integer-time event queue of the real-time simulator: order, ties, refusals, exact times at long horizons."""

from __future__ import annotations

import numpy as np
import pytest

from dse.sim.core import IntEventQueue


def test_events_pop_by_time_then_in_push_order() -> None:
    queue = IntEventQueue()
    queue.push(5, "b", "first at 5")
    queue.push(3, "a")
    queue.push(5, "c", "second at 5")
    queue.push(5, "d", "third at 5")
    assert queue.peek_time() == 3 and len(queue) == 4
    popped = [queue.pop() for _ in range(4)]
    assert [(e.time, e.kind) for e in popped] == [(3, "a"), (5, "b"), (5, "c"), (5, "d")]
    assert [e.item for e in popped[1:]] == ["first at 5", "second at 5", "third at 5"]
    assert queue.now == 5 and not queue


def test_a_time_before_now_and_a_float_time_are_refused() -> None:
    queue = IntEventQueue()
    queue.push(10, "a")
    queue.pop()
    queue.push(10, "at now")  # the current time itself is fine
    with pytest.raises(ValueError, match="'late' at 9 is before the current time 10"):
        queue.push(9, "late")
    with pytest.raises(TypeError, match="must be an integer"):
        queue.push(11.0, "float")  # type: ignore[arg-type]
    assert len(queue) == 1


def test_an_empty_queue_has_no_next_time() -> None:
    queue = IntEventQueue()
    with pytest.raises(IndexError):
        queue.peek_time()
    with pytest.raises(IndexError):
        queue.pop()


def test_times_stay_exact_integers_one_ns_apart_at_a_horizon_of_ten_million_seconds() -> None:
    # 10**7 s = 10**16 ns: as float seconds both times are 1e7 (a double near 1e16 has a spacing of 2), so a
    # float clock would pop them in push order, the later one first, and report both at 10**16.
    horizon = 10**16
    queue = IntEventQueue()
    queue.push(horizon + 1, "later")
    queue.push(np.int64(horizon), "earlier")
    first, second = queue.pop(), queue.pop()
    assert (first.kind, first.time, second.kind, second.time) == ("earlier", horizon, "later", horizon + 1)
    assert type(first.time) is int and type(second.time) is int
    assert second.time - first.time == 1 and queue.now == horizon + 1
