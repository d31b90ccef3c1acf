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
energy per item are what a front would report. PE-array rows go through
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

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.cost import RooflineCostModel
from dse.cost.accelerator import layer_cost
from dse.errors import SpecError
from dse.inputs.builders import BUILDERS, build
from dse.inputs.catalog import find, models_dir
from dse.mapping.pipeline import PipelineProblem
from dse.model.accelerators import make_layer, system_from_dict
from dse.model.platform import Platform, load_platform, platform_from_dict
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
    "gemm": "gemm", "resnet50": "cnn", "mobilenetv2": "cnn", "bert_base": "transformer",
    "gcn": "gnn", "graphsage": "gnn", "gin": "gnn", "cg": "sparse", "pagerank": "sparse", "spmm": "sparse",
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
    :class:`~dse.model.accelerators.System` of one accelerator; ``sources`` cites each figure."""

    id: str
    device_class: str
    device: Any = None
    system: Any = None
    sources: Mapping[str, str] = field(default_factory=dict)


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
        """``gemm``, ``cnn``, ``transformer``, ``gnn``, ``sparse`` (from the builder) or ``conv_layers``."""
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


@dataclass(frozen=True)
class AccuracyReport:
    """Every prediction and the per-group errors; :meth:`summary` and :meth:`frame` present them."""

    rows: tuple[Prediction, ...]
    groups: tuple[GroupError, ...]

    def group(self, part: str, by: str = "all", group: str = "all") -> GroupError | None:
        """The statistics of one group, or ``None`` when it has no rows."""
        return next((g for g in self.groups if (g.part, g.by, g.group) == (part, by, group)), None)

    def frame(self) -> Any:
        """A pandas DataFrame, one row per measurement (the columns of ``accuracy.csv``)."""
        import pandas as pd

        return pd.DataFrame([{
            "id": p.measurement.id, "family": p.measurement.family, "split": p.measurement.split,
            "device": p.measurement.device.id, "device_class": p.measurement.device.device_class,
            "op_class": p.measurement.op_class, "metric": p.measurement.metric,
            "measured": p.measurement.value, "predicted": p.predicted, "ratio": p.ratio, "error": p.error,
            "source": p.measurement.source,
        } for p in self.rows])

    def rows_text(self) -> str:
        """Predicted vs measured, one line per row."""
        lines = [f"{'id':58s} {'split':7s} {'metric':16s} {'measured':>11s} {'predicted':>11s} {'error':>8s}"]
        for p in self.rows:
            m = p.measurement
            sign = "+" if p.ratio >= 1 else "-"
            lines.append(f"{m.id[:58]:58s} {m.split:7s} {m.metric:16s} {m.value:11.4g} {p.predicted:11.4g} "
                         f"{sign}{p.error:7.1%}")
        return "\n".join(lines)

    def summary(self) -> str:
        """Median and 90th-percentile error per group, the fitted and held-out parts apart."""
        lines = [f"{'part':8s} {'by':13s} {'group':16s} {'n':>4s} {'median':>8s} {'p90':>8s} "
                 f"{'<=' + format(WITHIN, '.0%'):>6s}"]
        for g in self.groups:
            lines.append(f"{g.part:8s} {g.by:13s} {g.group:16s} {g.n:4d} {g.median:8.1%} {g.p90:8.1%} "
                         f"{g.within:6.0%}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- loading


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
    else:
        platform = platform_from_dict({"name": spec.id, "devices": [{"name": spec.id, **(spec.platform or {})}]},
                                      f"{source}: {where}.platform")
        device = platform.devices[0]
    return MeasuredDevice(spec.id, spec.device_class, device=device, sources=dict(spec.sources))


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
    ``pipeline`` family decodes that mapping from the cost tables."""

    workload = build(m.builder or "", **dict(m.params))
    platform = Platform(m.device.id, (m.device.device,))
    tables = (cost_model or RooflineCostModel()).tables(workload, platform)
    if not tables.allowed.all():
        op = tables.op_names[int(np.argmin(tables.allowed[:, 0]))]
        raise SpecError(m.id, "device", m.device.id, f"cannot run op {op!r} of the workload under the cost model")
    problem = PipelineProblem(tables, ("throughput", "energy", "latency"), memory=False, name=m.id)
    mapping = problem.decode(np.zeros(tables.n_ops, dtype=np.int64))
    sec = tables.seconds_per_time_unit
    return mapping.period * sec, mapping.latency * sec, mapping.energy * 1e-12


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


def accuracy(folder: str | Path | None = None, cost_model: Any = None) -> AccuracyReport:
    """Predicted vs measured for every measurement in ``folder`` (default :func:`measurements_dir`) under
    ``cost_model`` (default :class:`~dse.cost.RooflineCostModel`), with the per-group errors.

    Raises :class:`SpecError` for an ill-formed measurement file or a workload its device cannot run.
    """
    rows = tuple(Prediction(m, predict(m, cost_model)) for m in load_measurements(folder))
    return AccuracyReport(rows, group_errors(rows))


# --------------------------------------------------------------------------- outputs


def write_outputs(report: AccuracyReport, out: str | Path) -> list[Path]:
    """Write ``accuracy.csv`` (one row per measurement) and ``accuracy.png`` (log-log predicted vs
    measured per metric, the 1:1 line and +-25% bands, fitted and held-out rows marked apart) into
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
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 4.2), squeeze=False,
                             layout="constrained")
    units = {"latency_s": "s", "throughput_per_s": "items/s", "power_w": "W", "energy_j_per_item": "J/item"}
    for ax, metric in zip(axes[0], metrics, strict=True):
        part = frame[frame["metric"] == metric]
        lo = float(min(part["measured"].min(), part["predicted"].min())) / 2
        hi = float(max(part["measured"].max(), part["predicted"].max())) * 2
        line = np.geomspace(lo, hi, 50)
        ax.plot(line, line, color="black", linewidth=1, label="1:1")
        ax.fill_between(line, line * 0.75, line * 1.25, color="grey", alpha=0.25, label="±25%")
        for split, marker, colour in (("fit", "o", "tab:blue"), ("holdout", "s", "tab:red")):
            chosen = part[part["split"] == split]
            ax.scatter(chosen["measured"], chosen["predicted"], marker=marker, s=24, alpha=0.85,
                       facecolors="none", edgecolors=colour, label=f"{split} ({len(chosen)})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(f"measured {metric} ({units[metric]})")
        ax.set_ylabel(f"predicted ({units[metric]})")
        ax.legend(fontsize=7)
    fig.suptitle("cost model vs published measurements")
    replace_atomically(png_path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)
    return [csv_path, png_path]
