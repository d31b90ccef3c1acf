"""Where a platform device's cost-mechanism values come from when it does not declare them.

A device file gives its data-sheet figures (:data:`DATASHEET_FIELDS`: peak rates, bandwidth, memory,
power, unit counts, caches) and may name the **runtime** that executes the model (``runtime:``, a file
of ``models/runtimes/``: the op classes it fuses, its per-kernel and per-call overheads, each cited)
and its **device class** (``device_class:``; else the table ``kind_classes`` of
``models/defaults/device_classes.yaml`` maps its kind to one). Every mechanism field it does not
declare (:data:`MECHANISM_FIELDS`) is then taken, in this order, from

1. the runtime (``fused_op_classes``, ``launch_overhead_us``, ``call_overhead_us``), the class's
   default runtime when the device names none;
2. the class defaults, fitted on the fit part of ``models/measurements/`` only
   (``dse.runs.accuracy_fit.fit_class_defaults``; each value says which fit and which rows);
3. nothing: the device kind's defaults of :mod:`dse.cost.roofline` apply ("kind default").

A declared field always wins. ``mechanisms: none`` (on a device, or on the platform for all its
devices) switches steps 1 and 2 off: the plain analytic model, with only what the device declares.
:func:`resolve_device` returns the filled values and, per field, where each came from
(:attr:`Source`), which ``dse catalog --details`` prints.

Errors: an ill-formed defaults or runtime file, or an unknown runtime name, raises
:class:`~dse.errors.SpecError` naming the file, the field and the value.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.errors import SpecError
from dse.util.home import models_dir
from dse.util.validation import spec_error_from_validation
from dse.util.yamlio import read_yaml

#: Fields of a device file that a data sheet (or the device's configuration) gives; what a device
#: "declared by its data sheet alone" declares. Everything else is a mechanism field.
DATASHEET_FIELDS = ("name", "kind", "peak_tflops", "mem_bw_gbps", "mem_gib", "idle_w", "active_w", "speed",
                    "count", "dvfs", "compute_units", "cache_mib", "device_class", "runtime", "sources",
                    "intra_node_gbps", "intra_node_latency_us", "inter_node_gbps", "inter_node_latency_us")
#: Mechanism fields (:mod:`dse.cost.mechanisms`) a runtime or the class defaults may fill.
MECHANISM_FIELDS = ("launch_overhead_us", "call_overhead_us", "fused_op_classes", "compute_efficiency",
                    "skew_sensitivity", "sparse_bandwidth_efficiency", "gemm_tile")
#: Mechanism fields a runtime file may give.
RUNTIME_FIELDS = ("fused_op_classes", "launch_overhead_us", "call_overhead_us")
#: Fields the class defaults may give (``compute_efficiency`` per op class).
CLASS_FIELDS = ("compute_efficiency", "gemm_tile", "launch_overhead_us", "sparse_bandwidth_efficiency",
                "skew_sensitivity")
#: Class fields that may be fitted per runtime, ``launch_overhead_us: {RUNTIME: us}`` (kernel launches and the
#: dispatch in front of them are the runtime's, not the chip's), or per class (one value); which of the
#: two the committed fit uses is chosen by cross-validation on the fit rows (``docs/accuracy.md``).
PER_RUNTIME = ("launch_overhead_us",)
#: The value a device without any source for a field keeps (the roofline then uses the kind's default).
UNSET: Mapping[str, Any] = {"launch_overhead_us": None, "call_overhead_us": 0.0, "fused_op_classes": (),
                            "compute_efficiency": {}, "skew_sensitivity": None,
                            "sparse_bandwidth_efficiency": None, "gemm_tile": 0, "compute_units": 0}

DECLARED = "declared"
KIND_DEFAULT = "kind default"

#: The paths a device's mechanism values take (:func:`cost_path`): its own fitted or measured values, the
#: class defaults over its data sheet, or the kind defaults alone (no class, or ``mechanisms: none``).
FITTED, DATASHEET, KIND_DEFAULTS = "fitted", "data sheet only", "kind defaults"


def defaults_path() -> Path:
    """``models/defaults/device_classes.yaml`` of the catalog."""
    return models_dir() / "defaults" / "device_classes.yaml"


def runtimes_dir() -> Path:
    """``models/runtimes`` of the catalog (one file per runtime)."""
    return models_dir() / "runtimes"


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Runtime:
    """A runtime that executes a model: the op classes it fuses into their producer and its overheads
    (``None``: not published, the class default applies), each figure's source in ``sources``."""

    name: str
    description: str
    fused_op_classes: tuple[str, ...] = ()
    launch_overhead_us: float | None = None
    call_overhead_us: float | None = None
    sources: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ClassDefaults:
    """The defaults of one device class: its default ``runtime``, a class-typical ``compute_units``
    (used when a device declares none; 0: none), the fitted ``values`` (:data:`CLASS_FIELDS`) and, per
    value (``compute_efficiency.gemm`` for an op class), ``provenance``: which fit, on how many rows.
    ``fallback``: a class whose values fill the fields this class does not fit; ``fitted``: the class
    fields its fit chooses (a class with one or two fit rows fits its op-class efficiencies only), ``rows``:
    per value, the ids of the fit rows it was fitted on."""

    name: str
    runtime: str = ""
    compute_units: int = 0
    compute_units_source: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, str] = field(default_factory=dict)
    fallback: str = ""
    fitted: tuple[str, ...] = ()
    rows: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class DeviceDefaults:
    """The kind-to-class table, the class defaults and the runtimes of the catalog."""

    kind_classes: Mapping[str, str]
    classes: Mapping[str, ClassDefaults]
    runtimes: Mapping[str, Runtime]

    def without_fitted(self) -> DeviceDefaults:
        """These defaults with every fitted class value removed (runtimes and unit counts kept): the
        starting point of a fresh fit."""
        return replace(self, classes={k: replace(c, values={}, provenance={}, rows={})
                                      for k, c in self.classes.items()})

    def with_values(self, device_class: str, values: Mapping[str, Any], provenance: Mapping[str, str],
                    rows: Mapping[str, tuple[str, ...]] | None = None) -> DeviceDefaults:
        """These defaults with ``device_class``'s fitted values (and their provenance and rows) replaced."""
        classes = dict(self.classes)
        classes[device_class] = replace(classes[device_class], values=dict(values), provenance=dict(provenance),
                                        rows=dict(rows or {}))
        return replace(self, classes=classes)

    def class_of(self, kind: str, declared: str | None) -> str:
        """A device's class: the one it declares, else its kind's (``""``: none, kind defaults only)."""
        return declared or self.kind_classes.get(kind, "")

    def class_value(self, device_class: str, name: str) -> tuple[Any, str] | None:
        """``(value, provenance)`` of class field ``name`` (``compute_efficiency.OP`` for one op class)
        for ``device_class``, from its fallback class when it has none; ``None`` when neither gives it."""
        seen: set[str] = set()
        current = self.classes.get(device_class)
        while current is not None and current.name not in seen:
            seen.add(current.name)
            value = _lookup(current.values, name)
            if value is not None:
                where = current.provenance.get(name, "fitted")
                if current.name != device_class:
                    where = f"{current.name} class default (no {device_class} fit rows): {where}"
                return value, f"class default: {where}"
            current = self.classes.get(current.fallback) if current.fallback else None
        return None


def _lookup(values: Mapping[str, Any], name: str) -> Any:
    head, _, op_class = name.partition(".")
    value = values.get(head)
    if op_class:
        return value.get(op_class) if isinstance(value, Mapping) else None
    return value


# --------------------------------------------------------------------------- files


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _RuntimeSpec(_Strict):
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    fused_op_classes: list[Literal["elementwise", "pool", "norm", "reduce"]] = Field(default_factory=list)
    launch_overhead_us: float | None = Field(default=None, ge=0, le=1e9)
    call_overhead_us: float | None = Field(default=None, ge=0, le=1e9)
    sources: dict[str, str] = Field(min_length=1)


class _ClassSpec(_Strict):
    runtime: str = ""
    compute_units: int = Field(default=0, ge=0, le=1_000_000)
    compute_units_source: str = ""
    fallback: str = ""
    fitted: list[Literal["compute_efficiency", "gemm_tile", "launch_overhead_us", "sparse"]] = Field(default_factory=list)
    values: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, str] = Field(default_factory=dict)
    rows: dict[str, list[str]] = Field(default_factory=dict)


class _DefaultsSpec(_Strict):
    kind_classes: dict[str, str]
    classes: dict[str, _ClassSpec]


def load_runtime(path: Path) -> Runtime:
    """The runtime of one ``models/runtimes`` file; :class:`SpecError` naming the file if ill-formed."""
    data = read_yaml(path)
    try:
        spec = _RuntimeSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(str(path), exc, data) from None
    if spec.name != path.stem:
        raise SpecError(str(path), "name", spec.name, f"a runtime file is named after its runtime ({path.stem})")
    for figure in ("fused_op_classes", "launch_overhead_us", "call_overhead_us"):
        given = getattr(spec, figure)
        if given not in (None, []) and figure not in spec.sources:
            raise SpecError(str(path), f"sources.{figure}", None, "every figure of a runtime cites its source")
    return Runtime(spec.name, spec.description, tuple(spec.fused_op_classes), spec.launch_overhead_us,
                   spec.call_overhead_us, dict(spec.sources))


def load_defaults(path: Path, runtimes: Path) -> DeviceDefaults:
    """The class defaults of ``path`` with the runtimes of the folder ``runtimes``; :class:`SpecError`
    naming the file and field for an ill-formed file, an unknown fallback class or runtime."""
    data = read_yaml(path)
    try:
        spec = _DefaultsSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(str(path), exc, data) from None
    found = {p.stem: load_runtime(p) for p in sorted(runtimes.glob("*.yaml"))} if runtimes.is_dir() else {}
    classes = {}
    for name, c in spec.classes.items():
        if c.runtime and c.runtime not in found:
            raise SpecError(str(path), f"classes.{name}.runtime", c.runtime, f"runtimes: {', '.join(found) or 'none'}")
        if c.fallback and c.fallback not in spec.classes:
            raise SpecError(str(path), f"classes.{name}.fallback", c.fallback, "not a class of this file")
        unknown = sorted(set(c.values) - set(CLASS_FIELDS))
        if unknown:
            raise SpecError(str(path), f"classes.{name}.values", unknown[0], f"class fields: {', '.join(CLASS_FIELDS)}")
        classes[name] = ClassDefaults(name, c.runtime, c.compute_units, c.compute_units_source, dict(c.values),
                                      dict(c.provenance), c.fallback, tuple(c.fitted),
                                      {k: tuple(v) for k, v in c.rows.items()})
    for kind, name in spec.kind_classes.items():
        if name not in classes:
            raise SpecError(str(path), f"kind_classes.{kind}", name, "not a class of this file")
    return DeviceDefaults(dict(spec.kind_classes), classes, found)


@functools.lru_cache(maxsize=4)
def _cached(path: str, runtimes: str, stamp: tuple[float, ...]) -> DeviceDefaults:
    return load_defaults(Path(path), Path(runtimes))


def catalog_defaults() -> DeviceDefaults:
    """The catalog's defaults (:func:`defaults_path`, :func:`runtimes_dir`), read once per file version;
    with no defaults file, none (every device on its kind's defaults)."""
    path, folder = defaults_path(), runtimes_dir()
    if not path.is_file():
        return DeviceDefaults({}, {}, {})
    stamp = (path.stat().st_mtime, *(p.stat().st_mtime for p in sorted(folder.glob("*.yaml"))))
    return _cached(str(path), str(folder), stamp)


# --------------------------------------------------------------------------- resolution


def cost_path(device_class: str, runtime: str, provenance: Mapping[str, str]) -> str:
    """The path of a device's mechanism values: :data:`FITTED` when it declares one of the fitted class
    fields itself (its own measurements), :data:`DATASHEET` when it has a class and a runtime and declares
    none (the class defaults over its data sheet), :data:`KIND_DEFAULTS` otherwise (no class, or
    ``mechanisms: none``)."""
    fitted = {k for k, v in provenance.items() if v == DECLARED and k.partition(".")[0] in CLASS_FIELDS}
    if fitted:
        return FITTED
    return DATASHEET if device_class and runtime else KIND_DEFAULTS


def _class_field(defaults: DeviceDefaults, device_class: str, name: str, runtime: str) -> tuple[Any, str] | None:
    """``(value, provenance)`` of class field ``name`` for a device of ``runtime``: a field of
    :data:`PER_RUNTIME` fitted per runtime (``{RUNTIME: value}``) gives the runtime's value, one fitted
    per class (a single value) gives that; ``None`` when the class gives none."""
    if name in PER_RUNTIME:
        found = defaults.class_value(device_class, f"{name}.{runtime}")
        if found is not None:
            return found
    found = defaults.class_value(device_class, name)
    return None if found is None or isinstance(found[0], Mapping) else found


def resolve_device(values: Mapping[str, Any], declared: set[str], defaults: DeviceDefaults,
                   mechanisms: str = "defaults") -> tuple[dict[str, Any], dict[str, str]]:
    """``(values, sources)``: a device's field values (``values``, those named in ``declared`` given by
    its file) with every undeclared mechanism field filled from its runtime or its class defaults, and
    per mechanism field (``compute_efficiency.OP`` per op class) where its value came from.

    Raises ``ValueError`` naming an unknown runtime (the loader turns it into a :class:`SpecError`)."""
    out = dict(values)
    sources: dict[str, str] = {}
    device_class = defaults.class_of(str(values.get("kind", "")), values.get("device_class") or None)
    plain = mechanisms == "none"
    cls = None if plain else defaults.classes.get(device_class)
    runtime_name = values.get("runtime") or (cls.runtime if cls is not None else "")
    runtime = None
    if runtime_name and not plain:
        runtime = defaults.runtimes.get(runtime_name)
        if runtime is None:
            raise ValueError(f"runtime {runtime_name!r} is not one of {', '.join(defaults.runtimes) or 'none'}")
    out["device_class"] = device_class
    out["runtime"] = "" if plain else runtime_name
    if "compute_units" in declared:
        sources["compute_units"] = DECLARED
    elif cls is not None and cls.compute_units:
        out["compute_units"] = cls.compute_units
        sources["compute_units"] = f"class-typical ({device_class}): {cls.compute_units_source}".rstrip(": ")
    for name in MECHANISM_FIELDS:
        if name == "compute_efficiency":
            continue
        if name in declared:
            sources[name] = DECLARED
            continue
        given = getattr(runtime, name, None) if runtime is not None and name in RUNTIME_FIELDS else None
        if given not in (None, ()):
            out[name] = tuple(given) if name == "fused_op_classes" else given
            sources[name] = f"runtime {runtime_name} (models/runtimes/{runtime_name}.yaml, which cites its source)"
            continue
        found = _class_field(defaults, device_class, name, runtime_name) if cls is not None else None
        if found is not None:
            out[name], sources[name] = found
        else:
            out[name] = UNSET[name]
            sources[name] = KIND_DEFAULT
    efficiency = dict(values.get("compute_efficiency") or {})
    for op_class in efficiency:
        sources[f"compute_efficiency.{op_class}"] = DECLARED
    if cls is not None:
        fitted = {k for c in defaults.classes.values() for k in (c.values.get("compute_efficiency") or {})}
        for op_class in sorted(fitted - set(efficiency)):
            found = defaults.class_value(device_class, f"compute_efficiency.{op_class}")
            if found is not None:
                efficiency[op_class], sources[f"compute_efficiency.{op_class}"] = found
    out["compute_efficiency"] = efficiency
    return out, sources
