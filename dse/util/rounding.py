"""Rounding a float cost up to whole integer units, one way everywhere.

A cost computed in floating point lands a hair above an integer it equals on paper: ``(0.1 + 0.2) * 10``
is ``3.0000000000000004``, and rounding that up would charge a whole unit more than the hand calculation.
Every cost, bound and frame count is therefore rounded up after subtracting :data:`CEIL_SLACK`, which
is far below any unit the engine counts in (a nanosecond, a picojoule, a byte, a frame) and far above
the rounding error of the products it rounds.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

#: What a float may exceed an integer by and still round up to that integer.
CEIL_SLACK = 1e-9


def ceil_int(x: float) -> int:
    """``x`` rounded up to an integer, a value within :data:`CEIL_SLACK` above an integer rounding to it.

    Example: ``ceil_int((0.1 + 0.2) * 10)`` -> 3; ``ceil_int(3.01)`` -> 4; ``ceil_int(-0.5)`` -> 0.
    """
    return math.ceil(x - CEIL_SLACK)


def ceil_all(values: ArrayLike) -> np.ndarray:
    """:func:`ceil_int` of every element, as a float array (the caller casts it once its range is checked)."""
    return np.ceil(np.asarray(values, dtype=np.float64) - CEIL_SLACK)
