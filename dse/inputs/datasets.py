"""Inputs of irregular workloads: their features, the catalog of real datasets, synthetic matrices.

An input (a graph or a sparse matrix) is described by :class:`InputFeatures`:
rows, columns, nonzeros, density, mean and coefficient of variation of the
nonzeros per row, and the dense feature width that a GNN layer multiplies by.
These are what the cost model needs (:mod:`dse.cost` reads ``density`` and
``degree_skew`` = ``row_cv`` from the ops) and what the run-time analyzer
extracts from each incoming input (:func:`matrix_features`, one pass over the
CSR row pointers).

* :func:`dataset` / :func:`datasets`: published statistics of real graphs and
  matrices, read from ``models/datasets/*.yaml`` (each figure cites its source
  there; the row CVs, which are not published, are marked as estimates);
* :func:`synthetic_matrix`: a seeded ``scipy.sparse`` CSR matrix with a chosen
  density and a ``uniform`` or ``powerlaw`` row-length distribution;
* :func:`input_features`: features of a stream input given by dataset name or
  by synthetic parameters.

Example::

    from dse.inputs.datasets import dataset, synthetic_matrix, matrix_features
    dataset("cora").to_input().density        # 0.00144
    matrix_features(synthetic_matrix(1000, 0.01, "powerlaw", seed=0), width=64).row_cv
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from dse.errors import SpecError
from dse.util.home import models_dir
from dse.util.suggest import did_you_mean
from dse.util.yamlio import read_yaml

#: ``source`` of the errors about inputs given in a spec.
SOURCE = "inputs"
#: Row-length distributions of synthetic inputs.
DEGREES = ("uniform", "powerlaw")
#: Largest synthetic input generated as a real matrix (nonzeros); larger ones are rejected.
MAX_SYNTHETIC_NNZ = 20_000_000
#: Largest number of rows an input may describe.
MAX_ROWS = 10**10
#: Largest number of rows of a synthetic input (its row x column keys must fit int64).
MAX_SYNTHETIC_ROWS = 10**8


@dataclass(frozen=True)
class InputFeatures:
    """Features of one sparse input (square ``rows`` x ``cols`` matrix with ``nnz`` nonzeros).

    ``row_cv`` is the coefficient of variation (population std / mean) of the
    nonzeros per row; ``width`` the dense feature width it is multiplied with
    (1 for a sparse matrix-vector product).
    """

    rows: int
    nnz: int
    width: int
    row_cv: float
    cols: int = 0
    name: str = ""

    def __post_init__(self) -> None:
        if self.cols == 0:
            object.__setattr__(self, "cols", self.rows)

    @property
    def density(self) -> float:
        return self.nnz / (float(self.rows) * float(self.cols))

    @property
    def row_mean(self) -> float:
        return self.nnz / self.rows

    def vector(self) -> np.ndarray:
        """The features the selector compares inputs by: log10 rows, log10 density, row CV, log2 width."""
        return np.array([math.log10(self.rows), math.log10(self.density), self.row_cv, math.log2(self.width)])

    def as_dict(self) -> dict[str, float | int | str]:
        return dict(name=self.name, rows=self.rows, cols=self.cols, nnz=self.nnz, density=self.density,
                    row_mean=self.row_mean, row_cv=self.row_cv, width=self.width)


@dataclass(frozen=True)
class DatasetStats:
    """Published statistics of one real dataset (``kind``: ``graph`` or ``matrix``)."""

    name: str
    kind: str
    rows: int
    nnz: int
    features: int
    classes: int
    row_cv: float
    source: str

    def to_input(self, width: int | None = None) -> InputFeatures:
        """The input's features, with the dataset's own feature width unless ``width`` is given."""
        return InputFeatures(self.rows, self.nnz, width or self.features, self.row_cv, name=self.name)


def _check_dataset(name: str, entry: Any, source: str) -> DatasetStats:
    if not isinstance(entry, Mapping):
        raise SpecError(source, f"datasets.{name}", entry, "must be a mapping of statistics")
    for key in ("rows", "nnz", "features", "classes"):
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise SpecError(source, f"datasets.{name}.{key}", value, "must be a positive integer")
    cv = entry.get("row_cv", 0.0)
    if isinstance(cv, bool) or not isinstance(cv, int | float) or not 0 <= cv < 1e6:
        raise SpecError(source, f"datasets.{name}.row_cv", cv, "must be a number in [0, 1e6)")
    if entry["nnz"] > entry["rows"] ** 2:
        raise SpecError(source, f"datasets.{name}.nnz", entry["nnz"], "more nonzeros than rows squared")
    kind = entry.get("kind", "graph")
    if kind not in ("graph", "matrix"):
        raise SpecError(source, f"datasets.{name}.kind", kind, "must be graph or matrix")
    return DatasetStats(name, kind, int(entry["rows"]), int(entry["nnz"]), int(entry["features"]),
                        int(entry["classes"]), float(cv), source)


@cache
def _catalog() -> dict[str, DatasetStats]:
    out: dict[str, DatasetStats] = {}
    for path in sorted((models_dir() / "datasets").glob("*.yaml")):
        data = read_yaml(path)
        entries = data.get("datasets") if isinstance(data, Mapping) else None
        if not isinstance(entries, Mapping):
            raise SpecError(str(path), "datasets", None, "a dataset file holds a 'datasets' mapping")
        for name, entry in entries.items():
            out[str(name).lower()] = _check_dataset(str(name), entry, str(path))
    return out


def datasets() -> dict[str, DatasetStats]:
    """Every catalog dataset by (lower-case) name."""
    return dict(_catalog())


def dataset(name: str, source: str = SOURCE, field: str = "dataset") -> DatasetStats:
    """The statistics of catalog dataset ``name`` (case-insensitive).

    Raises :class:`SpecError` naming ``source``, ``field`` and the name, listing the known ones.
    """
    found = _catalog().get(str(name).lower())
    if found is None:
        raise SpecError(source, field, name, f"unknown dataset{did_you_mean(str(name), _catalog())}; datasets: {', '.join(sorted(_catalog()))}")
    return found


# --------------------------------------------------------------------------- synthetic inputs


def check_synthetic(rows: Any, density: Any, degree: Any, width: Any, source: str = SOURCE,
                    field: str = "synthetic") -> None:
    """Raise :class:`SpecError` naming the parameter for a non-positive size, a density outside (0, 1],
    an unknown degree distribution or a matrix past :data:`MAX_SYNTHETIC_NNZ` nonzeros."""
    for key, value, top in (("rows", rows, MAX_SYNTHETIC_ROWS), ("width", width, MAX_ROWS)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= top:
            raise SpecError(source, f"{field}.{key}", value, f"must be an integer in [1, {top:g}]")
    if isinstance(density, bool) or not isinstance(density, int | float) or not 0 < density <= 1:
        raise SpecError(source, f"{field}.density", density, "must be a number in (0, 1]")
    if degree not in DEGREES:
        raise SpecError(source, f"{field}.degree", degree, f"must be one of {', '.join(DEGREES)}")
    if density * rows * rows > MAX_SYNTHETIC_NNZ:
        raise SpecError(source, f"{field}.density", density,
                        f"{rows} rows at this density hold {density * rows * rows:.3g} nonzeros; "
                        f"synthetic inputs hold at most {MAX_SYNTHETIC_NNZ:g}")


def synthetic_matrix(rows: int, density: float, degree: str = "uniform", seed: int = 0,
                     exponent: float = 2.1) -> Any:
    """A seeded square CSR matrix (``scipy.sparse.csr_matrix``) with about ``density * rows**2`` nonzeros.

    ``uniform``: every row draws its length from a binomial around the mean
    (``scipy.sparse.random``); ``powerlaw``: row lengths follow a Pareto law
    ``p(k) ~ k**-exponent`` scaled to the same mean (hub rows), columns drawn
    uniformly (repeats within a row merged, so slightly fewer nonzeros).
    Raises :class:`SpecError` for invalid parameters.
    """
    import scipy.sparse as sp  # type: ignore[import-untyped, unused-ignore]

    check_synthetic(rows, density, degree, 1)
    rng = np.random.default_rng(seed)
    target = max(1, int(round(density * rows * rows)))
    if degree == "uniform":
        return sp.random(rows, rows, density=target / (rows * rows), format="csr", random_state=rng,
                         dtype=np.float32)
    # Pareto-distributed row lengths (heavy tail), rescaled to the target mean and capped at ``rows``
    raw = rng.pareto(exponent - 1.0, size=rows) + 1.0
    lengths = np.minimum(np.maximum(np.round(raw * target / raw.sum()), 0), rows).astype(np.int64)
    keys = np.repeat(np.arange(rows, dtype=np.int64), lengths) * rows
    keys += rng.integers(0, rows, size=len(keys))
    keys.sort(kind="stable")  # by row, then column (rows are already grouped: radix sort is fast)
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if len(keys) else keys  # repeats merged
    indptr = np.concatenate([[0], np.cumsum(np.bincount(keys // rows, minlength=rows))])
    data = np.ones(len(keys), dtype=np.float32)
    return sp.csr_matrix((data, keys % rows, indptr), shape=(rows, rows))


def matrix_features(matrix: Any, width: int = 1, name: str = "") -> InputFeatures:
    """The analyzer: features of a CSR matrix from its row pointers alone (O(rows), no pass over values).

    Raises :class:`SpecError` for an empty matrix.
    """
    indptr = np.asarray(matrix.indptr)
    lengths = np.diff(indptr)
    rows, cols = matrix.shape
    nnz = int(indptr[-1])
    if rows == 0 or nnz == 0:
        raise SpecError(SOURCE, "matrix", f"{rows}x{cols}, {nnz} nonzeros", "an input needs nonzeros")
    mean = lengths.mean()
    return InputFeatures(int(rows), nnz, int(width), float(lengths.std() / mean), cols=int(cols), name=name)


def synthetic_features(rows: int, density: float, degree: str, width: int, seed: int = 0) -> InputFeatures:
    """Features of the seeded synthetic matrix (it is generated and analysed)."""
    check_synthetic(rows, density, degree, width)
    matrix = synthetic_matrix(rows, density, degree, seed)
    return matrix_features(matrix, width, name=f"{degree}-{rows}-d{density:g}-w{width}")


def input_features(ref: Mapping[str, Any] | str, source: str = SOURCE, field: str = "input",
                   width: int | None = None, seed: int = 0) -> InputFeatures:
    """Features of one input given as a dataset name, ``{dataset: NAME}`` or
    ``{synthetic: {rows, density, degree, width}}``; ``width`` overrides the feature width.

    Raises :class:`SpecError` naming ``source`` and ``field`` for an unknown dataset or bad parameters.
    """
    if isinstance(ref, str):
        ref = {"dataset": ref}
    if "dataset" in ref:
        stats = dataset(str(ref["dataset"]), source, f"{field}.dataset")
        return stats.to_input(int(ref.get("width", width or stats.features)))
    if "synthetic" in ref and isinstance(ref["synthetic"], Mapping):
        s = dict(ref["synthetic"])
        unknown = set(s) - {"rows", "density", "degree", "width", "seed"}
        if unknown:
            key = sorted(unknown)[0]
            raise SpecError(source, f"{field}.synthetic.{key}", s[key], "synthetic inputs take rows, density, "
                                                                        "degree, width, seed")
        rows, density = s.get("rows"), s.get("density")
        degree, w = s.get("degree", "uniform"), s.get("width", width or 64)
        check_synthetic(rows, density, degree, w, source, f"{field}.synthetic")
        return synthetic_features(int(rows), float(density), str(degree), int(w),  # type: ignore[arg-type]
                                  seed=int(s.get("seed", seed)))
    raise SpecError(source, field, dict(ref), "give a dataset name or {synthetic: {rows, density, degree, width}}")
