"""The table-driven cost model: explicit per-device costs (``Op.device_costs``) or ``Op.work / Device.speed``
in an abstract time unit, as in the TF paper's simulator and in task-graph benchmarks."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dse.cost.checks import (
    _assemble,
    _ceil_int,
    _cell_error,
    _check_fits,
    _source,
    _type_ok,
    _Unfit,
    check_device_costs,
    route_arrays,
)
from dse.cost.tables import _INT64_LIMIT, CostTables
from dse.errors import SpecError
from dse.model.platform import Platform
from dse.model.workload import Workload
from dse.util.numbers import parse_number
from dse.util.rounding import ceil_all


def _table_raw(workload: Workload, platform: Platform) -> tuple[np.ndarray, np.ndarray]:
    """Per (op, device) the untimed cost of :class:`TableCostModel` (``device_costs[dev]`` when the op
    has any, else ``work / speed``) and whether the device may run the op (it has a cost, a positive
    speed and a matching ``device_type``): two (n_ops, n_dev) arrays, built per column, not per cell."""
    devices = platform.devices
    n, m = workload.n_ops, len(devices)
    speed = np.asarray([d.speed for d in devices], dtype=np.float64)
    work = np.asarray([op.work for op in workload.ops], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        raw = np.where(speed[None, :] > 0, work[:, None] / np.where(speed > 0, speed, 1.0)[None, :], 0.0)
    allowed = np.broadcast_to(speed > 0, (n, m)).copy()
    column = {d.name: j for j, d in enumerate(devices)}
    types: dict[str, np.ndarray] = {}
    for i, op in enumerate(workload.ops):
        if op.device_costs:
            allowed[i] = False
            raw[i] = 0.0
            for name, value in op.device_costs.items():
                raw[i, column[name]] = value
                allowed[i, column[name]] = True
        if op.device_type is not None:
            ok = types.get(op.device_type)
            if ok is None:
                ok = types[op.device_type] = np.asarray([_type_ok(op, d) for d in devices], dtype=bool)
            allowed[i] &= ok
    return raw, allowed


@dataclass(frozen=True)
class TableCostModel:
    """Explicit costs in an abstract time unit.

    time(op, dev) = ``op.device_costs[dev.name]`` if given, else ``op.work / dev.speed``,
    multiplied by ``scale`` and rounded up to an integer. Links are read in the
    same abstract units: ``bandwidth_gbps`` is size units per time unit and
    ``latency_us`` is time units, so a platform read for this model keeps only
    the link checks that hold in any unit, positive (latency: >= 0) and finite
    (:func:`dse.model.platform.unit_free_links`): the bounds of GB/s and us
    (``bandwidth_gbps <= 1e9``) say nothing of a rate of 1e12 words per tu, and
    what they guard, int64 tables, is checked when the tables are built. Energy
    is ``(active_w - idle_w) * time`` as if one time unit were
    ``seconds_per_time_unit`` seconds. ``send_ops`` models the TF paper's rule
    that each send occupies the sending device for the time of that many
    operations (``send_time = send_ops / speed``).
    """

    scale: float = 1.0
    time_unit: str = "tu"
    seconds_per_time_unit: float = 1e-9
    send_ops: float = 0.0

    def __post_init__(self) -> None:
        for name, positive in (("scale", True), ("seconds_per_time_unit", True), ("send_ops", False)):
            value = parse_number(getattr(self, name))
            object.__setattr__(self, name, value)
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            if not ok or value < 0 or (positive and value == 0):
                raise SpecError("cost_model", name, value, f"must be a finite number {'>' if positive else '>='} 0")

    def tables(self, workload: Workload, platform: Platform) -> CostTables:
        """The integer tables of ``workload`` on ``platform``.

        Raises :class:`SpecError` when ``device_costs`` names a device the platform lacks, or a
        table entry or a worst-case total does not fit int64 (naming the op and the device).
        """
        check_device_costs(workload, platform)
        n, m = workload.n_ops, len(platform.devices)
        ns_per_unit = self.seconds_per_time_unit * 1e9
        raw, allowed = _table_raw(workload, platform)
        # the rules of _ceil_int, cell by cell in the order (op, device), then time, energy, mem
        with np.errstate(over="ignore", invalid="ignore"):
            raw_time = raw * self.scale
            time_bad = allowed & ~(raw_time < _INT64_LIMIT)
            time = np.where(allowed & ~time_bad & (raw_time > 0), ceil_all(raw_time), 0).astype(np.int64)
            power = np.asarray([(d.active_w - d.idle_w) * 1e3 for d in platform.devices], dtype=np.float64)
            raw_energy = power[None, :] * time.astype(np.float64) * ns_per_unit / self.scale
            energy_bad = allowed & ~time_bad & ~(raw_energy < _INT64_LIMIT)
            energy = np.where(allowed & ~time_bad & ~energy_bad & (raw_energy > 0),
                              ceil_all(raw_energy), 0).astype(np.int64)
            raw_mem = np.asarray([op.resident_bytes + op.output_bytes for op in workload.ops], dtype=np.float64)
            mem_bad = allowed & ~(raw_mem < _INT64_LIMIT)[:, None]
            mem_row = np.where(raw_mem > 0, ceil_all(np.where(mem_bad.any(axis=1), 0, raw_mem)), 0)
        bad = time_bad | energy_bad | mem_bad
        if bad.any():
            i, j = (int(k) for k in np.unravel_index(int(np.argmax(bad)), bad.shape))
            what, value = next((w, v) for w, b, v in (("time", time_bad, raw_time), ("energy", energy_bad, raw_energy),
                                                      ("mem", mem_bad, np.broadcast_to(raw_mem[:, None], (n, m))))
                               if b[i, j])
            raise _cell_error(workload, platform, i, j, _Unfit(what, float(value[i, j])), self.time_unit) from None
        mem = np.where(allowed, mem_row.astype(np.int64)[:, None], 0).astype(np.int64)
        bw, lat, epb = route_arrays(platform)
        routes = np.stack([lat * self.scale, self.scale / bw, epb], axis=-1)
        routes[np.arange(m), np.arange(m)] = 0.0
        raw_send = np.asarray([self.send_ops / d.speed * self.scale if d.speed > 0 else 0.0 for d in platform.devices])
        _check_fits(raw_send, "send_time", self.time_unit, _source(workload, platform),
                    lambda ix: (platform.devices[ix[0]].name, f"device {platform.devices[ix[0]].name!r}"))
        send = np.asarray(
            [_ceil_int(self.send_ops / d.speed * self.scale) if d.speed > 0 else 0 for d in platform.devices],
            dtype=np.int64,
        )
        return _assemble(
            workload, platform, time, energy, mem, allowed, routes,
            time_unit=self.time_unit if self.scale == 1 else f"{self.time_unit} x {1 / self.scale:g}",
            seconds_per_time_unit=self.seconds_per_time_unit / self.scale,
            send_time=send,
            display_time_unit=self.time_unit,
            display_per_time_unit=1.0 / self.scale,
        )
