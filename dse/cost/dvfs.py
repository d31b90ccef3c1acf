"""DVFS operating points as integer cost tables: per (level, op, device) time and energy.

A platform device may list operating points (``dvfs:`` in its platform file,
:class:`~dse.model.platform.OperatingPoint`): a frequency with factors on the
compute-bound time and on the dynamic power. The roofline cost model turns
them into :class:`LevelTables`, the ``levels`` field of the
:class:`~dse.cost.CostTables` it returns (:func:`levels_of` reads them), so that
every consumer of the tables sees the same integers; the ``pipeline`` family then adds one frequency
gene per device with two or more levels.

Example::

    tables = RooflineCostModel().tables(workload, platform)
    levels = levels_of(tables)        # None when no device has two operating points
    levels.time[l, op, dev]           # ns at level l of device dev
"""

from __future__ import annotations

import numpy as np

from dse.cost.tables import CostTables, LevelTables
from dse.util.rounding import ceil_all

__all__ = ["LevelTables", "attach_levels", "levels_of", "scaled_levels"]


def attach_levels(tables: CostTables, levels: LevelTables) -> CostTables:
    """``tables`` with ``levels`` as their operating-point costs (a copy: the tables are frozen; the
    levels are its ``levels`` field).

    Raises ``ValueError`` when the shapes do not match the tables.
    """
    return tables.replaced(levels=levels)


def levels_of(tables: CostTables) -> LevelTables | None:
    """The operating-point costs attached to ``tables``, or ``None`` when no device has two levels."""
    levels = tables.levels
    return levels if levels is not None and len(levels.devices) else None


def scaled_levels(tables: CostTables, time_scale: np.ndarray, power_scale: np.ndarray,
                  freq_mhz: tuple[tuple[float, ...], ...] | None = None) -> LevelTables:
    """Levels made by scaling the tables' whole op time (``time_scale[d, l]``) and dynamic power
    (``power_scale[d, l]``) per device; NaN marks a level a device lacks.

    For tests and synthetic instances: the roofline model scales only the compute-bound part.
    """
    m, n_lv = time_scale.shape
    count = (~np.isnan(time_scale)).sum(axis=1).astype(np.int64)
    time = np.empty((n_lv, tables.n_ops, m), dtype=np.int64)
    energy = np.empty_like(time)
    for d in range(m):
        for level in range(n_lv):
            lv = min(level, int(count[d]) - 1)
            ts, ps = time_scale[d, lv], power_scale[d, lv]
            time[level, :, d] = np.maximum(1, ceil_all(tables.time[:, d] * ts)).astype(np.int64)
            per_unit = tables.energy[:, d] / np.maximum(tables.time[:, d], 1)
            energy[level, :, d] = ceil_all(per_unit * ps * time[level, :, d]).astype(np.int64)
    freqs = freq_mhz or tuple(tuple(float(100 * (k + 1)) for k in range(int(c))) if c >= 2 else ()
                              for c in count)
    return LevelTables(time, energy, count, freqs)
