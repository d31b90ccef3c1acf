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

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from dse.cost_mechanisms.efficiency import declared_efficiency
from dse.cost_mechanisms.fusion import fused_parts
from dse.cost_mechanisms.overhead import call_seconds, entry_shares, launch_seconds
from dse.errors import SpecError
from dse.platform import Device, Platform
from dse.workload import Op, Workload

#: Every int64 table entry is below this float (2**63).
_INT64_LIMIT = 2.0**63

#: Bound of the worst-case totals of one mapping (every op on its slowest / costliest device,
#: every edge on its slowest / costliest route, every device idle over that span): 2**62, half
#: of int64, so that the evaluators' and CP-SAT's integer sums of these tables cannot overflow.
MAX_TOTAL = 2**62


class _TransferTable:
    """Data descriptor of ``CostTables.transfer_time`` / ``transfer_energy``.

    Holds an explicit (n_edges, n_dev, n_dev) array when one was given; otherwise the array is
    computed from the per-edge sizes and per-pair rates on first read and kept (O(edges x devices^2):
    meant for small tables; decoders and heuristics use the per-edge accessors instead).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.slot = f"_{name}_array"

    def __get__(self, obj: CostTables | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__.get(self.slot)
        if value is None:
            value = obj.transfer_block(np.arange(obj.n_edges), self.name)
            value.setflags(write=False)
            obj.__dict__[self.slot] = value
        return value

    def __set__(self, obj: CostTables, value: Any) -> None:
        obj.__dict__[self.slot] = None if value is None or isinstance(value, _TransferTable) else value
        obj.__dict__[f"_{self.name}_explicit"] = obj.__dict__[self.slot] is not None


@dataclass(frozen=True, eq=False)
class CostTables:
    """Integer cost arrays of one (workload, platform) pair.

    Shapes: ``time, energy, mem, allowed``: (n_ops, n_dev);
    ``edges``: (n_edges, 2); ``edge_bytes``: (n_edges,) (sizes rounded up);
    ``idle_power_mw, mem_capacity, send_time``: (n_dev,).

    Transfers are held in O(edges + devices^2): per edge its size ``edge_size`` (float, as given,
    defaults to ``edge_bytes``) and per device pair ``link_latency``, ``link_time_per_byte`` and
    ``link_energy_per_byte`` (float, zero on the diagonal, already in the tables' time and energy
    units). The integer cost of edge ``e`` from device ``a`` to ``b`` is
    ``ceil(link_latency[a, b] + edge_size[e] * link_time_per_byte[a, b])`` (time) and
    ``ceil(edge_size[e] * link_energy_per_byte[a, b])`` (energy), zero when ``a == b``, rounded once
    (a 1e-9 tolerance absorbs float noise). :meth:`edge_transfer_time` and
    :meth:`edge_transfer_energy` compute them where used. ``transfer_time`` and ``transfer_energy``
    (n_edges, n_dev, n_dev) may instead be given explicitly (any integer tables); read as properties
    they are computed on first use from the rates when not given (small tables only).
    """

    op_names: tuple[str, ...]
    device_names: tuple[str, ...]
    time: np.ndarray
    energy: np.ndarray
    mem: np.ndarray
    allowed: np.ndarray
    edges: np.ndarray
    edge_bytes: np.ndarray
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
    transfer_time: np.ndarray = field(default=_TransferTable("transfer_time"), kw_only=True,  # type: ignore[arg-type]
                                      repr=False)
    transfer_energy: np.ndarray = field(default=_TransferTable("transfer_energy"),  # type: ignore[arg-type]
                                        kw_only=True, repr=False)
    edge_size: np.ndarray = field(default=None, kw_only=True, repr=False)  # type: ignore[arg-type]
    link_latency: np.ndarray = field(default=None, kw_only=True, repr=False)  # type: ignore[arg-type]
    link_time_per_byte: np.ndarray = field(default=None, kw_only=True, repr=False)  # type: ignore[arg-type]
    link_energy_per_byte: np.ndarray = field(default=None, kw_only=True, repr=False)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if self.send_time is None:
            object.__setattr__(self, "send_time", np.zeros(self.n_dev, dtype=np.int64))
        m = self.n_dev
        if self.edge_size is None:
            object.__setattr__(self, "edge_size", np.asarray(self.edge_bytes, dtype=np.float64))
        for name in ("link_latency", "link_time_per_byte", "link_energy_per_byte"):
            rate = getattr(self, name)
            if rate is None:
                object.__setattr__(self, name, np.zeros((m, m), dtype=np.float64))
            elif np.diagonal(rate).any():  # a device sends to itself for free
                rate = np.array(rate)
                np.fill_diagonal(rate, 0.0)
                object.__setattr__(self, name, rate)
        for name in ("edge_size", "link_latency", "link_time_per_byte", "link_energy_per_byte"):
            array = getattr(self, name)
            if array.dtype != np.float64:
                raise TypeError(f"CostTables.{name} must be float64, got {array.dtype}")
            array.setflags(write=False)
        explicit = [name for name in ("transfer_time", "transfer_energy") if self.__dict__[f"_{name}_explicit"]]
        for name in ("time", "energy", "mem", "edge_bytes", *explicit, "idle_power_mw", "mem_capacity",
                     "send_time"):
            array = getattr(self, name)
            if array.dtype != np.int64:
                raise TypeError(f"CostTables.{name} must be int64, got {array.dtype}")
            array.setflags(write=False)
        self.allowed.setflags(write=False)
        self.edges.setflags(write=False)

    def replaced(self, **changes: Any) -> CostTables:
        """A copy with ``changes`` (field values) applied; transfer tables not given explicitly stay
        computed from the rates where used (``dataclasses.replace`` would build them in full)."""
        for name in ("transfer_time", "transfer_energy"):
            if name not in changes:
                changes[name] = self.__dict__[f"_{name}_array"] if self.__dict__[f"_{name}_explicit"] else None
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------ transfers
    def edge_transfer_time(self, edge: np.ndarray | int, src_dev: np.ndarray | int,
                           dst_dev: np.ndarray | int) -> np.ndarray:
        """Integer time of edge ``edge`` sent from ``src_dev`` to ``dst_dev`` (broadcast; 0 on one device)."""
        return self._edge_transfer("transfer_time", edge, src_dev, dst_dev)

    def edge_transfer_energy(self, edge: np.ndarray | int, src_dev: np.ndarray | int,
                             dst_dev: np.ndarray | int) -> np.ndarray:
        """Integer energy (pJ) of edge ``edge`` sent from ``src_dev`` to ``dst_dev`` (broadcast)."""
        return self._edge_transfer("transfer_energy", edge, src_dev, dst_dev)

    def _edge_transfer(self, what: str, edge: Any, a: Any, b: Any) -> np.ndarray:
        m = self.n_dev
        pair = np.asarray(a, dtype=np.int64) * m + np.asarray(b, dtype=np.int64)  # flat indices: one take each
        if self.__dict__[f"_{what}_explicit"]:
            table = self.__dict__[f"_{what}_array"]
            return np.asarray(table, dtype=np.int64).reshape(-1).take(np.asarray(edge, dtype=np.int64) * (m * m)
                                                                      + pair)
        size = self.edge_size.take(edge)
        if what == "transfer_time":
            raw = self.link_latency.reshape(-1).take(pair) + size * self.link_time_per_byte.reshape(-1).take(pair)
        else:
            raw = size * self.link_energy_per_byte.reshape(-1).take(pair)
        value = np.ceil(np.asarray(raw, dtype=np.float64) - 1e-9)
        return np.maximum(value, 0.0).astype(np.int64)  # the rates are zero on the diagonal

    @property
    def has_transfer_energy(self) -> bool:
        """Whether any transfer costs energy (False lets evaluators skip the per-edge energy)."""
        if self.__dict__["_transfer_energy_explicit"]:
            return bool(self.__dict__["_transfer_energy_array"].any())
        return bool(self.n_edges and self.link_energy_per_byte.any() and self.edge_size.any())

    def transfer_block(self, edges: np.ndarray, what: str = "transfer_time") -> np.ndarray:
        """``what`` (``transfer_time`` or ``transfer_energy``) of ``edges`` over every device pair: (k, m, m)."""
        edges = np.asarray(edges, dtype=np.int64)
        pairs = np.arange(self.n_dev)
        return self._edge_transfer(what, edges[:, None, None], pairs[None, :, None], pairs[None, None, :])

    def transfer_over_pairs(self, what: str = "transfer_time", chunk_cells: int = 1 << 22) -> tuple[np.ndarray,
                                                                                                     np.ndarray]:
        """Per edge the sum and the maximum of ``what`` over every device pair (a != b), in chunks of edges
        (memory O(chunk_cells)): two int64 arrays of shape (n_edges,)."""
        total = np.zeros(self.n_edges, dtype=np.int64)
        top = np.zeros(self.n_edges, dtype=np.int64)
        step = max(1, chunk_cells // max(self.n_dev * self.n_dev, 1))
        for lo in range(0, self.n_edges, step):
            block = self.transfer_block(np.arange(lo, min(lo + step, self.n_edges)), what)
            block[:, np.arange(self.n_dev), np.arange(self.n_dev)] = 0
            total[lo: lo + len(block)] = block.sum(axis=(1, 2))
            top[lo: lo + len(block)] = block.reshape(len(block), -1).max(axis=1, initial=0)
        return total, top

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
#: Bytes of one memory transaction of an irregular gather (CPU cache line, GPU 32-byte sector, FPGA/HBM
#: burst). An SpMM gathers one dense row of ``width`` elements per nonzero: a row of at least this many
#: bytes uses whole transactions whatever the density, so the gather efficiency is
#: ``max(density ** exponent, min(1, width * bytes_per_element / SPARSE_LINE_BYTES))``.
SPARSE_LINE_BYTES = dict(cpu=64, gpu=32, tensorcore=32, fpga=64, npu=64, dla=64, generic=64)


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
                  allowed: np.ndarray, edge_time_max: np.ndarray, edge_energy_max: np.ndarray, idle: np.ndarray,
                  send_time: np.ndarray | None, time_unit: str) -> None:
    """Raise :class:`SpecError` when a worst-case total of a mapping could pass :data:`MAX_TOTAL`.

    Totals, summed as floats so that they cannot wrap: time = over ops, their slowest allowed
    device + over edges, their slowest route (``edge_time_max``) and one send; energy = the same
    for energy + every device's idle power over that time; memory = over ops, their largest
    footprint. The error names the total and its largest term (an op and its device, an edge, or
    the idle power).
    """
    n_edges = len(edge_time_max)
    sends = float(send_time.max()) * n_edges if send_time is not None and send_time.size else 0.0
    span = 0.0
    for what, table, transfers in (("time", time, edge_time_max), ("energy", energy, edge_energy_max),
                                   ("mem", mem, None)):
        per_op = np.where(allowed, table, 0).astype(np.float64)
        op_max = per_op.max(axis=1)
        edge_max = np.zeros(0)
        if transfers is not None and n_edges:
            edge_max = transfers.astype(np.float64)
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


def pair_maximum(latency: np.ndarray, per_unit: np.ndarray, sizes: np.ndarray,
                 chunk_cells: int = 1 << 22) -> np.ndarray:
    """Per size ``s`` the largest ``latency[a, b] + s * per_unit[a, b]`` over the device pairs ``a != b``
    (float, computed as the cost tables do, so bit-identical to the maximum over a full table).

    Pairs dominated by another (no larger latency nor rate) are dropped first when every figure is
    finite and every size nonnegative, so a platform of uniform links costs O(sizes); 0 without pairs.
    """
    m = latency.shape[0]
    off = ~np.eye(m, dtype=bool)
    lat, rate = latency[off], per_unit[off]
    sizes = np.asarray(sizes, dtype=np.float64)
    if not lat.size:
        return np.zeros(len(sizes))
    if np.isfinite(lat).all() and np.isfinite(rate).all() and (sizes >= 0).all():
        order = np.lexsort((-rate, -lat))  # latency descending, then rate descending
        lat, rate = lat[order], rate[order]
        keep = rate > np.concatenate([[-np.inf], np.maximum.accumulate(rate[:-1])])  # not dominated, no repeat
        lat, rate = lat[keep], rate[keep]
    out = np.empty(len(sizes))
    step = max(1, chunk_cells // len(lat))
    with np.errstate(over="ignore", invalid="ignore"):  # inf / NaN are reported by the caller
        for lo in range(0, len(sizes), step):
            out[lo: lo + step] = (lat[None, :] + sizes[lo: lo + step, None] * rate[None, :]).max(axis=1)
    return out


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
    (:mod:`dse.dvfs`).
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
    #: a :class:`dse.calibrate.Calibration` to use instead of the platform's ``calibration`` file
    calibration: Any = None

    def op_time_s(self, op: Op, device: Device) -> float | None:
        """Seconds ``op`` takes on ``device``; ``None`` if the device cannot run it."""
        parts = self.op_time_parts(op, device)
        return None if parts is None else max(parts[0], parts[1]) + parts[2]

    def op_time_parts(self, op: Op, device: Device) -> tuple[float, float, float] | None:
        """(compute-bound, memory-bound, launch) seconds of ``op`` on ``device`` (the time is
        ``max(compute, memory) + launch``); ``None`` if the device cannot run it. DVFS scales
        only the compute-bound part (:mod:`dse.dvfs`)."""
        eff = COMPUTE_EFFICIENCY.get(op.op_class, COMPUTE_EFFICIENCY["generic"]).get(device.kind)
        eff = declared_efficiency(device, op.op_class, eff)  # cost-mechanism hook (dse.cost_mechanisms.efficiency)
        if eff is None or (op.flops and not device.peak_tflops and not op.device_costs):
            return None  # the kind cannot run this class, or the device has no FLOP rate to cost it with
        bw_eff = BANDWIDTH_EFFICIENCY[device.kind]
        if op.op_class == "spmm":
            skew = 1.0 + SKEW_SENSITIVITY[device.kind] * op.features.get("degree_skew", 0.0)
            density = op.features.get("density", 1.0)
            eff = eff / skew
            dims = _spmm_dims(op)
            row_bytes = (dims["width"] if dims else 1.0) * _element_bytes(op.precision)
            gather = max(density ** SPARSE_DENSITY_EXPONENT[device.kind],
                         min(1.0, row_bytes / SPARSE_LINE_BYTES[device.kind]))
            bw_eff = SPARSE_BANDWIDTH_EFFICIENCY[device.kind] * gather / skew
        if op.device_costs and device.name in op.device_costs:
            return (op.device_costs[device.name], 0.0, 0.0)
        peak = device.peak_flops(op.precision)
        if op.flops and peak is None:
            return None
        compute = op.flops / (peak * eff) if op.flops and peak is not None else 0.0
        memory = op.bytes_moved / (device.mem_bw_gbps * 1e9 * bw_eff) if op.bytes_moved else 0.0
        launch = LAUNCH_OVERHEAD_S[device.kind] if self.launch_overhead else 0.0
        launch = launch_seconds(device, launch) if self.launch_overhead else 0.0  # cost-mechanism hook (overhead)
        return (compute, memory, launch)

    def _calibration(self, platform: Platform) -> Any:
        """The calibration in use: ``self.calibration``, else the platform's file (machine kind checked:
        a file from another machine kind raises :class:`SpecError` naming it), else ``None``."""
        if self.calibration is not None or platform.calibration is None:
            return self.calibration
        from dse.calibrate import load_calibration

        return load_calibration(platform.calibration)

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
        calibration = self._calibration(platform)
        parts = np.zeros((n, m, 3))
        shares = entry_shares(workload)  # cost-mechanism hook (dse.cost_mechanisms): fusion, per-call overhead
        for i, op in enumerate(workload.ops):
            for j, dev in enumerate(platform.devices):
                found = self.op_time_parts(op, dev)
                if found is None or not _type_ok(op, dev):
                    continue
                found = fused_parts(op, dev, shares[i] == 0.0, found)  # cost-mechanism hook (fusion)
                found = (found[0], found[1], found[2] + call_seconds(dev, shares[i]))  # hook (call overhead)
                measured = calibrated_seconds(calibration, op, dev) if calibration is not None else None
                parts[i, j] = found if measured is None else (measured, 0.0, 0.0)
                seconds = max(parts[i, j, 0], parts[i, j, 1]) + parts[i, j, 2]
                allowed[i, j] = True
                try:
                    time[i, j] = max(1, _ceil_int(seconds * 1e9, "time"))
                    energy[i, j] = _ceil_int((dev.active_w - dev.idle_w) * 1e3 * time[i, j], "energy")
                    mem[i, j] = _ceil_int(op.resident_bytes + op.output_bytes, "mem")
                except _Unfit as exc:
                    raise _cell_error(workload, platform, i, j, exc, "ns") from None
        tables = _assemble(workload, platform, time, energy, mem, allowed, ns_routes(platform))
        if any(len(d.dvfs) >= 2 for d in platform.devices):
            _attach_dvfs(tables, workload, platform, parts, allowed)
        return tables


#: Device name of a calibration (:mod:`dse.calibrate`) that costs each platform device kind.
CALIBRATION_DEVICE = {"cpu": "cpu", "gpu": "cuda", "tensorcore": "tensorcore"}


def _element_bytes(precision: str) -> int:
    from dse.builders.gemm import BYTES

    return BYTES.get(precision, 4)


def _gemm_dims(op: Op) -> dict[str, float] | None:
    """(m, n, k) of a GEMM op built by :func:`dse.builders.gemm.gemm_op`: from ``flops = 2mnk``,
    ``output = mn``, ``resident = kn`` and ``bytes_moved = mk + kn + mn`` elements."""
    from dse.builders.gemm import BYTES

    bpe = BYTES.get(op.precision, 4)
    mn, kn = op.output_bytes / bpe, op.resident_bytes / bpe
    mk = op.bytes_moved / bpe - mn - kn
    mnk = op.flops / 2
    if min(mn, kn, mk, mnk) <= 0 or abs(mn * kn * mk / mnk**2 - 1) > 1e-6:
        return None  # not a plain GEMM's figures: stays analytic
    return {"m": mnk / kn, "n": mnk / mk, "k": mnk / mn}


def _spmm_dims(op: Op) -> dict[str, float] | None:
    """(rows, nnz, width, row_cv) of an SpMM op: its features, or derived from an op built by
    :func:`dse.builders.gcn.spmm_op` (``flops = 2 nnz w``, ``output = n w``, ``density = nnz / n^2``)."""
    from dse.builders.gemm import BYTES

    f = op.features
    if {"rows", "nnz", "width"} <= set(f):
        return {"rows": f["rows"], "nnz": f["nnz"], "width": f["width"], "row_cv": f.get("degree_skew", 0.0)}
    bpe = BYTES.get(op.precision, 4)
    nw, zw, density = op.output_bytes / bpe, op.flops / 2, f.get("density", 0.0)
    if min(nw, zw, density) <= 0:
        return None
    rows = zw / (nw * density)
    return {"rows": rows, "nnz": density * rows * rows, "width": nw / rows, "row_cv": f.get("degree_skew", 0.0)}


def calibrated_seconds(calibration: Any, op: Op, device: Device) -> float | None:
    """Measured-model seconds of ``op`` on ``device`` from ``calibration`` (a
    :class:`dse.calibrate.Calibration`), or ``None`` where it does not cover them.

    Covered: ``gemm`` ops (``gemm`` fit) and ``spmm`` ops (``spmv`` fit for width 1 when present,
    else ``spmm``) whose precision was calibrated on the device named by :data:`CALIBRATION_DEVICE`
    for the device's kind. Everything else stays analytic.
    """
    name = CALIBRATION_DEVICE.get(device.kind)
    if name is None or op.op_class not in ("gemm", "spmm"):
        return None
    if op.op_class == "gemm":
        kernel, dims = "gemm", _gemm_dims(op)
    else:
        dims = _spmm_dims(op)
        kernel = "spmv" if dims and round(dims["width"]) == 1 and calibration.has("spmv", name, op.precision) \
            else "spmm"
        if dims is not None:
            dims = {**dims, "cols": dims["rows"]}
            if kernel == "spmv":
                dims.pop("width")
    if dims is None or not calibration.has(kernel, name, op.precision):
        return None
    return max(float(calibration.predict_s(kernel, name, op.precision, **dims)), 1e-9)


def _attach_dvfs(tables: CostTables, workload: Workload, platform: Platform, parts: np.ndarray,
                 allowed: np.ndarray) -> None:
    """Attach the operating-point tables (:mod:`dse.dvfs`): per level, the compute-bound part of each
    op's time scaled by ``time_scale``, dynamic power by ``power_scale``."""
    from dse.dvfs import LevelTables, attach_levels

    n, m = allowed.shape
    counts = np.asarray([max(1, len(d.dvfs)) for d in platform.devices], dtype=np.int64)
    n_levels = int(counts.max())
    time = np.zeros((n_levels, n, m), dtype=np.int64)
    energy = np.zeros_like(time)
    for j, dev in enumerate(platform.devices):
        for level in range(n_levels):
            if len(dev.dvfs) >= 2:
                point = dev.dvfs[min(level, len(dev.dvfs) - 1)]
                ts, ps = point.time_scale, point.power_scale
            else:
                ts, ps = 1.0, 1.0
            for i in np.flatnonzero(allowed[:, j]):
                seconds = max(parts[i, j, 0] * ts, parts[i, j, 1]) + parts[i, j, 2]
                try:
                    time[level, i, j] = max(1, _ceil_int(seconds * 1e9, "time"))
                    energy[level, i, j] = _ceil_int((dev.active_w - dev.idle_w) * ps * 1e3 * time[level, i, j],
                                                    "energy")
                except _Unfit as exc:
                    raise _cell_error(workload, platform, int(i), j, exc, "ns") from None
    freqs = tuple(tuple(p.freq_mhz for p in d.dvfs) if len(d.dvfs) >= 2 else () for d in platform.devices)
    attach_levels(tables, LevelTables(time, energy, counts, freqs))


def _type_ok(op: Op, dev: Device) -> bool:
    return op.device_type is None or op.device_type in (dev.kind, dev.name)


def route_arrays(platform: Platform) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per device pair ``platform.route``'s (bandwidth_gbps, latency_us, energy_pj_per_byte) as three (m, m)
    arrays (diagonal: inf, 0, 0). Pairs with a direct link read it (the last one listed, as the route
    graph keeps it); only the others are routed, so a fully linked platform costs O(links), not a
    path search per pair. Raises ``ValueError`` when no chain of links connects two devices."""
    devices = platform.devices
    m = len(devices)
    index = {d.name: j for j, d in enumerate(devices)}
    bw, lat, epb = np.full((m, m), np.nan), np.full((m, m), np.nan), np.full((m, m), np.nan)
    diagonal = np.arange(m)
    bw[diagonal, diagonal], lat[diagonal, diagonal], epb[diagonal, diagonal] = np.inf, 0.0, 0.0
    for link in platform.links:
        a, b = index.get(link.a), index.get(link.b)
        if a is None or b is None or a == b:
            continue
        bw[a, b] = bw[b, a] = link.bandwidth_gbps
        lat[a, b] = lat[b, a] = link.latency_us
        epb[a, b] = epb[b, a] = link.energy_pj_per_byte
    for a, b in zip(*np.nonzero(np.isnan(bw)), strict=True):
        bw[a, b], lat[a, b], epb[a, b] = platform.route(devices[a].name, devices[b].name)
    return bw, lat, epb


def ns_routes(platform: Platform) -> np.ndarray:
    """Per device pair (latency ns, ns per byte, pJ per byte), shape (m, m, 3); zeros on the diagonal."""
    bw, lat, epb = route_arrays(platform)
    routes = np.stack([lat * 1e3, 1.0 / bw, epb], axis=-1)  # 1 / (GB/s) = ns per byte
    diagonal = np.arange(len(bw))
    routes[diagonal, diagonal] = 0.0
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
    diag = np.arange(len(platform.devices))
    latency, per_byte, epb = (np.array(routes[..., k], dtype=np.float64) for k in range(3))
    for rate in (latency, per_byte, epb):
        rate[diag, diag] = 0.0
    edge_max = {}
    for what, lat, rate in (("transfer_time", latency, per_byte), ("transfer_energy", np.zeros_like(epb), epb)):
        raw_max = pair_maximum(lat, rate, raw_bytes)
        bad = ~(raw_max < _INT64_LIMIT)
        if bad.any():  # name the first entry (edge, then device pair) past int64
            k = int(np.argmax(bad))
            with np.errstate(over="ignore", invalid="ignore"):
                row = lat + raw_bytes[k] * rate
            row[diag, diag] = 0

            def where(ix: tuple[int, ...], k: int = k) -> tuple[str, str]:
                return (f"{edge(k)}, {names[ix[1]]} -> {names[ix[2]]}",
                        f"edge {edge(k)} from device {names[ix[1]]!r} to {names[ix[2]]!r}")

            _check_fits(row[None], what, _unit(what, time_unit), source, where)
        edge_max[what] = np.ceil(np.maximum(raw_max, 0.0) - 1e-9).clip(min=0).astype(np.int64)
    raw_idle = np.asarray([d.idle_w * 1e3 for d in platform.devices], dtype=np.float64)
    raw_capacity = np.asarray([d.mem_gib * 2**30 for d in platform.devices], dtype=np.float64)
    _check_fits(raw_idle, "idle_power", "mW", source, lambda ix: (names[ix[0]], f"device {names[ix[0]]!r}"))
    _check_fits(raw_capacity, "mem_capacity", "bytes", source, lambda ix: (names[ix[0]], f"device {names[ix[0]]!r}"))
    idle = np.asarray([_ceil_int(d.idle_w * 1e3) for d in platform.devices], dtype=np.int64)
    capacity = np.asarray([int(d.mem_gib * 2**30) for d in platform.devices], dtype=np.int64)
    _check_totals(workload, platform, time, energy, mem, allowed, edge_max["transfer_time"],
                  edge_max["transfer_energy"], idle, send_time, time_unit)
    return CostTables(
        op_names=tuple(op.name for op in workload.ops),
        device_names=platform.device_names,
        time=time,
        energy=energy,
        mem=mem,
        allowed=allowed,
        edges=edges,
        edge_bytes=edge_bytes,
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
        edge_size=raw_bytes.copy(),
        link_latency=latency,
        link_time_per_byte=per_byte,
        link_energy_per_byte=epb,
    )


# --------------------------------------------------------------------------- table-driven


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
        ns_per_unit = self.seconds_per_time_unit * 1e9
        raw, allowed = _table_raw(workload, platform)
        # the rules of _ceil_int, cell by cell in the order (op, device), then time, energy, mem
        with np.errstate(over="ignore", invalid="ignore"):
            raw_time = raw * self.scale
            time_bad = allowed & ~(raw_time < _INT64_LIMIT)
            time = np.where(allowed & ~time_bad & (raw_time > 0), np.ceil(raw_time - 1e-9), 0).astype(np.int64)
            power = np.asarray([(d.active_w - d.idle_w) * 1e3 for d in platform.devices], dtype=np.float64)
            raw_energy = power[None, :] * time.astype(np.float64) * ns_per_unit / self.scale
            energy_bad = allowed & ~time_bad & ~(raw_energy < _INT64_LIMIT)
            energy = np.where(allowed & ~time_bad & ~energy_bad & (raw_energy > 0),
                              np.ceil(raw_energy - 1e-9), 0).astype(np.int64)
            raw_mem = np.asarray([op.resident_bytes + op.output_bytes for op in workload.ops], dtype=np.float64)
            mem_bad = allowed & ~(raw_mem < _INT64_LIMIT)[:, None]
            mem_row = np.where(raw_mem > 0, np.ceil(np.where(mem_bad.any(axis=1), 0, raw_mem) - 1e-9), 0)
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
