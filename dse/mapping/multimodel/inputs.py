"""The multimodel family's spec fields: its ``platform`` is an accelerator system and its ``workload`` a
scenario of models at frame rates, each a catalog name, a ``.yaml`` or MAESTRO ``.m`` path, a
``{format, path}`` mapping or an inline mapping."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.inputs import catalog
from dse.inputs.importers.maestro import read_maestro_hardware, read_maestro_network
from dse.model.accelerators import (
    Scenario,
    System,
    load_scenario,
    load_system,
    scenario_from_dict,
    system_from_dict,
)


def _resolve(ref: Any, source: str, base: Path, kind: str) -> Any:

    field_name = "platform" if kind == "systems" else "workload"
    from_dict = system_from_dict if kind == "systems" else scenario_from_dict
    if isinstance(ref, Mapping):
        if "format" in ref:
            fmt = str(ref["format"]).lower()
            if fmt not in ("maestro", "yaml"):
                raise SpecError(source, f"{field_name}.format", ref["format"], "choose maestro or yaml")
            path = _find(str(ref.get("path", "")), source, base, kind, f"{field_name}.path")
            options = {k: v for k, v in ref.items() if k not in ("format", "path")}
            if fmt == "yaml":
                return (load_system if kind == "systems" else load_scenario)(path)
            if kind == "systems":
                try:
                    return read_maestro_hardware(path, **options)
                except TypeError as exc:
                    raise SpecError(source, field_name, dict(options), str(exc)) from None
            if options:
                raise SpecError(source, f"{field_name}.{next(iter(options))}", next(iter(options.values())),
                                "the maestro network reader takes no options")
            return read_maestro_network(path)
        return from_dict(dict(ref), f"{source} ({field_name})")
    path = _find(str(ref), source, base, kind, field_name)
    if path.suffix == ".m":
        return read_maestro_hardware(path) if kind == "systems" else read_maestro_network(path)
    return load_system(path) if kind == "systems" else load_scenario(path)


def _find(ref: str, source: str, base: Path, kind: str, field_name: str) -> Path:
    found = catalog.find(kind, ref, base) if ref else None
    if found is None:
        names = catalog.systems() if kind == "systems" else catalog.scenarios()
        raise SpecError(source, field_name, ref, f"no such file or catalog {kind[:-1]}; catalog {kind}: "
                        + (", ".join(names) or "none"))
    return found


def resolve_system(ref: Any, source: str, base: Path) -> System:
    """The spec's ``platform``: a catalog system, a ``.yaml``/``.m`` path, ``{format: maestro, path, dataflow}``
    or an inline mapping."""
    return _resolve(ref, source, Path(base), "systems")


def resolve_scenario(ref: Any, source: str, base: Path) -> Scenario:
    """The spec's ``workload``: a catalog scenario, a ``.yaml``/``.m`` path, ``{format: maestro, path}`` or inline."""
    return _resolve(ref, source, Path(base), "scenarios")
