"""Cost tables of the ``split`` family (POAS): one GEMM cut along its rows over several devices.

* :class:`GemmWorkload`: ``C[m, n] = A[m, k] @ B[k, n]`` in a dtype (a 2-D
  convolution enters as its implicit GEMM, :func:`conv2d_workload`), cut into
  ``chunks`` equal row chunks;
* :class:`SplitDevice` / :class:`SplitPlatform`: the devices that share the
  work (CPU worker groups, GPU CUDA cores, GPU tensor cores), each with its
  memory pool (devices of one physical chip share memory and host link), its
  host link and its row granularity (both in :mod:`dse.mapping.split.inputs`, importable from here);
* :func:`split_tables`: the **per-part** tables ``time[d, c]``, ``link[d, c]``,
  ``energy[d, c]``, ``mem[d, c]`` (device ``d`` given ``c`` chunks), in integer
  ns, pJ and bytes, from a compute-time predictor plus the transfer and
  streaming model (:func:`part_costs`). The evaluator and the CP-SAT model read
  these same integers.

A part's cost is not the sum of its chunks' costs (fixed overheads, the
shared ``B`` operand, streaming), so the family tabulates every part size. The
:class:`~dse.cost.CostTables` it carries (``SplitCostTables``) has one op per
chunk (``chunk[i]``) and, per (chunk, device), the cost of a one-chunk part:
the engine's generic views (names, units, chunk -> device assignment) read
those; the objectives read :class:`SplitParts`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dse.cost import BANDWIDTH_EFFICIENCY, COMPUTE_EFFICIENCY, LAUNCH_OVERHEAD_S, CostTables
from dse.cost.calibration.files import load_calibration
from dse.errors import SpecError
from dse.inputs import catalog
from dse.mapping.split.contention import calibrated_contention, corun_predictor
from dse.mapping.split.inputs import (
    MAX_CHUNKS,
    SPLIT_KINDS,
    Conv2dSpec,
    GemmSpec,
    GemmWorkload,
    SplitDevice,
    SplitPlatform,
    as_split_platform,
    conv2d_workload,
    cpu_group_platform,
    gemm_workload,
    host_memory_bytes,
    platform_devices,
    resolve_platform,
    resolve_workload,
    tensorcore_granularity,
)
from dse.model.dtypes import DTYPE_BYTES, DTYPE_TOLERANCE
from dse.model.platform import Platform
from dse.util.rounding import ceil_all

#: This module's names and, as before the split, those of the family's inputs.
__all__ = [
    "AnalyticSplitModel",
    "CalibratedSplitModel",
    "Conv2dSpec",
    "DTYPE_BYTES",
    "DTYPE_TOLERANCE",
    "GemmSpec",
    "GemmWorkload",
    "MAX_CHUNKS",
    "PartCosts",
    "Predictor",
    "SPLIT_KINDS",
    "SplitCostTables",
    "SplitDevice",
    "SplitParts",
    "SplitPlatform",
    "analytic_compute_s",
    "as_split_platform",
    "calibration_predictor",
    "chunk_rows_for",
    "conv2d_workload",
    "cpu_group_platform",
    "find_calibration",
    "gemm_workload",
    "host_memory_bytes",
    "part_costs",
    "platform_devices",
    "resolve_platform",
    "resolve_workload",
    "split_tables",
    "tensorcore_granularity",
]


# --------------------------------------------------------------------------- part costs


@dataclass(frozen=True)
class PartCosts:
    """Costs of parts of ``rows`` rows on one device (arrays over part sizes), in seconds, joules, bytes.

    ``time_s``: busy time including copies; ``link_s``: host-link occupancy of the part's own rows,
    ``energy_j``: dynamic energy of compute and of the rows' copies (``B``'s copy is apart:
    ``b_link_s`` and ``b_energy_j``, paid once per memory pool that takes any rows);
    ``pieces``: how many pieces a part streams through device memory in (1: it fits whole).
    """

    time_s: np.ndarray
    link_s: np.ndarray
    energy_j: np.ndarray
    mem_bytes: np.ndarray
    pieces: np.ndarray
    b_link_s: float = 0.0
    b_energy_j: float = 0.0


def part_costs(device: SplitDevice, workload: GemmWorkload, rows: np.ndarray, compute_s: np.ndarray) -> PartCosts:
    """Busy time, link time, dynamic energy and resident memory of parts of ``rows`` rows on ``device``.

    A device in host memory (no link) just computes. An accelerator copies its
    ``A`` rows and the whole ``B`` in and its ``C`` rows out; a part whose
    operands exceed the device's memory streams through it in pieces with
    double buffering, overlapping copy-in, compute and copy-out (three-stage
    pipeline: the whole ``B`` first, then first piece through every stage,
    then one slowest stage per further piece). Empty parts cost nothing.
    """
    rows = np.asarray(rows, dtype=np.int64)
    compute_s = np.where(rows > 0, np.asarray(compute_s, dtype=float), 0.0)
    s, k, n = workload.itemsize, workload.k, workload.n
    b_bytes = float(k * n * s)
    row_bytes = float((k + n) * s)
    resident = b_bytes + rows * row_bytes
    dynamic_w = max(device.active_w - device.idle_w, 0.0)
    if device.link_gbps is None:
        zero = np.zeros(len(rows))
        return PartCosts(compute_s, zero, compute_s * dynamic_w, np.where(rows > 0, resident, 0.0),
                         np.ones(len(rows), dtype=np.int64))
    bw = device.link_gbps * 1e9
    lat = device.link_latency_us * 1e-6
    copy_in = lat + (b_bytes + rows * k * s) / bw
    copy_out = lat + rows * n * s / bw
    b_link = b_bytes / bw
    time_s, link_s, mem = copy_in + compute_s + copy_out, copy_in + copy_out - b_link, resident.astype(float)
    pieces = np.ones(len(rows), dtype=np.int64)
    g = device.granularity
    piece_rows = int((device.mem_bytes - b_bytes) // (2 * row_bytes)) // g * g
    big = (resident > device.mem_bytes) & (rows > 0)
    if big.any() and piece_rows >= g:
        p = -(-rows[big] // piece_rows)
        q = rows[big] / p
        b_in = lat + b_bytes / bw
        ci, co, cc = lat + q * k * s / bw, lat + q * n * s / bw, compute_s[big] / p
        time_s[big] = b_in + ci + cc + co + (p - 1) * np.maximum(np.maximum(ci, cc), co)
        link_s[big] = p * (ci + co)
        mem[big] = b_bytes + 2 * np.minimum(piece_rows, rows[big]) * row_bytes
        pieces[big] = p
    elif big.any():  # not even two granules fit beside B: report what one part would need
        mem[big] = b_bytes + 2 * g * row_bytes
    energy = compute_s * dynamic_w + rows * row_bytes * device.link_pj_per_byte * 1e-12
    zero_rows = rows == 0
    for arr in (time_s, link_s, mem):
        arr[zero_rows] = 0.0
    return PartCosts(time_s, link_s, energy, mem, pieces, b_link, b_bytes * device.link_pj_per_byte * 1e-12)


#: A compute-time predictor: (device, workload, rows array) -> seconds array (copies excluded).
Predictor = Callable[[SplitDevice, GemmWorkload, np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class SplitParts:
    """Per-part integer tables of a split problem, ``(n_dev, total + 1)``, entry ``[d, c]`` = device ``d``
    given ``c`` chunks: ``time`` (busy, copies included) and ``link`` (the rows' copies) in ns,
    ``energy`` (dynamic) in pJ, ``mem`` in bytes, ``rows``.

    ``pool[d]`` indexes ``pool_names`` / ``pool_capacity`` (bytes) / ``pool_b_link`` (ns) /
    ``pool_b_energy`` (pJ): a pool's devices share one copy of ``B``, sent once over their link when
    any of them takes rows. ``idle_mw_total`` is every device's idle power, charged over the makespan.
    """

    workload: GemmWorkload
    devices: tuple[SplitDevice, ...]
    chunk_rows: int
    total: int
    time: np.ndarray
    link: np.ndarray
    energy: np.ndarray
    mem: np.ndarray
    rows: np.ndarray
    pieces: np.ndarray
    pool: np.ndarray
    pool_names: tuple[str, ...]
    pool_capacity: np.ndarray
    pool_b_link: np.ndarray
    pool_b_energy: np.ndarray
    idle_mw_total: int
    cost_model: str = ""

    def __post_init__(self) -> None:
        for name in ("time", "link", "energy", "mem", "rows", "pieces", "pool", "pool_capacity", "pool_b_link",
                     "pool_b_energy"):
            getattr(self, name).setflags(write=False)

    def boundaries(self, counts: np.ndarray) -> list[tuple[int, int]]:
        """Row range ``[start, stop)`` of each device for chunk counts ``counts`` (row-major, device order)."""
        out, start = [], 0
        for c in np.asarray(counts, dtype=np.int64):
            stop = min(start + int(c) * self.chunk_rows, self.workload.m)
            out.append((start, stop))
            start = stop
        return out


@dataclass(frozen=True, eq=False)
class SplitCostTables(CostTables):
    """:class:`CostTables` with one op per chunk, plus the family's per-part tables (``parts``)."""

    parts: SplitParts = field(default=None)  # type: ignore[assignment]  # always given by split_tables


def chunk_rows_for(workload: GemmWorkload, devices: tuple[SplitDevice, ...]) -> int:
    """Rows per chunk: ``ceil(m / chunks)`` rounded up to a multiple of every device's granularity."""
    g = math.lcm(*(d.granularity for d in devices)) if devices else 1
    base = -(-workload.m // workload.chunks)
    return -(-base // g) * g


def _int(values: np.ndarray, scale: float, what: str, source: str) -> np.ndarray:
    scaled = ceil_all(np.asarray(values, dtype=float) * scale)
    if not np.isfinite(scaled).all() or (scaled >= 2.0**61).any():
        raise SpecError(source, "workload", what, "costs do not fit the integer tables (size too large)")
    return np.maximum(scaled, 0).astype(np.int64)


def split_tables(workload: GemmWorkload, platform: SplitPlatform, predict: Predictor, *,
                 cost_model: str = "", source: str = "<problem>") -> SplitCostTables:
    """The integer tables of ``workload`` split over ``platform``'s devices, compute times from ``predict``.

    Raises :class:`SpecError` when a predicted time is negative or not finite,
    or a figure overflows the integer tables.
    """
    devices = platform.devices
    if not devices:
        raise SpecError(source, "platform", platform.name, "no devices")
    if len(set(platform.device_names)) != len(devices):
        raise SpecError(source, "platform", list(platform.device_names), "device names must be unique")
    chunk_rows = chunk_rows_for(workload, devices)
    total = -(-workload.m // chunk_rows)
    counts = np.arange(total + 1, dtype=np.int64)
    rows = np.minimum(counts * chunk_rows, workload.m)
    shape = (len(devices), total + 1)
    time, link, energy, mem, pieces = (np.zeros(shape) for _ in range(5))
    b_link, b_energy = np.zeros(len(devices)), np.zeros(len(devices))
    for d, dev in enumerate(devices):
        compute = np.asarray(predict(dev, workload, rows), dtype=float).reshape(-1)
        if compute.shape != rows.shape or not np.isfinite(compute).all() or (compute[rows > 0] < 0).any():
            raise SpecError(source, "cost_model", cost_model or "predictor",
                            f"predicted a negative or non-finite time on {dev.name}")
        pc = part_costs(dev, workload, rows, compute)
        time[d], link[d], energy[d], mem[d], pieces[d] = pc.time_s, pc.link_s, pc.energy_j, pc.mem_bytes, pc.pieces
        b_link[d], b_energy[d] = pc.b_link_s, pc.b_energy_j
    pool_names = tuple(dict.fromkeys(dev.pool for dev in devices))
    pool = np.array([pool_names.index(dev.pool) for dev in devices], dtype=np.int64)
    capacity = np.array([max(dev.mem_bytes for dev in devices if dev.pool == p) for p in pool_names], dtype=np.int64)
    parts = SplitParts(
        workload=workload, devices=devices, chunk_rows=chunk_rows, total=total,
        time=_int(time, 1e9, "time", source), link=_int(link, 1e9, "link time", source),
        energy=_int(energy, 1e12, "energy", source), mem=_int(mem, 1.0, "memory", source),
        rows=np.tile(rows, (len(devices), 1)), pieces=pieces.astype(np.int64), pool=pool, pool_names=pool_names,
        pool_capacity=capacity,
        pool_b_link=_int(np.array([b_link[pool == j].max() for j in range(len(pool_names))]), 1e9, "link time", source),
        pool_b_energy=_int(np.array([b_energy[pool == j].max() for j in range(len(pool_names))]), 1e12, "energy",
                           source),
        idle_mw_total=int(round(sum(dev.idle_w for dev in devices) * 1e3)),
        cost_model=cost_model)
    n_dev = len(devices)
    one = min(1, total)
    per_chunk = {name: np.tile(getattr(parts, name)[:, one], (total, 1)) for name in ("time", "energy", "mem")}
    return SplitCostTables(
        op_names=tuple(f"chunk[{i}]" for i in range(total)),
        device_names=platform.device_names,
        time=per_chunk["time"], energy=per_chunk["energy"], mem=per_chunk["mem"],
        allowed=np.ones((total, n_dev), dtype=bool),
        edges=np.zeros((0, 2), dtype=np.int64), edge_bytes=np.zeros(0, dtype=np.int64),
        transfer_time=np.zeros((0, n_dev, n_dev), dtype=np.int64),
        transfer_energy=np.zeros((0, n_dev, n_dev), dtype=np.int64),
        idle_power_mw=np.array([int(round(dev.idle_w * 1e3)) for dev in devices], dtype=np.int64),
        mem_capacity=np.array([dev.mem_bytes for dev in devices], dtype=np.int64),
        device_kinds=tuple(dev.kind for dev in devices),
        op_classes=("gemm",) * total,
        parts=parts,
    )


# --------------------------------------------------------------------------- cost models


def analytic_compute_s(device: SplitDevice, workload: GemmWorkload, rows: np.ndarray) -> np.ndarray:
    """Roofline time of parts of ``rows`` rows from catalog figures (efficiencies of :mod:`dse.cost`).

    Raises ``KeyError`` naming the device when it lists no rate for the dtype or no memory bandwidth.
    """
    peak = device.peak_flops(workload.dtype)
    eff = COMPUTE_EFFICIENCY["gemm"].get(device.kind)
    if peak is None or eff is None or device.mem_bw_gbps <= 0:
        raise KeyError(f"{device.name} has no catalog rate for {workload.dtype} GEMMs")
    rows = np.asarray(rows, dtype=float)
    s, k, n = workload.itemsize, workload.k, workload.n
    flops = 2.0 * rows * n * k
    bytes_ = (rows * k + k * n + rows * n) * s
    bw = device.mem_bw_gbps * 1e9 * BANDWIDTH_EFFICIENCY[device.kind]
    return np.maximum(flops / (peak * eff), bytes_ / bw) + LAUNCH_OVERHEAD_S[device.kind]


@dataclass(frozen=True)
class AnalyticSplitModel:
    """``cost_model: analytic``: roofline compute times from the platform's catalog figures."""

    def tables(self, workload: GemmWorkload, platform: Platform | SplitPlatform) -> SplitCostTables:
        split = as_split_platform(platform, workload.dtype)
        try:
            return split_tables(workload, split, analytic_compute_s, cost_model="analytic")
        except KeyError as exc:
            raise SpecError("<problem>", "cost_model", "analytic", f"{exc.args[0]}; use cost_model calibrated") from None


def find_calibration(ref: str) -> Path:
    """A calibration file: a path, or a name in ``models/calibration/``; raises :class:`SpecError`."""
    candidates = [Path(ref), catalog.home() / ref, catalog.models_dir() / "calibration" / f"{ref}.yaml"]
    for path in candidates:
        try:
            if path.is_file():
                return path
        except (OSError, ValueError):
            continue
    raise SpecError("<problem>", "cost_model.file", ref, "calibration file not found")


def calibration_predictor(calibration: Any, source: str = "<calibration>") -> Predictor:
    """A predictor reading ``calibration.predict_s('gemm', device.fit_device, dtype, m=rows, n=, k=)``."""

    def predict(device: SplitDevice, workload: GemmWorkload, rows: np.ndarray) -> np.ndarray:
        kernel = "gemm"
        dtype = "tf32" if device.kind == "tensorcore" and workload.dtype == "fp32" else workload.dtype
        try:
            return np.asarray(calibration.predict_s(kernel, device.fit_device, dtype,
                                                    m=np.maximum(rows, 1), n=workload.n, k=workload.k), dtype=float)
        except KeyError:
            have = ", ".join(calibration.devices(kernel)) or "none"
            raise SpecError(source, "fits", (kernel, device.fit_device, dtype),
                            f"the calibration has no such fit (its gemm devices: {have})") from None

    return predict


@dataclass(frozen=True)
class CalibratedSplitModel:
    """``cost_model: {name: calibrated, file: PATH}``: compute times from a calibration file
    (``dse calibrate --kernels gemm``), stretched by its pair contention figures when it has them
    (:mod:`dse.mapping.split.contention`, every device taken to run for the whole split on an otherwise idle
    machine); ``check_machine`` refuses one made on another machine kind."""

    file: str = ""
    check_machine: bool = True

    def tables(self, workload: GemmWorkload, platform: Platform | SplitPlatform) -> SplitCostTables:
        if not self.file:
            raise SpecError("<problem>", "cost_model.file", self.file, "give the calibration file")
        path = find_calibration(self.file)
        calibration = load_calibration(path, check_machine=self.check_machine)
        split = as_split_platform(platform, workload.dtype)
        predict = calibration_predictor(calibration, str(path))
        name = f"calibrated ({path.name})"
        if calibration.contention:  # every device co-runs (an idle machine): the pairs' slowdowns, cores shared
            predict = corun_predictor(predict, split, calibrated_contention(calibration))
            name = f"calibrated with contention ({path.name})"
        return split_tables(workload, split, predict, cost_model=name)
