"""Cost models checked against published silicon measurements (``models/measurements/``).

Each measurement file holds the devices it was taken on (a platform device, given by its platform
fields or by a catalog platform and device name, or a PE-array accelerator) and rows that name their
source, the workload (a builder and its parameters, or PE-array layers), the metric and the measured
value, and whether the row is ``fit`` or ``holdout`` (:func:`split_of`: a fixed, seeded rule decided
before any fitting; held-out rows are never used to fit anything).

:func:`accuracy` runs every row through the cost path the solvers use: the workload is built with
:func:`dse.inputs.builders.build`, costed on a one-device :class:`~dse.model.platform.Platform` by the cost model
(:class:`~dse.cost.RooflineCostModel` by default) into :class:`~dse.cost.CostTables`, and the
``pipeline`` family decodes the mapping that puts every op on that device: its period, latency and
energy per item are what a front would report. The roofline model fills only that device's column
(:meth:`~dse.cost.RooflineCostModel.one_device_cells`: the same cells, rounding and checks, without
the transfer tables, which one device does not use), as the fits cost each row many times. PE-array rows go through
:func:`dse.cost.accelerator.layer_cost`, the ``multimodel`` family's per-layer model.

Metrics: ``latency_s`` (one call of the workload), ``throughput_per_s`` (``items`` per period),
``power_w`` (energy per call over the period; for a PE array the chip's power, off-chip DRAM energy
excluded as the measurements exclude it) and ``energy_j_per_item``.

Example::

    report = accuracy()
    print(report.summary())        # median and 90th-percentile error per group, fit and held out
    report.frame()                 # one row per measurement

Errors: a file, field or value that does not fit the schema raises :class:`~dse.errors.SpecError`
naming the file, the field and the value.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.cost import RooflineCostModel
from dse.cost.accelerator import layer_cost
from dse.cost.roofline import OpGroups, alike_ops
from dse.cost.tables import CostTables
from dse.errors import SpecError
from dse.inputs.builders import BUILDERS, build
from dse.inputs.catalog import find, models_dir
from dse.inputs.llm_runtime import runtime_fields
from dse.mapping.pipeline import PipelineProblem
from dse.model.accelerators import make_layer, system_from_dict
from dse.model.device_defaults import DATASHEET_FIELDS, DeviceDefaults, catalog_defaults
from dse.model.platform import Platform, load_platform, platform_from_dict
from dse.model.workload import Workload
from dse.util.files import replace_atomically
from dse.util.validation import spec_error_from_validation
from dse.util.yamlio import read_yaml

#: Seed of the fixed fit / held-out split (:func:`split_of`).
SPLIT_SEED = 28
#: A row is held out when ``sha256(f"{SPLIT_SEED}:{id}") mod SPLIT_MODULUS < SPLIT_HOLDOUT`` (2 of 5).
SPLIT_MODULUS = 5
SPLIT_HOLDOUT = 2
#: What a measurement can report.
METRICS = ("latency_s", "throughput_per_s", "power_w", "energy_j_per_item")
#: Device classes the groups are reported by.
DEVICE_CLASSES = ("gpu", "cpu", "edge", "pe_array")
#: Error bound counted by :attr:`GroupError.within`.
WITHIN = 0.30
#: Op class of each builder's workload, for the per-op-class groups.
BUILDER_OP_CLASS = {
    "gemm": "gemm", "resnet50": "cnn", "mobilenetv2": "cnn", "bert_base": "transformer", "bert_large": "transformer",
    "gcn": "gnn", "graphsage": "gnn", "gin": "gnn", "cg": "sparse", "pagerank": "sparse", "spmm": "sparse",
    "llm": "llm",
}


def measurements_dir() -> Path:
    """The catalog's ``models/measurements`` folder."""

    return models_dir() / "measurements"


def split_of(identifier: str) -> str:
    """``"holdout"`` or ``"fit"`` for a measurement id: the fixed seeded rule of :data:`SPLIT_SEED`."""
    digest = int(hashlib.sha256(f"{SPLIT_SEED}:{identifier}".encode()).hexdigest(), 16)
    return "holdout" if digest % SPLIT_MODULUS < SPLIT_HOLDOUT else "fit"


# --------------------------------------------------------------------------- schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _CatalogRef(_Strict):
    platform: str = Field(min_length=1)
    device: str = Field(min_length=1)


class _DeviceSpec(_Strict):
    id: str = Field(min_length=1)
    #: ``class`` in the files
    device_class: Literal["gpu", "cpu", "edge", "pe_array"] = Field(alias="class")
    platform: dict[str, Any] | None = None
    #: an LLM runtime (models/llm/runtimes) whose fitted mechanism fields an inline platform device takes
    llm_runtime: str | None = Field(default=None, min_length=1)
    catalog: _CatalogRef | None = None
    accelerator: dict[str, Any] | None = None
    sources: dict[str, str] = Field(min_length=1)


class _WorkloadSpec(_Strict):
    builder: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    network: str | None = None
    layers: list[tuple[str, str, int, int, int, int, int, int, int]] = Field(default_factory=list)


class _RowSpec(_Strict):
    id: str = Field(min_length=1)
    source: str = Field(min_length=1)
    device: str = Field(min_length=1)
    workload: _WorkloadSpec
    metric: Literal["latency_s", "throughput_per_s", "power_w", "energy_j_per_item"]
    items: int = Field(default=1, ge=1, le=1 << 30)
    value: float = Field(gt=0)
    split: Literal["fit", "holdout"]


class _FileSpec(_Strict):
    family: str = Field(min_length=1)
    devices: list[_DeviceSpec] = Field(min_length=1)
    measurements: list[_RowSpec] = Field(min_length=1)


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class MeasuredDevice:
    """A device measurements were taken on: a platform :class:`~dse.model.platform.Device` or a PE-array
    :class:`~dse.model.accelerators.System` of one accelerator; ``sources`` cites each figure;
    ``declared``: a platform device's fields as its file gives them (for :func:`datasheet_only`),
    ``runtime_declared``: those of them its LLM runtime gives (kept by :func:`datasheet_only`)."""

    id: str
    device_class: str
    device: Any = None
    system: Any = None
    sources: Mapping[str, str] = field(default_factory=dict)
    declared: Mapping[str, Any] = field(default_factory=dict)
    runtime_declared: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Measurement:
    """One published figure: what ran (``builder`` and ``params``, or PE-array ``layers``), where, the
    ``metric`` and its measured ``value`` (SI units), the ``split`` and the ``source`` to cite."""

    id: str
    family: str
    source: str
    device: MeasuredDevice
    metric: str
    value: float
    split: str
    items: int = 1
    builder: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    network: str | None = None
    layers: tuple[Any, ...] = ()

    @property
    def op_class(self) -> str:
        """``gemm``, ``cnn``, ``transformer``, ``gnn``, ``sparse``, ``llm`` (from the builder) or ``conv_layers``."""
        if self.layers:
            return "conv_layers"
        return BUILDER_OP_CLASS.get(self.builder or "", "other")


@dataclass(frozen=True)
class Prediction:
    """A measurement and what the cost model predicts for it (same units)."""

    measurement: Measurement
    predicted: float

    @property
    def ratio(self) -> float:
        """predicted / measured."""
        return self.predicted / self.measurement.value

    @property
    def error(self) -> float:
        """|predicted / measured - 1|."""
        return abs(self.ratio - 1.0)


@dataclass(frozen=True)
class GroupError:
    """Error statistics of one group of rows: ``part`` (fit, holdout, all), ``by`` (device_class,
    op_class, metric, all) and ``group``; median and 90th percentile of |predicted / measured - 1| and
    the share of rows within :data:`WITHIN`."""

    part: str
    by: str
    group: str
    n: int
    median: float
    p90: float
    within: float


#: The two columns of the report: each device as its file declares it, and cut back to its data sheet.
COLUMNS = ("declared", "datasheet")
COLUMN_TITLES = {"declared": "as declared", "datasheet": "data sheet only"}


@dataclass(frozen=True)
class AccuracyReport:
    """Every prediction and the per-group errors, in two columns: ``rows``/``groups`` with each device as
    declared, ``datasheet_rows``/``datasheet_groups`` with each device cut back to its data-sheet fields
    and runtime (:func:`datasheet_only`); :meth:`summary` and :meth:`frame` present them."""

    rows: tuple[Prediction, ...]
    groups: tuple[GroupError, ...]
    datasheet_rows: tuple[Prediction, ...] = ()
    datasheet_groups: tuple[GroupError, ...] = ()

    def group(self, part: str, by: str = "all", group: str = "all", column: str = "declared") -> GroupError | None:
        """The statistics of one group of ``column`` (``declared`` or ``datasheet``), or ``None`` when it
        has no rows."""
        groups = self.groups if column == "declared" else self.datasheet_groups
        return next((g for g in groups if (g.part, g.by, g.group) == (part, by, group)), None)

    def frame(self) -> Any:
        """A pandas DataFrame, one row per measurement (the columns of ``accuracy.csv``); the data-sheet
        column's prediction, ratio and error under ``*_datasheet``."""
        import pandas as pd

        sheet = {p.measurement.id: p for p in self.datasheet_rows}
        records = []
        for p in self.rows:
            d = sheet.get(p.measurement.id)
            records.append({
                "id": p.measurement.id, "family": p.measurement.family, "split": p.measurement.split,
                "device": p.measurement.device.id, "device_class": p.measurement.device.device_class,
                "op_class": p.measurement.op_class, "metric": p.measurement.metric,
                "measured": p.measurement.value, "predicted": p.predicted, "ratio": p.ratio, "error": p.error,
                "predicted_datasheet": d.predicted if d else np.nan, "ratio_datasheet": d.ratio if d else np.nan,
                "error_datasheet": d.error if d else np.nan, "source": p.measurement.source,
            })
        return pd.DataFrame(records)

    def rows_text(self) -> str:
        """Predicted vs measured, one line per row, both columns."""
        sheet = {p.measurement.id: p for p in self.datasheet_rows}
        lines = [f"{'id':58s} {'split':7s} {'metric':16s} {'measured':>11s} {'declared':>11s} {'error':>8s} "
                 f"{'datasheet':>11s} {'error':>8s}"]
        for p in self.rows:
            m = p.measurement
            line = f"{m.id[:58]:58s} {m.split:7s} {m.metric:16s} {m.value:11.4g} {p.predicted:11.4g} {_signed(p)}"
            d = sheet.get(m.id)
            lines.append(line + (f" {d.predicted:11.4g} {_signed(d)}" if d else ""))
        return "\n".join(lines)

    def summary(self) -> str:
        """Median and 90th-percentile error per group, the fitted and held-out parts apart, as declared
        and data sheet only side by side."""
        within = "<=" + format(WITHIN, ".0%")
        lines = [f"{'':8s} {'':13s} {'':16s} {'':4s} {COLUMN_TITLES['declared']:^24s}  "
                 f"{COLUMN_TITLES['datasheet']:^24s}",
                 f"{'part':8s} {'by':13s} {'group':16s} {'n':>4s} {'median':>8s} {'p90':>8s} {within:>6s}  "
                 f"{'median':>8s} {'p90':>8s} {within:>6s}"]
        for g in self.groups:
            line = f"{g.part:8s} {g.by:13s} {g.group:16s} {g.n:4d} {g.median:8.1%} {g.p90:8.1%} {g.within:6.0%}"
            d = self.group(g.part, g.by, g.group, "datasheet")
            lines.append(line + (f"  {d.median:8.1%} {d.p90:8.1%} {d.within:6.0%}" if d else ""))
        return "\n".join(lines)


def _signed(p: Prediction) -> str:
    return f"{'+' if p.ratio >= 1 else '-'}{p.error:7.1%}"


# --------------------------------------------------------------------------- loading


def _catalog_entry(path: Path, device: str) -> dict[str, Any]:
    """The fields of catalog platform ``path``'s device ``device`` as the file gives them (a ``count``
    entry's copies share one entry), without ``count``."""
    for entry in read_yaml(path).get("devices", []):
        count = int(entry.get("count", 1))
        names = [entry["name"]] if count == 1 else [f"{entry['name']}{i}" for i in range(count)]
        if device in names:
            return {k: v for k, v in entry.items() if k not in ("count", "name")}
    return {}


def _catalog_platform(name: str) -> Path | None:
    """The file of catalog platform ``name``, or None when ``name`` is no platform of the catalog's own folder
    (a path, ``..``, a link out of it: a measurement file never makes the tool read, or quote, another file)."""
    folder = (models_dir() / "platforms").resolve()
    path = find("platforms", name)
    if path is None or "/" in name or "\\" in name or path.resolve().parent != folder:
        return None
    return path


def _device(spec: _DeviceSpec, source: str, index: int) -> MeasuredDevice:
    """The :class:`MeasuredDevice` of a file's ``devices[index]``; :class:`SpecError` if ill-formed."""

    where = f"devices[{index}]"
    given = [k for k in ("platform", "catalog", "accelerator") if getattr(spec, k) is not None]
    if len(given) != 1:
        raise SpecError(source, where, spec.id, "give exactly one of platform, catalog, accelerator")
    if spec.llm_runtime is not None and spec.platform is None:
        raise SpecError(source, f"{where}.llm_runtime", spec.llm_runtime, "only an inline platform device takes a runtime")
    if spec.accelerator is not None:
        if spec.device_class != "pe_array":
            raise SpecError(source, f"{where}.class", spec.device_class, "an accelerator is class pe_array")
        system = system_from_dict({"name": spec.id, "accelerators": [{"name": spec.id, **spec.accelerator}]},
                                  f"{source}: {where}.accelerator")
        return MeasuredDevice(spec.id, spec.device_class, system=system, sources=dict(spec.sources))
    if spec.catalog is not None:
        path = _catalog_platform(spec.catalog.platform)
        if path is None:
            raise SpecError(source, f"{where}.catalog.platform", spec.catalog.platform,
                            "no such catalog platform (a name that dse catalog lists; a path is not read)")
        platform = load_platform(path)
        if spec.catalog.device not in platform.device_names:
            raise SpecError(source, f"{where}.catalog.device", spec.catalog.device,
                            f"platform {spec.catalog.platform!r} has devices {', '.join(platform.device_names)}")
        device = platform.devices[platform.index(spec.catalog.device)]
        declared = _catalog_entry(path, spec.catalog.device)
    else:
        runtime = {} if spec.llm_runtime is None else runtime_fields(spec.llm_runtime, source, f"{where}.llm_runtime")
        declared = {**runtime, **(spec.platform or {})}  # a field the device declares wins over its runtime's
        platform = platform_from_dict({"name": spec.id, "devices": [{"name": spec.id, **declared}]},
                                      f"{source}: {where}.platform")
        device = platform.devices[0]
        return MeasuredDevice(spec.id, spec.device_class, device=device, sources=dict(spec.sources),
                              declared=declared, runtime_declared=runtime)
    return MeasuredDevice(spec.id, spec.device_class, device=device, sources=dict(spec.sources), declared=declared)


def datasheet_only(device: MeasuredDevice, defaults: DeviceDefaults | None = None) -> MeasuredDevice:
    """``device`` cut back to its data-sheet fields and its runtime (:data:`DATASHEET_FIELDS`), every other
    mechanism value from ``defaults`` (the catalog's when ``None``); a PE array unchanged (its own path)."""
    if device.device is None:
        return device
    cut = {**device.runtime_declared,
           **{k: v for k, v in device.declared.items() if k in DATASHEET_FIELDS and k != "name"}}
    platform = platform_from_dict({"name": device.id, "devices": [{"name": device.device.name, **cut}]},
                                  f"data sheet of {device.id}", defaults=defaults or catalog_defaults())
    return dataclasses.replace(device, device=platform.devices[0])


def with_devices(rows: Sequence[Measurement], devices: Mapping[str, MeasuredDevice]) -> list[Measurement]:
    """``rows`` with each row's device replaced by ``devices[its id]`` where given."""
    return [dataclasses.replace(m, device=devices.get(m.device.id, m.device)) for m in rows]


def datasheet_rows(rows: Sequence[Measurement], defaults: DeviceDefaults | None = None) -> list[Measurement]:
    """``rows`` with every device cut back to its data sheet (:func:`datasheet_only`) under ``defaults``."""
    devices = {m.device.id: m.device for m in rows}
    return with_devices(rows, {k: datasheet_only(d, defaults) for k, d in devices.items()})


def load_file(path: str | Path) -> list[Measurement]:
    """The measurements of one file; :class:`SpecError` naming the file, field and value if ill-formed
    (also a row whose ``split`` is not :func:`split_of` its id, or an unknown builder or device)."""

    source = str(path)
    data = read_yaml(path)
    try:
        spec = _FileSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None
    devices = {d.id: _device(d, source, i) for i, d in enumerate(spec.devices)}
    rows = []
    for i, row in enumerate(spec.measurements):
        where = f"measurements[{i}]"
        device = devices.get(row.device)
        if device is None:
            raise SpecError(source, f"{where}.device", row.device, f"not a device of this file ({', '.join(devices)})")
        if row.split != split_of(row.id):
            raise SpecError(source, f"{where}.split", row.split,
                            f"the fixed rule (dse.runs.accuracy.split_of) puts {row.id!r} in {split_of(row.id)!r}")
        w = row.workload
        layers = tuple(make_layer(r[0], r[1], dict(zip("NKCYXRS", r[2:], strict=True)), source,
                                  f"{where}.workload.layers[{j}]") for j, r in enumerate(w.layers))
        if device.system is not None and not layers:
            raise SpecError(source, f"{where}.workload.layers", None, "a pe_array device runs layers")
        if device.device is not None:
            if w.builder not in BUILDERS:
                raise SpecError(source, f"{where}.workload.builder", w.builder,
                                f"builders: {', '.join(sorted(BUILDERS))}")
            if layers:
                raise SpecError(source, f"{where}.workload.layers", len(layers), "layers run on pe_array devices")
        rows.append(Measurement(row.id, spec.family, row.source, device, row.metric, row.value, row.split,
                                row.items, w.builder, dict(w.params), w.network, layers))
    return rows


def load_measurements(folder: str | Path | None = None) -> list[Measurement]:
    """Every measurement of every ``*.yaml`` file in ``folder`` (default :func:`measurements_dir`), in file
    order; :class:`SpecError` for a missing folder, an ill-formed file or a repeated id."""
    folder = Path(folder) if folder is not None else measurements_dir()
    if not folder.is_dir():
        raise SpecError("command line", "--measurements", str(folder), "no such folder")
    rows: list[Measurement] = []
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.yaml")):
        for m in load_file(path):
            if m.id in seen:
                raise SpecError(str(path), "measurements[].id", m.id, f"already used in {seen[m.id]}")
            seen[m.id] = str(path)
            rows.append(m)
    if not rows:
        raise SpecError("command line", "--measurements", str(folder), "holds no measurement file (*.yaml)")
    return rows


# --------------------------------------------------------------------------- prediction


def _platform_figures(m: Measurement, cost_model: Any) -> tuple[float, float, float]:
    """(period s, latency s, energy J per call) of ``m``'s workload with every op on its device, as the
    ``pipeline`` family decodes that mapping from the cost tables. The roofline model costs the device's
    column alone (:meth:`~dse.cost.RooflineCostModel.one_device_cells`: the same cells, the same checks)
    unless the device has DVFS levels; any other cost model builds its tables."""

    key = (m.builder or "", tuple(sorted(dict(m.params).items())))
    workload = _workload(*key)
    platform = Platform(m.device.id, (m.device.device,))
    model = cost_model or RooflineCostModel()
    if isinstance(model, RooflineCostModel) and len(m.device.device.dvfs) < 2:
        column = model.one_device_cells(workload, platform, _op_groups(*key))
        _check_runs(m, workload.ops[int(np.argmin(column.allowed))].name, column.allowed)
        period, latency, joules = _one_device_figures(_graph(*key), column.time, column.energy,
                                                      column.idle_power_mw)
        return period * 1e-9, latency * 1e-9, joules * 1e-12
    return _table_figures(m, model.tables(workload, platform))


def _check_runs(m: Measurement, first_refused: str, allowed: np.ndarray) -> None:
    """Raise :class:`SpecError` unless ``m``'s device can run every op (``allowed``), naming the first it cannot."""
    if not allowed.all():
        raise SpecError(m.id, "device", m.device.id,
                        f"cannot run op {first_refused!r} of the workload under the cost model")


def _table_figures(m: Measurement, tables: CostTables) -> tuple[float, float, float]:
    """(period s, latency s, energy J per call) of every op on the one device of ``tables``."""
    _check_runs(m, tables.op_names[int(np.argmin(tables.allowed[:, 0]))], tables.allowed[:, 0])
    sec = tables.seconds_per_time_unit
    if tables.levels is None:
        graph = _OpGraph.of([(int(s), int(d)) for s, d in tables.edges], tables.topological_order().tolist())
        transfer = tables.edge_transfer_time(np.arange(tables.n_edges), 0, 0)
        moved = tables.edge_transfer_energy(np.arange(tables.n_edges), 0, 0)
        period, latency, energy = _one_device_figures(graph, tables.time[:, 0], tables.energy[:, 0],
                                                      tables.idle_power_mw[0], transfer, moved)
        return period * sec, latency * sec, energy * 1e-12
    problem = PipelineProblem(tables, ("throughput", "energy", "latency"), memory=False, name=m.id)
    mapping = problem.decode(np.zeros(tables.n_ops, dtype=np.int64))
    return mapping.period * sec, mapping.latency * sec, mapping.energy * 1e-12


@functools.lru_cache(maxsize=256)
def _workload(builder: str, params: tuple[tuple[str, Any], ...]) -> Workload:
    """The workload of ``builder`` with ``params``, built once (the fits cost the same rows many times)."""
    return build(builder, **dict(params))


@functools.lru_cache(maxsize=256)
def _op_groups(builder: str, params: tuple[tuple[str, Any], ...]) -> OpGroups:
    """The ops of :func:`_workload` ``(builder, params)`` that cost alike (:func:`dse.cost.roofline.alike_ops`)."""
    return alike_ops(_workload(builder, params))


@dataclass(frozen=True)
class _OpGraph:
    """What the one-device figures read of a workload's graph: ``edges`` (producer, consumer), the ops in
    topological ``order``, per op the ``incoming`` edge indices, and the ``sinks`` (ops that feed none)."""

    edges: tuple[tuple[int, int], ...]
    order: tuple[int, ...]
    incoming: tuple[tuple[int, ...], ...]
    sinks: tuple[int, ...]

    @staticmethod
    def of(edges: Sequence[tuple[int, int]], order: Sequence[int]) -> _OpGraph:
        """The graph of the ops of topological ``order`` and ``edges``."""
        n_ops = len(order)
        incoming: list[list[int]] = [[] for _ in range(n_ops)]
        for e, (_, d) in enumerate(edges):
            incoming[d].append(e)
        sources = {s for s, _ in edges}
        return _OpGraph(tuple(edges), tuple(order), tuple(tuple(e) for e in incoming),
                        tuple(op for op in range(n_ops) if op not in sources))


@functools.lru_cache(maxsize=256)
def _graph(builder: str, params: tuple[tuple[str, Any], ...]) -> _OpGraph:
    """The :class:`_OpGraph` of :func:`_workload` ``(builder, params)``, built once."""
    workload = _workload(builder, params)
    return _OpGraph.of([(int(s), int(d)) for s, d in workload.edges], workload.topological_order())


def _one_device_figures(graph: _OpGraph, time: np.ndarray, energy: np.ndarray, idle_mw: Any,
                        transfer: np.ndarray | None = None,
                        moved: np.ndarray | None = None) -> tuple[int, int, int]:
    """(period, latency, energy) in table units of every op on one device (per op ``time`` and ``energy``,
    the device's idle power ``idle_mw``, per edge its ``transfer`` time and energy ``moved`` on the
    device, none: nothing), as the ``pipeline`` family evaluates that mapping
    (:meth:`dse.mapping.pipeline.PipelineProblem.kernel`) without building the problem: the period is
    the device's summed op time (or the same-device transfers' if larger), the latency the longest path
    through the ops and transfers, the energy the ops' and transfers' plus the idle power over the
    period."""
    edges = graph.edges
    sent = [0] * len(edges) if transfer is None else [int(t) for t in transfer]
    op_time = time.tolist()
    period = max(int(time.sum()), sum(sent))
    finish = [0] * len(op_time)
    for op in graph.order:
        arrival = max((finish[edges[e][0]] + sent[e] for e in graph.incoming[op]), default=0)
        finish[op] = arrival + op_time[op]
    latency = max(finish[op] for op in graph.sinks)
    spent = 0 if moved is None else sum(int(x) for x in moved)
    return period, latency, int(energy.sum()) + spent + idle_mw * period


def _pe_array_figures(m: Measurement) -> tuple[float, float, float]:
    """(period s, latency s, chip energy J per call) of ``m``'s layers, one after another on the PE array:
    the layers' dynamic energy plus the chip's idle power over their time (off-chip DRAM energy left
    out: the chip's measured power excludes it)."""

    system = m.device.system
    acc = system.accelerators[0]
    seconds = joules = 0.0
    for layer in m.layers:
        cost = layer_cost(layer, acc, system)
        seconds += cost.time_ns * 1e-9
        joules += (cost.energy_pj - cost.offchip_bytes * system.dram_pj_per_byte) * 1e-12
    return seconds, seconds, joules + acc.idle_w * seconds


def predict(m: Measurement, cost_model: Any = None) -> float:
    """The cost model's value of ``m.metric`` for ``m`` (see the module docstring for each metric)."""
    if m.device.system is not None:
        period, latency, energy = _pe_array_figures(m)
    else:
        period, latency, energy = _platform_figures(m, cost_model)
    if m.metric == "latency_s":
        return latency
    if m.metric == "throughput_per_s":
        return m.items / period
    if m.metric == "power_w":
        return energy / period
    return energy / m.items


# --------------------------------------------------------------------------- statistics


def group_errors(rows: Sequence[Prediction]) -> tuple[GroupError, ...]:
    """Per part (``fit``, ``holdout``, ``all``) and per grouping (``all``, ``device_class``, ``op_class``,
    ``metric``), the median and 90th percentile of the errors and the share within :data:`WITHIN`."""
    out = []
    keys = {"all": lambda p: "all", "device_class": lambda p: p.measurement.device.device_class,
            "op_class": lambda p: p.measurement.op_class, "metric": lambda p: p.measurement.metric}
    for part in ("fit", "holdout", "all"):
        chosen = [p for p in rows if part == "all" or p.measurement.split == part]
        for by, key in keys.items():
            for group in sorted({key(p) for p in chosen}):
                errors = np.asarray([p.error for p in chosen if key(p) == group])
                out.append(GroupError(part, by, group, len(errors), float(np.median(errors)),
                                      float(np.percentile(errors, 90)), float(np.mean(errors <= WITHIN))))
    return tuple(out)


def accuracy(folder: str | Path | None = None, cost_model: Any = None,
             defaults: DeviceDefaults | None = None) -> AccuracyReport:
    """Predicted vs measured for every measurement in ``folder`` (default :func:`measurements_dir`) under
    ``cost_model`` (default :class:`~dse.cost.RooflineCostModel`), with the per-group errors, each device
    as declared and cut back to its data sheet under ``defaults`` (the catalog's class defaults).

    Raises :class:`SpecError` for an ill-formed measurement file or a workload its device cannot run.
    """
    measured = load_measurements(folder)
    rows = tuple(Prediction(m, predict(m, cost_model)) for m in measured)
    sheet = tuple(Prediction(m, predict(m, cost_model)) for m in datasheet_rows(measured, defaults))
    return AccuracyReport(rows, group_errors(rows), sheet, group_errors(sheet))


# --------------------------------------------------------------------------- coverage


@dataclass(frozen=True)
class Coverage:
    """The measurement rows that cover one catalog device: rows on devices of its class and runtime."""

    platform: str
    device: str
    device_class: str
    runtime: str
    rows: tuple[Measurement, ...]

    def line(self) -> str:
        """``platform/device (class, runtime): N rows (F fit, H held out) on DEVICES`` or ``...: none``."""
        head = f"{self.platform}/{self.device} ({self.device_class or 'no class'}, {self.runtime or 'no runtime'})"
        if not self.rows:
            return f"{head}: none"
        fit = sum(m.split == "fit" for m in self.rows)
        devices = ", ".join(sorted({m.device.id for m in self.rows}))
        return f"{head}: {len(self.rows)} rows ({fit} fit, {len(self.rows) - fit} held out) on {devices}"


def coverage(rows: Sequence[Measurement], platform_names: Sequence[str] | None = None) -> list[Coverage]:
    """For every device of every catalog platform (``platform_names``, default all), the rows of ``rows``
    whose device has its class and its runtime (a device of no class is covered by none)."""
    out = []
    for name in platform_names if platform_names is not None else sorted(p.stem for p in (models_dir() / "platforms").glob("*.yaml")):
        path = find("platforms", name)
        if path is None:
            raise SpecError("command line", "platform", name, "no such catalog platform")
        for d in load_platform(path).devices:
            covering = tuple(m for m in rows if m.device.device is not None and d.device_class
                             and (m.device.device_class, m.device.device.runtime) == (d.device_class, d.runtime))
            out.append(Coverage(name, d.name, d.device_class, d.runtime, covering))
    return out


def coverage_text(rows: Sequence[Measurement]) -> str:
    """The coverage list of every catalog device (:func:`coverage`), one line each."""
    return "\n".join(["catalog devices and the measurement rows of their class and runtime:",
                      *(f"  {c.line()}" for c in coverage(rows))])


# --------------------------------------------------------------------------- outputs


def write_outputs(report: AccuracyReport, out: str | Path) -> list[Path]:
    """Write ``accuracy.csv`` (one row per measurement, both columns) and ``accuracy.png`` (log-log predicted
    vs measured per metric, a row of plots per column (as declared, data sheet only), the 1:1 line and
    +-25% bands, fitted and held-out rows marked apart) into
    ``out``; returns the paths. :class:`~dse.errors.OutputError` when a file cannot be written."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = folder / "accuracy.csv", folder / "accuracy.png"
    frame = report.frame()
    replace_atomically(csv_path, lambda tmp: frame.to_csv(tmp, index=False))
    metrics = [m for m in METRICS if (frame["metric"] == m).any()]
    columns = [("predicted", COLUMN_TITLES["declared"]), ("predicted_datasheet", COLUMN_TITLES["datasheet"])]
    fig, axes = plt.subplots(len(columns), len(metrics), figsize=(4.2 * len(metrics), 4.2 * len(columns)),
                             squeeze=False, layout="constrained")
    units = {"latency_s": "s", "throughput_per_s": "items/s", "power_w": "W", "energy_j_per_item": "J/item"}
    for row, (predicted, title) in zip(axes, columns, strict=True):
        for ax, metric in zip(row, metrics, strict=True):
            part = frame[frame["metric"] == metric]
            lo = float(min(part["measured"].min(), part[predicted].min())) / 2
            hi = float(max(part["measured"].max(), part[predicted].max())) * 2
            line = np.geomspace(lo, hi, 50)
            ax.plot(line, line, color="black", linewidth=1, label="1:1")
            ax.fill_between(line, line * 0.75, line * 1.25, color="grey", alpha=0.25, label="±25%")
            for split, marker, colour in (("fit", "o", "tab:blue"), ("holdout", "s", "tab:red")):
                chosen = part[part["split"] == split]
                ax.scatter(chosen["measured"], chosen[predicted], marker=marker, s=24, alpha=0.85,
                           facecolors="none", edgecolors=colour, label=f"{split} ({len(chosen)})")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
            for axis in (ax.xaxis, ax.yaxis):
                axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_xlabel(f"measured {metric} ({units[metric]})")
            ax.set_ylabel(f"predicted, {title} ({units[metric]})")
            ax.legend(fontsize=7)
    fig.suptitle("cost model vs published measurements")
    replace_atomically(png_path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)
    return [csv_path, png_path]
