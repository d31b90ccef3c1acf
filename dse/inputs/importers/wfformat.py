"""WfFormat (the WfCommons JSON schema, version 1.5 and later): scientific workflows as task graphs.

The parts read::

    {
      "name": "montage", "schemaVersion": "1.5",
      "workflow": {
        "specification": {
          "tasks": [{"name": "mProject", "id": "mProject_01", "parents": [], "children": ["mDiff_02"],
                     "inputFiles": ["in.fits"], "outputFiles": ["p1.fits"]}, ...],
          "files": [{"id": "p1.fits", "sizeInBytes": 4194304}, ...]
        },
        "execution": {"tasks": [{"id": "mProject_01", "runtimeInSeconds": 12.5}, ...]}
      }
    }

Decisions for what the schema leaves open:

* an op per task, named by its ``id``, ``op_class="generic"``, ``work`` = its ``runtimeInSeconds`` (with
  a table cost model a task takes ``runtime / speed`` on a device: the speed is relative to the machine
  the runtime was measured on); every task needs a runtime, so ``workflow.execution`` is required;
* an edge per dependency: a task's ``parents`` and every task that lists it among its ``children``
  (a dependency named twice is one edge); it carries the summed sizes of the files the child reads
  (``inputFiles``) that the parent writes (``outputFiles``), 0 bytes when they share none;
* files the workflow reads from outside (inputs no task writes) and the tasks' core counts, machines
  and measured metrics are not read; other keys are ignored, as the schema grows;
* an input of an older schema (1.4 and before: tasks under ``workflow.tasks``) is refused, naming
  ``schemaVersion``.

Raises :class:`~dse.errors.SpecError` naming the file, the field and the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.errors import SpecError
from dse.inputs.importers._common import read_json
from dse.model.workload import MAX_BYTES, MAX_WORK, Op, Workload, validate_workload
from dse.util.validation import spec_error_from_validation

__all__ = ["is_wfformat", "read_wfformat", "workload_from_wfformat"]

#: The first schema version with the specification / execution split this reader reads.
FIRST_VERSION = (1, 5)


class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, allow_inf_nan=False)


class _File(_Read):
    id: str = Field(min_length=1)
    sizeInBytes: float = Field(ge=0, le=MAX_BYTES)


class _Task(_Read):
    id: str = Field(min_length=1)
    parents: list[str] = Field(default_factory=list)
    children: list[str] = Field(default_factory=list)
    inputFiles: list[str] = Field(default_factory=list)
    outputFiles: list[str] = Field(default_factory=list)


class _Specification(_Read):
    tasks: list[_Task] = Field(min_length=1)
    files: list[_File] = Field(default_factory=list)


class _Run(_Read):
    id: str = Field(min_length=1)
    runtimeInSeconds: float = Field(ge=0, le=MAX_WORK)


class _Execution(_Read):
    tasks: list[_Run]


class _Workflow(_Read):
    specification: _Specification
    execution: _Execution


class _Document(_Read):
    name: str = Field(min_length=1)
    description: str = ""
    schemaVersion: str
    workflow: _Workflow


def _version(source: str, data: Any) -> None:
    """Refuses a document without ``schemaVersion`` or older than :data:`FIRST_VERSION`."""
    if not isinstance(data, dict):
        raise SpecError(source, "<document>", type(data).__name__, "a WfFormat document is a JSON object")
    version = data.get("schemaVersion")
    try:
        numbers = tuple(int(part) for part in str(version).split("."))
    except ValueError:
        raise SpecError(source, "schemaVersion", version, "not a WfFormat schema version (e.g. \"1.5\")") from None
    if numbers < FIRST_VERSION:
        raise SpecError(source, "schemaVersion", version,
                        f"this reader knows WfFormat {'.'.join(map(str, FIRST_VERSION))} and later "
                        "(tasks under workflow.specification, runtimes under workflow.execution)")


def is_wfformat(data: Any) -> bool:
    """Whether parsed JSON looks like a WfFormat document (an object with ``schemaVersion`` and ``workflow``)."""
    return isinstance(data, dict) and "schemaVersion" in data and "workflow" in data


def workload_from_wfformat(data: Any, source: str = "<wfformat>") -> Workload:
    """The workload of a parsed WfFormat document (module docstring); raises :class:`SpecError`."""
    _version(source, data)
    try:
        doc = _Document.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None
    spec = doc.workflow.specification
    index: dict[str, int] = {}
    for i, task in enumerate(spec.tasks):
        if task.id in index:
            raise SpecError(source, f"workflow.specification.tasks[{i}].id", task.id, "task ids must be unique")
        index[task.id] = i
    runtime: dict[str, float] = {}
    for k, run in enumerate(doc.workflow.execution.tasks):
        if run.id not in index:
            raise SpecError(source, f"workflow.execution.tasks[{k}].id", run.id, "no task of the specification has it")
        runtime[run.id] = run.runtimeInSeconds
    size = {f.id: f.sizeInBytes for f in spec.files}
    for i, task in enumerate(spec.tasks):
        if task.id not in runtime:
            raise SpecError(source, f"workflow.specification.tasks[{i}]", task.id,
                            "has no runtimeInSeconds in workflow.execution.tasks")
        for field in ("inputFiles", "outputFiles"):
            for j, name in enumerate(getattr(task, field)):
                if name not in size:
                    raise SpecError(source, f"workflow.specification.tasks[{i}].{field}[{j}]", name,
                                    "not declared in workflow.specification.files")
    pairs: dict[tuple[int, int], None] = {}  # in first-seen order
    for i, task in enumerate(spec.tasks):
        for field, other_first in (("parents", True), ("children", False)):
            for j, other in enumerate(getattr(task, field)):
                if other not in index:
                    raise SpecError(source, f"workflow.specification.tasks[{i}].{field}[{j}]", other,
                                    "unknown task id")
                pairs[(index[other], i) if other_first else (i, index[other])] = None
    edges = tuple(pairs)
    written = [set(task.outputFiles) for task in spec.tasks]
    edge_bytes = tuple(float(sum(size[f] for f in dict.fromkeys(spec.tasks[d].inputFiles) if f in written[s]))
                       for s, d in edges)
    ops = tuple(Op(name=task.id, op_class="generic", work=float(runtime[task.id])) for task in spec.tasks)
    return validate_workload(Workload(doc.name, ops, edges, edge_bytes, description=doc.description), source)


def read_wfformat(path: str | Path) -> Workload:
    """Read a WfFormat JSON file (module docstring); raises :class:`SpecError` naming the file, field and
    value."""
    return workload_from_wfformat(read_json(path), str(path))
