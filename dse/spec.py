"""YAML problem specs -> problem objects.

A spec names a platform, a workload, a family, objectives, constraints and
solver settings::

    name: quickstart
    family: pipeline
    platform: server_cpu_gpu_fpga          # catalog name, path, or inline mapping
    workload: {builder: gcn, dataset: cora, layers: 2}   # builder, catalog name, path, or {format, path}
    objectives: [throughput, energy]
    constraints: {deadline_ms: 5.0, power_w: 400, memory: true}   # each optional
    solver: {name: all, time_limit_s: 60, seed: 0}

Relative paths are read from the spec's folder first, then from the catalog
home. Every error is a :class:`~dse.errors.SpecError` naming the file, the
field and the value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse import catalog
from dse.cost import CostModel, CostTables, RooflineCostModel, TableCostModel
from dse.errors import DseError, SpecError
from dse.mapping.base import MappingProblem
from dse.mapping.pipeline import PipelineProblem
from dse.platform import Platform, platform_from_dict, spec_error_from_validation
from dse.workload import Workload, validate_workload, workload_from_dict
from dse.yamlio import read_yaml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ConstraintsSpec(_Strict):
    deadline_ms: float | None = Field(default=None, gt=0)
    deadline: float | None = Field(default=None, gt=0, description="deadline in the workload's own time unit")
    power_w: float | None = Field(default=None, gt=0)
    memory: bool = True


class SolverSpec(_Strict):
    name: str = "all"
    time_limit_s: float = Field(default=60.0, gt=0)
    seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict)


class ProblemSpecModel(_Strict):
    name: str
    family: str
    platform: str | dict[str, Any]
    workload: str | dict[str, Any]
    objectives: list[str] | None = Field(default=None, min_length=1)
    constraints: ConstraintsSpec = Field(default_factory=ConstraintsSpec)
    solver: SolverSpec = Field(default_factory=SolverSpec)
    cost_model: str | dict[str, Any] = "default"
    options: dict[str, Any] = Field(default_factory=dict, description="family options, e.g. insertion")
    description: str = ""


@dataclass(frozen=True)
class ProblemSpec:
    """A validated spec with its platform and workload resolved."""

    source: str
    name: str
    family: str
    platform: Platform
    workload: Workload
    objectives: tuple[str, ...]
    constraints: ConstraintsSpec
    solver: SolverSpec
    cost_model: CostModel
    options: dict[str, Any] = field(default_factory=dict)


FamilyFactory = Callable[[ProblemSpec, CostTables], MappingProblem]
DEFAULT_OBJECTIVES = {"pipeline": ("throughput", "energy"), "dag": ("makespan", "energy")}


def _pipeline(spec: ProblemSpec, tables: CostTables) -> MappingProblem:
    c = spec.constraints
    if spec.options:
        key = next(iter(spec.options))
        raise SpecError(spec.source, f"options.{key}", spec.options[key], "the pipeline family takes no options")
    power = None if c.power_w is None else int(c.power_w * 1e3 + 1e-9)
    return PipelineProblem(tables, spec.objectives, deadline=_deadline(spec, tables), power_cap_mw=power,
                           memory=c.memory, name=spec.name)


def _deadline(spec: ProblemSpec, tables: CostTables) -> int | None:
    c = spec.constraints
    if c.deadline is not None and c.deadline_ms is not None:
        raise SpecError(spec.source, "constraints", "deadline, deadline_ms", "give one of the two")
    if c.deadline is not None:
        return int(c.deadline / tables.display_per_time_unit + 1e-9)
    if c.deadline_ms is not None:
        return int(c.deadline_ms * 1e-3 / tables.seconds_per_time_unit + 1e-9)
    return None


def _dag(spec: ProblemSpec, tables: CostTables) -> MappingProblem:
    from dse.mapping.dag import DagProblem

    known = {"insertion", "tensor_per_device"}
    for key, value in spec.options.items():
        if key not in known:
            raise SpecError(spec.source, f"options.{key}", value, f"dag options are {', '.join(sorted(known))}")
        if not isinstance(value, bool):
            raise SpecError(spec.source, f"options.{key}", value, "must be true or false")
    if spec.constraints.power_w is not None:
        raise SpecError(spec.source, "constraints.power_w", spec.constraints.power_w, "the dag family has no power cap")
    tf_rules = bool(spec.options.get("tensor_per_device", False))
    return DagProblem(tables, spec.objectives, deadline=_deadline(spec, tables), memory=spec.constraints.memory,
                      insertion=bool(spec.options.get("insertion", False)), tensor_per_device=tf_rules,
                      name=spec.name)


#: family name -> factory building the problem from a resolved spec and its cost tables.
FAMILIES: dict[str, FamilyFactory] = {"pipeline": _pipeline, "dag": _dag}


def _resolve_platform(ref: str | Mapping[str, Any], source: str, base: Path) -> Platform:
    if isinstance(ref, Mapping):
        if "format" in ref:
            from dse.importers import read_platform

            path = _existing(str(ref.get("path", "")), base, source, "platform.path")
            try:
                return read_platform(str(ref["format"]), path)
            except SpecError as exc:
                if exc.field == "format":
                    raise SpecError(source, "platform.format", exc.value, exc.reason) from None
                raise
        if "identical" in ref:
            from dse.importers.identical import identical_platform

            return identical_platform(ref, source)
        return platform_from_dict(ref, f"{source} (platform)")
    path = catalog.find("platforms", ref, base)
    if path is None:
        raise SpecError(source, "platform", ref,
                        f"no such platform file or catalog name; catalog platforms: {', '.join(catalog.platforms())}")
    from dse.platform import load_platform

    return load_platform(path)


def _existing(ref: str, base: Path, source: str, field_name: str) -> Path:
    for path in (base / ref, Path(ref), catalog.home() / ref):
        if ref and path.is_file():
            return path
    raise SpecError(source, field_name, ref, "file not found")


def _resolve_workload(ref: str | Mapping[str, Any], source: str, base: Path) -> Workload:
    if isinstance(ref, Mapping):
        if "builder" in ref:
            from dse.builders import build

            params = {k: v for k, v in ref.items() if k != "builder"}
            try:
                return validate_workload(build(str(ref["builder"]), **params), f"{source} (workload)")
            except SpecError as exc:
                raise SpecError(source, f"workload.{exc.field}", exc.value, exc.reason) from None
        if "format" in ref:
            from dse.importers import read_workload

            path = _existing(str(ref.get("path", "")), base, source, "workload.path")
            try:
                return validate_workload(read_workload(str(ref["format"]), path), str(path))
            except SpecError as exc:
                if exc.field == "format":
                    raise SpecError(source, "workload.format", exc.value, exc.reason) from None
                raise
        return workload_from_dict(ref, f"{source} (workload)")
    path = catalog.find("workloads", ref, base)
    if path is None:
        raise SpecError(source, "workload", ref,
                        f"no such workload file or catalog name; catalog workloads: {', '.join(catalog.workloads()) or 'none'}"
                        "; or use {builder: NAME, ...}")
    from dse.workload import load_workload

    return load_workload(path)


def _cost_model(ref: str | Mapping[str, Any], family: str, source: str, tf_rules: bool = False) -> CostModel:
    """The spec's cost model; the default is roofline for pipelines and table costs (``work / speed``)
    otherwise, with the TF paper's send cost of 10 operations when the platform is a TF device file."""
    name = ref if isinstance(ref, str) else str(ref.get("name", "default"))
    params = {} if isinstance(ref, str) else {k: v for k, v in ref.items() if k != "name"}
    if name == "default":
        name = "roofline" if family == "pipeline" else "table"
        if tf_rules:
            params = {"send_ops": 10.0, "scale": 1000.0, **params}  # milli time units: little rounding
    try:
        if name == "roofline":
            return RooflineCostModel(**params)
        if name == "table":
            return TableCostModel(**params)
    except TypeError as exc:
        raise SpecError(source, "cost_model", dict(params), str(exc)) from None
    raise SpecError(source, "cost_model", name, "choose roofline or table")


def spec_from_dict(data: Any, source: str = "<spec>", base: Path | None = None) -> ProblemSpec:
    """Validate a parsed spec and resolve its platform and workload; raises :class:`SpecError`."""
    if not isinstance(data, Mapping):
        raise SpecError(source, "<root>", type(data).__name__, "a problem spec must be a YAML mapping")
    try:
        model = ProblemSpecModel.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None
    if model.family not in FAMILIES:
        raise SpecError(source, "family", model.family, f"known families: {', '.join(sorted(FAMILIES))}")
    base = base or Path(".")
    platform = _resolve_platform(model.platform, source, base)
    # the TF paper's device files bring its cost rules: one send per remote device, 10 operations each
    tf_rules = isinstance(model.platform, Mapping) and model.platform.get("format") == "tfcsv"
    options = dict(model.options)
    if tf_rules and model.family == "dag":
        options.setdefault("tensor_per_device", True)
    tf_rules = bool(options.get("tensor_per_device", False))
    workload = _resolve_workload(model.workload, source, base)
    return ProblemSpec(
        source=source,
        name=model.name,
        family=model.family,
        platform=platform,
        workload=workload,
        objectives=tuple(model.objectives or DEFAULT_OBJECTIVES[model.family]),
        options=options,
        constraints=model.constraints,
        solver=model.solver,
        cost_model=_cost_model(model.cost_model, model.family, source, tf_rules),
    )


def load_spec(path: str | Path) -> ProblemSpec:
    """Read and resolve a spec file; raises :class:`SpecError`."""
    path = Path(path)
    return spec_from_dict(read_yaml(path), str(path), path.parent)


def build_problem(spec: ProblemSpec) -> MappingProblem:
    """Cost tables and the family's problem for a resolved spec; raises :class:`SpecError`."""
    try:
        tables = spec.cost_model.tables(spec.workload, spec.platform)
    except (ValueError, KeyError) as exc:
        if isinstance(exc, DseError):
            raise
        raise SpecError(spec.source, "platform", spec.platform.name, f"cannot cost the workload on it: {exc}") from None
    try:
        problem = FAMILIES[spec.family](spec, tables)
    except SpecError as exc:
        raise SpecError(spec.source, exc.field, exc.value, exc.reason) from None
    problem.spec = spec  # type: ignore[attr-defined]
    return problem


def load_problem(path: str | Path) -> MappingProblem:
    """``load_spec`` then ``build_problem``: the problem object of a spec file.

    Example::

        problem = dse.load_problem("problems/quickstart.yaml")
    """
    return build_problem(load_spec(path))
