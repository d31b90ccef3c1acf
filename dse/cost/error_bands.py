"""The cost model's measured error carried into fronts: error bands and the points that survive them.

Each device class's **held-out median error** (``dse accuracy``, :mod:`dse.runs.accuracy`; the part of the
measurements never used to fit anything) is a relative error ``r`` on every quantity the cost model
predicts for a device of that class. The error follows the **path** of the device's mechanism values
(:func:`dse.model.device_defaults.cost_path`): a device that declares its own fitted figures (or a
calibrated platform) takes the "as declared" column's median, a device declared by its data sheet alone
the "data sheet only" column's, a device on the kind defaults the median of all rows
(:func:`device_band`, :func:`problem_bands`; ``front.json`` lists each device's band under
``error_bands``). A prediction ``v`` with relative error ``r`` (``|v / true - 1| <= r``)
puts the true value in ``[v / (1 + r), v / (1 - r)]`` (:func:`band`); a point on a front takes the
largest ``r`` of the devices it may run on (:func:`relative_error`).

With the bands, one point *certainly* dominates another when its worst case is at least as good as the
other's best case in every objective and better in one (:func:`certainly_dominates`), and *possibly*
dominates it when its best case is (:func:`possibly_dominates`). :func:`robust_indices` keeps the points
no other point certainly dominates (the points that may be Pareto-optimal given the model's error);
:func:`stable_indices` keeps the points no other point possibly dominates (the points that stay
Pareto-optimal whatever the true values within the bands). ``ParetoSet.robust`` and
``ParetoSet.stable`` apply them to a front and its baselines; ``front.csv`` carries ``<column>_lo`` and
``<column>_hi`` per objective (:func:`band_columns`), which ``dse report`` and the static plot draw.

Example (``docs/accuracy.md`` works it by hand)::

    band(10.0, 0.25)        # (8.0, 13.33...)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dse.model.device_defaults import DATASHEET, FITTED

#: Held-out median of ``|predicted / measured - 1|`` per device class, from ``dse accuracy --quiet``, per
#: path of the devices' mechanism values (:func:`dse.model.device_defaults.cost_path`): ``fitted`` (the
#: "as declared" column: the measured devices with their own declared figures) and ``data sheet only``
#: (the devices cut back to their data sheets, the class defaults for the rest).
#: ``tests/cost/test_error_bands.py`` re-measures both and checks these values.
HELD_OUT_MEDIAN_ERROR: Mapping[str, float] = {"gpu": 0.096, "edge": 0.293, "pe_array": 0.186, "cpu": 0.087}
HELD_OUT_DATASHEET_MEDIAN_ERROR: Mapping[str, float] = {"gpu": 0.096, "edge": 0.293, "pe_array": 0.186,
                                                        "cpu": 0.087}
#: The held-out median over every row (as declared): the band of a class with no held-out row, and of a
#: device on the kind defaults alone (no class, or ``mechanisms: none``).
HELD_OUT_MEDIAN_ALL = 0.097
#: Device class of each platform device kind (:data:`dse.model.platform.DEVICE_KINDS`) for a device that
#: names none; kinds not listed take :data:`HELD_OUT_MEDIAN_ALL`.
KIND_CLASS: Mapping[str, str] = {"gpu": "gpu", "tensorcore": "gpu", "npu": "pe_array", "dla": "pe_array",
                                 "cpu": "cpu"}
#: The per-class medians of each path (:data:`dse.model.device_defaults.FITTED`, ``DATASHEET``).
PATH_MEDIANS: Mapping[str, Mapping[str, float]] = {FITTED: HELD_OUT_MEDIAN_ERROR,
                                                   DATASHEET: HELD_OUT_DATASHEET_MEDIAN_ERROR}


@dataclass(frozen=True)
class ErrorBand:
    """The relative error of one device's predictions: ``relative_error``, the device's ``device_class``
    (``""``: none), the ``path`` of its mechanism values (``fitted``, ``data sheet only``, ``kind
    defaults``) and ``basis``, which held-out median it is (what a report prints)."""

    device: str
    device_class: str
    path: str
    relative_error: float
    basis: str

    def as_dict(self) -> dict[str, object]:
        """The band as front.json holds it."""
        return {"device": self.device, "device_class": self.device_class, "path": self.path,
                "relative_error": self.relative_error, "basis": self.basis}


def class_error(device_class: str, path: str = FITTED) -> float:
    """The relative error of ``device_class`` on ``path``: its held-out median in that path's column, else
    the held-out median of all rows."""
    return PATH_MEDIANS.get(path, {}).get(device_class, HELD_OUT_MEDIAN_ALL)


def device_band(device: str, kind: str, device_class: str = "", path: str = FITTED) -> ErrorBand:
    """The :class:`ErrorBand` of a device of ``kind`` (``device_class``: its own class, else its kind's)
    whose mechanism values take ``path``."""
    cls = device_class or KIND_CLASS.get(kind, "")
    medians = PATH_MEDIANS.get(path, {})
    if cls in medians:
        column = "as declared" if path == FITTED else "data sheet only"
        return ErrorBand(device, cls, path, medians[cls], f"held-out median of the {cls} rows, {column} (dse accuracy)")
    return ErrorBand(device, cls, path, HELD_OUT_MEDIAN_ALL, "held-out median of all rows (dse accuracy)")


def relative_error(device_kinds: Iterable[str]) -> float:
    """The relative error of a point that may run on devices of ``device_kinds`` (fitted path): the largest
    of their classes' errors (:data:`HELD_OUT_MEDIAN_ALL` when there is none)."""
    errors = [class_error(KIND_CLASS.get(kind, "")) for kind in device_kinds]
    return max(errors, default=HELD_OUT_MEDIAN_ALL)


def band(value: float, r: float) -> tuple[float, float]:
    """``(lo, hi)``: where the true value lies when ``value`` is predicted with relative error ``r``:
    ``value / (1 + r)`` and ``value / (1 - r)`` (``inf`` for ``r >= 1``), ordered for a negative value.

    Raises ``ValueError`` for a negative or non-finite ``r``."""
    if not math.isfinite(r) or r < 0:
        raise ValueError(f"relative error must be a finite number >= 0, not {r!r}")
    lo = value / (1 + r)
    hi = value / (1 - r) if r < 1 else math.copysign(math.inf, value)
    return (lo, hi) if lo <= hi else (hi, lo)


def band_columns(rows: Sequence[Mapping[str, float]], columns: Sequence[str],
                 r: float | Sequence[float]) -> dict[str, list[float]]:
    """``{f"{c}_lo": [...], f"{c}_hi": [...]}`` for every column ``c`` of ``columns`` over ``rows`` (one
    mapping of column to value per point), with one ``r`` for all rows or one per row."""
    rs = [float(r)] * len(rows) if isinstance(r, (int, float)) else [float(x) for x in r]
    if len(rs) != len(rows):
        raise ValueError(f"{len(rs)} relative errors for {len(rows)} rows")
    out: dict[str, list[float]] = {}
    for c in columns:
        limits = [band(float(row[c]), x) for row, x in zip(rows, rs, strict=True)]
        out[f"{c}_lo"] = [lo for lo, _ in limits]
        out[f"{c}_hi"] = [hi for _, hi in limits]
    return out


def limits(F: np.ndarray, r: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """``(best, worst)`` of each point in minimization form (``F`` as :meth:`dse.pareto.ParetoSet.F`, maximized
    objectives negated), each row's values widened by its relative error ``r[i]``."""
    F = np.asarray(F, dtype=float)
    best, worst = np.empty_like(F), np.empty_like(F)
    for i, row in enumerate(F):
        for j, v in enumerate(row):
            best[i, j], worst[i, j] = band(float(v), float(r[i]))
    return best, worst


def certainly_dominates(worst_a: np.ndarray, best_b: np.ndarray) -> bool:
    """Whether ``a`` dominates ``b`` for every true value within the bands (minimization form): ``a``'s
    worst case no worse than ``b``'s best case everywhere, and better somewhere."""
    return bool(np.all(worst_a <= best_b) and np.any(worst_a < best_b))


def possibly_dominates(best_a: np.ndarray, worst_b: np.ndarray) -> bool:
    """Whether ``a`` dominates ``b`` for some true values within the bands (minimization form)."""
    return bool(np.all(best_a <= worst_b) and np.any(best_a < worst_b))


def robust_indices(F: np.ndarray, r: Sequence[float], candidates: int | None = None) -> list[int]:
    """Indices among the first ``candidates`` rows of ``F`` (default all) that no other row certainly
    dominates given relative errors ``r`` (the other rows may still dominate them)."""
    best, worst = limits(F, r)
    n = len(best) if candidates is None else candidates
    return [i for i in range(n)
            if not any(certainly_dominates(worst[k], best[i]) for k in range(len(best)) if k != i)]


def stable_indices(F: np.ndarray, r: Sequence[float], candidates: int | None = None) -> list[int]:
    """Indices among the first ``candidates`` rows of ``F`` (default all) that no other row possibly
    dominates given relative errors ``r``: Pareto-optimal for every true value within the bands."""
    best, worst = limits(F, r)
    n = len(best) if candidates is None else candidates
    return [i for i in range(n)
            if not any(possibly_dominates(best[k], worst[i]) for k in range(len(best)) if k != i)]


def front_and_baselines(points: Sequence[Mapping[str, float]], others: Sequence[Mapping[str, float]],
                        columns: Sequence[str], senses: Sequence[str],
                        r: float | Sequence[float]) -> tuple[np.ndarray, list[float]]:
    """``(F, r)`` over ``points`` then ``others`` (objective mappings), minimization form (``senses``
    ``"max"`` negated); ``r`` one value, or one per point (the others then take the largest)."""
    rows = [*points, *others]
    signs = np.array([-1.0 if s == "max" else 1.0 for s in senses])
    F = np.array([[float(row[c]) for c in columns] for row in rows], dtype=float).reshape(len(rows), len(columns))
    if isinstance(r, (int, float)):
        rs = [float(r)] * len(rows)
    else:
        mine = [float(x) for x in r]
        if len(mine) != len(points):
            raise ValueError(f"{len(mine)} relative errors for {len(points)} points")
        rs = mine + [max(mine, default=0.0)] * len(others)
    return F * signs, rs


def problem_bands(problem: object) -> tuple[ErrorBand, ...]:
    """One :class:`ErrorBand` per device of ``problem``'s cost tables, each on the path its tables record
    (:attr:`dse.cost.tables.CostTables.device_paths`; the fitted path where they record none)."""
    tables = getattr(problem, "tables", None)
    kinds = getattr(tables, "device_kinds", ()) or ()
    names = getattr(tables, "device_names", ()) or tuple(f"device{i}" for i in range(len(kinds)))
    classes = getattr(tables, "device_classes", ()) or ("",) * len(kinds)
    paths = getattr(tables, "device_paths", ()) or (FITTED,) * len(kinds)
    return tuple(device_band(n, k, c, p) for n, k, c, p in zip(names, kinds, classes, paths, strict=True))


def problem_error(problem: object) -> float:
    """The relative error of ``problem``'s points: the largest of its devices' bands (:func:`problem_bands`),
    :data:`HELD_OUT_MEDIAN_ALL` without devices."""
    return max((b.relative_error for b in problem_bands(problem)), default=HELD_OUT_MEDIAN_ALL)
