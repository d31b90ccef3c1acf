"""The analytic roofline cost model: per op class and device kind efficiencies, data-aware sparse
ops, host launch overhead, measured GEMM / SpMM where a calibration covers them, DVFS levels."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.cost.calibrated import _element_bytes, _spmm_dims, calibrated_seconds
from dse.cost.calibration.files import load_calibration
from dse.cost.checks import (
    _assemble,
    _ceil_int,
    _cell_error,
    _type_ok,
    _Unfit,
    check_device_costs,
    check_one_device,
    ns_routes,
)
from dse.cost.mechanisms.bandwidth import declared_bandwidth
from dse.cost.mechanisms.collective import COLLECTIVE_CLASS, collective_op_seconds
from dse.cost.mechanisms.efficiency import declared_efficiency
from dse.cost.mechanisms.fusion import fused_parts
from dse.cost.mechanisms.overhead import call_seconds, entry_shares, launch_seconds
from dse.cost.mechanisms.precision_efficiency import precision_efficiency
from dse.cost.mechanisms.sparse_reuse import (
    declared_skew_sensitivity,
    declared_sparse_bandwidth,
    reused_bytes,
)
from dse.cost.mechanisms.tiling import tiling
from dse.cost.tables import _INT64_LIMIT, CostTables, LevelTables
from dse.model.device_defaults import FITTED
from dse.model.platform import Device, Platform
from dse.model.workload import Op, Workload
from dse.util.interrupt import stop_point
from dse.util.rounding import ceil_all

#: Fraction of peak compute an op class reaches on a device kind (dense, typical sizes).
#: ``None``: the device kind cannot run that class (e.g. a DLA has no sparse unit).
COMPUTE_EFFICIENCY: dict[str, dict[str, float | None]] = {
    #            cpu    gpu   tensorcore fpga  npu   dla   generic
    "gemm":      dict(cpu=0.70, gpu=0.75, tensorcore=0.80, fpga=0.80, npu=0.85, dla=0.80, generic=0.7),
    "conv":      dict(cpu=0.50, gpu=0.65, tensorcore=0.70, fpga=0.75, npu=0.80, dla=0.80, generic=0.6),
    "dwconv":    dict(cpu=0.30, gpu=0.20, tensorcore=0.10, fpga=0.60, npu=0.40, dla=0.40, generic=0.3),
    "spmm":      dict(cpu=0.10, gpu=0.06, tensorcore=None, fpga=0.30, npu=None, dla=None, generic=0.1),
    "attention": dict(cpu=0.40, gpu=0.50, tensorcore=0.60, fpga=0.40, npu=0.50, dla=None, generic=0.4),
    "elementwise": dict(cpu=0.30, gpu=0.30, tensorcore=None, fpga=0.50, npu=0.30, dla=0.30, generic=0.3),
    "reduce":    dict(cpu=0.30, gpu=0.30, tensorcore=None, fpga=0.50, npu=0.30, dla=0.30, generic=0.3),
    "pool":      dict(cpu=0.30, gpu=0.30, tensorcore=None, fpga=0.50, npu=0.30, dla=0.30, generic=0.3),
    "norm":      dict(cpu=0.30, gpu=0.30, tensorcore=None, fpga=0.50, npu=0.30, dla=0.30, generic=0.3),
    "embedding": dict(cpu=0.30, gpu=0.30, tensorcore=None, fpga=0.40, npu=None, dla=None, generic=0.3),
    "memcpy":    dict(cpu=1.00, gpu=1.00, tensorcore=None, fpga=1.00, npu=1.00, dla=1.00, generic=1.0),
    # a collective's time is its link time (dse.cost.mechanisms.collective), not a compute rate
    "collective": dict(cpu=1.00, gpu=1.00, tensorcore=None, fpga=1.00, npu=1.00, dla=None, generic=1.0),
    "generic":   dict(cpu=0.50, gpu=0.50, tensorcore=0.50, fpga=0.50, npu=0.50, dla=0.50, generic=0.5),
}

#: Fraction of peak memory bandwidth reached on streaming (dense) access.
BANDWIDTH_EFFICIENCY = dict(cpu=0.75, gpu=0.85, tensorcore=0.85, fpga=0.80, npu=0.80, dla=0.80, generic=0.75)

#: Fixed cost per op invocation (kernel launch, dispatch, FPGA kernel start), in seconds.
LAUNCH_OVERHEAD_S = dict(cpu=1e-6, gpu=5e-6, tensorcore=5e-6, fpga=2e-6, npu=10e-6, dla=20e-6, generic=1e-6)

#: How strongly degree skew (coefficient of variation of row lengths) slows sparse ops:
#: effective rate divided by (1 + SKEW_SENSITIVITY[kind] * degree_skew). GPUs suffer most
#: (warp-level load imbalance); CPUs less (dynamic scheduling over cores, caches); FPGA
#: dataflow pipelines least (row-streaming with load-balanced PEs).
SKEW_SENSITIVITY = dict(cpu=0.25, gpu=1.20, tensorcore=1.20, fpga=0.10, npu=1.0, dla=1.0, generic=0.5)

#: Bandwidth efficiency of irregular gathers (sparse ops) at full density; lower density
#: lowers it further by sqrt(density) (fewer useful bytes per cache line / DRAM burst),
#: except on FPGAs, whose on-chip row buffers hide most of it (exponent 0.1).
SPARSE_BANDWIDTH_EFFICIENCY = dict(cpu=0.45, gpu=0.55, tensorcore=0.55, fpga=0.80, npu=0.3, dla=0.3, generic=0.4)
SPARSE_DENSITY_EXPONENT = dict(cpu=0.5, gpu=0.5, tensorcore=0.5, fpga=0.1, npu=0.5, dla=0.5, generic=0.5)
#: Bytes of one memory transaction of an irregular gather (CPU cache line, GPU 32-byte sector, FPGA/HBM
#: burst). An SpMM gathers one dense row of ``width`` elements per nonzero: a row of at least this many
#: bytes uses whole transactions whatever the density, so the gather efficiency is
#: ``max(density ** exponent, min(1, width * bytes_per_element / SPARSE_LINE_BYTES))``.
SPARSE_LINE_BYTES = dict(cpu=64, gpu=32, tensorcore=32, fpga=64, npu=64, dla=64, generic=64)



@dataclass(frozen=True)
class DeviceColumn:
    """One device's column of a workload's cost tables: per op its ``time`` (ns) and ``energy`` (pJ),
    int64, and whether the device can run it (``allowed``); the device's ``idle_power_mw`` (int64,
    rounded up as the tables round it)."""

    time: np.ndarray
    energy: np.ndarray
    allowed: np.ndarray
    idle_power_mw: np.int64


@dataclass(frozen=True)
class RooflineCostModel:
    """Roofline time per (op, device) with data-aware efficiency for sparse ops.

    ``time = max(flops / (peak(precision) * eff_c), bytes_moved / (mem_bw * eff_b)) + launch``
    where ``eff_c`` comes from :data:`COMPUTE_EFFICIENCY` and, for ``spmm`` ops,
    is divided by ``1 + SKEW_SENSITIVITY[kind] * degree_skew``; ``eff_b`` is
    :data:`BANDWIDTH_EFFICIENCY` for dense ops and
    ``SPARSE_BANDWIDTH_EFFICIENCY[kind] * max(density ** SPARSE_DENSITY_EXPONENT[kind],
    min(1, width * bytes_per_element / SPARSE_LINE_BYTES[kind]))``
    divided by the same skew factor for sparse ones (a gathered row that fills whole memory
    transactions is not slowed by low density; an SpMV's single elements are).
    With a calibration (``calibration``, or the platform's ``calibration`` file) ``gemm`` and
    ``spmm`` ops on the devices it covers take the measured model's time instead
    (:func:`calibrated_seconds`). Devices with DVFS operating points get level tables
    (:mod:`dse.cost.dvfs`).
    Dynamic energy is ``(active_w - idle_w) * time``; a device also draws
    ``idle_w`` whenever it is in use (the mapping families add that).
    Transfers cost ``latency + bytes / bandwidth`` over the platform's route and
    ``bytes * energy_pj_per_byte``. Memory per (op, device) is
    ``resident_bytes + output_bytes``. An op may run on a device if the
    device kind supports its class and, when ``op.device_type`` is set, the
    device kind or name matches it. A device without ``peak_tflops`` (an abstract,
    ``speed``-only device) cannot run ops with FLOPs under this model.
    """

    launch_overhead: bool = True
    #: op classes whose reduction is split when they have fewer output tiles than compute units (split-K,
    #: :mod:`dse.cost.mechanisms.tiling`): GEMMs, not convolutions, as cross-validation on the fit rows
    #: chose (``docs/accuracy.md``); ``()`` for tile and wave quantization alone
    split_k: tuple[str, ...] = ("gemm",)
    #: a :class:`dse.cost.calibration.measure.Calibration` to use instead of the platform's ``calibration`` file
    calibration: Any = None

    def op_time_s(self, op: Op, device: Device) -> float | None:
        """Seconds ``op`` takes on ``device``; ``None`` if the device cannot run it."""
        parts = self.op_time_parts(op, device)
        return None if parts is None else max(parts[0], parts[1]) + parts[2]

    def op_time_parts(self, op: Op, device: Device) -> tuple[float, float, float] | None:
        """(compute-bound, memory-bound, serial) seconds of ``op`` on ``device`` (the time is
        ``max(compute, memory) + serial``; serial: the launch overhead and a split-K reduction pass);
        ``None`` if the device cannot run it. DVFS scales only the compute-bound part (:mod:`dse.cost.dvfs`)."""
        eff = COMPUTE_EFFICIENCY.get(op.op_class, COMPUTE_EFFICIENCY["generic"]).get(device.kind)
        eff = declared_efficiency(device, op.op_class, eff)  # cost-mechanism hook (dse.cost.mechanisms.efficiency)
        eff = precision_efficiency(device, op.op_class, op.precision, eff)  # hook (precision_efficiency)
        if eff is None or (op.flops and not device.peak_tflops and not op.device_costs):
            return None  # the kind cannot run this class, or the device has no FLOP rate to cost it with
        kernels = op.features.get("kernels", 1.0)  # launches the op stands for (cost-mechanism hook: overhead)
        launch = launch_seconds(device, LAUNCH_OVERHEAD_S[device.kind], kernels) if self.launch_overhead else 0.0
        if op.op_class == COLLECTIVE_CLASS and not op.device_costs:
            link = collective_op_seconds(op, device)  # cost-mechanism hook (collective): time on the links
            return None if link is None else (0.0, link, launch)
        bw_eff = declared_bandwidth(device, op.op_class, BANDWIDTH_EFFICIENCY[device.kind])  # hook (bandwidth)
        moved = op.bytes_moved
        if op.op_class == "spmm":
            sensitivity = declared_skew_sensitivity(device, SKEW_SENSITIVITY[device.kind])  # hook (sparse_reuse)
            skew = 1.0 + sensitivity * op.features.get("degree_skew", 0.0)
            density = op.features.get("density", 1.0)
            eff = eff / skew
            dims = _spmm_dims(op)
            row_bytes = (dims["width"] if dims else 1.0) * _element_bytes(op.precision)
            gather = max(density ** SPARSE_DENSITY_EXPONENT[device.kind],
                         min(1.0, row_bytes / SPARSE_LINE_BYTES[device.kind]))
            reused = None if dims is None else reused_bytes(  # cost-mechanism hook (sparse_reuse)
                device, dims["rows"], dims["nnz"], dims["width"], _element_bytes(op.precision), op.bytes_moved)
            if reused is not None:
                moved, gather = reused, 1.0
            base = declared_sparse_bandwidth(device, SPARSE_BANDWIDTH_EFFICIENCY[device.kind])  # hook (sparse_reuse)
            bw_eff = base * gather / skew
        if op.device_costs and device.name in op.device_costs:
            return (op.device_costs[device.name], 0.0, 0.0)
        peak = device.peak_flops(op.precision)
        if op.flops and peak is None:
            return None
        memory = moved / (device.mem_bw_gbps * 1e9 * bw_eff) if moved else 0.0
        reduction_rate = device.mem_bw_gbps * 1e9 * BANDWIDTH_EFFICIENCY[device.kind]
        tiled = tiling(op, device, _element_bytes(op.precision), op.op_class in self.split_k,
                       reduction_rate)  # cost-mechanism hook (tiling)
        eff = eff * tiled.utilization
        compute = op.flops / (peak * eff) if op.flops and peak is not None else 0.0
        reduction = tiled.reduction_bytes / reduction_rate if tiled.reduction_bytes else 0.0
        return (compute, memory, launch + reduction)

    def _cell_parts(self, op: Op, dev: Device, share: float, calibration: Any) -> tuple[float, float, float] | None:
        """(compute, memory, launch) seconds of ``op`` on ``dev`` with the cost mechanisms' hooks (fusion,
        per-call overhead) and a calibration's measured time where it covers them; ``None`` when ``dev``
        cannot run ``op``."""
        found = self.op_time_parts(op, dev)
        if found is None or not _type_ok(op, dev):
            return None
        found = fused_parts(op, dev, share == 0.0, found)  # cost-mechanism hook (fusion)
        found = (found[0], found[1], found[2] + call_seconds(dev, share))  # hook (call overhead)
        measured = calibrated_seconds(calibration, op, dev) if calibration is not None else None
        return found if measured is None else (measured, 0.0, 0.0)

    def _calibration(self, platform: Platform) -> Any:
        """The calibration in use: ``self.calibration``, else the platform's file (machine kind checked:
        a file from another machine kind raises :class:`SpecError` naming it), else ``None``."""
        if self.calibration is not None or platform.calibration is None:
            return self.calibration
        return load_calibration(platform.calibration)

    def tables(self, workload: Workload, platform: Platform) -> CostTables:
        """The integer tables of ``workload`` on ``platform``.

        Raises :class:`SpecError` when ``device_costs`` names a device the platform lacks, or a
        table entry or a worst-case total does not fit int64 (naming the op and the device).
        """
        check_device_costs(workload, platform)
        calibration = self._calibration(platform)
        parts, allowed = self._parts(workload, platform, calibration)
        time, energy, mem = _base_tables(workload, platform, parts, allowed)
        tables = _assemble(workload, platform, time, energy, mem, allowed, ns_routes(platform))
        if calibration is not None:  # measured times replace the model's where they cover: the fitted path
            tables = tables.replaced(device_paths=tuple(FITTED for _ in platform.devices))
        if any(len(d.dvfs) >= 2 for d in platform.devices):
            tables = _attach_dvfs(tables, workload, platform, parts, allowed)
        return tables

    def one_device_cells(self, workload: Workload, platform: Platform,
                         op_groups: OpGroups | None = None) -> DeviceColumn:
        """The :class:`DeviceColumn` of ``workload`` on the only device of ``platform``: the column
        :meth:`tables` fills, from the same cells and the same rounding, checked as :meth:`tables` checks
        them, without assembling the tables (the transfers of one device cost nothing); with
        ``op_groups`` (:func:`alike_ops` of the workload) each group's first op is costed for all. DVFS
        levels are not costed: a device with operating points takes :meth:`tables`.

        Raises ``ValueError`` for a platform of more than one device and the :class:`SpecError` of
        :meth:`tables` for a cost past int64.
        """
        if len(platform.devices) != 1:
            raise ValueError(f"platform {platform.name!r} has {len(platform.devices)} devices, not one")
        check_device_costs(workload, platform)
        parts, allowed = self._parts(workload, platform, self._calibration(platform), op_groups)
        time, energy, mem = _base_tables(workload, platform, parts, allowed)
        idle = check_one_device(workload, platform, time, energy, mem, allowed)
        return DeviceColumn(time[:, 0], energy[:, 0], allowed[:, 0], idle[0])

    def _parts(self, workload: Workload, platform: Platform, calibration: Any,
               op_groups: OpGroups | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(parts, allowed): per (op, device) its (compute, memory, launch) seconds (:meth:`_cell_parts`)
        and whether the device can run the op; a device alike another but for its name is costed once
        unless the op or a calibration names it, and so is an op of ``op_groups`` alike another."""
        ops = range(workload.n_ops) if op_groups is None else op_groups.first
        m = len(platform.devices)
        allowed = np.zeros((len(ops), m), dtype=bool)
        parts = np.zeros((len(ops), m, 3))
        shares = entry_shares(workload)  # cost-mechanism hook (dse.cost.mechanisms): fusion, per-call overhead
        alike = _alike_devices(platform.devices)
        for row, i in enumerate(ops):
            stop_point()  # one op on every device: 1,024 devices take milliseconds
            op = workload.ops[i]
            named = set(op.device_costs or ()) | ({op.device_type} if op.device_type is not None else set())
            for group, names in alike:
                # devices alike but for their names cost the same unless the op or a calibration names one
                each = calibration is not None or not names.isdisjoint(named)
                for j in (group if each else group[:1]):
                    found = self._cell_parts(op, platform.devices[j], shares[i], calibration)
                    if found is not None:
                        cells = [j] if each else group
                        parts[row, cells] = found
                        allowed[row, cells] = True
        if op_groups is None:
            return parts, allowed
        return parts[op_groups.group_of], allowed[op_groups.group_of]


def _attach_dvfs(tables: CostTables, workload: Workload, platform: Platform, parts: np.ndarray,
                 allowed: np.ndarray) -> CostTables:
    """``tables`` with their operating-point tables (``levels``, :mod:`dse.cost.dvfs`): per level, the
    compute-bound part of each op's time scaled by ``time_scale``, dynamic power by ``power_scale``."""
    n, m = allowed.shape
    counts = np.asarray([max(1, len(d.dvfs)) for d in platform.devices], dtype=np.int64)
    n_levels = int(counts.max())
    time = np.zeros((n_levels, n, m), dtype=np.int64)
    energy = np.zeros_like(time)
    bad = np.zeros((m, n_levels, n), dtype=bool)  # by device, level, op: the order they were once filled in
    levels = []
    for level in range(n_levels):
        points = [d.dvfs[min(level, len(d.dvfs) - 1)] if len(d.dvfs) >= 2 else None for d in platform.devices]
        time_scale = np.array([p.time_scale if p is not None else 1.0 for p in points])
        power_mw = np.array([(d.active_w - d.idle_w) * (p.power_scale if p is not None else 1.0) * 1e3
                             for d, p in zip(platform.devices, points, strict=True)])
        cells = _integer_cells(_seconds(parts, time_scale), power_mw, allowed)
        time[level], energy[level] = cells.time, cells.energy
        bad[:, level, :] = (cells.bad_time | cells.bad_energy).T
        levels.append(cells)
    if bad.any():
        j, level, i = (int(k) for k in np.argwhere(bad)[0])
        raise _cell_error(workload, platform, i, j, levels[level].first_unfit(i, j), "ns") from None
    freqs = tuple(tuple(p.freq_mhz for p in d.dvfs) if len(d.dvfs) >= 2 else () for d in platform.devices)
    return tables.replaced(levels=LevelTables(time, energy, counts, freqs))


def _alike_devices(devices: tuple[Device, ...]) -> list[tuple[list[int], set[str]]]:
    """The platform's devices grouped by everything but their names (a ``count: 128`` entry is one group),
    in the order of each group's first device: (indices, names) per group."""
    if len(devices) == 1:
        return [([0], {devices[0].name})]
    groups: dict[str, tuple[list[int], set[str]]] = {}
    for j, dev in enumerate(devices):
        indices, names = groups.setdefault(repr(dataclasses.replace(dev, name="")), ([], set()))
        indices.append(j)
        names.add(dev.name)
    return list(groups.values())


@dataclass(frozen=True)
class OpGroups:
    """A workload's ops in groups that cost the same on any device (:func:`alike_ops`): the ``first`` op
    of each group, in the order of the ops, and per op the index of its group (``group_of``, int64)."""

    first: tuple[int, ...]
    group_of: np.ndarray


def alike_ops(workload: Workload) -> OpGroups:
    """The workload's ops grouped by everything but their names, with their share of the per-call
    overhead (:func:`~dse.cost.mechanisms.overhead.entry_shares`): no cost mechanism reads an op's name,
    so the ops of a group cost the same on every device (the twelve alike layers of a transformer)."""
    shares = entry_shares(workload)
    groups: dict[str, int] = {}
    first: list[int] = []
    group_of = np.zeros(workload.n_ops, dtype=np.int64)
    for i, op in enumerate(workload.ops):
        key = repr((dataclasses.replace(op, name=""), shares[i]))
        if key not in groups:
            groups[key] = len(first)
            first.append(i)
        group_of[i] = groups[key]
    group_of.setflags(write=False)
    return OpGroups(tuple(first), group_of)


def _seconds(parts: np.ndarray, time_scale: float | np.ndarray) -> np.ndarray:
    """Per (op, device) ``max(compute * time_scale, memory) + launch`` seconds from ``parts`` (n, m, 3),
    ``time_scale`` per device; Python's ``max`` on equal or NaN values (the first argument unless the
    second is larger)."""
    compute, memory = parts[:, :, 0] * time_scale, parts[:, :, 1]
    return np.where(memory > compute, memory, compute) + parts[:, :, 2]


@dataclass(frozen=True)
class _Cells:
    """The int64 ``time`` (ns) and ``energy`` (pJ) of the allowed cells of one table, with the float values
    rounded (``ns``, ``pj``) and the cells whose time or energy does not fit int64 (``bad_time``,
    ``bad_energy``)."""

    time: np.ndarray
    energy: np.ndarray
    ns: np.ndarray
    pj: np.ndarray
    bad_time: np.ndarray
    bad_energy: np.ndarray

    def first_unfit(self, i: int, j: int) -> _Unfit:
        """The :class:`_Unfit` of op ``i`` on device ``j``: its time when that does not fit, else its energy."""
        return _Unfit("time", self.ns[i, j]) if self.bad_time[i, j] else _Unfit("energy", self.pj[i, j])


def _integer_cells(seconds: np.ndarray, power_mw: np.ndarray, allowed: np.ndarray) -> _Cells:
    """Time ``seconds`` rounded up to ns (at least 1) and energy ``power_mw`` per device times that time,
    rounded up to pJ, in the ``allowed`` cells, as :func:`~dse.cost.checks._ceil_int` rounds one value."""
    with np.errstate(invalid="ignore", over="ignore"):
        ns = seconds * 1e9
        bad_time = allowed & ~(ns < _INT64_LIMIT)
        time = np.where(allowed & ~bad_time, np.maximum(1.0, _ceil_positive(ns)), 0.0).astype(np.int64)
        pj = power_mw[None, :] * time.astype(np.float64)
        bad_energy = allowed & ~bad_time & ~(pj < _INT64_LIMIT)
        energy = np.where(allowed & ~bad_time & ~bad_energy, _ceil_positive(pj), 0.0).astype(np.int64)
    return _Cells(time, energy, ns, pj, bad_time, bad_energy)


def _base_tables(workload: Workload, platform: Platform, parts: np.ndarray, allowed: np.ndarray,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The int64 (time ns, energy pJ, memory bytes) tables of the ``allowed`` cells from their ``parts``.
    Raises the :class:`SpecError` of the first cell, row by row, whose time, energy or memory does not
    fit int64 (the order in which the cells were once filled in one by one)."""
    power_mw = np.array([(d.active_w - d.idle_w) * 1e3 for d in platform.devices])
    cells = _integer_cells(_seconds(parts, 1.0), power_mw, allowed)
    mem_row = np.zeros(workload.n_ops, dtype=np.int64)
    bad_mem = np.zeros(workload.n_ops, dtype=bool)
    for i, op in enumerate(workload.ops):
        try:
            mem_row[i] = _ceil_int(op.resident_bytes + op.output_bytes, "mem")
        except _Unfit:
            bad_mem[i] = True
    bad = cells.bad_time | cells.bad_energy | (allowed & bad_mem[:, None])
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        unfit = (_Unfit("mem", workload.ops[i].resident_bytes + workload.ops[i].output_bytes)
                 if not (cells.bad_time[i, j] or cells.bad_energy[i, j]) else cells.first_unfit(i, j))
        raise _cell_error(workload, platform, i, j, unfit, "ns") from None
    return cells.time, cells.energy, np.where(allowed, mem_row[:, None], 0)


def _ceil_positive(x: np.ndarray) -> np.ndarray:
    """:func:`~dse.util.rounding.ceil_int` of every positive element, 0 elsewhere (as floats)."""
    return np.where(x > 0, ceil_all(x), 0.0)
