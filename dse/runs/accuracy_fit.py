"""The fit of declared per-op-class efficiencies on the fitted part of the measurements.

:func:`fit_efficiency` chooses, for one device class and one op class, the fraction of peak that
brings the cost model closest to the measured rows of the *fit* part (``split: fit``) whose workload
is a single op of that class: the value on a grid of 0.01 steps in ``[0.30, 1.00]`` that minimizes
the median of ``|log(predicted / measured)|``, every other figure of each device as declared. Held-out
rows are never read. The chosen value is then declared on the devices of that class in
``models/measurements/`` (``compute_efficiency``), which ``tests/runs/test_accuracy.py`` checks by re-running
the fit. ``docs/accuracy.md`` describes the procedure and its result.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import math
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dse.cost import RooflineCostModel
from dse.model.device_defaults import DeviceDefaults, catalog_defaults
from dse.runs.accuracy import WITHIN, Measurement, datasheet_only, datasheet_rows, predict

#: Candidate efficiencies (fractions of peak).
GRID = tuple(round(x, 2) for x in np.arange(0.30, 1.0001, 0.01))
#: Builders whose workload is a single op of the named op class.
SINGLE_OP_BUILDERS = {"gemm": "gemm"}


def _with_efficiency(m: Measurement, op_class: str, value: float) -> Measurement:
    device = m.device.device
    declared = {**device.compute_efficiency, op_class: value}
    return dataclasses.replace(m, device=dataclasses.replace(
        m.device, device=dataclasses.replace(device, compute_efficiency=declared)))


def fit_rows(rows: Sequence[Measurement], device_class: str, op_class: str) -> list[Measurement]:
    """The rows the fit of ``(device_class, op_class)`` reads: fit part, that class, single-op workloads."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None and SINGLE_OP_BUILDERS.get(m.builder or "") == op_class
            and dict(m.params).get("tiles", 1) == 1]


def fit_efficiency(rows: Sequence[Measurement], device_class: str, op_class: str = "gemm") -> float | None:
    """The efficiency of :data:`GRID` with the smallest median ``|log(predicted / measured)|`` over
    :func:`fit_rows`; ``None`` when there are no such rows."""
    return _efficiency_on(fit_rows(rows, device_class, op_class), op_class)


#: Builders whose workload's arithmetic is almost all one op class: ResNet-50's FLOPs are 99.8%
#: convolutions, BERT-base's at 384 tokens 92% GEMMs (the builders' own op lists). A device class
#: whose fit part holds no single-op row of a class is fitted on these whole-network rows instead.
NETWORK_OP_CLASS = {"resnet50": "conv", "bert_base": "gemm", "bert_large": "gemm"}


def network_fit_rows(rows: Sequence[Measurement], device_class: str, op_class: str) -> list[Measurement]:
    """The rows :func:`fit_network_efficiency` reads: fit part, that class, whole networks whose
    arithmetic is mostly ``op_class`` (:data:`NETWORK_OP_CLASS`)."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None and NETWORK_OP_CLASS.get(m.builder or "") == op_class]


def fit_network_efficiency(rows: Sequence[Measurement], device_class: str, op_class: str) -> float | None:
    """The efficiency of :data:`GRID` for ``op_class`` with the smallest median
    ``|log(predicted / measured)|`` over :func:`network_fit_rows` (every other op class as declared);
    ``None`` when there are no such rows."""
    return _efficiency_on(network_fit_rows(rows, device_class, op_class), op_class)


@dataclass(frozen=True)
class _Session:
    """The cost model the fits predict with and a memo of their predictions, keyed by row, device figures,
    the field a grid search varies and its value (a fit re-costs the same row under the same figures
    many times)."""

    cost_model: Any
    memo: dict[tuple[Hashable, ...], float] = field(default_factory=dict)


_SESSION: contextvars.ContextVar[_Session | None] = contextvars.ContextVar("fit_session", default=None)


@contextlib.contextmanager
def _session(cost_model: Any) -> Iterator[None]:
    """Predictions inside the block use ``cost_model`` and are memoised (one memo per outermost block)."""
    outer = _SESSION.get()
    token = _SESSION.set(outer if outer is not None and outer.cost_model == cost_model else _Session(cost_model))
    try:
        yield
    finally:
        _SESSION.reset(token)


def _figures_key(m: Measurement) -> tuple[str, str]:
    """``m``'s id and the figures of its device the cost model reads (not their provenance or sources)."""
    device = m.device.device if m.device.device is not None else m.device.system
    figures = {k: v for k, v in vars(device).items() if k not in ("provenance", "sources")}
    return m.id, repr(sorted(figures.items()))


def _predicted(m: Measurement, variant: Callable[[Measurement, float], Measurement], value: float,
               key: tuple[Hashable, ...]) -> float:
    """:func:`predict` of ``variant(m, value)`` under the current session's cost model, memoised by ``key``
    (what determines the variant but its value: ``m``'s figures and the varied field) and ``value``;
    else under the default model."""
    current = _SESSION.get()
    if current is None:
        return predict(variant(m, value))
    memo_key = (*key, value)
    if memo_key not in current.memo:
        current.memo[memo_key] = predict(variant(m, value), current.cost_model)
    return current.memo[memo_key]


def _grid_minimum(grid: Sequence[float], chosen: Sequence[Measurement],
                  variant: Callable[[Measurement, float], Measurement],
                  aggregate: Callable[[list[float]], Any], varied: Hashable) -> float:
    """The value of ``grid`` whose ``aggregate`` (``np.median`` or ``np.mean``) of
    ``|log(predicted / measured)|`` over ``chosen``, each row costed as ``variant(row, value)``, is smallest;
    the first such value (a later one must be better by more than 1e-12). ``varied`` names what
    ``variant`` sets but the value (the field, and any field it fixes): it keys the memo of predictions."""
    keys = [(*_figures_key(m), varied) for m in chosen]
    best, best_score = grid[0], math.inf
    for value in grid:
        score = float(aggregate([abs(math.log(_predicted(m, variant, value, key) / m.value))
                                 for m, key in zip(chosen, keys, strict=True)]))
        if score < best_score - 1e-12:
            best, best_score = value, score
    return best


def _efficiency_on(chosen: Sequence[Measurement], op_class: str) -> float | None:
    if not chosen:
        return None
    return _grid_minimum(GRID, chosen, lambda m, value: _with_efficiency(m, op_class, value), np.median,
                         ("compute_efficiency", op_class))


#: Candidate global-buffer bandwidths of a PE array, GB/s: 0.5 to 50 in 0.1 steps.
BUFFER_BW_GRID = tuple(round(x * 0.1, 1) for x in range(5, 501))


def _with_accelerator(m: Measurement, **fields: float) -> Measurement:
    system = m.device.system
    acc = dataclasses.replace(system.accelerators[0], **fields)
    return dataclasses.replace(m, device=dataclasses.replace(
        m.device, system=dataclasses.replace(system, accelerators=(acc,))))


def fit_buffer_bandwidth(rows: Sequence[Measurement], device_id: str) -> float | None:
    """The global-buffer bandwidth of :data:`BUFFER_BW_GRID` with the smallest **mean**
    ``|log(predicted / measured)|`` over the fit part's ``latency_s`` rows of the PE array ``device_id``
    (the median is flat over a wide range: the median row is not buffer-bound); ``None`` when there are
    no such rows. Latency does not depend on the idle power, so this fit comes first."""
    chosen = [m for m in rows if m.split == "fit" and m.metric == "latency_s" and m.device.id == device_id
              and m.device.system is not None]
    if not chosen:
        return None
    return _grid_minimum(BUFFER_BW_GRID, chosen, lambda m, value: _with_accelerator(m, buffer_bw_gbps=value),
                         np.mean, "buffer_bw_gbps")


#: Candidate idle (leakage and clock) powers of a PE array, W: 0 to 1 W in 1 mW steps.
IDLE_GRID = tuple(round(x * 1e-3, 3) for x in range(0, 1001))


def fit_idle_power(rows: Sequence[Measurement], device_id: str) -> float | None:
    """The idle power of :data:`IDLE_GRID` with the smallest median ``|log(predicted / measured)|`` over the
    fit part's ``power_w`` rows of the PE array ``device_id`` (every other figure as declared, the energy
    per access of :mod:`dse.cost.pe_energy` included); ``None`` when there are no such rows."""
    chosen = [m for m in rows if m.split == "fit" and m.metric == "power_w" and m.device.id == device_id
              and m.device.system is not None]
    if not chosen:
        return None
    return _grid_minimum(IDLE_GRID, chosen, lambda m, value: _with_accelerator(m, idle_w=value), np.median,
                         "idle_w")



#: Candidate skew sensitivities (slow-down per unit of row-length CV): 0 to 2 in 0.05 steps.
SKEW_GRID = tuple(round(x * 0.05, 2) for x in range(0, 41))
#: Candidate sparse bandwidth efficiencies (fractions of peak bandwidth): 0.10 to 1.00 in 0.01 steps.
SPARSE_BW_GRID = tuple(round(x * 0.01, 2) for x in range(10, 101))


def _with_device(m: Measurement, **fields: float) -> Measurement:
    return dataclasses.replace(m, device=dataclasses.replace(
        m.device, device=dataclasses.replace(m.device.device, **fields)))


def sparse_fit_rows(rows: Sequence[Measurement], device_class: str) -> list[Measurement]:
    """The rows :func:`fit_sparse` reads: fit part, that class, single sparse products."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None and m.builder == "spmm"]


def _best(chosen: Sequence[Measurement], field_name: str, grid: Sequence[float], **fixed: float) -> float:
    """The value of ``field_name`` on ``grid`` with the smallest mean error, the ``fixed`` fields set."""
    return _grid_minimum(grid, chosen, lambda m, value: _with_device(m, **fixed, **{field_name: value}), np.mean,
                         (field_name, *sorted(fixed.items())))


def fit_sparse(rows: Sequence[Measurement], device_class: str,
               default_sensitivity: float = 1.2) -> tuple[float, float] | None:
    """``(sparse_bandwidth_efficiency, skew_sensitivity)`` for ``device_class`` on :func:`sparse_fit_rows`
    by coordinate descent on the **mean** ``|log(predicted / measured)|`` (with two figures fitted on a
    handful of rows, the median is flat: it ignores the one strongly skewed row that alone sets the
    sensitivity) (every other figure as declared,
    the cache reuse included): the efficiency on :data:`SPARSE_BW_GRID` with the sensitivity at
    ``default_sensitivity`` (the kind's), then the sensitivity on :data:`SKEW_GRID`, then the efficiency
    again; ``None`` when there are no such rows."""
    chosen = sparse_fit_rows(rows, device_class)
    if not chosen:
        return None
    efficiency = _best(chosen, "sparse_bandwidth_efficiency", SPARSE_BW_GRID, skew_sensitivity=default_sensitivity)
    sensitivity = _best(chosen, "skew_sensitivity", SKEW_GRID, sparse_bandwidth_efficiency=efficiency)
    efficiency = _best(chosen, "sparse_bandwidth_efficiency", SPARSE_BW_GRID, skew_sensitivity=sensitivity)
    return efficiency, sensitivity


#: Candidate output-tile edges of tiled GEMMs (0: no tile quantization): the threadblock tile edges of
#: CUTLASS's GEMM configurations (64, 128, 256). Cross-validation on the fit rows preferred it to
#: :data:`FINE_TILE_GRID` (``docs/accuracy.md``).
TILE_GRID = (0, 64, 128, 256)
#: The finer grid the class fit used before (96 and 192 are not power-of-two tile edges).
FINE_TILE_GRID = (0, 32, 64, 96, 128, 192, 256)


def tile_fit_rows(rows: Sequence[Measurement], device_class: str) -> list[Measurement]:
    """The rows :func:`fit_gemm_tile` reads: fit part, that class, devices that declare their compute
    units, workloads with tiled ops (every builder but the sparse product)."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None and m.device.device.compute_units > 0 and m.builder != "spmm"]


def fit_gemm_tile(rows: Sequence[Measurement], device_class: str, grid: Sequence[int] = TILE_GRID) -> int | None:
    """The tile edge of ``grid`` (default :data:`TILE_GRID`) with the smallest mean ``|log(predicted /
    measured)|`` over :func:`tile_fit_rows` (every other figure as declared); ``None`` when there are no
    such rows."""
    chosen = tile_fit_rows(rows, device_class)
    if not chosen:
        return None
    return int(_best(chosen, "gemm_tile", grid))


#: Candidate per-kernel launch overheads, us: 0 to 50 in 1 us steps.
LAUNCH_GRID = tuple(float(x) for x in range(0, 51))


def launch_fit_rows(rows: Sequence[Measurement], device_class: str) -> list[Measurement]:
    """The rows :func:`fit_launch_overhead` reads: fit part, that class, platform devices."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None]


def fit_launch_overhead(rows: Sequence[Measurement], device_class: str) -> float | None:
    """The per-kernel launch overhead of :data:`LAUNCH_GRID` (us) with the smallest median
    ``|log(predicted / measured)|`` over :func:`launch_fit_rows` (every other figure as it is);
    ``None`` when there are no such rows."""
    chosen = launch_fit_rows(rows, device_class)
    if not chosen:
        return None
    return _grid_minimum(LAUNCH_GRID, chosen, lambda m, value: _with_device(m, launch_overhead_us=value), np.median,
                         "launch_overhead_us")


# --------------------------------------------------------------------------- class defaults

#: Most rounds of the alternating fits of one class (they stop earlier when no value moves).
MAX_ROUNDS = 8


@dataclass(frozen=True)
class FitStructure:
    """The structural choices of the class fit (not values: which values there are, and which mechanisms
    the cost model applies while fitting): ``launch_per_runtime`` (one launch overhead per class and
    runtime, else one per class), ``tile_grid`` (the candidate tile edges of :func:`fit_gemm_tile`) and
    ``split_k`` (the op classes the cost model splits K of, :mod:`dse.cost.mechanisms.tiling`). They are chosen by
    :func:`cross_validate` on the fit rows only (``docs/accuracy.md`` gives the figures)."""

    launch_per_runtime: bool = True
    tile_grid: tuple[int, ...] = TILE_GRID
    split_k: tuple[str, ...] = ("gemm", "conv")

    def cost_model(self) -> RooflineCostModel:
        """The cost model the fit and its predictions use under this structure."""
        return RooflineCostModel(split_k=self.split_k)

    def label(self) -> str:
        """A short name: ``launch per runtime, tiles 0/32/.../256, split-K on gemm/conv``."""
        launch = "launch per runtime" if self.launch_per_runtime else "launch per class"
        tiles = "tiles " + "/".join(str(t) for t in self.tile_grid)
        return f"{launch}, {tiles}, split-K on {'/'.join(self.split_k) or 'nothing'}"


#: The structure of the committed class defaults, chosen by :func:`cross_validate` (``docs/accuracy.md``):
#: launch overhead per class and runtime, :data:`TILE_GRID`, split-K on GEMMs (the cost model's default).
CHOSEN_STRUCTURE = FitStructure(split_k=RooflineCostModel().split_k)


@dataclass(frozen=True)
class ClassFit:
    """The fitted defaults of one device class: ``values`` (as ``models/defaults/device_classes.yaml``
    holds them), and per value (``compute_efficiency.OP`` per op class) the fit that chose it and the ids
    of the fit rows it read."""

    device_class: str
    values: Mapping[str, Any]
    fits: Mapping[str, str]
    rows: Mapping[str, tuple[str, ...]]

    def provenance(self) -> dict[str, str]:
        """Per value, ``"fitted on N fit rows (<fit>)"``: what ``dse catalog --details`` prints."""
        return {k: f"fitted on {len(self.rows[k])} fit rows (dse.runs.accuracy_fit.{self.fits[k]})" for k in self.fits}


def _efficiency_fit(rows: Sequence[Measurement], device_class: str,
                    op_class: str) -> tuple[float | None, str, list[Measurement]]:
    """The efficiency of ``op_class`` for the class: on its single-op rows where the fit part holds any,
    else on its whole-network rows (:data:`NETWORK_OP_CLASS`)."""
    single = fit_rows(rows, device_class, op_class)
    if single:
        return (_efficiency_on(single, op_class), f"fit_efficiency({device_class}, {op_class})", single)
    network = network_fit_rows(rows, device_class, op_class)
    return (_efficiency_on(network, op_class), f"fit_network_efficiency({device_class}, {op_class})", network)


def _fit_one_class(rows: Sequence[Measurement], defaults: DeviceDefaults, device_class: str,
                   structure: FitStructure) -> ClassFit:
    """Alternate the fits of one class on its devices cut back to their data sheets until no value moves
    (at most :data:`MAX_ROUNDS` rounds): compute efficiency per op class, tile edge, launch overhead
    (per runtime or per class, as ``structure`` says); then the sparse figures."""
    values: dict[str, Any] = {}
    fits: dict[str, str] = {}
    used: dict[str, tuple[str, ...]] = {}
    fitted = defaults.classes[device_class].fitted

    def current() -> list[Measurement]:
        return datasheet_rows(rows, defaults.with_values(device_class, values, {k: "being fitted" for k in fits}))

    def record(name: str, value: Any, fit: str, chosen: Sequence[Measurement]) -> bool:
        key = name.split(".")[0]
        if value is None:
            return False
        if "." in name:
            old = values.get(key, {}).get(name.split(".")[1])
            values[key] = {**values.get(key, {}), name.split(".")[1]: float(value)}
        else:
            old = values.get(key)
            values[key] = value if isinstance(value, int) else float(value)
        fits[name], used[name] = fit, tuple(m.id for m in chosen)
        return bool(old != value)

    for _ in range(MAX_ROUNDS):
        moved = False
        for op_class in sorted(set(SINGLE_OP_BUILDERS.values()) | set(NETWORK_OP_CLASS.values())):
            if "compute_efficiency" in fitted:
                value, fit, chosen = _efficiency_fit(current(), device_class, op_class)
                moved |= record(f"compute_efficiency.{op_class}", value, fit, chosen)
        now = current()
        if "gemm_tile" in fitted and tile_fit_rows(now, device_class):
            moved |= record("gemm_tile", fit_gemm_tile(now, device_class, structure.tile_grid),
                            f"fit_gemm_tile({device_class})", tile_fit_rows(now, device_class))
        if "launch_overhead_us" in fitted:
            now = current()
            if structure.launch_per_runtime:
                for runtime in sorted({m.device.device.runtime for m in launch_fit_rows(now, device_class)}):
                    mine = [m for m in now if m.device.device is not None and m.device.device.runtime == runtime]
                    moved |= record(f"launch_overhead_us.{runtime}", fit_launch_overhead(mine, device_class),
                                    f"fit_launch_overhead({device_class}, {runtime})",
                                    launch_fit_rows(mine, device_class))
            else:
                moved |= record("launch_overhead_us", fit_launch_overhead(now, device_class),
                                f"fit_launch_overhead({device_class})", launch_fit_rows(now, device_class))
        if not moved:
            break
    now = current()
    sparse = fit_sparse(now, device_class) if "sparse" in fitted else None
    if sparse is not None:
        record("sparse_bandwidth_efficiency", sparse[0], f"fit_sparse({device_class})", sparse_fit_rows(now, device_class))
        record("skew_sensitivity", sparse[1], f"fit_sparse({device_class})", sparse_fit_rows(now, device_class))
    return ClassFit(device_class, values, fits, used)


def class_fit_part(rows: Sequence[Measurement]) -> list[Measurement]:
    """The rows the class defaults are fitted on: the fit part, less the rows of devices run by an LLM
    runtime (``llm_runtime``). Those take their GEMM efficiency per precision, attention bandwidth and
    launch overhead from their runtime's own fit (:func:`dse.runs.llm_fit.fit_llm_runtime`), made on the
    LLM fit rows given the class defaults; fitting the class (its tile edge above all) on the same rows
    would make each fit depend on the other's values. The class fit comes first, the runtime's second."""
    return [m for m in rows if m.split == "fit" and not m.device.runtime_declared]


def fit_class_defaults(rows: Sequence[Measurement], defaults: DeviceDefaults | None = None,
                       structure: FitStructure = CHOSEN_STRUCTURE) -> dict[str, ClassFit]:
    """The class defaults fitted afresh on the fit part of ``rows``: every measurement device cut back to
    its data-sheet fields and runtime (:func:`dse.runs.accuracy.datasheet_only`), each class of
    ``defaults`` (the catalog's; its fitted values are ignored) fitted in turn under ``structure``, a
    class with a fallback after the class it falls back on, whose fitted values it uses meanwhile.
    Held-out rows are never read, nor the rows of an LLM runtime's devices (:func:`class_fit_part`)."""
    rows = class_fit_part(rows)
    base = (defaults or catalog_defaults()).without_fitted()
    order = sorted(base.classes, key=lambda c: (bool(base.classes[c].fallback), c))
    fitted: dict[str, ClassFit] = {}
    with _session(structure.cost_model()):
        for device_class in order:
            result = _fit_one_class(rows, base, device_class, structure)
            fitted[device_class] = result
            base = base.with_values(device_class, result.values, result.provenance(), result.rows)
    return fitted


def with_fitted(defaults: DeviceDefaults, fitted: Mapping[str, ClassFit]) -> DeviceDefaults:
    """``defaults`` with each class's values replaced by ``fitted``'s (the classes it has no fit for emptied)."""
    base = defaults.without_fitted()
    for name, fit in fitted.items():
        base = base.with_values(name, fit.values, fit.provenance(), fit.rows)
    return base


# --------------------------------------------------------------------------- cross-validation


@dataclass(frozen=True)
class CrossValidation:
    """Leave-one-out errors of one :class:`FitStructure`: per fit row of a class with defaults, its id and
    ``|predicted / measured - 1|`` when the class defaults are fitted on every other fit row and the row's
    device is cut back to its data sheet; with their median, 90th percentile and share within
    :data:`dse.runs.accuracy.WITHIN`."""

    structure: FitStructure
    errors: Mapping[str, float]

    @property
    def median(self) -> float:
        return float(np.median(list(self.errors.values())))

    @property
    def p90(self) -> float:
        return float(np.percentile(list(self.errors.values()), 90))

    @property
    def within(self) -> float:
        return float(np.mean([e <= WITHIN for e in self.errors.values()]))

    def line(self) -> str:
        """``label: n rows, median m, p90 p, within w``."""
        return (f"{self.structure.label()}: {len(self.errors)} rows, median {self.median:.1%}, "
                f"p90 {self.p90:.1%}, within {WITHIN:.0%} {self.within:.0%}")


def cv_rows(rows: Sequence[Measurement], defaults: DeviceDefaults | None = None) -> list[Measurement]:
    """The rows :func:`cross_validate` leaves out in turn: those the class defaults are fitted on
    (:func:`class_fit_part`), platform devices of a class that has class defaults."""
    classes = (defaults or catalog_defaults()).classes
    return [m for m in class_fit_part(rows) if m.device.device is not None and m.device.device_class in classes]


def cv_folds(rows: Sequence[Measurement], folds: int | None) -> list[list[Measurement]]:
    """The folds of :func:`cross_validate`: each row its own (``folds`` ``None``: leave-one-out), else
    ``folds`` folds by a fixed rule, ``sha256(id) mod folds`` (as :func:`dse.runs.accuracy.split_of`)."""
    if folds is None:
        return [[m] for m in rows]
    out: list[list[Measurement]] = [[] for _ in range(folds)]
    for m in rows:
        out[int(hashlib.sha256(m.id.encode()).hexdigest(), 16) % folds].append(m)
    return [f for f in out if f]


def cross_validate(rows: Sequence[Measurement], structure: FitStructure, defaults: DeviceDefaults | None = None,
                   folds: int | None = None) -> CrossValidation:
    """Cross-validation of ``structure`` over the fit rows (:func:`cv_rows`), leave-one-out by default
    (``folds``: k folds, :func:`cv_folds`): for each fold, the class defaults fitted
    (:func:`fit_class_defaults`) on the fit part of ``rows`` without it, then each of its rows predicted
    with its device cut back to its data sheet under those defaults. Held-out rows are never read: only
    fit rows are passed on."""
    base = defaults or catalog_defaults()
    fit_part = [m for m in rows if m.split == "fit"]
    errors: dict[str, float] = {}
    model = structure.cost_model()
    with _session(model):
        for fold in cv_folds(cv_rows(fit_part, base), folds):
            left = {m.id for m in fold}
            fitted = with_fitted(base, fit_class_defaults([m for m in fit_part if m.id not in left], base, structure))
            for m in fold:
                cut = dataclasses.replace(m, device=datasheet_only(m.device, fitted))
                errors[m.id] = abs(predict(cut, model) / m.value - 1.0)
    return CrossValidation(structure, errors)


def _flow(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return f"{float(value):g}" if isinstance(value, float) else str(value)


def class_defaults_yaml(defaults: DeviceDefaults, fitted: Mapping[str, ClassFit], header: str) -> str:
    """The text of ``models/defaults/device_classes.yaml`` with ``fitted``'s values (``header``: its
    leading comment lines), every value with the fit that chose it and the ids of its fit rows."""
    lines = [*header.rstrip().splitlines(), f"kind_classes: {_flow(defaults.kind_classes)}", "classes:"]
    for name, cls in defaults.classes.items():
        lines.append(f"  {name}:")
        lines += [f"    runtime: {cls.runtime}"] if cls.runtime else []
        lines += [f"    fallback: {cls.fallback}"] if cls.fallback else []
        if cls.compute_units:
            lines += [f"    compute_units: {cls.compute_units}", f"    compute_units_source: \"{cls.compute_units_source}\""]
        lines.append(f"    fitted: {_flow(cls.fitted)}")
        fit = fitted.get(name)
        if fit is None or not fit.values:
            continue
        values = {k: (int(v) if k == "gemm_tile" else v) for k, v in fit.values.items()}
        lines.append("    values:")
        lines += [f"      {k}: {_flow(v)}" for k, v in values.items()]
        lines.append("    provenance:")
        lines += [f"      {k}: \"{v}\"" for k, v in sorted(fit.provenance().items())]
        lines.append("    rows:")
        for k, ids in sorted(fit.rows.items()):
            lines.append(f"      {k}:")
            lines += [f"        - {i}" for i in ids]
    return "\n".join(lines) + "\n"
