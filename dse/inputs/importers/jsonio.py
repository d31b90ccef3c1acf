"""Lossless JSON form of a :class:`Workload`.

::

    {
      "format": "dse.workload", "version": 1,
      "name": "w", "description": "",
      "ops": [{"name": "a", "op_class": "gemm", "flops": 1e9, ..., "device_costs": {}, ...}],
      "edges": [{"src": "a", "dst": "b", "bytes": 100.0}]
    }

Every :class:`Op` field is written. On reading, op fields may be left out
(their defaults apply), an edge without ``bytes`` carries the producer's
``output_bytes``, and ops may also list ``inputs`` (producer names or ``{op, bytes}``, as in
the YAML workload schema), which add edges after the listed ones. Unknown keys
are errors.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.errors import SpecError
from dse.inputs.importers._common import read_json, write_text
from dse.model.workload import MAX_BYTES, Op, OpSpec, Workload, validate_workload
from dse.util.validation import spec_error_from_validation

__all__ = ["FORMAT", "VERSION", "read_workload_json", "workload_from_json_data", "workload_to_json_data",
           "write_workload_json"]

FORMAT = "dse.workload"
VERSION = 1


class _Edge(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    src: str
    dst: str
    bytes: float | None = Field(default=None, ge=0, le=MAX_BYTES)


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    format: str = FORMAT
    version: int = VERSION
    name: str
    description: str = ""
    ops: list[OpSpec] = Field(min_length=1)
    edges: list[_Edge] = Field(default_factory=list)


def workload_to_json_data(workload: Workload) -> dict[str, Any]:
    """The JSON-ready mapping of ``workload`` (see the module docstring)."""
    ops = []
    for op in workload.ops:
        item = dataclasses.asdict(op)
        item["features"] = dict(op.features)
        item["device_costs"] = dict(op.device_costs)
        ops.append(item)
    edges = [
        {"src": workload.ops[s].name, "dst": workload.ops[d].name, "bytes": float(b)}
        for (s, d), b in zip(workload.edges, workload.edge_bytes, strict=True)
    ]
    return {"format": FORMAT, "version": VERSION, "name": workload.name,
            "description": workload.description, "ops": ops, "edges": edges}


def workload_from_json_data(data: Any, source: str = "<json>") -> Workload:
    """Build and validate a workload from parsed JSON; raises :class:`SpecError`."""
    try:
        doc = _Document.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None
    if doc.format != FORMAT:
        raise SpecError(source, "format", doc.format, f"not a workload file (expected {FORMAT!r})")
    if doc.version != VERSION:
        raise SpecError(source, "version", doc.version, f"unsupported version (this reader knows {VERSION})")
    ops = tuple(Op(**spec.model_dump(exclude={"inputs"})) for spec in doc.ops)
    index: dict[str, int] = {}
    for i, op in enumerate(ops):
        if op.name in index:
            raise SpecError(source, f"ops[{i}].name", op.name, "op names must be unique")
        index[op.name] = i
    edges: list[tuple[int, int]] = []
    edge_bytes: list[float] = []
    for k, edge in enumerate(doc.edges):
        for end in ("src", "dst"):
            if getattr(edge, end) not in index:
                raise SpecError(source, f"edges[{k}].{end}", getattr(edge, end), "unknown op name")
        s = index[edge.src]
        edges.append((s, index[edge.dst]))
        edge_bytes.append(ops[s].output_bytes if edge.bytes is None else edge.bytes)
    for i, spec in enumerate(doc.ops):
        for j, producer in enumerate(spec.inputs):
            name = producer.op
            if name not in index:
                raise SpecError(source, f"ops[{i}].inputs[{j}]", name, "unknown op name")
            edges.append((index[name], i))
            edge_bytes.append(ops[index[name]].output_bytes if producer.bytes is None else producer.bytes)
    workload = Workload(doc.name, ops, tuple(edges), tuple(float(b) for b in edge_bytes),
                        description=doc.description)
    return validate_workload(workload, source)


def write_workload_json(workload: Workload, path: str | Path, *, indent: int | None = 1) -> None:
    """Write ``workload`` as JSON; :func:`read_workload_json` reads back an equal workload."""
    try:
        text = json.dumps(workload_to_json_data(workload), indent=indent, allow_nan=False)
    except ValueError:
        raise SpecError(str(path), "<workload>", workload.name,
                        "holds a NaN or infinite number, which JSON cannot store") from None
    write_text(path, text + "\n")


def read_workload_json(path: str | Path) -> Workload:
    """Read a workload JSON file; raises :class:`SpecError` naming the file, field and value."""
    return workload_from_json_data(read_json(path), str(path))
