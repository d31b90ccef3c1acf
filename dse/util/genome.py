"""An immutable genome backed by an integer array: a point's genome without one Python int per gene.

Fronts of large workloads hold genomes of thousands of genes; converting each to a tuple of
Python ints cost more than the heuristic that found it (about 30 ns a gene). :class:`Genome`
keeps a read-only ``int64`` copy and behaves as a tuple of ints where it is read: it iterates,
indexes, slices, has a length, compares equal to the tuple of the same values and hashes like it
(so tuples and genomes mix in sets and dicts), converts with ``np.asarray`` without a copy and
pickles small.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np


class Genome(Sequence[int]):
    """A read-only sequence of ints stored as one ``int64`` array (see the module docstring)."""

    __slots__ = ("_values", "_hash")

    def __init__(self, values: Sequence[int] | np.ndarray) -> None:
        array = np.array(values, dtype=np.int64).reshape(-1)  # a copy: the caller's array may change
        array.flags.writeable = False
        self._values = array
        self._hash: int | None = None

    @property
    def values(self) -> np.ndarray:
        """The genes as a read-only ``int64`` array."""
        return self._values

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[int, ...]: ...

    def __getitem__(self, index: int | slice) -> int | tuple[int, ...]:
        if isinstance(index, slice):
            return tuple(self._values[index].tolist())
        return int(self._values[index])

    def __iter__(self) -> Iterator[int]:
        return iter(self._values.tolist())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is None or np.dtype(dtype) == self._values.dtype:
            return self._values.copy() if copy else self._values
        return self._values.astype(dtype)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Genome):
            return bool(np.array_equal(self._values, other._values))
        if isinstance(other, tuple):
            return len(other) == len(self._values) and tuple(self._values.tolist()) == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self._values.tolist()))
        return self._hash

    def __repr__(self) -> str:
        return f"Genome({self._values.tolist()!r})"

    def __reduce__(self) -> tuple[type[Genome], tuple[np.ndarray]]:
        return Genome, (self._values,)
