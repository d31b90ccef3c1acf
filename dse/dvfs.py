"""DVFS operating points as integer cost tables: per (level, op, device) time and energy.

A platform device may list operating points (``dvfs:`` in its platform file,
:class:`~dse.platform.OperatingPoint`): a frequency with factors on the
compute-bound time and on the dynamic power. The roofline cost model turns
them into :class:`LevelTables`, attached to the :class:`~dse.cost.CostTables`
it returns (:func:`levels_of` reads them back), so that every consumer of the
tables sees the same integers; the ``pipeline`` family then adds one frequency
gene per device with two or more levels.

Example::

    tables = RooflineCostModel().tables(workload, platform)
    levels = levels_of(tables)        # None when no device has two operating points
    levels.time[l, op, dev]           # ns at level l of device dev
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from dse.cost import CostTables


@dataclass(frozen=True, eq=False)
class LevelTables:
    """Integer costs per operating point.

    ``time, energy``: int64 ``(n_levels, n_ops, n_dev)`` (time in the tables' unit, energy in pJ);
    ``count``: levels per device ``(n_dev,)`` (1 for a device without DVFS: level 0 is then its
    nominal cost); entries past a device's count repeat its last level. ``freq_mhz[d]``: the
    frequencies of device ``d``'s levels (empty without DVFS).
    """

    time: np.ndarray
    energy: np.ndarray
    count: np.ndarray
    freq_mhz: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        for name in ("time", "energy", "count"):
            array = getattr(self, name)
            if array.dtype != np.int64:
                raise TypeError(f"LevelTables.{name} must be int64, got {array.dtype}")
            array.setflags(write=False)

    @property
    def n_levels(self) -> int:
        return int(self.time.shape[0])

    @property
    def devices(self) -> np.ndarray:
        """Indices of the devices with a frequency gene (two or more levels)."""
        return np.flatnonzero(self.count >= 2)

    def label(self, device: int, level: int) -> str:
        """``"1410 MHz"`` for a DVFS device, ``"nominal"`` otherwise."""
        freqs = self.freq_mhz[device]
        return f"{freqs[level]:g} MHz" if freqs else "nominal"


_LEVELS: weakref.WeakKeyDictionary[CostTables, LevelTables] = weakref.WeakKeyDictionary()


def attach_levels(tables: CostTables, levels: LevelTables) -> CostTables:
    """Record ``levels`` as the operating-point costs of ``tables``; returns ``tables``.

    Raises ``ValueError`` when the shapes do not match the tables.
    """
    if levels.time.shape[1:] != (tables.n_ops, tables.n_dev) or levels.energy.shape != levels.time.shape \
            or levels.count.shape != (tables.n_dev,):
        raise ValueError(f"level tables of shape {levels.time.shape} do not fit {tables.n_ops} ops x "
                         f"{tables.n_dev} devices")
    _LEVELS[tables] = levels
    return tables


def levels_of(tables: CostTables) -> LevelTables | None:
    """The operating-point costs attached to ``tables``, or ``None`` when no device has two levels."""
    levels = _LEVELS.get(tables)
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
            time[level, :, d] = np.maximum(1, np.ceil(tables.time[:, d] * ts - 1e-9)).astype(np.int64)
            per_unit = tables.energy[:, d] / np.maximum(tables.time[:, d], 1)
            energy[level, :, d] = np.ceil(per_unit * ps * time[level, :, d] - 1e-9).astype(np.int64)
    freqs = freq_mhz or tuple(tuple(float(100 * (k + 1)) for k in range(int(c))) if c >= 2 else ()
                              for c in count)
    return LevelTables(time, energy, count, freqs)
