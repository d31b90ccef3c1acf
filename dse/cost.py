"""Cost models: (workload, platform) -> integer :class:`CostTables`.

The tables are the one cost truth that the vectorized evaluators, the CP-SAT
formulations and the simulators all read. Everything is an integer in fixed
units so that exact solvers and evaluators agree to the last unit:

* time in ``time_unit`` (``ns`` for the roofline model; an abstract unit for
  table-driven workloads), ``seconds_per_time_unit`` converts to seconds;
* energy in picojoules (pJ);
* power in milliwatts (mW), so that ``mW x ns = pJ`` exactly;
* memory in bytes.

Two models ship:

* :class:`RooflineCostModel`: analytic roofline with per-op-class efficiency
  per device kind and data-aware efficiency for sparse ops (see its docstring);
* :class:`TableCostModel`: explicit per-device costs (``Op.device_costs``) or
  ``Op.work / Device.speed``, as in the TF paper's simulator and in task-graph
  benchmarks.

Both check what they are given before trusting it: a ``device_costs`` entry must
name a device of the platform, every table entry must fit int64, and so must the
worst-case totals an evaluator sums over a mapping (:data:`MAX_TOTAL`); otherwise
they raise :class:`~dse.errors.SpecError` naming the op, the device and the value,
never an ``OverflowError`` or silently wrapped integers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from dse.errors import SpecError
from dse.platform import Device, Platform
from dse.workload import Op, Workload

#: Every int64 table entry is below this float (2**63).
_INT64_LIMIT = 2.0**63

#: Bound of the worst-case totals of one mapping (every op on its slowest / costliest device,
#: every edge on its slowest / costliest route, every device idle over that span): 2**62, half
#: of int64, so that the evaluators' and CP-SAT's integer sums of these tables cannot overflow.
MAX_TOTAL = 2**62


@dataclass(frozen=True, eq=False)
class CostTables:
    """Integer cost arrays of one (workload, platform) pair.

    Shapes: ``time, energy, mem, allowed``: (n_ops, n_dev);
    ``edges``: (n_edges, 2); ``edge_bytes``: (n_edges,);
    ``transfer_time, transfer_energy``: (n_edges, n_dev, n_dev), zero on the
    diagonal; ``idle_power_mw, mem_capacity, send_time``: (n_dev,).
    """

    op_names: tuple[str, ...]
    device_names: tuple[str, ...]
    time: np.ndarray
    energy: np.ndarray
    mem: np.ndarray
    allowed: np.ndarray
    edges: np.ndarray
    edge_bytes: np.ndarray
    transfer_time: np.ndarray
    transfer_energy: np.ndarray
    idle_power_mw: np.ndarray
    mem_capacity: np.ndarray
    send_time: np.ndarray = field(default=None)  # type: ignore[arg-type]  # None: no send cost (zeros)
    time_unit: str = "ns"
    seconds_per_time_unit: float = 1e-9
    energy_unit: str = "pJ"
    device_kinds: tuple[str, ...] = ()
    op_classes: tuple[str, ...] = ()
    display_time_unit: str = "ms"
    display_per_time_unit: float = 1e-6
    colocation: tuple[str | None, ...] = ()

    def __post_init__(self) -> None:
        if self.send_time is None:
            object.__setattr__(self, "send_time", np.zeros(self.n_dev, dtype=np.int64))
        for name in ("time", "energy", "mem", "edge_bytes", "transfer_time", "transfer_energy",
                     "idle_power_mw", "mem_capacity", "send_time"):
            array = getattr(self, name)
            if array.dtype != np.int64:
                raise TypeError(f"CostTables.{name} must be int64, got {array.dtype}")
            array.setflags(write=False)
        self.allowed.setflags(write=False)
        self.edges.setflags(write=False)

    @property
    def n_ops(self) -> int:
        return len(self.op_names)

    @property
    def n_dev(self) -> int:
        return len(self.device_names)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    def predecessors(self) -> list[list[int]]:
        """Edge indices entering each op."""
        preds: list[list[int]] = [[] for _ in range(self.n_ops)]
        for k, (_, d) in enumerate(self.edges):
            preds[d].append(k)
        return preds

    def topological_order(self) -> np.ndarray:
        """A topological order of the ops (smallest index first among ready ops)."""
        import heapq

        indeg = np.zeros(self.n_ops, dtype=np.int64)
        succ: list[list[int]] = [[] for _ in range(self.n_ops)]
        for s, d in self.edges:
            indeg[d] += 1
            succ[s].append(int(d))
        ready = [i for i in range(self.n_ops) if indeg[i] == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            u = heapq.heappop(ready)
            order.append(u)
            for v in succ[u]:
                indeg[v] -= 1
                if indeg[v] == 0:
                    heapq.heappush(ready, v)
        if len(order) != self.n_ops:
            raise ValueError("cost tables describe a cyclic graph")
        return np.asarray(order, dtype=np.int64)


class CostModel(Protocol):
    """Anything that turns a workload on a platform into :class:`CostTables`."""

    def tables(self, workload: Workload, platform: Platform) -> CostTables: ...


# --------------------------------------------------------------------------- roofline

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


class _Unfit(OverflowError):
    """A value that does not fit an int64 table entry: ``what`` names the table."""

    def __init__(self, what: str, value: float) -> None:
        super().__init__(f"{what} {value!r} does not fit int64")
        self.what = what
        self.value = value


def _ceil_int(x: float, what: str = "value") -> int:
    """``ceil(x)`` as an int (0 for ``x <= 0``; a 1e-9 tolerance absorbs rounding).

    Raises :class:`_Unfit` (an ``OverflowError``) when ``x`` is NaN or its ceiling does not fit int64.
    """
    if not x < _INT64_LIMIT:
        raise _Unfit(what, x)
    return int(math.ceil(x - 1e-9)) if x > 0 else 0


def _source(workload: Workload, platform: Platform) -> str:
    return f"workload {workload.name!r} on platform {platform.name!r}"


def _unit(what: str, time_unit: str) -> str:
    return {"energy": "pJ", "transfer_energy": "pJ", "mem": "bytes", "edge_bytes": "bytes",
            "idle_power": "mW", "mem_capacity": "bytes"}.get(what, time_unit)


def _too_large(source: str, field_name: str, value: float, unit: str, whose: str) -> SpecError:
    """The :class:`SpecError` of a table entry ``value`` (in ``unit``) past int64."""
    return SpecError(source, field_name, float(f"{value:.4g}"),
                     f"{whose} gives {value:.3g} {unit}, past the int64 cost tables (< {_INT64_LIMIT:.3g} "
                     f"{unit}): the workload's figures are too large for the platform's rates")


def _cell_error(workload: Workload, platform: Platform, i: int, j: int, exc: _Unfit, time_unit: str) -> SpecError:
    """The :class:`SpecError` of op ``i`` on device ``j`` whose ``exc.what`` entry does not fit int64."""
    op, dev = workload.ops[i], platform.devices[j]
    return _too_large(_source(workload, platform), f"{exc.what}[{op.name}, {dev.name}]", exc.value,
                      _unit(exc.what, time_unit), f"op {op.name!r} on device {dev.name!r}")


def _names(names: tuple[str, ...], limit: int = 20) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def check_device_costs(workload: Workload, platform: Platform) -> None:
    """Raise :class:`SpecError` when an op's ``device_costs`` names a device the platform lacks.

    The error names the op, the device and lists the platform's devices.
    """
    names = set(platform.device_names)
    for i, op in enumerate(workload.ops):
        for dev in op.device_costs:
            if dev not in names:
                raise SpecError(_source(workload, platform), f"ops[{i}].device_costs", dev,
                                f"op {op.name!r} has a cost for device {dev!r}, which platform "
                                f"{platform.name!r} does not have; its devices are {_names(platform.device_names)}")


def _check_fits(raw: np.ndarray, what: str, unit: str, source: str,
                where: Callable[[tuple[int, ...]], tuple[str, str]]) -> None:
    """Raise :class:`SpecError` at the first entry of float array ``raw`` whose ceiling does not fit int64;
    ``where(index)`` names that entry: ``(field subscript, whose figures)``."""
    bad = ~(raw < _INT64_LIMIT)  # NaN too
    if raw.size and bad.any():
        index = tuple(int(k) for k in np.unravel_index(int(np.argmax(bad)), raw.shape))
        field_name, whose = where(index)
        raise _too_large(source, f"{what}[{field_name}]", float(raw[index]), unit, whose)


def _check_totals(workload: Workload, platform: Platform, time: np.ndarray, energy: np.ndarray, mem: np.ndarray,
                  allowed: np.ndarray, transfer_time: np.ndarray, transfer_energy: np.ndarray, idle: np.ndarray,
                  send_time: np.ndarray | None, time_unit: str) -> None:
    """Raise :class:`SpecError` when a worst-case total of a mapping could pass :data:`MAX_TOTAL`.

    Totals, summed as floats so that they cannot wrap: time = over ops, their slowest allowed
    device + over edges, their slowest route and one send; energy = the same for energy + every
    device's idle power over that time; memory = over ops, their largest footprint. The error
    names the total and its largest term (an op and its device, an edge, or the idle power).
    """
    n_edges = transfer_time.shape[0]
    sends = float(send_time.max()) * n_edges if send_time is not None and send_time.size else 0.0
    span = 0.0
    for what, table, transfers in (("time", time, transfer_time), ("energy", energy, transfer_energy),
                                   ("mem", mem, None)):
        per_op = np.where(allowed, table, 0).astype(np.float64)
        op_max = per_op.max(axis=1)
        edge_max = np.zeros(0)
        if transfers is not None and n_edges:
            edge_max = transfers.reshape(n_edges, -1).max(axis=1).astype(np.float64)
        extra = {"time": sends, "energy": float(idle.astype(np.float64).sum()) * span}.get(what, 0.0)
        total = float(op_max.sum()) + float(edge_max.sum()) + extra
        if what == "time":
            span = total
        if total <= MAX_TOTAL:
            continue
        unit = _unit(what, time_unit)
        i = int(np.argmax(op_max))
        terms = [(float(op_max[i]), f"op {workload.ops[i].name!r} on device "
                                    f"{platform.devices[int(np.argmax(per_op[i]))].name!r}")]
        if edge_max.size:
            k = int(np.argmax(edge_max))
            s, d = workload.edges[k]
            terms.append((float(edge_max[k]), f"edge {workload.ops[s].name!r} -> {workload.ops[d].name!r}"))
        if what == "energy":
            terms.append((extra, "the devices' idle power over that time"))
        value, whose = max(terms)
        raise SpecError(_source(workload, platform), f"total {what}", float(f"{total:.4g}"),
                        f"a mapping could sum to {total:.3g} {unit}, past what the int64 evaluators hold "
                        f"({MAX_TOTAL:.3g} {unit}); largest term: {whose} ({value:.3g} {unit})")


@dataclass(frozen=True)
class RooflineCostModel:
    """Roofline time per (op, device) with data-aware efficiency for sparse ops.

    ``time = max(flops / (peak(precision) * eff_c), bytes_moved / (mem_bw * eff_b)) + launch``
    where ``eff_c`` comes from :data:`COMPUTE_EFFICIENCY` and, for ``spmm`` ops,
    is divided by ``1 + SKEW_SENSITIVITY[kind] * degree_skew``; ``eff_b`` is
    :data:`BANDWIDTH_EFFICIENCY` for dense ops and
    ``SPARSE_BANDWIDTH_EFFICIENCY[kind] * density ** SPARSE_DENSITY_EXPONENT[kind]``
    divided by the same skew factor for sparse ones.
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

    def op_time_s(self, op: Op, device: Device) -> float | None:
        """Seconds ``op`` takes on ``device``; ``None`` if the device cannot run it."""
        eff = COMPUTE_EFFICIENCY.get(op.op_class, COMPUTE_EFFICIENCY["generic"]).get(device.kind)
        if eff is None or (op.flops and not device.peak_tflops and not op.device_costs):
            return None  # the kind cannot run this class, or the device has no FLOP rate to cost it with
        bw_eff = BANDWIDTH_EFFICIENCY[device.kind]
        if op.op_class == "spmm":
            skew = 1.0 + SKEW_SENSITIVITY[device.kind] * op.features.get("degree_skew", 0.0)
            density = op.features.get("density", 1.0)
            eff = eff / skew
            bw_eff = SPARSE_BANDWIDTH_EFFICIENCY[device.kind] * density ** SPARSE_DENSITY_EXPONENT[device.kind] / skew
        if op.device_costs and device.name in op.device_costs:
            return op.device_costs[device.name]
        peak = device.peak_flops(op.precision)
        if op.flops and peak is None:
            return None
        compute = op.flops / (peak * eff) if op.flops and peak is not None else 0.0
        memory = op.bytes_moved / (device.mem_bw_gbps * 1e9 * bw_eff) if op.bytes_moved else 0.0
        launch = LAUNCH_OVERHEAD_S[device.kind] if self.launch_overhead else 0.0
        return max(compute, memory) + launch

    def tables(self, workload: Workload, platform: Platform) -> CostTables:
        """The integer tables of ``workload`` on ``platform``.

        Raises :class:`SpecError` when ``device_costs`` names a device the platform lacks, or a
        table entry or a worst-case total does not fit int64 (naming the op and the device).
        """
        check_device_costs(workload, platform)
        n, m = workload.n_ops, len(platform.devices)
        time = np.zeros((n, m), dtype=np.int64)
        energy = np.zeros((n, m), dtype=np.int64)
        mem = np.zeros((n, m), dtype=np.int64)
        allowed = np.zeros((n, m), dtype=bool)
        for i, op in enumerate(workload.ops):
            for j, dev in enumerate(platform.devices):
                seconds = self.op_time_s(op, dev)
                if seconds is None or not _type_ok(op, dev):
                    continue
                allowed[i, j] = True
                try:
                    time[i, j] = max(1, _ceil_int(seconds * 1e9, "time"))
                    energy[i, j] = _ceil_int((dev.active_w - dev.idle_w) * 1e3 * time[i, j], "energy")
                    mem[i, j] = _ceil_int(op.resident_bytes + op.output_bytes, "mem")
                except _Unfit as exc:
                    raise _cell_error(workload, platform, i, j, exc, "ns") from None
        return _assemble(workload, platform, time, energy, mem, allowed, ns_routes(platform))


def _type_ok(op: Op, dev: Device) -> bool:
    return op.device_type is None or op.device_type in (dev.kind, dev.name)


def ns_routes(platform: Platform) -> np.ndarray:
    """Per device pair (latency ns, ns per byte, pJ per byte), shape (m, m, 3); zeros on the diagonal."""
    m = len(platform.devices)
    routes = np.zeros((m, m, 3))
    for a, da in enumerate(platform.devices):
        for b, db in enumerate(platform.devices):
            if a != b:
                bw, lat, epb = platform.route(da.name, db.name)
                routes[a, b] = (lat * 1e3, 1.0 / bw, epb)  # 1 / (GB/s) = ns per byte
    return routes


def _assemble(
    workload: Workload,
    platform: Platform,
    time: np.ndarray,
    energy: np.ndarray,
    mem: np.ndarray,
    allowed: np.ndarray,
    routes: np.ndarray,
    *,
    time_unit: str = "ns",
    seconds_per_time_unit: float = 1e-9,
    send_time: np.ndarray | None = None,
    display_time_unit: str = "ms",
    display_per_time_unit: float = 1e-6,
) -> CostTables:
    """Fill in edges and transfers (``routes`` as from :func:`ns_routes`) and build the tables.

    Raises :class:`SpecError` when an entry or a worst-case total does not fit int64.
    """
    source = _source(workload, platform)
    names = platform.device_names
    edges = np.asarray(workload.edges, dtype=np.int64).reshape(-1, 2)
    raw_bytes = np.asarray(workload.edge_bytes, dtype=np.float64)

    def edge(k: int) -> str:
        s, d = workload.edges[k]
        return f"{workload.ops[s].name} -> {workload.ops[d].name}"

    _check_fits(raw_bytes, "edge_bytes", "bytes", source, lambda ix: (edge(ix[0]), f"edge {edge(ix[0])}"))
    edge_bytes = np.asarray([_ceil_int(b) for b in workload.edge_bytes], dtype=np.int64)
    latency, per_byte, epb = routes[..., 0], routes[..., 1], routes[..., 2]
    with np.errstate(over="ignore", invalid="ignore"):  # checked just below
        raw_t = latency[None] + edge_bytes[:, None, None] * per_byte[None]
        raw_e = edge_bytes[:, None, None] * epb[None]
    diag = np.arange(len(platform.devices))
    raw_t[:, diag, diag] = 0
    raw_e[:, diag, diag] = 0
    for what, raw in (("transfer_time", raw_t), ("transfer_energy", raw_e)):
        _check_fits(raw, what, _unit(what, time_unit), source, lambda ix: (
            f"{edge(ix[0])}, {names[ix[1]]} -> {names[ix[2]]}",
            f"edge {edge(ix[0])} from device {names[ix[1]]!r} to {names[ix[2]]!r}"))
    transfer_time = np.ceil(raw_t - 1e-9).clip(min=0).astype(np.int64)
    transfer_energy = np.ceil(raw_e - 1e-9).clip(min=0).astype(np.int64)
    transfer_time[:, diag, diag] = 0
    transfer_energy[:, diag, diag] = 0
    raw_idle = np.asarray([d.idle_w * 1e3 for d in platform.devices], dtype=np.float64)
    raw_capacity = np.asarray([d.mem_gib * 2**30 for d in platform.devices], dtype=np.float64)
    _check_fits(raw_idle, "idle_power", "mW", source, lambda ix: (names[ix[0]], f"device {names[ix[0]]!r}"))
    _check_fits(raw_capacity, "mem_capacity", "bytes", source, lambda ix: (names[ix[0]], f"device {names[ix[0]]!r}"))
    idle = np.asarray([_ceil_int(d.idle_w * 1e3) for d in platform.devices], dtype=np.int64)
    capacity = np.asarray([int(d.mem_gib * 2**30) for d in platform.devices], dtype=np.int64)
    _check_totals(workload, platform, time, energy, mem, allowed, transfer_time, transfer_energy, idle, send_time,
                  time_unit)
    return CostTables(
        op_names=tuple(op.name for op in workload.ops),
        device_names=platform.device_names,
        time=time,
        energy=energy,
        mem=mem,
        allowed=allowed,
        edges=edges,
        edge_bytes=edge_bytes,
        transfer_time=transfer_time,
        transfer_energy=transfer_energy,
        idle_power_mw=idle,
        mem_capacity=capacity,
        send_time=send_time if send_time is not None else np.zeros(idle.shape[0], dtype=np.int64),
        time_unit=time_unit,
        seconds_per_time_unit=seconds_per_time_unit,
        device_kinds=tuple(d.kind for d in platform.devices),
        op_classes=tuple(op.op_class for op in workload.ops),
        display_time_unit=display_time_unit,
        display_per_time_unit=display_per_time_unit,
        colocation=tuple(op.colocation for op in workload.ops),
    )


# --------------------------------------------------------------------------- table-driven


@dataclass(frozen=True)
class TableCostModel:
    """Explicit costs in an abstract time unit.

    time(op, dev) = ``op.device_costs[dev.name]`` if given, else ``op.work / dev.speed``,
    multiplied by ``scale`` and rounded up to an integer. Links are read in the
    same abstract units: ``bandwidth_gbps`` is size units per time unit and
    ``latency_us`` is time units. Energy is ``(active_w - idle_w) * time`` as if
    one time unit were ``seconds_per_time_unit`` seconds. ``send_ops`` models the
    TF paper's rule that each send occupies the sending device for the time of
    that many operations (``send_time = send_ops / speed``).
    """

    scale: float = 1.0
    time_unit: str = "tu"
    seconds_per_time_unit: float = 1e-9
    send_ops: float = 0.0

    def __post_init__(self) -> None:
        for name, positive in (("scale", True), ("seconds_per_time_unit", True), ("send_ops", False)):
            value = getattr(self, name)
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
        time = np.zeros((n, m), dtype=np.int64)
        energy = np.zeros((n, m), dtype=np.int64)
        mem = np.zeros((n, m), dtype=np.int64)
        allowed = np.zeros((n, m), dtype=bool)
        ns_per_unit = self.seconds_per_time_unit * 1e9
        for i, op in enumerate(workload.ops):
            for j, dev in enumerate(platform.devices):
                if op.device_costs:
                    if dev.name not in op.device_costs:
                        continue
                    raw = op.device_costs[dev.name]
                elif dev.speed > 0:
                    raw = op.work / dev.speed
                else:
                    continue
                if not _type_ok(op, dev):
                    continue
                allowed[i, j] = True
                try:
                    time[i, j] = _ceil_int(raw * self.scale, "time")
                    energy[i, j] = _ceil_int(
                        (dev.active_w - dev.idle_w) * 1e3 * time[i, j] * ns_per_unit / self.scale, "energy")
                    mem[i, j] = _ceil_int(op.resident_bytes + op.output_bytes, "mem")
                except _Unfit as exc:
                    raise _cell_error(workload, platform, i, j, exc, self.time_unit) from None
        routes = np.zeros((m, m, 3))
        for a, da in enumerate(platform.devices):
            for b, db in enumerate(platform.devices):
                if a != b:
                    bw, lat, epb = platform.route(da.name, db.name)
                    routes[a, b] = (lat * self.scale, self.scale / bw, epb)
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
