"""The JSON Schema of a problem spec, built from the code so that it cannot drift.

It is assembled from the pydantic models that validate a spec
(:class:`~dse.runs.spec.ProblemSpecModel` and its parts), the platform and
workload file models (:class:`~dse.model.platform.PlatformSpec`,
:class:`~dse.model.workload.WorkloadSpec`), the workload builders' signatures
(:data:`dse.inputs.builders.BUILDERS`), the importers' formats and the family
registry: per family (``if family == NAME``) its objectives, its ``options``
model and its ``scenario`` model. A family that reads its own platform or
workload (``Family.resolve_platform`` / ``resolve_workload``) contributes the
schema of the pydantic model its resolver names as a ``model`` attribute
(``resolver.model = MyPlatformSpec``); without one, that family's
``platform`` / ``workload`` is left untyped rather than wrongly typed.

Editors read it through a first line in the spec (YAML language server)::

    # yaml-language-server: $schema=dse-spec.schema.json

Example::

    from dse.runs.schema import spec_schema
    schema = spec_schema()          # a dict, ready for json.dumps
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_JSON_TYPES: dict[Any, str] = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}


def _models() -> dict[str, type[BaseModel]]:
    """Every pydantic model the schema embeds, by a stable key."""
    from dse.mapping.registry import families
    from dse.model.platform import PlatformSpec
    from dse.model.workload import WorkloadSpec
    from dse.runs.spec import ConstraintsSpec, ProblemSpecModel, SolverSpec

    models: dict[str, type[BaseModel]] = {
        "spec": ProblemSpecModel, "constraints": ConstraintsSpec, "solver": SolverSpec,
        "platform": PlatformSpec, "workload": WorkloadSpec,
    }
    for name, fam in families().items():
        models[f"{name}.options"] = fam.options
        if fam.scenario is not None:
            models[f"{name}.scenario"] = fam.scenario
        for hook in ("platform", "workload"):
            model = getattr(getattr(fam, f"resolve_{hook}"), "model", None)
            if isinstance(model, type) and issubclass(model, BaseModel):
                models[f"{name}.{hook}"] = model
    return models


def _json_type(annotation: Any) -> list[str]:
    """JSON types an annotation admits (``int | None`` -> ``["integer", "null"]``); [] when unknown."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return [t for arg in typing.get_args(annotation) for t in _json_type(arg)]
    return [_JSON_TYPES[annotation]] if annotation in _JSON_TYPES else []


def builder_schema(name: str) -> dict[str, Any]:
    """``{builder: NAME, PARAM: VALUE...}`` for one builder, from its signature, type hints and parameter notes."""
    from dse.inputs.builders import BUILDERS
    from dse.inputs.catalog import BUILDER_PARAMETERS

    fn = BUILDERS[name]
    hints = typing.get_type_hints(fn)
    doc = (inspect.getdoc(fn) or "").split("\n\n")[0].replace("\n", " ")
    properties: dict[str, Any] = {"builder": {"const": name, "description": doc}}
    for param in inspect.signature(fn).parameters.values():
        prop: dict[str, Any] = {}
        kinds = _json_type(hints.get(param.name))
        if kinds:
            prop["type"] = kinds[0] if len(kinds) == 1 else kinds
        if param.default is not inspect.Parameter.empty:
            prop["default"] = param.default
        if param.name in BUILDER_PARAMETERS:
            prop["description"] = BUILDER_PARAMETERS[param.name]
        properties[param.name] = prop
    return {"type": "object", "title": f"builder {name}", "properties": properties,
            "required": ["builder"], "additionalProperties": False}


def _file_ref(kind: str, formats: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "title": f"{kind} file in another format",
            "properties": {"format": {"enum": [*formats, "auto"]},
                           "path": {"type": "string", "description": "relative to the spec's folder, then the project"}},
            "required": ["format", "path"], "additionalProperties": False}


def _name_or_path(kind: str, names: list[str]) -> dict[str, Any]:
    alternatives: list[dict[str, Any]] = [{"type": "string", "description": f"a {kind} YAML path"}]
    if names:
        alternatives.insert(0, {"enum": names, "description": f"a catalog {kind}"})
    return {"anyOf": alternatives}


def _default_platform(defs: dict[str, Any]) -> dict[str, Any]:
    from dse.inputs import catalog
    from dse.inputs.importers import PLATFORM_FORMATS
    from dse.model.platform import MAX_DEVICES

    identical = {"type": "object", "title": "identical processors, free communication",
                 "properties": {"identical": {"type": "integer", "minimum": 1, "maximum": MAX_DEVICES}},
                 "required": ["identical"], "additionalProperties": False}
    return {"description": "catalog name, path, inline platform, {identical: P} or {format, path}",
            "anyOf": [_name_or_path("platform", catalog.platforms()), defs["platform"], identical,
                      _file_ref("platform", PLATFORM_FORMATS)]}


def _default_workload(defs: dict[str, Any]) -> dict[str, Any]:
    from dse.inputs import catalog
    from dse.inputs.builders import BUILDERS
    from dse.inputs.importers import WORKLOAD_FORMATS

    return {"description": "builder, catalog name, path, inline workload or {format, path}",
            "anyOf": [*(builder_schema(b) for b in sorted(BUILDERS)), _name_or_path("workload", catalog.workloads()),
                      defs["workload"], _file_ref("workload", WORKLOAD_FORMATS)]}


def spec_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a problem spec file, as a dict."""
    from dse.mapping.registry import families
    from dse.solvers.registry import solvers

    models = _models()
    keys = list(models)
    refs, top = models_json_schema([(models[k], "validation") for k in keys], ref_template="#/$defs/{model}")
    defs_by_key = {k: refs[(models[k], "validation")] for k in keys}
    schema: dict[str, Any] = {"$schema": SCHEMA_DIALECT, "title": "dse problem spec",
                              "$defs": top.get("$defs", {})}
    spec = schema["$defs"][defs_by_key["spec"]["$ref"].rsplit("/", 1)[-1]]
    schema.update({k: v for k, v in spec.items() if k not in ("title",)})
    props = schema["properties"]
    fams = families()
    props["family"] = {"enum": list(fams), "description": "; ".join(f"{n}: {f.description}" for n, f in fams.items())}
    props["objectives"] = {"type": "array", "minItems": 1, "uniqueItems": True,
                           "items": {"enum": sorted({o for f in fams.values() for o in f.objectives})},
                           "description": "default: the family's default objectives"}
    names = [n for n in solvers() if n != "heuristic"]
    solver_ref = defs_by_key["solver"]["$ref"].rsplit("/", 1)[-1]
    schema["$defs"][solver_ref]["properties"]["name"]["anyOf"] = [
        {"enum": [*names, "all"]}, {"type": "string", "pattern": "^heuristic:.+$"}]
    for key in ("platform", "workload"):
        props[key] = {"description": spec["properties"][key].get("description", f"the problem's {key}")}
    rules = []
    for name, fam in fams.items():
        then: dict[str, Any] = {"objectives": {"items": {"enum": list(fam.objectives)}},
                                "options": defs_by_key[f"{name}.options"]}
        if f"{name}.scenario" in defs_by_key:
            then["scenario"] = {"anyOf": [defs_by_key[f"{name}.scenario"], {"type": "null"}]}
        else:
            then["scenario"] = {"type": "null"}
        for key, default in (("platform", _default_platform), ("workload", _default_workload)):
            if getattr(fam, f"resolve_{key}") is None:
                then[key] = default(defs_by_key)
            elif f"{name}.{key}" in defs_by_key:
                then[key] = {"anyOf": [{"type": "string"}, defs_by_key[f"{name}.{key}"]]}
        rules.append({"if": {"properties": {"family": {"const": name}}, "required": ["family"]},
                      "then": {"properties": then}})
    schema["allOf"] = rules
    return schema
