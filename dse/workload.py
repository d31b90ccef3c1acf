"""Workload descriptions: a DAG of ops with work, traffic and data features.

An :class:`Op` carries what the cost models need: floating-point work, bytes
moved to and from device memory, bytes that must stay resident (weights,
buffers), the bytes of its output tensor (what an outgoing edge carries) and
data features such as ``density`` and ``degree_skew`` for sparse ops.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.errors import SpecError

OP_CLASSES = (
    "gemm",
    "conv",
    "dwconv",
    "spmm",
    "attention",
    "elementwise",
    "reduce",
    "pool",
    "norm",
    "embedding",
    "memcpy",
    "generic",
)


@dataclass(frozen=True)
class Op:
    """One operator. ``features`` holds data features (``density`` in (0, 1], ``degree_skew`` >= 0).

    ``work`` is an abstract operation count for table-driven cost models
    (the TF paper's ``#operations``, an STG task cost); ``device_costs``
    optionally gives an explicit time per device name (profiled tables).
    """

    name: str
    op_class: str = "generic"
    flops: float = 0.0
    bytes_moved: float = 0.0
    resident_bytes: float = 0.0
    output_bytes: float = 0.0
    precision: str = "fp32"
    features: Mapping[str, float] = field(default_factory=dict)
    work: float = 0.0
    device_costs: Mapping[str, float] = field(default_factory=dict)
    device_type: str | None = None
    colocation: str | None = None


@dataclass(frozen=True)
class Workload:
    """A DAG of ops. ``edges`` are (producer index, consumer index) pairs.

    ``edge_bytes[i]`` is what edge ``i`` carries; by default the producer's
    ``output_bytes``.
    """

    name: str
    ops: tuple[Op, ...]
    edges: tuple[tuple[int, int], ...] = ()
    edge_bytes: tuple[float, ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        if not self.edge_bytes and self.edges:
            object.__setattr__(
                self, "edge_bytes", tuple(float(self.ops[s].output_bytes) for s, _ in self.edges)
            )

    @property
    def n_ops(self) -> int:
        return len(self.ops)

    def graph(self) -> nx.DiGraph:
        """The workload as a networkx DiGraph over op indices (node attr ``op``, edge attr ``bytes``)."""
        g = nx.DiGraph()
        g.add_nodes_from((i, {"op": op}) for i, op in enumerate(self.ops))
        g.add_edges_from((s, d, {"bytes": b}) for (s, d), b in zip(self.edges, self.edge_bytes, strict=True))
        return g

    def topological_order(self) -> list[int]:
        return list(nx.lexicographical_topological_sort(self.graph()))


def chain(name: str, ops: Sequence[Op], description: str = "") -> Workload:
    """A linear pipeline ``ops[0] -> ops[1] -> ...``."""
    edges = tuple((i, i + 1) for i in range(len(ops) - 1))
    return Workload(name, tuple(ops), edges, description=description)


def validate_workload(workload: Workload, source: str = "<workload>") -> Workload:
    """Check names, classes, sizes and acyclicity; raises :class:`SpecError`."""
    if not workload.ops:
        raise SpecError(source, "ops", [], "a workload needs at least one op")
    seen: set[str] = set()
    for i, op in enumerate(workload.ops):
        if op.name in seen:
            raise SpecError(source, f"ops[{i}].name", op.name, "op names must be unique")
        seen.add(op.name)
        if op.op_class not in OP_CLASSES:
            raise SpecError(source, f"ops[{i}].op_class", op.op_class, f"must be one of {', '.join(OP_CLASSES)}")
        for attr in ("flops", "bytes_moved", "resident_bytes", "output_bytes", "work"):
            value = getattr(op, attr)
            if not math.isfinite(value) or value < 0:
                raise SpecError(source, f"ops[{i}].{attr}", value, "must be a finite number >= 0")
        for dev, cost in op.device_costs.items():
            if not math.isfinite(cost) or cost < 0:
                raise SpecError(source, f"ops[{i}].device_costs.{dev}", cost, "must be a finite number >= 0")
        density = op.features.get("density", 1.0)
        if not 0 < density <= 1:
            raise SpecError(source, f"ops[{i}].features.density", density, "must be in (0, 1]")
        if op.features.get("degree_skew", 0.0) < 0:
            raise SpecError(source, f"ops[{i}].features.degree_skew", op.features["degree_skew"], "must be >= 0")
    n = len(workload.ops)
    if len(workload.edge_bytes) != len(workload.edges):
        raise SpecError(source, "edge_bytes", len(workload.edge_bytes), f"needs one entry per edge ({len(workload.edges)})")
    if len(set(workload.edges)) != len(workload.edges):
        dup = next(e for e in workload.edges if workload.edges.count(e) > 1)
        raise SpecError(source, "edges", [workload.ops[dup[0]].name, workload.ops[dup[1]].name], "duplicate edge")
    for k, (s, d) in enumerate(workload.edges):
        if not (0 <= s < n and 0 <= d < n):
            raise SpecError(source, f"edges[{k}]", [s, d], f"op index out of range 0..{n - 1}")
        if s == d:
            raise SpecError(source, f"edges[{k}]", [workload.ops[s].name] * 2, "self-loop")
    for k, b in enumerate(workload.edge_bytes):
        if not math.isfinite(b) or b < 0:
            raise SpecError(source, f"edges[{k}].bytes", b, "must be a finite number >= 0")
    graph = workload.graph()
    if not nx.is_directed_acyclic_graph(graph):
        cycle = nx.find_cycle(graph)
        names = [workload.ops[u].name for u, _ in cycle]
        raise SpecError(source, "edges", " -> ".join(names + names[:1]), "the workload graph has a cycle")
    return workload


# --------------------------------------------------------------------------- YAML schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InputSpec(_Strict):
    op: str
    bytes: float = Field(ge=0, description="bytes this edge carries (default: the producer's output_bytes)")


class OpSpec(_Strict):
    name: str = Field(min_length=1)
    op_class: str = "generic"
    flops: float = Field(default=0.0, ge=0)
    bytes_moved: float = Field(default=0.0, ge=0)
    resident_bytes: float = Field(default=0.0, ge=0)
    output_bytes: float = Field(default=0.0, ge=0)
    precision: str = "fp32"
    features: dict[str, float] = Field(default_factory=dict)
    work: float = Field(default=0.0, ge=0)
    device_costs: dict[str, float] = Field(default_factory=dict)
    device_type: str | None = None
    colocation: str | None = None
    inputs: list[str | InputSpec] = Field(default_factory=list, description="producer names, or {op, bytes}")


class WorkloadSpec(_Strict):
    name: str
    description: str = ""
    ops: list[OpSpec] = Field(min_length=1)


def workload_from_dict(data: Mapping[str, Any], source: str = "<workload>") -> Workload:
    """Build a workload from YAML data: ops listed with ``inputs`` naming their producers."""
    from dse.platform import spec_error_from_validation

    try:
        spec = WorkloadSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None
    index = {op.name: i for i, op in enumerate(spec.ops)}
    edges, edge_bytes = [], []
    for i, op in enumerate(spec.ops):
        for j, producer in enumerate(op.inputs):
            name = producer if isinstance(producer, str) else producer.op
            if name not in index:
                raise SpecError(source, f"ops[{i}].inputs[{j}]", name, "unknown op name")
            edges.append((index[name], i))
            edge_bytes.append(spec.ops[index[name]].output_bytes if isinstance(producer, str) else producer.bytes)
    ops = tuple(Op(**op.model_dump(exclude={"inputs"})) for op in spec.ops)
    workload = Workload(spec.name, ops, tuple(edges), tuple(edge_bytes), description=spec.description)
    return validate_workload(workload, source)


def load_workload(path: str | Path) -> Workload:
    """Load a workload YAML file; raises :class:`SpecError` on any problem."""
    from dse.yamlio import read_yaml

    return workload_from_dict(read_yaml(path), str(path))
