"""The library's argument checks: a wrong argument to a public function is a ``TypeError`` (or a
``ValueError`` for a value of the right type out of its domain) naming the function, the argument,
what it takes and what it was given, raised at the boundary before any internal code sees it.

Example::

    expect(problem, MappingProblem, "dse.solve", "problem", hint="build one with dse.load_problem(spec)")
    # TypeError: dse.solve: problem must be of type MappingProblem, got str 'quickstart'
    #            (build one with dse.load_problem(spec))
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def given(value: Any) -> str:
    """What a caller gave, for a message: its type and, for a plain value, a short excerpt
    (``str 'quickstart'``; an object of a class of its own is named by its type alone)."""
    if not isinstance(value, str | bytes | numbers.Number | bool | list | tuple | dict | type(None)):
        return type(value).__name__
    text = repr(value)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"


def _names(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))


def expect(value: Any, kind: type[T] | tuple[type, ...], where: str, name: str, hint: str = "") -> T:
    """``value`` when it is an instance of ``kind``; raises ``TypeError`` naming ``where`` (the public
    function), the argument ``name``, the expected type(s), what was given and ``hint`` (what to call)."""
    if isinstance(value, kind):
        return value  # type: ignore[return-value]
    raise TypeError(f"{where}: {name} must be of type {_names(kind)}, got {given(value)}" + (f" ({hint})" if hint else ""))


def expect_items(values: Any, kind: type | tuple[type, ...], where: str, name: str, hint: str = "") -> list[Any]:
    """``values`` as a list when it is a sequence (not a string) whose items are all instances of ``kind``;
    raises ``TypeError`` naming ``where``, ``name``, the expected type and the first item (or value) that
    is not."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise TypeError(f"{where}: {name} must be a sequence of {_names(kind)}, got {given(values)}"
                        + (f" ({hint})" if hint else ""))
    for k, item in enumerate(values):
        expect(item, kind, where, f"{name}[{k}]", hint)
    return list(values)


def real_vector(value: Any, length: int, where: str, name: str) -> np.ndarray:
    """``value`` as a float array of ``length`` finite numbers (a reference point, say). Raises
    ``TypeError`` when it is not a sequence of real numbers (booleans and strings are not numbers) and
    ``ValueError`` when its length is not ``length`` or a value is NaN or infinite."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(f"{where}: {name} must be a sequence of {length} numbers, got {given(value)}")
    items = list(np.asarray(value, dtype=object).ravel()) if isinstance(value, np.ndarray) else list(value)
    bad = next((v for v in items if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real)), None)
    if bad is not None:
        raise TypeError(f"{where}: {name} must hold numbers, got {given(bad)}")
    if len(items) != length:
        raise ValueError(f"{where}: {name} has {len(items)} value{'s' * (len(items) != 1)}, "
                         f"one per objective is {length}")
    if not all(math.isfinite(float(v)) for v in items):
        raise ValueError(f"{where}: {name} = {[float(v) for v in items]} must be finite numbers")
    return np.array([float(v) for v in items], dtype=np.float64)


def relative_error(value: Any, where: str, name: str) -> float | list[float]:
    """``value`` (a relative error, or one per point) as a float or a list of floats. Raises ``TypeError``
    naming the argument when it is not a real number or a sequence of them (booleans and strings are not)
    and ``ValueError`` when one is negative, NaN or infinite."""
    def number(v: Any) -> bool:
        return isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)

    def checked(v: Any) -> float:
        if not (math.isfinite(float(v)) and float(v) >= 0):
            raise ValueError(f"{where}: {name} = {v} must be a finite relative error >= 0 (e.g. 0.1)")
        return float(v)

    if number(value):
        return checked(value)
    if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes):
        items = list(np.asarray(value, dtype=object).ravel()) if isinstance(value, np.ndarray) else list(value)
        bad = next((v for v in items if not number(v)), None)
        if bad is None:
            return [checked(v) for v in items]
        raise TypeError(f"{where}: {name} must hold numbers (relative errors, e.g. 0.1), got {given(bad)}")
    raise TypeError(f"{where}: {name} must be a number or a sequence of numbers (relative errors, e.g. 0.1), "
                    f"got {given(value)}")
