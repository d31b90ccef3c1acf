"""The integer cost tables every evaluator, CP-SAT formulation and simulator reads.

The tables are the one cost truth that the vectorized evaluators, the CP-SAT
formulations and the simulators all read. Everything is an integer in fixed
units so that exact solvers and evaluators agree to the last unit:

* time in ``time_unit`` (``ns`` for the roofline model; an abstract unit for
  table-driven workloads), ``seconds_per_time_unit`` converts to seconds;
* energy in picojoules (pJ);
* power in milliwatts (mW), so that ``mW x ns = pJ`` exactly;
* memory in bytes.

The cost models that fill them are :mod:`dse.cost` (table-driven, and every public name),
:mod:`dse.cost.roofline` (analytic) with :mod:`dse.cost.calibrated` (measured GEMM and SpMM)
and :mod:`dse.cost.checks` (the int64 checks and the table assembly they share). DVFS
operating points are a field of the tables (``levels``, :class:`LevelTables`; :mod:`dse.cost.dvfs`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from dse.util.graphs import lexicographic_topological_order
from dse.util.rounding import ceil_all

if TYPE_CHECKING:
    from dse.model.platform import Platform
    from dse.model.workload import Workload

#: Every int64 table entry is below this float (2**63).
_INT64_LIMIT = 2.0**63

#: Bound of the worst-case totals of one mapping (every op on its slowest / costliest device,
#: every edge on its slowest / costliest route, every device idle over that span): 2**62, half
#: of int64, so that the evaluators' and CP-SAT's integer sums of these tables cannot overflow.
MAX_TOTAL = 2**62


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
    ``levels``: the DVFS operating points' costs (:class:`LevelTables`; :mod:`dse.cost.dvfs`), kept
    through :meth:`replaced` and pickling like every other field.
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
    #: per device, its class and the path of its cost-mechanism values (``fitted``, ``data sheet only``,
    #: ``kind defaults``: :func:`dse.model.device_defaults.cost_path`); empty when not known
    device_classes: tuple[str, ...] = ()
    device_paths: tuple[str, ...] = ()
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
    #: DVFS operating-point costs (:class:`LevelTables`), or None when no device has operating points.
    levels: LevelTables | None = field(default=None, kw_only=True, repr=False)

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
        levels = self.levels
        if levels is not None and (levels.time.shape[1:] != (self.n_ops, self.n_dev)
                                   or levels.energy.shape != levels.time.shape
                                   or levels.count.shape != (self.n_dev,)):
            raise ValueError(f"level tables of shape {levels.time.shape} do not fit {self.n_ops} ops x "
                             f"{self.n_dev} devices")

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
        value = ceil_all(raw)
        return np.maximum(value, 0.0).astype(np.int64)  # the rates are zero on the diagonal

    def transfer_is_explicit(self, what: str = "transfer_time") -> bool:
        """Whether ``what`` (``transfer_time`` or ``transfer_energy``) was given as an explicit
        (n_edges, n_dev, n_dev) table (True) rather than computed from the per-edge sizes and per-pair
        rates (False). Raises ``ValueError`` for any other name."""
        if what not in ("transfer_time", "transfer_energy"):
            raise ValueError(f"no transfer table {what!r}; known: 'transfer_time', 'transfer_energy'")
        return bool(self.__dict__[f"_{what}_explicit"])

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
        (memory O(chunk_cells)): two int64 arrays of shape (n_edges,). Computed from the sizes and rates,
        each distinct pair of rates is costed once (a platform of many alike devices has a few). Worked out
        once per table and ``what`` (the tables do not change): the arrays returned are read-only."""
        known = self.__dict__.setdefault("_over_pairs_known", {})
        if what not in known:
            known[what] = self._worked_over_pairs(what, chunk_cells)
            for array in known[what]:
                array.setflags(write=False)
        return known[what]

    def _worked_over_pairs(self, what: str, chunk_cells: int) -> tuple[np.ndarray, np.ndarray]:
        total = np.zeros(self.n_edges, dtype=np.int64)
        top = np.zeros(self.n_edges, dtype=np.int64)
        if not self.__dict__[f"_{what}_explicit"]:
            return self._over_distinct_rates(what, total, top, chunk_cells)
        step = max(1, chunk_cells // max(self.n_dev * self.n_dev, 1))
        for lo in range(0, self.n_edges, step):
            block = self.transfer_block(np.arange(lo, min(lo + step, self.n_edges)), what)
            block[:, np.arange(self.n_dev), np.arange(self.n_dev)] = 0
            total[lo: lo + len(block)] = block.sum(axis=(1, 2))
            top[lo: lo + len(block)] = block.reshape(len(block), -1).max(axis=1, initial=0)
        return total, top

    def _over_distinct_rates(self, what: str, total: np.ndarray, top: np.ndarray,
                             chunk_cells: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`transfer_over_pairs` of a table computed from sizes and rates: the value of each edge at
        each distinct (latency, time per byte) or energy-per-byte pair of rates among the device pairs,
        rounded as :meth:`_edge_transfer` rounds it, summed with the number of pairs that share it."""
        off = ~np.eye(self.n_dev, dtype=bool)
        if what == "transfer_time":
            rates = np.column_stack([self.link_latency[off], self.link_time_per_byte[off]])
        else:
            rates = np.column_stack([np.zeros(int(off.sum())), self.link_energy_per_byte[off]])
        if not len(rates) or not self.n_edges:
            return total, top
        distinct, count = np.unique(rates, axis=0, return_counts=True)
        step = max(1, chunk_cells // len(distinct))
        for lo in range(0, self.n_edges, step):
            size = self.edge_size[lo: lo + step, None]
            raw = distinct[None, :, 0] + size * distinct[None, :, 1] if what == "transfer_time" else \
                size * distinct[None, :, 1]
            block = np.maximum(ceil_all(raw), 0.0).astype(np.int64)
            total[lo: lo + len(block)] = block @ count.astype(np.int64)
            top[lo: lo + len(block)] = block.max(axis=1, initial=0)
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
        """A topological order of the ops (smallest index first among ready ops); ``ValueError`` for a
        cyclic graph."""
        order = lexicographic_topological_order(self.n_ops, ((int(s), int(d)) for s, d in self.edges))
        if len(order) != self.n_ops:
            raise ValueError("cost tables describe a cyclic graph")
        return np.asarray(order, dtype=np.int64)


class CostModel(Protocol):
    """Anything that turns a workload on a platform into :class:`CostTables`."""

    def tables(self, workload: Workload, platform: Platform) -> CostTables: ...

