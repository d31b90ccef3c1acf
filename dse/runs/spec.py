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

import contextlib
import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.cost import CostModel, CostTables, RooflineCostModel, TableCostModel
from dse.errors import DseError, SpecError
from dse.inputs import catalog
from dse.mapping.base import MappingProblem
from dse.mapping.registry import Family, ProblemInputs, families, family
from dse.model.platform import Platform, platform_from_dict, unit_free_links
from dse.model.workload import Workload, validate_workload, workload_from_dict
from dse.util.arguments import expect
from dse.util.limits import MAX_DEADLINE_TU, MAX_SEED, MAX_TIME_LIMIT_S
from dse.util.numbers import parse_number
from dse.util.suggest import did_you_mean, nearest
from dse.util.validation import spec_error_from_validation
from dse.util.yamlio import read_yaml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: Longest deadline accepted in milliseconds (about 31 years; leave the deadline out for none).
MAX_DEADLINE_MS = 1e12
#: Longest deadline accepted in the workload's own time unit.
MAX_DEADLINE = 1e15


class ConstraintsSpec(_Strict):
    """Constraint limits of a spec; each optional, every number finite and positive."""

    deadline_ms: float | None = Field(default=None, gt=0, le=MAX_DEADLINE_MS, allow_inf_nan=False,
                                      description=f"ms, in (0, {MAX_DEADLINE_MS:g}]")
    deadline: float | None = Field(default=None, gt=0, le=MAX_DEADLINE, allow_inf_nan=False,
                                   description=f"deadline in the workload's own time unit, in (0, {MAX_DEADLINE:g}]")
    power_w: float | None = Field(default=None, gt=0, le=1e9, allow_inf_nan=False)
    memory: bool = True


class SolverSpec(_Strict):
    """Solver settings: a registered solver name (or ``all``, ``heuristic:NAME``), limit, seed, options."""

    name: str = "all"
    time_limit_s: float = Field(default=60.0, gt=0, le=MAX_TIME_LIMIT_S, allow_inf_nan=False)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
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
    scenario: dict[str, Any] | None = Field(default=None, description="the family's run-time scenario (dse simulate)")
    description: str = ""


@dataclass(frozen=True)
class ProblemSpec:
    """A validated spec with its platform and workload resolved.

    ``options`` holds the family's options, validated and with their defaults.
    ``platform`` and ``workload`` are the family's own objects where its entry
    resolves them (``Family.resolve_platform``); ``scenario`` is the validated
    ``scenario`` model, or ``None``.
    """

    source: str
    name: str
    family: str
    platform: Platform | Any
    workload: Workload | Any
    objectives: tuple[str, ...]
    constraints: ConstraintsSpec
    solver: SolverSpec
    cost_model: CostModel
    options: dict[str, Any] = field(default_factory=dict)
    scenario: BaseModel | None = None
    #: The folder the spec's relative paths are read from (the spec file's folder).
    base: Path = Path(".")
    #: The spec mapping as written (before its platform and workload were resolved): what
    #: :meth:`with_changes` changes and validates again.
    written: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def path(self, ref: str | Path) -> Path:
        """``ref`` as given when absolute, else under the spec's folder :attr:`base`."""
        ref = Path(ref)
        return ref if ref.is_absolute() else self.base / ref

    def with_changes(self, changes: Mapping[str, Any]) -> ProblemSpec:
        """A new spec: this one as written with each field of ``changes`` set, validated and resolved as a
        spec file is (this spec is left as it is).

        ``changes`` maps a field's dotted path to its new value, as a sweep's grid does:
        ``{"constraints.power_w": 300}``, ``{"workload": {"builder": "gcn", "dataset": "pubmed"}}``,
        ``{"platform": "edge_soc"}``, ``{"platform.devices.0.mem_gib": 16}`` (an inline platform).
        Raises :class:`SpecError` naming the field and the value: a path that names no spec field, or a
        value the field does not take (``constraints.power_w = -5``), the source read
        ``<spec file> with changes``.
        """
        source = changed_source(self.source)
        return spec_from_dict(changed(self.written, changes, source), source, self.base)


def _deadline(spec: ProblemSpec, tables: CostTables) -> int | None:
    c = spec.constraints
    if c.deadline is not None and c.deadline_ms is not None:
        raise SpecError(spec.source, "constraints", "deadline, deadline_ms", "give one of the two")
    if c.deadline is not None:
        field, value, ticks = "deadline", c.deadline, c.deadline / tables.display_per_time_unit
    elif c.deadline_ms is not None:
        field, value, ticks = "deadline_ms", c.deadline_ms, c.deadline_ms * 1e-3 / tables.seconds_per_time_unit
    else:
        return None
    if ticks > MAX_DEADLINE_TU:
        raise SpecError(spec.source, f"constraints.{field}", value,
                        f"is {ticks:.3g} of the cost tables' time units, past the {MAX_DEADLINE_TU:.3g} they hold; "
                        "leave the deadline out for none")
    return int(ticks + 1e-9)


def _family(name: str, source: str) -> Family:
    try:
        return family(name)
    except KeyError:
        raise SpecError(source, "family", name,
                        f"unknown family{did_you_mean(name, families())}; known families: {', '.join(families())}") from None


def _options(fam: Family, raw: Mapping[str, Any], source: str) -> BaseModel:
    """The family's options model from ``raw``; errors name ``options.KEY``."""
    try:
        return fam.options.model_validate(dict(raw))
    except ValidationError as exc:
        err = spec_error_from_validation(source, exc, dict(raw), fam.options)
        reason = err.reason
        if reason.startswith("unknown field") and not fam.options.model_fields:
            reason = f"the {fam.name} family takes no options"
        raise SpecError(source, f"options.{err.field}", err.value, reason) from None


def _objectives(fam: Family, given: list[str] | None, source: str) -> tuple[str, ...]:
    objectives = tuple(given or fam.default_objectives)
    for name in objectives:
        if name not in fam.objectives:
            raise SpecError(source, "objectives", name, f"unknown objective{did_you_mean(name, fam.objectives)}; "
                            f"{fam.name} objectives are {', '.join(fam.objectives)}")
    duplicates = sorted({o for o in objectives if objectives.count(o) > 1})
    if duplicates:
        raise SpecError(source, "objectives", list(objectives), f"objective {duplicates[0]} is listed twice")
    return objectives


def _limits(fam: Family, constraints: ConstraintsSpec, source: str) -> None:
    given = {"deadline": constraints.deadline if constraints.deadline is not None else constraints.deadline_ms,
             "power": constraints.power_w}
    fields = {"deadline": "deadline" if constraints.deadline is not None else "deadline_ms", "power": "power_w"}
    for limit, value in given.items():
        if value is not None and limit not in fam.limits:
            raise SpecError(source, f"constraints.{fields[limit]}", value, f"the {fam.name} family has no {limit} limit")


def _resolve_platform(ref: str | Mapping[str, Any], source: str, base: Path) -> Platform:
    if isinstance(ref, Mapping):
        if "format" in ref:
            from dse.inputs.importers import read_platform

            path = _existing(str(ref.get("path", "")), base, source, "platform.path")
            try:
                return read_platform(str(ref["format"]), path)
            except SpecError as exc:
                if exc.field == "format":
                    raise SpecError(source, "platform.format", exc.value, exc.reason) from None
                raise
        if "identical" in ref:
            from dse.inputs.importers.identical import identical_platform

            return identical_platform(ref, source)
        return platform_from_dict(ref, f"{source} (platform)")
    found = catalog.find("platforms", ref, base)
    if found is None:
        raise SpecError(source, "platform", ref,
                        f"no such platform file or catalog name{did_you_mean(Path(ref).stem, catalog.platforms())}; "
                        f"catalog platforms: {', '.join(catalog.platforms())}")
    from dse.model.platform import load_platform

    return load_platform(found)


def _existing(ref: str, base: Path, source: str, field_name: str) -> Path:
    """The first regular file among ``base/ref``, ``ref`` and the catalog's ``ref``; SpecError otherwise."""
    for path in (base / ref, Path(ref), catalog.home() / ref):
        try:
            if ref and path.is_file():
                return path
            if ref and path.is_dir():
                raise SpecError(source, field_name, ref, "is a directory, not a file")
        except OSError as exc:  # a name too long for the file system, say
            raise SpecError(source, field_name, ref, f"cannot be opened: {exc.strerror or exc}") from None
    raise SpecError(source, field_name, ref, "file not found")


def _resolve_workload(ref: str | Mapping[str, Any], source: str, base: Path) -> Workload:
    if isinstance(ref, Mapping):
        if "builder" in ref:
            from dse.inputs.builders import build

            params = {k: v for k, v in ref.items() if k != "builder"}
            try:
                return validate_workload(build(str(ref["builder"]), **params), f"{source} (workload)")
            except SpecError as exc:
                raise SpecError(source, f"workload.{exc.field}", exc.value, exc.reason) from None
        if "format" in ref:
            from dse.inputs.importers import read_workload

            path = _existing(str(ref.get("path", "")), base, source, "workload.path")
            try:
                return read_workload(str(ref["format"]), path)  # validated by read_workload
            except SpecError as exc:
                if exc.field == "format":
                    raise SpecError(source, "workload.format", exc.value, exc.reason) from None
                raise
        return workload_from_dict(ref, f"{source} (workload)")
    found = catalog.find("workloads", ref, base)
    if found is None:
        hint = did_you_mean(Path(ref).stem, catalog.workloads())
        builders = nearest(Path(ref).stem, catalog.builders())
        if builders and not hint:
            hint = f" (did you mean the builder {builders[0]!r}: {{builder: {builders[0]}, ...}}?)"
        raise SpecError(source, "workload", ref,
                        f"no such workload file or catalog name{hint}; catalog workloads: "
                        f"{', '.join(catalog.workloads()) or 'none'}; or use {{builder: NAME, ...}}")
    from dse.model.workload import load_workload

    return load_workload(found)


def _cost_model(ref: str | Mapping[str, Any], fam: Family, options: BaseModel, source: str) -> CostModel:
    """The spec's cost model; ``default`` is the family's choice for its options (see its registry entry)."""
    name = ref if isinstance(ref, str) else str(ref.get("name", "default"))
    params = {} if isinstance(ref, str) else {k: parse_number(v) for k, v in ref.items() if k != "name"}
    if name == "default":
        name, defaults = fam.cost_model(options)
        params = {**defaults, **params}
    factories: dict[str, Any] = {"roofline": RooflineCostModel, "table": TableCostModel, **fam.cost_models}
    if name not in factories:
        raise SpecError(source, "cost_model", name,
                        f"unknown cost model{did_you_mean(name, factories)}; choose {' or '.join(sorted(factories))}")
    try:
        return factories[name](**params)
    except TypeError as exc:
        raise SpecError(source, "cost_model", dict(params), str(exc)) from None
    except SpecError as exc:  # a cost model's own check names its parameter, not the spec file
        if exc.source != "cost_model":
            raise
        raise SpecError(source, f"cost_model.{exc.field}", exc.value, exc.reason) from None


def _scenario(fam: Family, raw: Mapping[str, Any] | None, source: str) -> BaseModel | None:
    """The family's scenario model from the spec's ``scenario`` mapping; errors name ``scenario.KEY``."""
    if raw is None:
        return None
    if fam.scenario is None:
        raise SpecError(source, "scenario", "...", f"the {fam.name} family has no run-time scenario")
    try:
        return fam.scenario.model_validate(dict(raw))
    except ValidationError as exc:
        err = spec_error_from_validation(source, exc, dict(raw), fam.scenario)
        raise SpecError(source, f"scenario.{err.field}", err.value, err.reason) from None


# --------------------------------------------------------------------------- dotted field paths


def _spec_fields() -> dict[str, set[str] | None]:
    """Top-level spec fields; for fields that are fixed models, their own field names."""
    nested: dict[str, set[str] | None] = {name: None for name in ProblemSpecModel.model_fields}
    nested["constraints"] = set(ConstraintsSpec.model_fields)
    nested["solver"] = set(SolverSpec.model_fields)
    return nested


def check_path(path: str, source: str = "grid") -> list[str]:
    """The parts of dotted ``path``; :class:`SpecError` when it names no spec field."""
    parts = path.split(".") if isinstance(path, str) else []
    if not parts or any(not p for p in parts):
        raise SpecError(source, str(path), None, "give a spec field's dotted path, e.g. constraints.power_w")
    fields = _spec_fields()
    if parts[0] not in fields:
        raise SpecError(source, path, None, f"{parts[0]!r} is not a spec field; spec fields are {', '.join(fields)}")
    known = fields[parts[0]]
    if known is not None and len(parts) > 1 and parts[1] not in known:
        raise SpecError(source, path, None, f"{parts[1]!r} is not a {parts[0]} field; "
                                            f"{parts[0]} fields are {', '.join(sorted(known))}")
    return parts


def apply_override(spec: dict[str, Any], path: str, value: Any, source: str = "grid") -> None:
    """Set the field at dotted ``path`` of ``spec`` (in place), creating missing mappings.

    A numeric part indexes a list. Raises :class:`SpecError` when the path runs through a value that
    is not a mapping (e.g. ``platform.devices`` where ``platform`` is a catalog name).
    """
    parts = check_path(path, source)
    node: Any = spec
    for i, part in enumerate(parts[:-1]):
        here = ".".join(parts[: i + 1])
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict):
            if node.get(part) is None:
                node[part] = {}
            node = node[part]
        else:
            raise SpecError(source, path, value, f"{here.rsplit('.', 1)[0]} is {node!r}, not a mapping")
        if not isinstance(node, dict | list):
            raise SpecError(source, path, value, f"{here} is {node!r}, not a mapping")
    last = parts[-1]
    if isinstance(node, list):
        if not (last.isdigit() and int(last) < len(node)):
            raise SpecError(source, path, value, f"index {last} is not in a list of {len(node)}")
        node[int(last)] = value
    else:
        node[last] = value


def changed(data: Mapping[str, Any], changes: Mapping[str, Any], source: str = "<spec>") -> dict[str, Any]:
    """A deep copy of the spec mapping ``data`` with each dotted path of ``changes`` set to its value
    (:func:`apply_override`); raises :class:`SpecError` naming ``source`` for a path that names no spec field
    or runs through a value that is not a mapping."""
    if not isinstance(changes, Mapping):
        raise SpecError(source, "changes", changes, "give a mapping of dotted field paths to values, "
                                                    "e.g. {'constraints.power_w': 300}")
    out = copy.deepcopy(dict(data))
    for path, value in changes.items():
        apply_override(out, path, copy.deepcopy(value), source)
    return out


#: The end of a changed spec's source (:func:`changed_source`).
CHANGED = " with changes"


def changed_source(source: str) -> str:
    """What errors of a changed spec name as their source: ``<spec file> with changes`` (once)."""
    return source if source.endswith(CHANGED) else source + CHANGED


# --------------------------------------------------------------------------- specs


def spec_from_dict(data: Any, source: str = "<spec>", base: Path | None = None) -> ProblemSpec:
    """Validate a parsed spec and resolve its platform and workload; raises :class:`SpecError`."""
    if not isinstance(data, Mapping):
        raise SpecError(source, "<root>", type(data).__name__, "a problem spec must be a YAML mapping")
    try:
        model = ProblemSpecModel.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data, ProblemSpecModel) from None
    fam = _family(model.family, source)
    objectives = _objectives(fam, model.objectives, source)
    _limits(fam, model.constraints, source)
    platform_format = model.platform.get("format") if isinstance(model.platform, Mapping) else None
    options = _options(fam, {**fam.platform_options.get(str(platform_format), {}), **model.options}, source)
    _check_solver_name(model.solver.name, fam.name, source)
    _check_solver_options(model.solver.options, source)
    base = base or Path(".")
    cost_model = _cost_model(model.cost_model, fam, options, source)
    with unit_free_links() if isinstance(cost_model, TableCostModel) else contextlib.nullcontext():
        platform = (fam.resolve_platform or _resolve_platform)(model.platform, source, base)
    workload = (fam.resolve_workload or _resolve_workload)(model.workload, source, base)
    return ProblemSpec(
        source=source,
        name=model.name,
        family=fam.name,
        platform=platform,
        workload=workload,
        objectives=objectives,
        options=options.model_dump(),
        constraints=model.constraints,
        solver=model.solver,
        cost_model=cost_model,
        scenario=_scenario(fam, model.scenario, source),
        base=base,
        written=copy.deepcopy(dict(data)),
    )


def _check_solver_name(name: str, family_name: str, source: str) -> None:
    """:class:`SpecError` naming ``solver.name`` for a solver that is not registered, or a heuristic that
    ``family_name`` does not have (the message names the family that has it, or the nearest names)."""
    from dse.solvers.registry import UnknownSolverError, lookup

    try:
        lookup(name, family=family_name)
    except UnknownSolverError as exc:
        raise SpecError(source, "solver.name", name, str(exc)) from None


def _check_solver_options(options: Mapping[str, Any], source: str) -> None:
    """``solver.options``: per registered solver a mapping of its settings, each known and in range
    (:func:`dse.solvers.registry.check_settings`); :class:`SpecError` naming ``solver.options.NAME.KEY``."""
    from dse.solvers.registry import check_settings, solvers

    known = solvers()
    for name, settings in options.items():
        if name not in known:
            raise SpecError(source, f"solver.options.{name}", name,
                            f"no such solver{did_you_mean(name, known)}; options are keyed by solver: {', '.join(known)}")
        if not isinstance(settings, Mapping):
            raise SpecError(source, f"solver.options.{name}", settings, "must be a mapping of option: value")
        check_settings(known[name], settings, source, f"solver.options.{name}.")


def load_spec(path: str | Path, changes: Mapping[str, Any] | None = None) -> ProblemSpec:
    """Read and resolve a spec file, or the catalog problem of that name (``"quickstart"``), with the
    dotted fields of ``changes`` set first (:meth:`ProblemSpec.with_changes`); raises :class:`SpecError`,
    and ``TypeError`` when ``path`` is neither a string nor a path."""
    expect(path, (str, Path), "dse.load_spec", "path", "a spec file's path or a catalog name, e.g. 'quickstart'")
    path = catalog.spec_path(path)
    if not path.exists():
        raise SpecError(str(path), "<file>", str(path), "file not found" + _nearest_specs(path))
    data = read_yaml(path)
    if not changes:
        return spec_from_dict(data, str(path), path.parent)
    if not isinstance(data, Mapping):
        raise SpecError(str(path), "<root>", type(data).__name__, "a problem spec must be a YAML mapping")
    source = changed_source(str(path))
    return spec_from_dict(changed(data, changes, source), source, path.parent)


def _nearest_specs(path: Path) -> str:
    """`` (did you mean ...?)`` naming the catalog problems and the spec files beside ``path`` closest to it."""
    beside = [f.name for f in path.parent.iterdir() if f.suffix in (".yaml", ".yml")] if path.parent.is_dir() else []
    problems = catalog.problems()
    close = [str(path.parent / name) for name in nearest(path.name, beside, n=2)]
    close += [path.stem] if path.stem in problems and str(path) != path.stem else nearest(path.stem, problems, n=2)
    if not close:
        return f"; catalog problems: {', '.join(catalog.problems())}"
    return " (did you mean " + " or ".join(repr(c) for c in dict.fromkeys(close)) + "?)"


def build_problem(spec: ProblemSpec) -> MappingProblem:
    """Cost tables and the family's problem for a resolved spec; raises :class:`SpecError`, and
    ``TypeError`` when ``spec`` is not a :class:`ProblemSpec`."""
    expect(spec, ProblemSpec, "dse.build_problem", "spec", "read one with dse.load_spec(path), or call "
           "dse.load_problem(path) for the problem at once")
    try:
        tables = spec.cost_model.tables(spec.workload, spec.platform)
    except SpecError as exc:  # the cost model names the workload and the platform: name the spec file too
        if exc.source.startswith(spec.source):
            raise
        raise SpecError(f"{spec.source} ({exc.source})", exc.field, exc.value, exc.reason) from None
    except (ValueError, KeyError) as exc:
        if isinstance(exc, DseError):
            raise
        raise SpecError(spec.source, "platform", spec.platform.name, f"cannot cost the workload on it: {exc}") from None
    fam = _family(spec.family, spec.source)
    c = spec.constraints
    inputs = ProblemInputs(
        tables=tables,
        objectives=_objectives(fam, list(spec.objectives), spec.source),
        options=_options(fam, spec.options, spec.source),
        name=spec.name,
        deadline=_deadline(spec, tables),
        power_cap_mw=None if c.power_w is None else int(c.power_w * 1e3 + 1e-9),
        memory=c.memory,
    )
    try:
        problem = fam.build(inputs)
    except SpecError as exc:
        raise SpecError(spec.source, exc.field, exc.value, exc.reason) from None
    problem.spec = spec  # type: ignore[attr-defined]
    return problem


def load_problem(path: str | Path, changes: Mapping[str, Any] | None = None) -> MappingProblem:
    """``load_spec`` then ``build_problem``: the problem object of a spec file or catalog problem name, with
    the dotted fields of ``changes`` set and validated first (:meth:`ProblemSpec.with_changes`).

    Raises :class:`SpecError` naming the field and the value. Example::

        problem = dse.load_problem("problems/quickstart.yaml")
        problem = dse.load_problem("quickstart")          # the same, by its catalog name
        tighter = dse.load_problem("quickstart", changes={"constraints.power_w": 300})
    """
    return build_problem(load_spec(path, changes))


def with_changes(problem: MappingProblem, changes: Mapping[str, Any]) -> MappingProblem:
    """The problem of ``problem``'s spec with the dotted fields of ``changes`` set, validated and built again
    (:meth:`ProblemSpec.with_changes`); ``problem`` is left as it is.

    Raises :class:`SpecError` naming the field and the value, and naming ``problem`` when it was not built
    from a spec (:func:`load_problem`, :func:`build_problem`). Example::

        looser = dse.with_changes(problem, {"constraints.power_w": 400, "constraints.deadline_ms": None})
    """
    spec = getattr(problem, "spec", None)
    if not isinstance(spec, ProblemSpec):
        raise SpecError("dse.with_changes", "problem", getattr(problem, "name", type(problem).__name__),
                        "was not built from a spec (dse.load_problem or dse.build_problem): it has none to change")
    return build_problem(spec.with_changes(changes))
