"""A population of device assignments in the layout every evaluator shares.

Genomes are laid out in columns: ``devices`` is ``(n_ops, pop)`` with each row
contiguous, so gathers from the ``(n_ops * n_dev)`` flattened cost tables and
per-(device, genome) sums by ``bincount`` touch memory in order. Families
compute their objectives from a :class:`Population`; constraint components
(:mod:`dse.mapping.constraints`) read the same object, so index arrays such as
``cell`` and ``slot`` are built once per evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

import numpy as np

from dse.cost import CostTables


class FlatTables:
    """The cost tables flattened for ``take``: entry ``op * n_dev + device``."""

    def __init__(self, tables: CostTables) -> None:
        self.tables = tables
        self.op_base = (np.arange(tables.n_ops, dtype=np.int64) * tables.n_dev)[:, None]
        self.time = tables.time.ravel()
        self.energy = tables.energy.ravel()
        self.mem = tables.mem.ravel()
        self.allowed = tables.allowed.ravel()


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

    @cached_property
    def cell(self) -> np.ndarray:
        """Index of (op, its device) in the flattened tables, ``(n_ops, pop)``."""
        return self.devices + self.flat.op_base

    @cached_property
    def slot(self) -> np.ndarray:
        """Index of (its device, genome) in a ``(n_dev, pop)`` array, ``(n_ops, pop)``."""
        return self.devices * self.pop + np.arange(self.pop)

    def per_op(self, flat_table: np.ndarray) -> np.ndarray:
        """``table[op, device of op]`` for every op and genome, ``(n_ops, pop)``."""
        return flat_table.take(self.cell)

    def device_sum(self, flat_table: np.ndarray) -> np.ndarray:
        """Per device and genome the sum of ``table[op, device]`` over the ops on it, float ``(n_dev, pop)``."""
        m = self.tables.n_dev
        return np.bincount(self.slot.ravel(), weights=flat_table.take(self.cell).ravel(),
                           minlength=m * self.pop).reshape(m, self.pop)

    def device_count(self) -> np.ndarray:
        """Ops per device and genome, ``(n_dev, pop)``."""
        m = self.tables.n_dev
        return np.bincount(self.slot.ravel(), minlength=m * self.pop).reshape(m, self.pop)
