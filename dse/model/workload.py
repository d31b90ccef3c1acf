"""Workload descriptions: a DAG of ops with work, traffic and data features.

An :class:`Op` carries what the cost models need: floating-point work, bytes
moved to and from device memory, bytes that must stay resident (weights,
buffers), the bytes of its output tensor (what an outgoing edge carries) and
data features such as ``density`` and ``degree_skew`` for sparse ops.

Every number must be finite, >= 0 and within the bounds below (:data:`MAX_FLOPS`,
:data:`MAX_BYTES`, ...), and a workload holds at most :data:`MAX_OPS` ops and
:data:`MAX_EDGES` edges; :func:`validate_workload` checks all of it, whatever
the workload came from (YAML, an importer, a builder).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from dse.errors import SpecError
from dse.util.graphs import lexicographic_topological_order
from dse.util.validation import spec_error_from_validation

if TYPE_CHECKING:
    import networkx as nx

# Size and value bounds of a workload. Far past any real model (GPT-3's whole training run is
# ~3e23 FLOPs), and small enough that one op's bytes fit the int64 cost tables.
#: Ops per workload: the engine's tables and genomes are built per op; builders and importers
#: refuse larger sizes before allocating anything.
MAX_OPS = 200_000
#: Edges per workload (the transfer tables hold one device-pair matrix per edge).
MAX_EDGES = 2_000_000
#: ``flops`` of one op.
MAX_FLOPS = 1e24
#: ``bytes_moved``, ``resident_bytes``, ``output_bytes`` and the bytes of an edge: 1 EB.
MAX_BYTES = 1e18
#: ``work`` of one op (abstract operations, e.g. an STG task cost).
MAX_WORK = 1e18
#: Each ``device_costs`` value (a time, in the cost model's unit).
MAX_DEVICE_COST = 1e15
#: ``features.density`` lies in [MIN_DENSITY, 1] (a graph of 1e12 nodes and one edge).
MIN_DENSITY = 1e-24
#: ``features.degree_skew`` (coefficient of variation of degrees; at most ~sqrt(nodes)).
MAX_DEGREE_SKEW = 1e6

#: Upper bound of each numeric :class:`Op` field.
OP_BOUNDS: dict[str, float] = {
    "flops": MAX_FLOPS,
    "bytes_moved": MAX_BYTES,
    "resident_bytes": MAX_BYTES,
    "output_bytes": MAX_BYTES,
    "work": MAX_WORK,
}

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
    "collective",
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
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from((i, {"op": op}) for i, op in enumerate(self.ops))
        g.add_edges_from((s, d, {"bytes": b}) for (s, d), b in zip(self.edges, self.edge_bytes, strict=True))
        return g

    def topological_order(self) -> list[int]:
        """Op indices in topological order, the smallest ready index first; raises ``ValueError`` on a
        cycle (:func:`validate_workload` refuses one)."""
        order = lexicographic_topological_order(self.n_ops, self.edges)
        if len(order) < self.n_ops:
            raise ValueError(f"workload {self.name!r}: the graph has a cycle")
        return order


def chain(name: str, ops: Sequence[Op], description: str = "") -> Workload:
    """A linear pipeline ``ops[0] -> ops[1] -> ...``."""
    edges = tuple((i, i + 1) for i in range(len(ops) - 1))
    return Workload(name, tuple(ops), edges, description=description)


def _bad_number(value: Any, upper: float) -> bool:
    """True unless ``value`` is a real number in [0, upper]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return True
    return not 0 <= float(value) <= upper  # NaN fails both comparisons


def _all_in_range(values: list[Any], upper: float) -> bool:
    """True when every value is a real number (an int or float, not a bool) in [0, upper]: one array check."""
    if not set(map(type, values)) <= {int, float}:
        return False
    array = np.asarray(values, dtype=float)
    return bool(((array >= 0) & (array <= upper)).all())  # NaN fails both comparisons


def validate_workload(workload: Workload, source: str = "<workload>") -> Workload:
    """Check sizes, names, classes, numbers and acyclicity; returns ``workload``.

    Raises :class:`SpecError` naming the field and the value: more than
    :data:`MAX_OPS` ops or :data:`MAX_EDGES` edges, a number that is not finite,
    negative or past its bound (:data:`OP_BOUNDS`, :data:`MAX_DEVICE_COST`,
    :data:`MIN_DENSITY`, :data:`MAX_DEGREE_SKEW`), a duplicate name or edge, a
    self-loop, a cycle.
    """
    if not workload.ops:
        raise SpecError(source, "ops", [], "a workload needs at least one op")
    if len(workload.ops) > MAX_OPS:
        raise SpecError(source, "ops", len(workload.ops), f"more than {MAX_OPS} ops")
    if len(workload.edges) > MAX_EDGES:
        raise SpecError(source, "edges", len(workload.edges), f"more than {MAX_EDGES} edges")
    # each numeric column checked at once; op by op (to name the first bad value) only where that fails
    unchecked = {attr: upper for attr, upper in OP_BOUNDS.items()
                 if not _all_in_range([getattr(op, attr) for op in workload.ops], upper)}
    seen: set[str] = set()
    for i, op in enumerate(workload.ops):
        if op.name in seen:
            raise SpecError(source, f"ops[{i}].name", op.name, "op names must be unique")
        seen.add(op.name)
        if op.op_class not in OP_CLASSES:
            raise SpecError(source, f"ops[{i}].op_class", op.op_class, f"must be one of {', '.join(OP_CLASSES)}")
        for attr, upper in unchecked.items():
            value = getattr(op, attr)
            if _bad_number(value, upper):
                raise SpecError(source, f"ops[{i}].{attr}", value, f"must be a finite number in [0, {upper:g}]")
        for dev, cost in op.device_costs.items():
            if _bad_number(cost, MAX_DEVICE_COST):
                raise SpecError(source, f"ops[{i}].device_costs.{dev}", cost,
                                f"must be a finite number in [0, {MAX_DEVICE_COST:g}]")
        for key, value in op.features.items():
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise SpecError(source, f"ops[{i}].features.{key}", value, "must be a finite number")
        density = op.features.get("density", 1.0)
        if not MIN_DENSITY <= density <= 1:
            raise SpecError(source, f"ops[{i}].features.density", density, f"must be in [{MIN_DENSITY:g}, 1]")
        if _bad_number(op.features.get("degree_skew", 0.0), MAX_DEGREE_SKEW):
            raise SpecError(source, f"ops[{i}].features.degree_skew", op.features["degree_skew"],
                            f"must be in [0, {MAX_DEGREE_SKEW:g}]")
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
    for k, b in enumerate(() if _all_in_range(list(workload.edge_bytes), MAX_BYTES) else workload.edge_bytes):
        if _bad_number(b, MAX_BYTES):
            raise SpecError(source, f"edges[{k}].bytes", b, f"must be a finite number in [0, {MAX_BYTES:g}]")
    if len(lexicographic_topological_order(n, workload.edges)) < n:
        import networkx as nx

        cycle = nx.find_cycle(workload.graph())
        names = [workload.ops[u].name for u, _ in cycle]
        raise SpecError(source, "edges", " -> ".join(names + names[:1]), "the workload graph has a cycle")
    return workload


# --------------------------------------------------------------------------- YAML schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


_Bytes = Annotated[float, Field(ge=0, le=MAX_BYTES)]


class InputSpec(_Strict):
    """One input of an op: its producer ``op`` and the ``bytes`` the edge carries."""

    op: str
    bytes: _Bytes | None = Field(default=None, description=f"bytes this edge carries (default: the producer's "
                                                            f"output_bytes), in [0, {MAX_BYTES:g}]")


def _input(value: Any) -> Any:
    """A producer name as the mapping ``{op: name}`` (one schema: errors name ``inputs[j].bytes``, not a union branch)."""
    return {"op": value} if isinstance(value, str) else value


_Input = Annotated[InputSpec, BeforeValidator(_input)]


class OpSpec(_Strict):
    """One op of a workload file: numbers finite and in [0, bound] (see :data:`OP_BOUNDS`)."""

    name: str = Field(min_length=1)
    op_class: str = "generic"
    flops: float = Field(default=0.0, ge=0, le=MAX_FLOPS, description=f"in [0, {MAX_FLOPS:g}]")
    bytes_moved: _Bytes = Field(default=0.0, description=f"in [0, {MAX_BYTES:g}]")
    resident_bytes: _Bytes = Field(default=0.0, description=f"in [0, {MAX_BYTES:g}]")
    output_bytes: _Bytes = Field(default=0.0, description=f"in [0, {MAX_BYTES:g}]")
    precision: str = "fp32"
    features: dict[str, float] = Field(default_factory=dict)
    work: float = Field(default=0.0, ge=0, le=MAX_WORK, description=f"in [0, {MAX_WORK:g}]")
    device_costs: dict[str, Annotated[float, Field(ge=0, le=MAX_DEVICE_COST)]] = Field(
        default_factory=dict, description=f"time per device name, each in [0, {MAX_DEVICE_COST:g}]")
    device_type: str | None = None
    colocation: str | None = None
    inputs: list[_Input] = Field(default_factory=list, description="producer names, or {op, bytes}")


class WorkloadSpec(_Strict):
    name: str
    description: str = ""
    ops: list[OpSpec] = Field(min_length=1)


def workload_from_dict(data: Mapping[str, Any], source: str = "<workload>") -> Workload:
    """Build a workload from YAML data: ops listed with ``inputs`` naming their producers."""
    try:
        spec = WorkloadSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data, WorkloadSpec) from None
    index = {op.name: i for i, op in enumerate(spec.ops)}
    edges, edge_bytes = [], []
    for i, op in enumerate(spec.ops):
        for j, producer in enumerate(op.inputs):
            name = producer.op
            if name not in index:
                raise SpecError(source, f"ops[{i}].inputs[{j}]", name, "unknown op name")
            edges.append((index[name], i))
            edge_bytes.append(spec.ops[index[name]].output_bytes if producer.bytes is None else producer.bytes)
    ops = tuple(Op(**op.model_dump(exclude={"inputs"})) for op in spec.ops)
    workload = Workload(spec.name, ops, tuple(edges), tuple(edge_bytes), description=spec.description)
    return validate_workload(workload, source)


def load_workload(path: str | Path) -> Workload:
    """Load a workload YAML file; raises :class:`SpecError` on any problem."""
    from dse.util.yamlio import read_yaml

    return workload_from_dict(read_yaml(path), str(path))
