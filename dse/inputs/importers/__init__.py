"""Importers and exporters for task graphs (workloads) and device sets (platforms).

Workload formats: ``stg`` (Standard Task Graph Set), ``tfcsv`` (the
TensorFlow partitioning paper's CSV graphs), ``dot`` (Graphviz with cost
attributes), ``json`` (lossless), ``wfformat`` (WfCommons' scientific
workflows) and ``yaml`` (the engine's own schema).
Platform formats: ``tfcsv`` (the TF paper's device CSVs) and ``yaml``.
``auto`` picks the format from the file suffix (``.stg``, ``.csv``,
``.dot``/``.gv``, ``.json``, ``.yaml``/``.yml``); a ``.json`` file is read as
WfFormat when its object has ``schemaVersion`` and ``workflow``, else as the
engine's JSON.

Every reader raises :class:`~dse.errors.SpecError` naming the file, and every
workload returned passes :func:`dse.model.workload.validate_workload`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.inputs.importers._common import read_json
from dse.inputs.importers.dot import read_dot, write_dot
from dse.inputs.importers.jsonio import (
    read_workload_json,
    workload_from_json_data,
    write_workload_json,
)
from dse.inputs.importers.stg import read_stg, write_stg
from dse.inputs.importers.tfcsv import (
    read_tf_devices,
    read_tf_graph,
    write_tf_devices,
    write_tf_graph,
)
from dse.inputs.importers.wfformat import is_wfformat, read_wfformat, workload_from_wfformat
from dse.model.platform import Platform, load_platform
from dse.model.workload import Workload, load_workload, validate_workload
from dse.util.suggest import did_you_mean

__all__ = [
    "PLATFORM_FORMATS",
    "WORKLOAD_FORMATS",
    "read_dot",
    "read_platform",
    "read_stg",
    "read_tf_devices",
    "read_tf_graph",
    "read_wfformat",
    "read_workload",
    "read_workload_json",
    "write_dot",
    "write_stg",
    "write_tf_devices",
    "write_tf_graph",
    "write_workload",
    "write_workload_json",
]

WORKLOAD_FORMATS = ("stg", "tfcsv", "dot", "json", "wfformat", "yaml")
PLATFORM_FORMATS = ("tfcsv", "yaml")

_ALIASES = {"csv": "tfcsv", "tf": "tfcsv", "tf-csv": "tfcsv", "gv": "dot", "graphviz": "dot", "yml": "yaml",
            "wfcommons": "wfformat"}
_SUFFIXES = {".stg": "stg", ".csv": "tfcsv", ".dot": "dot", ".gv": "dot", ".json": "json",
             ".yaml": "yaml", ".yml": "yaml"}

_WORKLOAD_READERS: dict[str, Callable[..., Workload]] = {
    "stg": read_stg,
    "tfcsv": read_tf_graph,
    "dot": read_dot,
    "json": read_workload_json,
    "wfformat": read_wfformat,
    "yaml": load_workload,
}
_WORKLOAD_WRITERS: dict[str, Callable[..., None]] = {
    "stg": write_stg,
    "tfcsv": write_tf_graph,
    "dot": write_dot,
    "json": write_workload_json,
}
_PLATFORM_READERS: dict[str, Callable[..., Platform]] = {
    "tfcsv": read_tf_devices,
    "yaml": load_platform,
}


def _format(format: str, path: Path, known: tuple[str, ...], what: str) -> str:
    name = str(format).strip().lower()
    name = _ALIASES.get(name, name)
    if name == "auto":
        name = _SUFFIXES.get(path.suffix.lower(), "")
        if name not in known:
            raise SpecError(str(path), "format", "auto",
                            f"cannot tell the {what} format from the suffix {path.suffix!r}; "
                            f"name one of {', '.join(known)}")
    if name not in known:
        raise SpecError(str(path), "format", format,
                        f"unknown {what} format{did_you_mean(name, [*known, 'auto'])}; known: {', '.join(known)}, auto")
    return name


def _call(func: Callable[..., Any], path: Path, name: str, args: tuple, options: dict[str, Any]) -> Any:
    parameters = inspect.signature(func).parameters
    for key in options:
        if key not in parameters or parameters[key].kind is not inspect.Parameter.KEYWORD_ONLY:
            allowed = [k for k, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
            raise SpecError(str(path), f"options.{key}", options[key],
                            f"unknown option for format {name!r}{did_you_mean(key, allowed)}; "
                            f"options: {', '.join(allowed) or 'none'}")
    return func(*args, **options)


def _existing_file(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        reason = "is a directory, not a file" if path.is_dir() else "file not found"
        raise SpecError(str(path), "<file>", str(path), reason)
    return path


def _read_any_json(path: Path) -> Workload:
    """A ``.json`` file read with ``auto``: parsed once, then WfFormat when it looks like it, else the
    engine's JSON."""
    data = read_json(path)
    return workload_from_wfformat(data, str(path)) if is_wfformat(data) else workload_from_json_data(data, str(path))


def read_workload(format: str, path: str | Path, **options: Any) -> Workload:
    """Read a workload in ``format`` (``stg|tfcsv|dot|json|wfformat|yaml|auto``) from ``path``.

    ``options`` go to the reader (``keep_dummies`` for ``stg``, ``strict`` for ``tfcsv``).
    """
    path = Path(path)
    name = _format(format, path, WORKLOAD_FORMATS, "workload")
    _existing_file(path)
    auto_json = name == "json" and str(format).strip().lower() == "auto"
    reader = _read_any_json if auto_json else _WORKLOAD_READERS[name]
    workload = _call(reader, path, name, (path,), options)
    return validate_workload(workload, str(path))


def read_platform(format: str, path: str | Path, **options: Any) -> Platform:
    """Read a platform in ``format`` (``tfcsv|yaml|auto``) from ``path``."""
    path = Path(path)
    name = _format(format, path, PLATFORM_FORMATS, "platform")
    _existing_file(path)
    return _call(_PLATFORM_READERS[name], path, name, (path,), options)


def write_workload(format: str, workload: Workload, path: str | Path, **options: Any) -> None:
    """Write ``workload`` to ``path`` in ``format`` (``stg|tfcsv|dot|json|auto``; not ``yaml``)."""
    path = Path(path)
    name = _format(format, path, tuple(_WORKLOAD_WRITERS), "workload output")
    _call(_WORKLOAD_WRITERS[name], path, name, (workload, path), options)
