"""Hardware descriptions: devices, links and platforms (frozen dataclasses).

A :class:`Platform` is what the cost models read. Loaders validate YAML with
pydantic so that every error names the file, the field and the value.

Every number of a platform file must be finite and within the bounds below
(:data:`MAX_POWER_W`, :data:`MAX_MEM_GIB`, ...): generous enough for any real
device, tight enough that the integer cost tables built from them (mW, bytes,
ns, pJ in int64) cannot overflow from platform figures alone. A workload whose
figures are still too large for a device's rates is refused when the tables are
built (:mod:`dse.cost`), naming the op and the device.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dse.errors import SpecError
from dse.model.device_defaults import DeviceDefaults, catalog_defaults, resolve_device
from dse.model.workload import OP_CLASSES
from dse.util.graphs import is_connected
from dse.util.interrupt import stop_point
from dse.util.validation import spec_error_from_validation

DEVICE_KINDS = ("cpu", "gpu", "tensorcore", "fpga", "npu", "dla", "generic")
#: Precision class of each compute precision, the keys of ``precision_efficiency``
#: (:mod:`dse.cost.mechanisms.precision_efficiency`): fp16 and bf16 GEMMs run on the same tensor-core rate
PRECISION_CLASS: Mapping[str, str] = {"fp8": "fp8", "fp16": "fp16", "bf16": "fp16", "int8": "int8",
                                      "tf32": "fp32", "fp32": "fp32"}

# Bounds of platform figures. Each is far past any real device, and each keeps the int64 cost
# tables safe: power <= 1e9 mW, memory <= 1.1e15 bytes, a hop's latency <= 1e12 ns, and a
# byte's transfer time <= 1e6 ns (1 / MIN_BANDWIDTH_GBPS) and energy <= 1e9 pJ.
#: ``idle_w``, ``active_w``: 1 MW (a whole supercomputer draws ~20 MW; one device far less).
MAX_POWER_W = 1e6
#: ``mem_gib``: 1 PiB of device memory (1.1e15 bytes in the tables).
MAX_MEM_GIB = 1e6
#: ``mem_bw_gbps``, ``bandwidth_gbps`` (GB/s): from 1 kB/s ...
MIN_BANDWIDTH_GBPS = 1e-6
#: ... to 1 EB/s (HBM3 stacks reach ~1e3 GB/s).
MAX_BANDWIDTH_GBPS = 1e9
#: ``latency_us``: 1,000 s per hop.
MAX_LATENCY_US = 1e9
#: ``peak_tflops`` values: from 1 MFLOP/s ...
MIN_PEAK_TFLOPS = 1e-6
#: ... to 10 EFLOP/s (the largest accelerators reach ~1e4 TFLOP/s at low precision).
MAX_PEAK_TFLOPS = 1e7
#: ``energy_pj_per_byte``: 1 mJ per byte (off-chip links spend ~1-100 pJ/byte).
MAX_ENERGY_PJ_PER_BYTE = 1e9
#: ``speed`` (abstract operations per time unit), when given (0 means unused): from 1e-6 ...
MIN_SPEED = 1e-6
#: ... to 1e15.
MAX_SPEED = 1e15
#: Devices per platform (after ``count`` expansion): the transfer tables grow with its square.
MAX_DEVICES = 1024
#: Operating points (DVFS levels) per device; each adds a value to the device's frequency gene.
MAX_DVFS_LEVELS = 16
#: Bounds of an operating point's ``time_scale`` and ``power_scale`` (factors of the nominal figures).
DVFS_SCALE_RANGE = (0.05, 20.0)


@dataclass(frozen=True)
class OperatingPoint:
    """One DVFS operating point of a device: ``freq_mhz`` and how it scales the nominal figures.

    ``time_scale`` multiplies the compute-bound part of an op's time (1.5: 1.5x slower; the
    memory-bound part and launch overhead are not scaled: memory clocks are separate);
    ``power_scale`` multiplies the dynamic power ``active_w - idle_w`` (idle power unchanged).
    """

    freq_mhz: float
    time_scale: float = 1.0
    power_scale: float = 1.0


@dataclass(frozen=True)
class Device:
    """One compute device.

    ``peak_tflops`` maps a precision (``fp64``, ``fp32``, ``fp16``, ``bf16``,
    ``int8``) to the device's peak dense rate in TFLOP/s (TOP/s for int8).
    ``speed`` is an abstract rate (operations per time unit) used by
    table-driven workloads such as the TF paper's graphs; it may be 0 when
    unused.
    """

    name: str
    kind: str
    peak_tflops: Mapping[str, float]
    mem_bw_gbps: float
    mem_gib: float
    idle_w: float
    active_w: float
    speed: float = 0.0
    dvfs: tuple[OperatingPoint, ...] = ()
    #: cost mechanisms (:mod:`dse.cost.mechanisms`); the defaults leave the roofline model unchanged
    launch_overhead_us: float | None = None
    call_overhead_us: float = 0.0
    fused_op_classes: tuple[str, ...] = ()
    compute_efficiency: Mapping[str, float] = field(default_factory=dict)
    #: fraction of peak per op class and precision class (dse.cost.mechanisms.precision_efficiency)
    precision_efficiency: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    #: fraction of peak memory bandwidth per op class (dse.cost.mechanisms.bandwidth)
    bandwidth_efficiency: Mapping[str, float] = field(default_factory=dict)
    #: last-level cache in MiB (0: none declared); sparse gathers reuse it (dse.cost.mechanisms.sparse_reuse)
    cache_mib: float = 0.0
    #: slow-down of sparse ops per unit of row-length CV (None: the kind's default); fitted per class
    skew_sensitivity: float | None = None
    #: fraction of peak bandwidth sparse ops reach (None: the kind's default); fitted per class
    sparse_bandwidth_efficiency: float | None = None
    #: streaming multiprocessors (0: not declared) and the output tile's edge of tiled GEMMs (0: none)
    compute_units: int = 0
    gemm_tile: int = 0
    #: the device class whose defaults it takes ("": none) and the runtime that executes the model
    #: ("": none); :mod:`dse.model.device_defaults`
    device_class: str = ""
    runtime: str = ""
    #: where each mechanism field's value came from ("declared", "runtime ...", "class default: ...",
    #: "kind default"), and the device file's citation of each figure
    provenance: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    #: per-device link bandwidth (GB/s, one direction) and per-step latency inside a node (NVLink, PCIe)
    #: and between nodes (InfiniBand, Ethernet); 0: none declared (dse.cost.mechanisms.collective)
    intra_node_gbps: float = 0.0
    intra_node_latency_us: float = 0.0
    inter_node_gbps: float = 0.0
    inter_node_latency_us: float = 0.0

    def peak_flops(self, precision: str) -> float | None:
        """Peak FLOP/s for ``precision``; an unlisted precision runs at the fp32 rate if fp32 is listed,
        else ``None``: the device cannot run it (e.g. an fp32 op on an int8/fp16-only DLA)."""
        rates = self.peak_tflops
        if precision in rates:
            return rates[precision] * 1e12
        if "fp32" in rates:
            return rates["fp32"] * 1e12
        return None


@dataclass(frozen=True)
class Link:
    """A bidirectional link between two devices."""

    a: str
    b: str
    bandwidth_gbps: float
    latency_us: float
    energy_pj_per_byte: float = 0.0


@dataclass(frozen=True)
class Platform:
    """A set of devices and the links between them.

    Device pairs without a direct link communicate over the path of fewest
    links, the widest of those (bottleneck bandwidth, summed latency and
    energy); see :meth:`route`. ``calibration``: path of a measured kernel
    calibration (:mod:`dse.cost.calibration.measure`) the cost model uses where it covers a device.
    """

    name: str
    devices: tuple[Device, ...]
    links: tuple[Link, ...] = ()
    description: str = ""
    calibration: str | None = None
    _routes: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def device_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.devices)

    def index(self, name: str) -> int:
        """Index of the device called ``name``; raises ``KeyError`` if absent."""
        return self.device_names.index(name)

    def route(self, a: str, b: str) -> tuple[float, float, float]:
        """(bandwidth_gbps, latency_us, energy_pj_per_byte) from ``a`` to ``b``.

        Raises ``ValueError`` when no chain of links connects the two devices.
        """
        if a == b:
            return (float("inf"), 0.0, 0.0)
        try:
            return self.routes()[(a, b)]
        except KeyError:
            raise ValueError(f"platform {self.name!r}: no link path from {a!r} to {b!r}") from None

    def routes(self) -> Mapping[tuple[str, str], tuple[float, float, float]]:
        """Every connected ordered pair of distinct devices with its :meth:`route`, worked out once per
        platform (a pair missing here has no link path)."""
        if not self._routes:
            self._routes.update(_all_routes(self))
        return MappingProxyType(self._routes)


def _all_routes(platform: Platform) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Every connected ordered pair's route: a direct link, else the path of fewest links with the widest
    bottleneck, the first such path in :func:`networkx.all_shortest_paths`' order when several tie (its
    summed latency and energy). One breadth-first search per source device (not two per pair), over plain
    dicts; a fully linked platform needs none."""
    direct: dict[tuple[str, str], Link] = {}
    for link in platform.links:  # the last of parallel links counts, as in a networkx Graph
        direct[(link.a, link.b)] = direct[(link.b, link.a)] = link
    names = platform.device_names
    pairs = list(itertools.permutations(names, 2))
    if all(pair in direct for pair in pairs):
        return {pair: (direct[pair].bandwidth_gbps, direct[pair].latency_us, direct[pair].energy_pj_per_byte)
                for pair in pairs}
    adjacency: dict[str, list[str]] = {name: [] for name in names}  # a networkx Graph's neighbour order
    for link in platform.links:
        for u, v in ((link.a, link.b), (link.b, link.a)):
            if v not in adjacency.setdefault(u, []):
                adjacency[u].append(v)
    bandwidth = {pair: link.bandwidth_gbps for pair, link in direct.items()}  # plain dicts: no graph views per hop
    routes: dict[tuple[str, str], tuple[float, float, float]] = {}
    for a in names:
        stop_point()  # 1,024 devices: a thousand searches
        pred = _predecessors(adjacency, a)  # what all_shortest_paths searches from a, for every target at once
        widest = _widest_bottlenecks(bandwidth, a, pred)
        walks: dict[tuple[str, float], tuple[float, float, float]] = {}  # (device, bottleneck) -> its path's sums
        for b in names:
            if b == a or b not in pred:
                continue
            one_hop = direct.get((a, b))
            if one_hop is not None:  # a direct link is the only one-hop path
                routes[(a, b)] = (one_hop.bandwidth_gbps, one_hop.latency_us, one_hop.energy_pj_per_byte)
                continue
            routes[(a, b)] = _first_widest_route(direct, bandwidth, a, b, pred, widest, walks)
    return routes


def _predecessors(adjacency: dict[str, list[str]], source: str) -> dict[str, list[str]]:
    """Per device reached from ``source``, its neighbours one hop nearer to ``source``, devices in the order a
    breadth-first search finds them: :func:`networkx.predecessor`'s answer on the graph of ``adjacency``."""
    pred: dict[str, list[str]] = {source: []}
    level, seen, frontier = 0, {source: 0}, [source]
    while frontier:
        level += 1
        current, frontier = frontier, []
        for v in current:
            for w in adjacency[v]:
                if w not in seen:
                    pred[w], seen[w] = [v], level
                    frontier.append(w)
                elif seen[w] == level:
                    pred[w].append(v)
    return pred


def _widest_bottlenecks(bandwidth: dict[tuple[str, str], float], source: str,
                        pred: dict[str, list[str]]) -> dict[str, float]:
    """Per device reached from ``source``: the widest bottleneck bandwidth over its shortest paths from
    ``source`` (``bandwidth``: each linked ordered pair's; ``pred``: the breadth-first search's predecessor
    lists, devices in the order it found them)."""
    widest = {source: math.inf}
    for v, nearer in itertools.islice(pred.items(), 1, None):  # in the order found: nearer ones come first
        if len(nearer) == 1:  # most devices (all of a star's): the one predecessor's, without a generator
            widest[v] = min(bandwidth[(nearer[0], v)], widest[nearer[0]])
        else:
            widest[v] = max(min(bandwidth[(p, v)], widest[p]) for p in nearer)
    return widest


def _first_widest_route(direct: dict[tuple[str, str], Link], bandwidth: dict[tuple[str, str], float], source: str,
                        target: str, pred: dict[str, list[str]], widest: dict[str, float],
                        walks: dict[tuple[str, float], tuple[float, float, float]]) -> tuple[float, float, float]:
    """(bottleneck bandwidth, summed latency, summed energy per byte) of the first shortest path from ``source``
    to ``target`` in :func:`networkx.all_shortest_paths`' order (a depth-first walk back from ``target``
    through each device's predecessors in list order) whose bottleneck is ``widest[target]``: at each device
    the first predecessor that still reaches it. The walk from a device depends on that device and the
    bottleneck alone, so its sums are kept in ``walks`` by both, and a later target's walk stops at the
    first device walked before (a star of 256 devices: 65,000 routes of two links, each hub walk once).
    Sums run from ``source`` on, as ``sum`` over the path's links adds them."""
    need = widest[target]
    path = [target]
    sums = None
    while sums is None:
        v = path[-1]
        for p in pred[v]:  # one exists: widest[v] is the widest of its predecessors' bottlenecks
            if bandwidth[(p, v)] >= need and widest[p] >= need:
                break
        path.append(p)
        sums = (math.inf, 0, 0) if p == source else walks.get((p, need))  # ints: 0 + x is x, as sum() starts
    for k in range(len(path) - 2, -1, -1):  # from the device walked before (or the source) to the target
        hop = direct[(path[k + 1], path[k])]
        sums = (min(sums[0], hop.bandwidth_gbps), sums[1] + hop.latency_us, sums[2] + hop.energy_pj_per_byte)
        walks[(path[k], need)] = sums
    return sums


# --------------------------------------------------------------------------- schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


_PeakTflops = Annotated[float, Field(ge=MIN_PEAK_TFLOPS, le=MAX_PEAK_TFLOPS)]
_Scale = Annotated[float, Field(ge=DVFS_SCALE_RANGE[0], le=DVFS_SCALE_RANGE[1])]


class OperatingPointSpec(_Strict):
    """A DVFS operating point of a platform file (see :class:`OperatingPoint`)."""

    freq_mhz: float = Field(ge=1.0, le=1e6, description="MHz, in [1, 1e6]")
    time_scale: _Scale = 1.0
    power_scale: _Scale = 1.0
_Bandwidth = Annotated[float, Field(ge=MIN_BANDWIDTH_GBPS, le=MAX_BANDWIDTH_GBPS)]


class DeviceSpec(_Strict):
    """One device of a platform file; every number finite and within the module's bounds.

    ``peak_tflops`` values in [MIN_PEAK_TFLOPS, MAX_PEAK_TFLOPS], ``mem_bw_gbps`` in
    [MIN_BANDWIDTH_GBPS, MAX_BANDWIDTH_GBPS], ``mem_gib`` in (0, MAX_MEM_GIB], ``idle_w`` and
    ``active_w`` in [0, MAX_POWER_W], ``speed`` 0 or in [MIN_SPEED, MAX_SPEED], ``count`` in
    [1, MAX_DEVICES].
    """

    name: str = Field(min_length=1)
    kind: str
    peak_tflops: dict[str, _PeakTflops] = Field(
        default_factory=dict, description=f"TFLOP/s per precision, in [{MIN_PEAK_TFLOPS:g}, {MAX_PEAK_TFLOPS:g}]")
    mem_bw_gbps: _Bandwidth = Field(description=f"GB/s, in [{MIN_BANDWIDTH_GBPS:g}, {MAX_BANDWIDTH_GBPS:g}]")
    mem_gib: float = Field(gt=0, le=MAX_MEM_GIB, description=f"GiB, in (0, {MAX_MEM_GIB:g}]")
    idle_w: float = Field(ge=0, le=MAX_POWER_W, description=f"W, in [0, {MAX_POWER_W:g}]")
    active_w: float = Field(gt=0, le=MAX_POWER_W, description=f"W, in (0, {MAX_POWER_W:g}], >= idle_w")
    speed: float = Field(default=0.0, ge=0, le=MAX_SPEED,
                         description=f"operations per time unit: 0 (unused) or in [{MIN_SPEED:g}, {MAX_SPEED:g}]")
    count: int = Field(default=1, ge=1, le=MAX_DEVICES, description="replicate this device COUNT times")
    dvfs: list[OperatingPointSpec] = Field(default_factory=list, max_length=MAX_DVFS_LEVELS,
                                           description="operating points; two or more make a frequency gene")
    launch_overhead_us: float | None = Field(
        default=None, ge=0, le=MAX_LATENCY_US,
        description="per-op launch and dispatch overhead in us (default: the device kind's); dse.cost.mechanisms")
    call_overhead_us: float = Field(default=0.0, ge=0, le=MAX_LATENCY_US,
                                    description="per-call host and runtime overhead in us; dse.cost.mechanisms")
    fused_op_classes: list[Literal["elementwise", "pool", "norm", "reduce"]] = Field(
        default_factory=list, description="op classes the runtime fuses into their producer; dse.cost.mechanisms")
    compute_efficiency: dict[str, Annotated[float, Field(gt=0, le=1)]] = Field(
        default_factory=dict, description="fraction of peak per op class, in (0, 1]; dse.cost.mechanisms")
    precision_efficiency: dict[str, dict[str, Annotated[float, Field(gt=0, le=1)]]] = Field(
        default_factory=dict, description="fraction of peak per op class and precision class (fp8, fp16, int8, "
                                          "fp32), in (0, 1]; dse.cost.mechanisms.precision_efficiency")
    bandwidth_efficiency: dict[str, Annotated[float, Field(gt=0, le=1)]] = Field(
        default_factory=dict, description="fraction of peak memory bandwidth per op class, in (0, 1]; "
                                          "dse.cost.mechanisms.bandwidth")
    cache_mib: float = Field(default=0.0, ge=0, le=MAX_MEM_GIB * 1024,
                             description="last-level cache in MiB (0: none); dse.cost.mechanisms.sparse_reuse")
    skew_sensitivity: float | None = Field(
        default=None, ge=0, le=100,
        description="sparse slow-down per unit of row-length CV (default: the kind's); dse.cost.mechanisms.sparse_reuse")
    sparse_bandwidth_efficiency: float | None = Field(
        default=None, gt=0, le=1,
        description="fraction of peak bandwidth of sparse ops (default: the kind's); dse.cost.mechanisms.sparse_reuse")
    compute_units: int = Field(default=0, ge=0, le=1_000_000,
                               description="streaming multiprocessors (0: not declared); dse.cost.mechanisms.tiling")
    gemm_tile: int = Field(default=0, ge=0, le=4096,
                           description="output tile edge of tiled GEMMs (0: none); dse.cost.mechanisms.tiling")
    device_class: str | None = Field(
        default=None, min_length=1,
        description="device class whose defaults it takes (default: its kind's); dse.model.device_defaults")
    runtime: str | None = Field(
        default=None, min_length=1,
        description="runtime executing the model, a models/runtimes file (default: its class's)")
    mechanisms: Literal["defaults", "none"] | None = Field(
        default=None, description="none: the plain analytic model, no runtime or class defaults (default: "
                                  "the platform's, else defaults)")
    sources: dict[str, str] = Field(default_factory=dict, description="where each figure was read")
    intra_node_gbps: float = Field(
        default=0.0, ge=0, le=MAX_BANDWIDTH_GBPS,
        description="per-device link bandwidth inside a node, GB/s one direction (0: none); "
                    "dse.cost.mechanisms.collective")
    intra_node_latency_us: float = Field(default=0.0, ge=0, le=MAX_LATENCY_US,
                                         description="per-step latency of a collective inside a node, us")
    inter_node_gbps: float = Field(
        default=0.0, ge=0, le=MAX_BANDWIDTH_GBPS,
        description="per-device network bandwidth between nodes, GB/s one direction (0: none); "
                    "dse.cost.mechanisms.collective")
    inter_node_latency_us: float = Field(default=0.0, ge=0, le=MAX_LATENCY_US,
                                         description="per-step latency of a collective between nodes, us")

    @field_validator("speed")
    @classmethod
    def _speed(cls, value: float) -> float:
        if 0 < value < MIN_SPEED:
            raise ValueError(f"must be 0 (unused) or >= {MIN_SPEED:g}")
        return value

    @model_validator(mode="after")
    def _check(self) -> DeviceSpec:
        if self.kind not in DEVICE_KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {', '.join(DEVICE_KINDS)}")
        if self.active_w < self.idle_w:
            raise ValueError(f"active_w {self.active_w} is below idle_w {self.idle_w}")
        if not self.peak_tflops and self.speed <= 0:
            raise ValueError("give peak_tflops (per precision) or a positive speed")
        for name, declared in (("compute_efficiency", self.compute_efficiency),
                               ("precision_efficiency", self.precision_efficiency),
                               ("bandwidth_efficiency", self.bandwidth_efficiency)):
            unknown = sorted(set(declared) - set(OP_CLASSES))
            if unknown:
                raise ValueError(f"{name}: {unknown[0]!r} is not an op class ({', '.join(OP_CLASSES)})")
        for op_class, by_precision in self.precision_efficiency.items():
            unknown = sorted(set(by_precision) - set(PRECISION_CLASS.values()))
            if unknown:
                raise ValueError(f"precision_efficiency.{op_class}: {unknown[0]!r} is not a precision class "
                                 f"({', '.join(sorted(set(PRECISION_CLASS.values())))})")
        return self


class LinkSpec(_Strict):
    """A link of a platform file: ``bandwidth_gbps`` in [MIN_BANDWIDTH_GBPS, MAX_BANDWIDTH_GBPS],
    ``latency_us`` in [0, MAX_LATENCY_US], ``energy_pj_per_byte`` in [0, MAX_ENERGY_PJ_PER_BYTE]. Read
    for a table cost model (:func:`unit_free_links`), bandwidth and latency are abstract units, only
    positive (latency: >= 0) and finite."""

    a: str
    b: str
    bandwidth_gbps: float = Field(gt=0, description=f"GB/s, in [{MIN_BANDWIDTH_GBPS:g}, {MAX_BANDWIDTH_GBPS:g}] "
                                                    "(a table cost model: size units per time unit, > 0)")
    latency_us: float = Field(ge=0, description=f"us, in [0, {MAX_LATENCY_US:g}] (a table cost model: time units)")
    energy_pj_per_byte: float = Field(default=0.0, ge=0, le=MAX_ENERGY_PJ_PER_BYTE,
                                      description=f"pJ per byte, in [0, {MAX_ENERGY_PJ_PER_BYTE:g}]")

    @field_validator("bandwidth_gbps")
    @classmethod
    def _physical_bandwidth(cls, value: float) -> float:
        if not _UNIT_FREE.get() and not MIN_BANDWIDTH_GBPS <= value <= MAX_BANDWIDTH_GBPS:
            raise ValueError(f"GB/s must be in [{MIN_BANDWIDTH_GBPS:g}, {MAX_BANDWIDTH_GBPS:g}] (a table cost "
                             "model reads it in abstract units, with no bound)")
        return value

    @field_validator("latency_us")
    @classmethod
    def _physical_latency(cls, value: float) -> float:
        if not _UNIT_FREE.get() and value > MAX_LATENCY_US:
            raise ValueError(f"us must be in [0, {MAX_LATENCY_US:g}] (a table cost model reads it in time units, "
                             "with no bound)")
        return value


_UNIT_FREE: contextvars.ContextVar[bool] = contextvars.ContextVar("dse_unit_free_links", default=False)


@contextlib.contextmanager
def unit_free_links() -> Iterator[None]:
    """Within the block, platforms are read for a table cost model: a link's ``bandwidth_gbps`` (size units
    per time unit) and ``latency_us`` (time units) are bounded only by > 0 (>= 0) and finite; the cost
    tables still refuse a value whose cost does not fit int64, naming it."""
    token = _UNIT_FREE.set(True)
    try:
        yield
    finally:
        _UNIT_FREE.reset(token)


class PlatformSpec(_Strict):
    name: str
    description: str = ""
    mechanisms: Literal["defaults", "none"] = Field(
        default="defaults", description="none: every device on the plain analytic model (a device may say otherwise)")
    devices: list[DeviceSpec] = Field(min_length=1)
    links: list[LinkSpec] = Field(default_factory=list)
    calibration: str | None = Field(default=None, min_length=1,
                                    description="calibration file, relative to the platform file's folder")


def _expand_devices(specs: list[DeviceSpec], mechanisms: str, defaults: DeviceDefaults,
                    source: str) -> list[Device]:
    """The devices of ``specs`` (``count`` expanded), each mechanism field it does not declare filled from
    its runtime and class defaults (:func:`dse.model.device_defaults.resolve_device`); :class:`SpecError`
    for an unknown runtime."""
    devices: list[Device] = []
    for i, spec in enumerate(specs):
        values = spec.model_dump(exclude={"count", "name", "dvfs", "mechanisms"})
        values["fused_op_classes"] = tuple(values["fused_op_classes"])
        try:
            values, provenance = resolve_device(values, set(spec.model_fields_set), defaults,
                                                spec.mechanisms or mechanisms)
        except ValueError as exc:
            raise SpecError(source, f"devices[{i}].runtime", spec.runtime, str(exc)) from None
        points = tuple(OperatingPoint(**p.model_dump()) for p in spec.dvfs)
        names = [spec.name] if spec.count == 1 else [f"{spec.name}{i}" for i in range(spec.count)]
        devices.extend(Device(name=n, dvfs=points, provenance=provenance, **values) for n in names)
    return devices


def platform_from_dict(data: Mapping[str, Any], source: str = "<platform>", base: Path | None = None,
                       defaults: DeviceDefaults | None = None) -> Platform:
    """Build a :class:`Platform` from a parsed YAML mapping; ``calibration`` is read relative to ``base``.
    Devices take the mechanism values they do not declare from ``defaults`` (the catalog's,
    :func:`dse.model.device_defaults.catalog_defaults`, when ``None``) unless ``mechanisms: none``.

    Raises :class:`~dse.errors.SpecError` naming ``source``, the field and the value (also for a
    ``calibration`` file that does not exist, or DVFS frequencies that repeat).
    """
    try:
        spec = PlatformSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data, PlatformSpec) from None
    total = sum(d.count for d in spec.devices)
    if total > MAX_DEVICES:
        raise SpecError(source, "devices", total, f"more than {MAX_DEVICES} devices (counting each count)")
    devices = _expand_devices(spec.devices, spec.mechanisms, defaults or catalog_defaults(), source)
    names = [d.name for d in devices]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SpecError(source, "devices[].name", duplicates[0], "device names must be unique")
    links = []
    pairs: set[frozenset[str]] = set()
    for i, link in enumerate(spec.links):
        for end in ("a", "b"):
            if getattr(link, end) not in names:
                raise SpecError(source, f"links[{i}].{end}", getattr(link, end), f"unknown device; devices are {names}")
        if link.a == link.b:
            raise SpecError(source, f"links[{i}]", link.a, "a link joins two different devices")
        pair = frozenset((link.a, link.b))
        if pair in pairs:
            raise SpecError(source, f"links[{i}]", f"{link.a}-{link.b}", "a second link between the same devices")
        pairs.add(pair)
        links.append(Link(**link.model_dump()))
    for i, dev in enumerate(spec.devices):
        freqs = [p.freq_mhz for p in dev.dvfs]
        if len(set(freqs)) != len(freqs):
            raise SpecError(source, f"devices[{i}].dvfs", freqs, "each operating point needs its own freq_mhz")
    calibration = None
    if spec.calibration is not None:
        path = (base or Path(".")) / spec.calibration
        if not path.is_file():
            raise SpecError(source, "calibration", spec.calibration, f"calibration file not found (looked for {path})")
        calibration = str(path)
    platform = Platform(spec.name, tuple(devices), tuple(links), spec.description, calibration)
    if len(devices) > 1 and not is_connected(names, [(lk.a, lk.b) for lk in links]):
        linked = {lk.a for lk in links} | {lk.b for lk in links}
        isolated = [n for n in names if n not in linked] or names
        raise SpecError(source, "links", isolated[0], "device is not connected to the others by any link")
    return platform


def load_platform(path: str | Path) -> Platform:
    """Load a platform YAML file; raises :class:`SpecError` on any problem."""
    from dse.util.yamlio import read_yaml

    data = read_yaml(path)
    return platform_from_dict(data, str(path), Path(path).parent)
