"""Hardware descriptions: devices, links and platforms (frozen dataclasses).

A :class:`Platform` is what the cost models read. Loaders validate YAML with
pydantic so that every error names the file, the field and the value.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from dse.errors import SpecError

DEVICE_KINDS = ("cpu", "gpu", "tensorcore", "fpga", "npu", "dla", "generic")


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
    energy); see :meth:`route`.
    """

    name: str
    devices: tuple[Device, ...]
    links: tuple[Link, ...] = ()
    description: str = ""
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
        if not self._routes:
            self._routes.update(_all_routes(self))
        try:
            return self._routes[(a, b)]
        except KeyError:
            raise ValueError(f"platform {self.name!r}: no link path from {a!r} to {b!r}") from None


def _all_routes(platform: Platform) -> dict[tuple[str, str], tuple[float, float, float]]:
    graph = nx.Graph()
    graph.add_nodes_from(platform.device_names)
    for link in platform.links:
        graph.add_edge(link.a, link.b, link=link)
    routes: dict[tuple[str, str], tuple[float, float, float]] = {}
    for a, b in itertools.permutations(platform.device_names, 2):
        if graph.has_edge(a, b):  # a direct link is the only one-hop path
            link = graph.edges[a, b]["link"]
            routes[(a, b)] = (link.bandwidth_gbps, link.latency_us, link.energy_pj_per_byte)
            continue
        if not nx.has_path(graph, a, b):
            continue
        # fewest hops, ties broken by the widest bottleneck
        best = None
        for path in nx.all_shortest_paths(graph, a, b):
            hops = [graph.edges[u, v]["link"] for u, v in itertools.pairwise(path)]
            value = (
                min(h.bandwidth_gbps for h in hops),
                sum(h.latency_us for h in hops),
                sum(h.energy_pj_per_byte for h in hops),
            )
            if best is None or value[0] > best[0]:
                best = value
        routes[(a, b)] = best
    return routes


# --------------------------------------------------------------------------- schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DeviceSpec(_Strict):
    name: str = Field(min_length=1)
    kind: str
    peak_tflops: dict[str, float] = Field(default_factory=dict)
    mem_bw_gbps: float = Field(gt=0)
    mem_gib: float = Field(gt=0)
    idle_w: float = Field(ge=0)
    active_w: float = Field(gt=0)
    speed: float = Field(default=0.0, ge=0)
    count: int = Field(default=1, ge=1, description="replicate this device COUNT times")

    @model_validator(mode="after")
    def _check(self) -> DeviceSpec:
        if self.kind not in DEVICE_KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {', '.join(DEVICE_KINDS)}")
        if self.active_w < self.idle_w:
            raise ValueError(f"active_w {self.active_w} is below idle_w {self.idle_w}")
        if any(v <= 0 for v in self.peak_tflops.values()):
            raise ValueError("every peak_tflops value must be > 0")
        if not self.peak_tflops and self.speed <= 0:
            raise ValueError("give peak_tflops (per precision) or a positive speed")
        return self


class LinkSpec(_Strict):
    a: str
    b: str
    bandwidth_gbps: float = Field(gt=0)
    latency_us: float = Field(ge=0)
    energy_pj_per_byte: float = Field(default=0.0, ge=0)


class PlatformSpec(_Strict):
    name: str
    description: str = ""
    devices: list[DeviceSpec] = Field(min_length=1)
    links: list[LinkSpec] = Field(default_factory=list)


def _expand_devices(specs: list[DeviceSpec]) -> list[Device]:
    devices = []
    for spec in specs:
        values = spec.model_dump(exclude={"count", "name"})
        names = [spec.name] if spec.count == 1 else [f"{spec.name}{i}" for i in range(spec.count)]
        devices.extend(Device(name=n, **values) for n in names)
    return devices


def platform_from_dict(data: Mapping[str, Any], source: str = "<platform>") -> Platform:
    """Build a :class:`Platform` from a parsed YAML mapping.

    Raises :class:`~dse.errors.SpecError` naming ``source``, the field and the value.
    """
    try:
        spec = PlatformSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None
    devices = _expand_devices(spec.devices)
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
    platform = Platform(spec.name, tuple(devices), tuple(links), spec.description)
    if len(devices) > 1:
        graph = nx.Graph()
        graph.add_nodes_from(names)
        graph.add_edges_from((lk.a, lk.b) for lk in links)
        if not nx.is_connected(graph):
            isolated = [n for n in names if graph.degree(n) == 0] or names
            raise SpecError(source, "links", isolated[0], "device is not connected to the others by any link")
    return platform


def spec_error_from_validation(source: str, exc: ValidationError, data: Any) -> SpecError:
    """Turn pydantic's first error into a :class:`SpecError` naming field and value."""
    err = exc.errors()[0]
    loc = err.get("loc", ())
    field_name = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc).replace(".[", "[")
    value: Any = err.get("input", None)
    if isinstance(value, Mapping) and loc:
        value = value.get(loc[-1], value) if err.get("type") != "missing" else None
    message = err.get("msg", "invalid value").removeprefix("Value error, ")
    return SpecError(source, field_name or "<root>", value, message)


def load_platform(path: str | Path) -> Platform:
    """Load a platform YAML file; raises :class:`SpecError` on any problem."""
    from dse.yamlio import read_yaml

    data = read_yaml(path)
    return platform_from_dict(data, str(path))
