"""A population of device assignments in the layout every evaluator shares.

Genomes are laid out in columns: ``devices`` is ``(n_ops, pop)`` with each row
contiguous, so gathers from the ``(n_ops * n_dev)`` flattened cost tables and
per-(device, genome) sums by ``bincount`` touch memory in order. Families
compute their objectives from a :class:`Population`; constraint components
(:mod:`dse.mapping.constraints`) read the same object, so index arrays such as
``cell`` and ``slot`` are built once per evaluation.

Large intermediate arrays live in a :class:`Workspace` that a problem keeps
per thread and reuses from chunk to chunk: fresh arrays of a few hundred KB
are served by ``mmap`` and cost a page fault per page on first touch, which
halved evaluation throughput before the buffers were reused. Arrays handed
back to callers (objectives, constraint values, metrics) are never workspace
buffers.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from functools import cached_property

import numpy as np

from dse.cost import CostTables


class Workspace(threading.local):
    """Named scratch arrays reused across evaluations (one set per thread)."""

    def __init__(self) -> None:
        self._buffers: dict[tuple[str, str], np.ndarray] = {}

    def __reduce__(self) -> tuple[type[Workspace], tuple[()]]:
        """Pickled empty: scratch space, rebuilt where it is used (a problem sent to a Dask worker)."""
        return (Workspace, ())

    def array(self, name: str, shape: tuple[int, ...], dtype: type = np.int64) -> np.ndarray:
        """An uninitialized array of ``shape``, backed by the buffer ``name`` (grown when too small)."""
        size = math.prod(shape)
        key = (name, np.dtype(dtype).str)
        buf = self._buffers.get(key)
        if buf is None or buf.size < size:
            buf = np.empty(size, dtype=dtype)
            self._buffers[key] = buf
        return buf[:size].reshape(shape)


class FlatTables:
    """The cost tables flattened for ``take`` (entry ``op * n_dev + device``), and the problem's workspace."""

    def __init__(self, tables: CostTables) -> None:
        self.tables = tables
        self.op_base = (np.arange(tables.n_ops, dtype=np.int64) * tables.n_dev)[:, None]
        self.time = tables.time.ravel()
        self.energy = tables.energy.ravel()
        self.mem = tables.mem.ravel()
        self.allowed = tables.allowed.ravel()
        self.time_float = self.time.astype(np.float64)  # bincount weights: float tables spare a conversion
        self.mem_float = self.mem.astype(np.float64)
        self.workspace = Workspace()


class Population:
    """Device per op for ``pop`` genomes (``devices``: int64 ``(n_ops, pop)``) plus computed ``values``.

    ``values`` maps quantity names (``period``, ``energy``, ``latency``,
    ``makespan``...) to ``(pop,)`` arrays in internal units; constraints read
    the quantities they bound from it.
    """

    def __init__(self, flat: FlatTables, devices: np.ndarray, values: Mapping[str, np.ndarray] | None = None) -> None:
        self.flat = flat
        self.tables = flat.tables
        self.devices = devices
        self.pop = devices.shape[1]
        self.values: dict[str, np.ndarray] = dict(values or {})

    @classmethod
    def from_genomes(cls, flat: FlatTables, X: np.ndarray) -> Population:
        """The population of device genes ``X`` (pop, n_ops), transposed into the workspace.

        ``np.take`` into workspace arrays uses ``mode="clip"``: with ``out`` the default mode buffers a copy,
        and every index here is in range by construction."""
        devices = flat.workspace.array("devices", (X.shape[1], X.shape[0]))
        np.copyto(devices, X.T)
        return cls(flat, devices)

    def scratch(self, name: str, rows: int, dtype: type = np.int64) -> np.ndarray:
        """A workspace array of shape ``(rows, pop)`` (uninitialized)."""
        return self.flat.workspace.array(name, (rows, self.pop), dtype)

    @cached_property
    def cell(self) -> np.ndarray:
        """Index of (op, its device) in the flattened tables, ``(n_ops, pop)``."""
        return np.add(self.devices, self.flat.op_base, out=self.scratch("cell", len(self.devices)))

    @cached_property
    def slot(self) -> np.ndarray:
        """Index of (its device, genome) in a ``(n_dev, pop)`` array, ``(n_ops, pop)``."""
        out = np.multiply(self.devices, self.pop, out=self.scratch("slot", len(self.devices)))
        out += np.arange(self.pop)
        return out

    def per_op(self, key: str) -> np.ndarray:
        """``table[op, device of op]`` for every op and genome, ``(n_ops, pop)``, of the flat table ``key``
        (``time``, ``energy``, ``mem``, ``allowed``); a workspace array, valid until the next call with ``key``."""
        table = getattr(self.flat, key)
        return np.take(table, self.cell, out=self.scratch(f"op:{key}", len(self.devices), table.dtype.type),
                       mode="clip")

    def device_sum(self, key: str) -> np.ndarray:
        """Per device and genome the sum of ``table[op, device]`` over the ops on it, float ``(n_dev, pop)``,
        for ``key`` ``time`` or ``mem`` (summed in float64 from the float copy of the table)."""
        m = self.tables.n_dev
        return np.bincount(self.slot.ravel(), weights=self.per_op(f"{key}_float").ravel(),
                           minlength=m * self.pop).reshape(m, self.pop)

    def device_count(self) -> np.ndarray:
        """Ops per device and genome, ``(n_dev, pop)``."""
        m = self.tables.n_dev
        return np.bincount(self.slot.ravel(), minlength=m * self.pop).reshape(m, self.pop)
