"""Fitting measured kernel timings: non-negative least squares on the relative error, scored on
held-out sizes (:func:`fit_kernel`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.cost.calibration.model import (
    CACHE_CANDIDATES_BYTES,
    DEFAULT_CACHE_BYTES,
    DEFAULT_INNER_CACHE_BYTES,
    KERNEL_DIMS,
    KERNEL_TERMS,
    KERNELS,
    KernelFit,
    kernel_terms,
)
from dse.errors import SpecError

if TYPE_CHECKING:
    import pandas as pd


def mape(predicted: Any, measured: Any) -> float:
    """Mean absolute percentage error as a fraction: mean(|predicted - measured| / measured)."""
    p = np.asarray(predicted, dtype=float)
    m = np.asarray(measured, dtype=float)
    if m.size == 0:
        return math.nan
    return float(np.mean(np.abs(p - m) / m))


def _nnls_relative(features: np.ndarray, seconds: np.ndarray) -> tuple[np.ndarray, float]:
    """Non-negative coefficients minimizing the squared *relative* error; returns them and that error."""
    from scipy.optimize import nnls  # type: ignore[import-untyped, unused-ignore]

    scaled = features / seconds[:, None]
    norms = np.abs(scaled).max(axis=0)
    norms[norms == 0] = 1.0
    solution, _ = nnls(scaled / norms, np.ones(len(seconds)), maxiter=50 * features.shape[1])
    coefficients = solution / norms
    residual = features @ coefficients / seconds - 1.0
    return coefficients, float(residual @ residual)


def _size_key(kernel: str, frame: pd.DataFrame) -> pd.Series:
    """The 'size' of each sample: the shape for GEMM, the rows for the sparse kernels."""
    if kernel == "gemm":
        return frame["m"].astype(int).astype(str) + "x" + frame["n"].astype(int).astype(str) + "x" + \
            frame["k"].astype(int).astype(str)
    return frame["rows"].astype(int).astype(str)


def fit_kernel(samples: pd.DataFrame, kernel: str, device: str, dtype: str) -> KernelFit:
    """Fit the seconds of ``samples`` (dims columns + ``seconds``) for (kernel, device, dtype).

    Rows whose ``kernel``/``device``/``dtype`` columns (when present) differ are ignored. A
    boolean ``heldout`` column says which samples to hold out; without it, every other distinct
    size (shape for GEMM, ``rows`` for sparse kernels, in sorted order) is held out. The
    coefficients are fitted on the other samples only (non-negative least squares on the
    relative error, :func:`scipy.optimize.nnls`), so ``mape_heldout`` is the error of exactly
    the model returned. For the sparse kernels the two cache sizes of the miss terms (inner <
    outer) are chosen from :data:`CACHE_CANDIDATES_BYTES` by the training error.

    Raises :class:`SpecError` (source ``samples``) for a missing column, a non-positive or
    non-finite time, or fewer than 2 training or 1 held-out sample.
    """
    source = "samples"
    if kernel not in KERNEL_TERMS:
        raise SpecError(source, "kernel", kernel, f"unknown kernel; known: {', '.join(KERNELS)}")
    frame = samples
    for column, wanted in (("kernel", kernel), ("device", device), ("dtype", dtype)):
        if column in frame.columns:
            frame = frame[frame[column] == wanted]
    required = [d for d in KERNEL_DIMS[kernel] if d != "row_cv"] + ["seconds"]
    for column in required:
        if column not in frame.columns:
            raise SpecError(source, column, None, f"missing column; {kernel} samples need {', '.join(required)}")
    seconds = frame["seconds"].to_numpy(dtype=float)
    if not np.all(np.isfinite(seconds)) or np.any(seconds <= 0):
        raise SpecError(source, "seconds", float(seconds[~(np.isfinite(seconds) & (seconds > 0))][0]),
                        "every time must be finite and > 0")
    if "heldout" in frame.columns:
        heldout = frame["heldout"].to_numpy(dtype=bool)
    else:
        keys = _size_key(kernel, frame)
        order = {key: i for i, key in enumerate(sorted(set(keys), key=_natural_key))}
        heldout = keys.map(lambda key: order[key] % 2 == 1).to_numpy(dtype=bool)
    n_train, n_test = int((~heldout).sum()), int(heldout.sum())
    if n_train < 2 or n_test < 1:
        raise SpecError(source, "heldout", f"{n_train} training, {n_test} held out",
                        f"{kernel} on {device} {dtype} needs at least 2 training and 1 held-out sample")
    dims = {d: frame[d].to_numpy(dtype=float) for d in KERNEL_DIMS[kernel] if d in frame.columns}
    terms = KERNEL_TERMS[kernel]
    candidates: Sequence[tuple[float, float]] = [(DEFAULT_INNER_CACHE_BYTES, DEFAULT_CACHE_BYTES)]
    if kernel != "gemm":
        candidates = [(a, b) for b in CACHE_CANDIDATES_BYTES for a in CACHE_CANDIDATES_BYTES if a < b]
    best: tuple[float, np.ndarray, tuple[float, float]] | None = None
    for inner, outer in candidates:
        values = kernel_terms(kernel, dtype, cache_bytes=outer, inner_cache_bytes=inner, **dims)
        features = np.column_stack([np.broadcast_to(values[t], seconds.shape) for t in terms])
        coefficients, error = _nnls_relative(features[~heldout], seconds[~heldout])
        if best is None or error < best[0] * (1 - 1e-9):
            best = (error, coefficients, (inner, outer))
    assert best is not None
    _, coefficients, (inner, outer) = best
    params = (("cache_bytes", float(outer)), ("inner_cache_bytes", float(inner))) if kernel != "gemm" else ()
    fitted = KernelFit(kernel, device, dtype, terms, tuple(float(c) for c in coefficients), math.nan,
                       n_train, n_test, params)
    test_dims = {d: v[heldout] for d, v in dims.items()}
    error = mape(fitted.predict_s(**test_dims), seconds[heldout])
    return KernelFit(kernel, device, dtype, terms, fitted.coefficients, error, n_train, n_test, params)


def _natural_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"[0-9]+", text))
