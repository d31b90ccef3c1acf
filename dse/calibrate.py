"""Kernel timings measured on this machine and fitted into linear cost models.

``run_calibration`` profiles GEMM (numpy/BLAS), SpMM and SpMV (``scipy.sparse`` CSR) on the
CPU, with the BLAS threads of each worker group pinned by ``threadpoolctl`` (``cpu`` = every
core, ``cpu:tN`` = N threads), over square and skinny shapes, sparse sizes, densities and
row-length skews; when PyTorch with CUDA is importable it also profiles GEMM on ``cuda``
(fp32 CUDA cores) and ``tensorcore`` (fp16, bf16, tf32). Each (kernel, device, dtype) gets a
:class:`KernelFit`: seconds per call = sum of non-negative coefficients x terms
(:func:`kernel_terms`), fitted on some sizes and scored (MAPE) on **held-out sizes**.

Example::

    cal, report = run_calibration(["gemm"], ["cpu"], quick=True)
    cal.predict_s("gemm", "cpu", "fp32", m=1024, n=1024, k=1024)   # seconds
    save_calibration(cal, "models/calibration/mybox.yaml")
    load_calibration("models/calibration/mybox.yaml")              # SpecError on another machine kind

The model and the file format are described in ``docs/calibration.md``.
"""

from __future__ import annotations

import math
import operator
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.errors import SpecError
from dse.files import replace_atomically
from dse.interrupt import stop_point
from dse.mapping.split_model import DTYPE_BYTES as GEMM_DTYPE_BYTES
from dse.progress import Progress, silent

#: Version tag written at the top of every calibration file.
FILE_FORMAT = "dse-calibration/1"
KERNELS = ("gemm", "spmm", "spmv")
DTYPE_BYTES = GEMM_DTYPE_BYTES  # the dtypes a GEMM is profiled in
#: Element types each device kind can be profiled in.
CPU_DTYPES = ("fp32", "fp64")
CUDA_DTYPES = ("fp32",)
TENSORCORE_DTYPES = ("fp16", "bf16", "tf32")
GPU_DEVICES = ("cuda", "tensorcore")
#: Kernels profiled on each GPU device (sparse kernels run on the CPU only).
GPU_KERNELS = ("gemm",)
#: Dimensions each kernel's terms read; ``row_cv`` may be left out (taken as 0: uniform rows).
KERNEL_DIMS: dict[str, tuple[str, ...]] = {
    "gemm": ("m", "n", "k"),
    "spmm": ("rows", "cols", "nnz", "width", "row_cv"),
    "spmv": ("rows", "cols", "nnz", "row_cv"),
}
#: Regression terms of each kernel (see :func:`kernel_terms` for their definitions).
KERNEL_TERMS: dict[str, tuple[str, ...]] = {
    "gemm": ("const", "flops", "a_bytes", "b_bytes", "c_bytes"),
    "spmm": ("const", "rows", "nnz", "out_bytes", "flops", "gather_inner_miss_bytes", "gather_miss_rows",
             "gather_miss_bytes", "flops_x_row_cv"),
    "spmv": ("const", "rows", "nnz", "gather_inner_miss_nnz", "gather_miss_nnz", "nnz_x_row_cv"),
}
#: Cache sizes tried for the sparse kernels' miss terms (128 KiB to 128 MiB); the fit keeps the
#: pair (inner < outer) that fits best.
CACHE_CANDIDATES_BYTES = tuple(2**p for p in range(17, 28))
#: Cache sizes assumed by :func:`kernel_terms` when none are given (fits record their own):
#: an outer (last-level) cache and an inner (per-core) one.
DEFAULT_CACHE_BYTES = 2**22
DEFAULT_INNER_CACHE_BYTES = 2**19
#: Fitted settings a :class:`KernelFit` may carry in ``params``.
FIT_PARAMS = ("cache_bytes", "inner_cache_bytes")
_DEVICE_RE = re.compile(r"^cpu(?::t([0-9]+))?$")


# ----------------------------------------------------------------------------- machine identity


@dataclass(frozen=True)
class MachineInfo:
    """What a calibration was measured on; ``kind`` must match for a calibration to apply."""

    kind: str
    cpu_model: str
    logical_cores: int
    gpu: str | None = None

    @staticmethod
    def current() -> MachineInfo:
        """This machine: architecture, CPU model name and logical core count (and its first GPU)."""
        model = _cpu_model()
        cores = os.cpu_count() or 1
        return MachineInfo(f"{platform.machine() or 'unknown'} | {model} | {cores} cores", model, cores,
                           _gpu_model())


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _gpu_model() -> str | None:
    """The first NVIDIA GPU's model from the driver's ``/proc`` entry (never imports torch)."""
    root = Path("/proc/driver/nvidia/gpus")
    try:
        for entry in sorted(root.iterdir()):
            for line in (entry / "information").read_text(errors="replace").splitlines():
                key, _, value = line.partition(":")
                if key.strip() == "Model" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return None


# ----------------------------------------------------------------------------- fits and models


@dataclass(frozen=True)
class KernelFit:
    """Fitted seconds-per-call model of one (kernel, device, dtype).

    ``coefficients[i]`` is seconds per unit of ``terms[i]`` (non-negative); ``mape_heldout`` the
    mean absolute percentage error (a fraction) on ``n_heldout`` samples of sizes the fit did
    not see; ``n_samples`` the samples it was fitted on; ``params`` fitted settings of the terms
    (``cache_bytes`` for the sparse kernels' miss terms).
    """

    kernel: str
    device: str
    dtype: str
    terms: tuple[str, ...]
    coefficients: tuple[float, ...]
    mape_heldout: float
    n_samples: int
    n_heldout: int = 0
    params: tuple[tuple[str, float], ...] = ()

    def param(self, name: str, default: float) -> float:
        """The fitted setting ``name`` (``default`` when the fit has none)."""
        return dict(self.params).get(name, default)

    def predict_s(self, **dims: Any) -> Any:
        """Seconds per call for ``dims`` (float, or an array when a dim is an array)."""
        values = kernel_terms(self.kernel, self.dtype, cache_bytes=self.param("cache_bytes", DEFAULT_CACHE_BYTES),
                              inner_cache_bytes=self.param("inner_cache_bytes", DEFAULT_INNER_CACHE_BYTES), **dims)
        total = sum(c * np.asarray(values[t], dtype=float) for t, c in zip(self.terms, self.coefficients,
                                                                            strict=True))
        result = np.asarray(total, dtype=float)
        return float(result) if result.ndim == 0 else result


@dataclass(frozen=True)
class Calibration:
    """The fits measured on ``machine``; ``source`` says where it came from (a file, or a run)."""

    machine: MachineInfo
    fits: tuple[KernelFit, ...]
    source: str
    note: str = ""
    _index: dict[tuple[str, str, str], KernelFit] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {(f.kernel, f.device, f.dtype): f for f in self.fits})

    def fit(self, kernel: str, device: str, dtype: str = "fp32") -> KernelFit:
        """The fit of (kernel, device, dtype); ``KeyError`` naming them and what exists otherwise."""
        try:
            return self._index[(kernel, device, dtype)]
        except KeyError:
            known = ", ".join(f"({k}, {d}, {t})" for k, d, t in self._index) or "none"
            raise KeyError(f"no calibration for ({kernel}, {device}, {dtype}) in {self.source}; "
                           f"calibrated: {known}") from None

    def predict_s(self, kernel: str, device: str, dtype: str = "fp32", **dims: Any) -> Any:
        """Predicted seconds of one call (broadcasts over array dims).

        dims: gemm ``m, n, k``; spmm ``rows, cols, nnz, width, row_cv``; spmv ``rows, cols, nnz,
        row_cv``. Raises ``KeyError`` when (kernel, device, dtype) was not calibrated and
        :class:`SpecError` for a missing, unknown or negative dim.
        """
        return self.fit(kernel, device, dtype).predict_s(**dims)

    def devices(self, kernel: str | None = None) -> tuple[str, ...]:
        """Devices with at least one fit (of ``kernel`` when given), in first-seen order."""
        return tuple(dict.fromkeys(f.device for f in self.fits if kernel is None or f.kernel == kernel))

    def has(self, kernel: str, device: str, dtype: str = "fp32") -> bool:
        """Whether (kernel, device, dtype) was calibrated."""
        return (kernel, device, dtype) in self._index


def kernel_terms(kernel: str, dtype: str, *, cache_bytes: float = DEFAULT_CACHE_BYTES,
                 inner_cache_bytes: float = DEFAULT_INNER_CACHE_BYTES, **dims: Any) -> dict[str, Any]:
    """The regression features of one call (floats, or arrays broadcast from array dims).

    - gemm (``C[m,n] = A[m,k] B[k,n]``): ``const`` 1, ``flops`` 2mnk, ``a_bytes`` mk x b,
      ``b_bytes`` kn x b, ``c_bytes`` mn x b (b = bytes per element). The byte terms carry the
      packing and edge costs that keep small and skinny GEMMs off peak.
    - spmm (CSR ``A[rows, cols]`` with ``nnz`` entries times a dense ``B[cols, width]``):
      ``const``, ``rows``, ``nnz``, ``out_bytes`` rows x width x b, ``flops`` 2 nnz x width,
      ``gather_inner_miss_bytes`` nnz x width x b x miss(inner_cache_bytes),
      ``gather_miss_rows`` nnz x miss, ``gather_miss_bytes`` nnz x width x b x miss,
      ``flops_x_row_cv`` flops x row_cv, where miss(c) = max(0, 1 - c / (cols x width x b)) is
      the share of uniformly random gathers of B's rows that miss a cache of c bytes, and miss
      = miss(cache_bytes).
    - spmv: ``const``, ``rows``, ``nnz``, ``gather_inner_miss_nnz`` nnz x miss(inner_cache_bytes),
      ``gather_miss_nnz`` nnz x miss (as above with width 1), ``nnz_x_row_cv``.

    Raises :class:`SpecError` for an unknown kernel or dtype and a missing, unknown, negative
    or non-finite dim.
    """
    source = f"kernel_terms({kernel})"
    if kernel not in KERNEL_DIMS:
        raise SpecError(source, "kernel", kernel, f"unknown kernel; known: {', '.join(KERNELS)}")
    if dtype not in DTYPE_BYTES:
        raise SpecError(source, "dtype", dtype, f"unknown dtype; known: {', '.join(DTYPE_BYTES)}")
    names = KERNEL_DIMS[kernel]
    for name in dims:
        if name not in names:
            raise SpecError(source, name, dims[name], f"unknown dimension; {kernel} takes {', '.join(names)}")
    values: dict[str, Any] = {}
    for name in names:
        if name not in dims:
            if name == "row_cv":
                values[name] = 0.0
                continue
            raise SpecError(source, name, None, f"missing dimension; {kernel} takes {', '.join(names)}")
        try:
            array = np.asarray(dims[name], dtype=float)
        except (TypeError, ValueError):
            raise SpecError(source, name, dims[name], "must be a number or an array of numbers") from None
        if not np.all(np.isfinite(array)) or np.any(array < 0):
            raise SpecError(source, name, dims[name], "must be finite and >= 0")
        values[name] = array
    b = float(DTYPE_BYTES[dtype])
    if kernel == "gemm":
        m, n, k = values["m"], values["n"], values["k"]
        terms = {"const": np.ones(np.broadcast(m, n, k).shape), "flops": 2.0 * m * n * k,
                 "a_bytes": m * k * b, "b_bytes": k * n * b, "c_bytes": m * n * b}
    else:
        rows, cols, nnz, cv = values["rows"], values["cols"], values["nnz"], values["row_cv"]
        width = values["width"] if kernel == "spmm" else np.asarray(1.0)
        footprint = np.maximum(cols * width * b, 1.0)
        miss = np.clip(1.0 - float(cache_bytes) / footprint, 0.0, 1.0)
        inner = np.clip(1.0 - float(inner_cache_bytes) / footprint, 0.0, 1.0)
        const = np.ones(np.broadcast(rows, cols, nnz, width, cv).shape)
        if kernel == "spmm":
            flops = 2.0 * nnz * width
            terms = {"const": const, "rows": rows, "nnz": nnz, "out_bytes": rows * width * b, "flops": flops,
                     "gather_inner_miss_bytes": nnz * width * b * inner, "gather_miss_rows": nnz * miss,
                     "gather_miss_bytes": nnz * width * b * miss, "flops_x_row_cv": flops * cv}
        else:
            terms = {"const": const, "rows": rows, "nnz": nnz, "gather_inner_miss_nnz": nnz * inner,
                     "gather_miss_nnz": nnz * miss, "nnz_x_row_cv": nnz * cv}
    return {name: (float(v) if np.ndim(v) == 0 else v) for name, v in terms.items()}


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


# ----------------------------------------------------------------------------- what to measure


@dataclass(frozen=True)
class SparseCase:
    """One sparse matrix to profile: ``skew`` is ``None`` (uniform rows) or a power-law exponent."""

    rows: int
    degree: int
    skew: float | None
    heldout: bool


def gemm_shapes(quick: bool) -> list[tuple[int, int, int, bool]]:
    """GEMM shapes ``(m, n, k, heldout)``: square and skinny, the held-out ones not used in fits."""
    if quick:
        train = [(s, s, s) for s in (128, 256, 512, 768)] + [
            (1024, 1024, 64), (1024, 64, 1024), (64, 1024, 1024), (768, 768, 192)]
        test = [(s, s, s) for s in (384, 640, 1024)] + [(1024, 1024, 128), (128, 1024, 1024), (1024, 256, 512)]
    else:
        train = [(s, s, s) for s in (192, 256, 512, 768, 1024, 1536, 2048)] + [
            (4096, 4096, 128), (4096, 128, 4096), (128, 4096, 4096), (2048, 2048, 512), (2048, 512, 2048),
            (512, 2048, 2048), (4096, 512, 512), (512, 512, 4096), (1024, 4096, 1024)]
        test = [(s, s, s) for s in (384, 640, 1280, 2560)] + [
            (4096, 4096, 256), (4096, 256, 4096), (256, 4096, 4096), (3072, 768, 1536), (1536, 3072, 768),
            (2048, 2048, 1024)]
    return [(*shape, False) for shape in train] + [(*shape, True) for shape in test]


def sparse_cases(quick: bool) -> list[SparseCase]:
    """Sparse matrices to profile (square, ``rows`` x ``rows``): sizes x mean degree x skew."""
    train_rows: tuple[int, ...]
    test_rows: tuple[int, ...]
    degrees: tuple[int, ...]
    skews: tuple[float | None, ...]
    if quick:
        train_rows, test_rows, degrees, skews = (2**10, 2**12, 2**14), (2**11, 2**13), (4, 16), (None, 1.5)
        max_nnz = 2**18
    else:
        train_rows, test_rows = (2**12, 2**14, 2**16, 2**18), (2**13, 2**15, 2**17)
        degrees, skews, max_nnz = (4, 16, 48), (None, 2.5, 1.5), 2**22
    cases = [SparseCase(rows, degree, skew, rows in test_rows)
             for rows in sorted(train_rows + test_rows) for degree in degrees for skew in skews
             if rows * degree <= max_nnz]
    return cases


def spmm_widths(quick: bool) -> tuple[int, ...]:
    """Dense widths (columns of B) profiled for SpMM."""
    return (8, 32) if quick else (8, 32, 128)


#: Largest SpMM work (nnz x width) profiled, to bound a full run's time.
MAX_SPMM_WORK = 2**24


def random_csr(rows: int, cols: int, nnz: int, skew: float | None, rng: np.random.Generator,
               dtype: str = "fp32") -> Any:
    """A seeded random CSR matrix with about ``nnz`` entries (sorted column indices per row).

    Row lengths are uniform (multinomial with equal weights) when ``skew`` is ``None``, else
    drawn from a power law with exponent ``skew`` (Pareto weights ``1 + Lomax(skew)``); each row
    is capped at ``cols``. Column indices are uniform; duplicates are kept as stored entries.
    Values are uniform in [0, 1).
    """
    import scipy.sparse as sp  # type: ignore[import-untyped, unused-ignore]

    weights = np.full(rows, 1.0 / rows) if skew is None else rng.pareto(skew, rows) + 1.0
    lengths = np.minimum(rng.multinomial(nnz, weights / weights.sum()), cols)
    row_of = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    keys = np.sort(row_of * cols + rng.integers(0, cols, row_of.size))
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    data = rng.random(row_of.size, dtype=_numpy_dtype(dtype))
    return sp.csr_matrix((data, (keys % cols).astype(np.int32), indptr), shape=(rows, cols))


def row_cv(matrix: Any) -> float:
    """Coefficient of variation (std / mean) of the nonzeros per row of a CSR matrix."""
    lengths = np.diff(matrix.indptr)
    mean = lengths.mean() if lengths.size else 0.0
    return float(lengths.std() / mean) if mean > 0 else 0.0


def _numpy_dtype(dtype: str) -> Any:
    return {"fp64": np.float64, "fp32": np.float32}[dtype]


# ----------------------------------------------------------------------------- argument checks


def check_kernels(kernels: Iterable[str], source: str = "command line", field: str = "--kernels") -> tuple[str, ...]:
    """The kernels, checked; :class:`SpecError` for an unknown or missing one."""
    return _known_names(kernels, KERNELS, "kernel", source, field)


def _known_names(values: Iterable[str], known: Iterable[str], noun: str, source: str, field: str) -> tuple[str, ...]:
    """``values`` stripped, deduplicated and each one of ``known``; :class:`SpecError` otherwise or when empty."""
    known = tuple(known)
    result = tuple(dict.fromkeys(v.strip() for v in values if v.strip()))
    if not result:
        raise SpecError(source, field, "", f"give at least one {noun} of {', '.join(known)}")
    for value in result:
        if value not in known:
            raise SpecError(source, field, value, f"unknown {noun}; known: {', '.join(known)}")
    return result


def check_devices(devices: Iterable[str], source: str = "command line", field: str = "--devices") -> tuple[str, ...]:
    """The devices, checked: ``cpu``, ``cpu:tN`` (1 <= N <= cores), ``cuda``, ``tensorcore``."""
    cores = os.cpu_count() or 1
    result = tuple(dict.fromkeys(d.strip() for d in devices if d.strip()))
    if not result:
        raise SpecError(source, field, "", "give at least one device: cpu, cpu:tN, cuda or tensorcore")
    for device in result:
        if device in GPU_DEVICES:
            continue
        match = _DEVICE_RE.match(device)
        if match is None:
            raise SpecError(source, field, device, "unknown device; known: cpu, cpu:tN (N threads), cuda, tensorcore")
        if match.group(1) is not None and not 1 <= int(match.group(1)) <= cores:
            raise SpecError(source, field, device, f"thread count must be in [1, {cores}] on this machine "
                                                   f"({cores} logical cores)")
    return result


def check_dtypes(dtypes: Iterable[str], source: str = "command line", field: str = "--dtypes") -> tuple[str, ...]:
    """The element types, checked against :data:`DTYPE_BYTES`."""
    return _known_names(dtypes, DTYPE_BYTES, "dtype", source, field)


def check_clock(clock: str, devices: Iterable[str], source: str = "command line", field: str = "--clock") -> str:
    """The clock, checked: one of :data:`CLOCKS`; ``thread`` only with single-thread CPU devices."""
    if clock not in CLOCKS:
        raise SpecError(source, field, clock, f"unknown clock; known: {', '.join(CLOCKS)}")
    if clock == "thread":
        for device in devices:
            if device in GPU_DEVICES or device_threads(device) != 1:
                raise SpecError(source, field, clock, f"the thread clock measures the calling thread only; "
                                                      f"{device} is not a one-thread CPU device (use cpu:t1)")
    return clock


def device_threads(device: str) -> int:
    """BLAS threads of a CPU device: N for ``cpu:tN``, every logical core for ``cpu``."""
    match = _DEVICE_RE.match(device)
    if match is None:
        raise SpecError("device", "device", device, "not a CPU device (cpu or cpu:tN)")
    return int(match.group(1)) if match.group(1) else (os.cpu_count() or 1)


def device_dtypes(device: str, dtypes: Sequence[str] | None) -> tuple[str, ...]:
    """The dtypes profiled on ``device``: those of ``dtypes`` it supports (its defaults when None)."""
    supported = {"cuda": CUDA_DTYPES, "tensorcore": TENSORCORE_DTYPES}.get(device, CPU_DTYPES)
    if dtypes is None:
        return ("fp32",) if device not in GPU_DEVICES else supported
    return tuple(t for t in dtypes if t in supported)


def cuda_available() -> bool:
    """Whether PyTorch is importable and sees a CUDA device (imports torch only if it is installed)."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return False
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except Exception:  # a broken torch install counts as no CUDA
        return False
    return bool(torch.cuda.is_available())


# ----------------------------------------------------------------------------- timing

#: Rounds over the whole plan: each sample is the median of its rounds' times, and the plan is
#: walked in a fresh seeded order every round, so a burst of load elsewhere on the machine
#: lands on different sizes each round instead of biasing one size.
ROUNDS = 3


#: A call at least this long is its own sample: its first-call costs (page faults, waking the
#: threads: about a millisecond) are under 1% of it, so a separate warm-up call would only
#: double the run time of the largest sizes.
LONG_CALL_S = 0.2


#: Time spent per sample on back-to-back windows of a short call (see :func:`time_call`).
SHORT_CALL_BUDGET_S = 0.02
#: Most windows per sample.
MAX_WINDOWS = 5


#: Clocks a sample can be read from: ``wall`` (elapsed time, the default) or ``thread`` (CPU
#: time of the calling thread: what a single-threaded call costs when it has a core to itself,
#: unaffected by other work that deschedules it; for ``cpu:t1`` devices only).
CLOCKS = {"wall": time.perf_counter, "thread": time.thread_time}


def time_call(call: Callable[[], Any], *, min_sample_s: float = 0.002,
              sync: Callable[[], Any] | None = None, clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds of one ``call``, timed after one warm-up call.

    A call shorter than ``min_sample_s`` is timed as a loop of calls lasting about that long,
    divided by their number (the timer's resolution and Python's overhead stay negligible).
    Calls shorter than :data:`LONG_CALL_S` are timed in up to :data:`MAX_WINDOWS` back-to-back
    windows (about :data:`SHORT_CALL_BUDGET_S` in all) and the fastest window is the sample:
    being descheduled by other work on the machine only ever adds time, and a short window often
    escapes it. A warm-up call that takes :data:`LONG_CALL_S` or more is returned as the sample
    itself. ``sync`` runs before and after the timed calls (``torch.cuda.synchronize`` for GPU
    kernels). ``clock`` reads the time (one of :data:`CLOCKS`).
    """
    sync = sync or (lambda: None)
    sync()
    start = clock()
    call()
    sync()
    first = clock() - start
    if first >= LONG_CALL_S:
        return first
    batch = max(1, min(10_000, math.ceil(min_sample_s / max(first, 1e-7))))
    windows = max(1, min(MAX_WINDOWS, int(SHORT_CALL_BUDGET_S / max(first * batch, 1e-7))))
    best = math.inf
    for _ in range(windows):
        start = clock()
        for _ in range(batch):
            call()
        sync()
        best = min(best, (clock() - start) / batch)
    return best


@dataclass(frozen=True)
class _Timed:
    """One measurement: the sample's row (kernel, device, dtype, dims, heldout) and its call."""

    row: dict[str, Any]
    call: Callable[[], Any]
    threads: int | None = None
    sync: Callable[[], Any] | None = None


@dataclass(frozen=True)
class _Unit:
    """Data built afresh (and identically) every round, then timed on several devices and dtypes."""

    label: str
    build: Callable[[], list[_Timed]]


def _gemm_units(devices: Sequence[str], dtypes: Sequence[str] | None, quick: bool, seed: int) -> list[_Unit]:
    def build(index: int, m: int, n: int, k: int, heldout: bool) -> list[_Timed]:
        rng = np.random.default_rng([seed, 1, index])
        timed = []
        for dtype in sorted({t for d in devices for t in device_dtypes(d, dtypes)}):
            kind = _numpy_dtype(dtype)
            a = rng.random((m, k), dtype=kind)
            b = rng.random((k, n), dtype=kind)
            c = np.ones((m, n), dtype=kind)
            for device in devices:
                if dtype in device_dtypes(device, dtypes):
                    row = {"kernel": "gemm", "device": device, "dtype": dtype, "m": m, "n": n, "k": k,
                           "heldout": heldout}
                    timed.append(_Timed(row, partial(np.matmul, a, b, out=c), device_threads(device)))
        return timed

    return [_Unit(f"gemm {m}x{n}x{k}", partial(build, i, m, n, k, held))
            for i, (m, n, k, held) in enumerate(gemm_shapes(quick))]


def _sparse_units(kernels: Sequence[str], devices: Sequence[str], dtypes: Sequence[str] | None, quick: bool,
                  seed: int) -> list[_Unit]:
    def build(index: int, case: SparseCase) -> list[_Timed]:
        rng = np.random.default_rng([seed, 2, index])
        base = random_csr(case.rows, case.rows, case.rows * case.degree, case.skew, rng, "fp64")
        dims = {"rows": case.rows, "cols": case.rows, "nnz": int(base.nnz), "row_cv": row_cv(base)}
        timed = []
        for dtype in sorted({t for d in devices for t in device_dtypes(d, dtypes)}):
            kind = _numpy_dtype(dtype)
            matrix = base.astype(kind)
            x = rng.random(case.rows, dtype=kind)
            dense = {w: rng.random((case.rows, w), dtype=kind) for w in spmm_widths(quick)
                     if "spmm" in kernels and matrix.nnz * w <= MAX_SPMM_WORK}
            for device in devices:
                if dtype not in device_dtypes(device, dtypes):
                    continue
                common = {"device": device, "dtype": dtype, **dims, "heldout": case.heldout}
                if "spmv" in kernels:
                    timed.append(_Timed({"kernel": "spmv", **common}, partial(operator.matmul, matrix, x),
                                        device_threads(device)))
                if "spmm" in kernels:
                    timed += [_Timed({"kernel": "spmm", **common, "width": w}, partial(operator.matmul, matrix, b),
                                     device_threads(device)) for w, b in dense.items()]
        return timed

    return [_Unit(f"{'/'.join(kernels)} {c.rows} rows, degree {c.degree}, "
                  f"{'uniform' if c.skew is None else f'power-law {c.skew:g}'}", partial(build, i, c))
            for i, c in enumerate(sparse_cases(quick))]


def _gpu_units(devices: Sequence[str], dtypes: Sequence[str] | None, quick: bool, seed: int) -> list[_Unit]:
    """GEMM on ``cuda`` (fp32, TF32 off) and ``tensorcore`` (fp16, bf16, tf32) through PyTorch."""
    import torch  # type: ignore[import-not-found, unused-ignore]

    torch_dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

    def matmul(a: Any, b: Any, c: Any, tf32: bool) -> None:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.matmul(a, b, out=c)

    def build(index: int, m: int, n: int, k: int, heldout: bool) -> list[_Timed]:
        generator = torch.Generator(device="cuda").manual_seed(seed * 1_000_003 + index)
        timed = []
        for device in devices:
            for dtype in device_dtypes(device, dtypes):
                kind = torch_dtypes[dtype]
                a = torch.randn((m, k), device="cuda", dtype=kind, generator=generator)
                b = torch.randn((k, n), device="cuda", dtype=kind, generator=generator)
                c = torch.empty((m, n), device="cuda", dtype=kind)
                row = {"kernel": "gemm", "device": device, "dtype": dtype, "m": m, "n": n, "k": k,
                       "heldout": heldout}
                timed.append(_Timed(row, partial(matmul, a, b, c, dtype == "tf32"), None, torch.cuda.synchronize))
        return timed

    return [_Unit(f"gpu gemm {m}x{n}x{k}", partial(build, i, m, n, k, held))
            for i, (m, n, k, held) in enumerate(gemm_shapes(quick))]


def _warm_up(devices: Sequence[str]) -> None:
    """Run a few mid-size GEMMs per CPU device first (thread pools up, code paged in)."""
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped, unused-ignore]

    a = np.ones((512, 512), dtype=np.float32)
    for device in devices:
        with threadpool_limits(limits=device_threads(device), user_api="blas"):
            for _ in range(3):
                a @ a


def profile_samples(units: Sequence[_Unit], *, rounds: int = ROUNDS, seed: int = 0,
                    progress: Progress | None = None, clock: str = "wall") -> pd.DataFrame:
    """Time every unit's calls ``rounds`` times (seeded order per round); one row per sample.

    ``clock`` names the CPU calls' clock in :data:`CLOCKS` (GPU calls are always wall-clock).

    Columns: the sample's kernel, device, dtype, dims, ``heldout``, ``seconds`` (median over the
    rounds) and ``spread`` ((max - min) / median over the rounds: how noisy the machine was). Raises :class:`~dse.interrupt.Interrupted` when a signal asks for a stop (checked
    before every timed call), its ``partial`` the samples measured so far.
    """
    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped, unused-ignore]

    controller = ThreadpoolController()
    progress = progress or silent()
    order = np.random.default_rng([seed, 0])
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    times: dict[tuple[int, int], list[float]] = {}
    for round_index in range(rounds):
        for done, u in enumerate(order.permutation(len(units)), 1):
            for j, timed in enumerate(units[u].build()):
                stop_point(lambda: _sample_frame(rows, times, partial=True))
                if timed.threads is None:
                    seconds = time_call(timed.call, sync=timed.sync)
                else:
                    with controller.limit(limits=timed.threads, user_api="blas"):
                        seconds = time_call(timed.call, clock=CLOCKS[clock])
                rows.setdefault((u, j), timed.row)
                times.setdefault((u, j), []).append(seconds)
            progress.update(f"round {round_index + 1}/{rounds}: {units[u].label} ({done}/{len(units)})")
    return _sample_frame(rows, times)


def _sample_frame(rows: dict[tuple[int, int], dict[str, Any]], times: dict[tuple[int, int], list[float]],
                  partial: bool = False) -> pd.DataFrame:
    """One row per measured size: its description, the median seconds and the spread (``partial``: also
    the rounds each size was timed, a run cut short by a signal)."""
    records = []
    for key, row in rows.items():
        values = np.asarray(times[key])
        median = float(np.median(values))
        records.append({**row, "seconds": median, "spread": float((values.max() - values.min()) / median)}
                       | ({"rounds_timed": len(values)} if partial else {}))
    return pd.DataFrame(records)


def calibration_plan(kernels: Sequence[str], devices: Sequence[str], dtypes: Sequence[str] | None, *, gpu: bool,
                     source: str = "command line") -> list[tuple[str, str, str]]:
    """The (kernel, device, dtype) fits a run would make: each device's kernels and dtypes
    (GPU devices only when ``gpu``; they profile GEMM only).

    Raises :class:`SpecError` (field ``--devices``/``devices`` or ``--dtypes``/``dtypes``, after
    ``source``'s convention) when that leaves nothing to profile.
    """
    flag = "--" if source == "command line" else ""
    plan = [(k, d, t) for d in devices if d not in GPU_DEVICES for k in kernels for t in device_dtypes(d, dtypes)]
    if gpu:
        plan += [(k, d, t) for d in devices if d in GPU_DEVICES for k in kernels if k in GPU_KERNELS
                 for t in device_dtypes(d, dtypes)]
    if plan:
        return plan
    if not gpu and all(d in GPU_DEVICES for d in devices):
        raise SpecError(source, f"{flag}devices", ",".join(devices), "no CUDA on this machine: nothing to profile")
    if dtypes is not None and all(device_dtypes(d, dtypes) == () for d in devices):
        raise SpecError(source, f"{flag}dtypes", ",".join(dtypes),
                        f"no device asked for runs these: CPU devices take {', '.join(CPU_DTYPES)}, cuda "
                        f"{', '.join(CUDA_DTYPES)}, tensorcore {', '.join(TENSORCORE_DTYPES)}")
    raise SpecError(source, f"{flag}kernels", ",".join(kernels),
                    f"GPU devices profile {', '.join(GPU_KERNELS)} only: nothing to profile")


def run_calibration(kernels: Sequence[str], devices: Sequence[str], *, quick: bool = False, seed: int = 0,
                    progress: Progress | None = None, dtypes: Sequence[str] | None = None,
                    gpu: bool | None = None, rounds: int = ROUNDS,
                    clock: str = "wall") -> tuple[Calibration, pd.DataFrame]:
    """Profile ``kernels`` on ``devices`` and fit them; returns the calibration and its report.

    The report (:func:`report_frame`) has one row per fit: ``kernel, device, dtype, samples,
    heldout, mape_heldout, spread, coefficients``; ``report.attrs["samples"]`` holds the
    measured samples (:func:`profile_samples`). ``dtypes`` restricts the element types
    (default: fp32 on CPU devices and ``cuda``; fp16, bf16 and tf32 on ``tensorcore``); ``gpu``
    forces the GPU devices on or off (default: whether :func:`cuda_available`). Without CUDA the
    GPU devices are skipped with one note on stderr. ``clock="thread"`` reads the calling
    thread's CPU time instead of the wall clock (:data:`CLOCKS`; ``cpu:t1`` only). Raises
    :class:`SpecError` for an unknown kernel, device, dtype or clock, a thread clock with a
    multi-threaded or GPU device, or when nothing is left to profile.
    """
    source = "run_calibration"
    kernels = check_kernels(kernels, source, "kernels")
    devices = check_devices(devices, source, "devices")
    if dtypes is not None:
        dtypes = check_dtypes(dtypes, source, "dtypes")
    if not 1 <= rounds <= 100:
        raise SpecError(source, "rounds", rounds, "must be an integer in [1, 100]")
    check_clock(clock, devices, source, "clock")
    use_gpu = cuda_available() if gpu is None else gpu
    if not use_gpu and any(d in GPU_DEVICES for d in devices):
        print("note: no CUDA: GPU kernels not profiled", file=sys.stderr)
    plan = calibration_plan(kernels, devices, dtypes, gpu=use_gpu, source=source)
    cpu_devices = [d for d in devices if d not in GPU_DEVICES]
    gpu_devices = [d for d in devices if d in GPU_DEVICES and use_gpu]
    planned_cpu = [d for d in cpu_devices if any(p[1] == d for p in plan)]
    planned_gpu = [d for d in gpu_devices if any(p[1] == d for p in plan)]
    units: list[_Unit] = []
    if "gemm" in kernels and planned_cpu:
        units += _gemm_units(planned_cpu, dtypes, quick, seed)
    sparse = [k for k in kernels if k != "gemm"]
    if sparse and planned_cpu:
        units += _sparse_units(sparse, planned_cpu, dtypes, quick, seed)
    if planned_gpu and "gemm" in kernels:
        units += _gpu_units(planned_gpu, dtypes, quick, seed)
    load_before = _load_average()
    _warm_up(planned_cpu)
    with _tf32_restored(bool(planned_gpu)):
        samples = profile_samples(units, rounds=rounds, seed=seed, progress=progress, clock=clock)
    fits = tuple(fit_kernel(samples, k, d, t) for k, d, t in plan)
    machine = MachineInfo.current()
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    note = (f"dse calibrate {'--quick ' if quick else ''}--kernels {','.join(kernels)} "
            f"--devices {','.join(devices)} --seed {seed} --clock {clock}; measured {stamp}; "
            f"1-min load average {load_before} before, {_load_average()} after")
    calibration = Calibration(machine, fits, "measured on this machine", note)
    report = report_frame(calibration, samples)
    report.attrs["samples"] = samples
    return calibration, report


@contextmanager
def _tf32_restored(gpu: bool) -> Iterator[None]:
    """Put PyTorch's TF32 matmul setting back as it was after the GPU samples (which switch it)."""
    if not gpu:
        yield
        return
    import torch  # type: ignore[import-not-found, unused-ignore]

    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def _load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "unknown"


def report_frame(calibration: Calibration, samples: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per fit: kernel, device, dtype, samples, heldout, mape_heldout, the median
    ``spread`` of its samples over rounds (when ``samples`` are given) and the nonzero coefficients."""
    records = []
    for f in calibration.fits:
        spread = math.nan
        if samples is not None and "spread" in samples.columns:
            mine = samples[(samples["kernel"] == f.kernel) & (samples["device"] == f.device)
                           & (samples["dtype"] == f.dtype)]
            spread = float(mine["spread"].median()) if len(mine) else math.nan
        records.append({"kernel": f.kernel, "device": f.device, "dtype": f.dtype, "samples": f.n_samples,
                        "heldout": f.n_heldout, "mape_heldout": f.mape_heldout, "spread": spread,
                        "coefficients": ", ".join(f"{t}={c:.3g}" for t, c in zip(f.terms, f.coefficients,
                                                                                 strict=True) if c > 0)})
    return pd.DataFrame(records, columns=["kernel", "device", "dtype", "samples", "heldout", "mape_heldout",
                                          "spread", "coefficients"])


# ----------------------------------------------------------------------------- files


class _MachineModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str = Field(min_length=1)
    cpu_model: str
    logical_cores: int = Field(ge=1)
    gpu: str | None = None


class _FitModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kernel: str
    device: str
    dtype: str
    terms: list[str] = Field(min_length=1)
    coefficients_s: list[float]
    mape_heldout: float | None = None
    n_samples: int = Field(ge=0)
    n_heldout: int = Field(default=0, ge=0)
    params: dict[str, float] = Field(default_factory=dict)


class _FileModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: str
    machine: _MachineModel
    note: str = ""
    fits: list[_FitModel]


def _fit_from_model(model: _FitModel, i: int, source: str) -> KernelFit:
    where = f"fits[{i}]"
    if model.kernel not in KERNELS:
        raise SpecError(source, f"{where}.kernel", model.kernel, f"unknown kernel; known: {', '.join(KERNELS)}")
    check_dtypes([model.dtype], source, f"{where}.dtype")
    if model.device not in GPU_DEVICES and _DEVICE_RE.match(model.device) is None:
        raise SpecError(source, f"{where}.device", model.device, "unknown device; known: cpu, cpu:tN, cuda, tensorcore")
    known = KERNEL_TERMS[model.kernel]
    for j, term in enumerate(model.terms):
        if term not in known:
            raise SpecError(source, f"{where}.terms[{j}]", term, f"unknown {model.kernel} term; known: {', '.join(known)}")
    if len(set(model.terms)) != len(model.terms):
        raise SpecError(source, f"{where}.terms", model.terms, "a term is listed twice")
    if len(model.coefficients_s) != len(model.terms):
        raise SpecError(source, f"{where}.coefficients_s", model.coefficients_s,
                        f"needs one coefficient per term ({len(model.terms)})")
    for j, value in enumerate(model.coefficients_s):
        if not math.isfinite(value) or value < 0:
            raise SpecError(source, f"{where}.coefficients_s[{j}]", value, "must be finite and >= 0")
    for name, value in model.params.items():
        if name not in FIT_PARAMS:
            raise SpecError(source, f"{where}.params.{name}", value, f"unknown parameter; known: {', '.join(FIT_PARAMS)}")
        if not math.isfinite(value) or value <= 0:
            raise SpecError(source, f"{where}.params.{name}", value, "must be finite and > 0")
    error = math.nan if model.mape_heldout is None else model.mape_heldout
    if not (math.isnan(error) or error >= 0):
        raise SpecError(source, f"{where}.mape_heldout", model.mape_heldout, "must be >= 0")
    return KernelFit(model.kernel, model.device, model.dtype, tuple(model.terms), tuple(model.coefficients_s),
                     error, model.n_samples, model.n_heldout, tuple(sorted(model.params.items())))


def calibration_from_dict(data: Any, source: str, *, check_machine: bool = True) -> Calibration:
    """Build a :class:`Calibration` from a parsed YAML mapping; :class:`SpecError` naming ``source``."""
    from dse.platform import spec_error_from_validation

    if not isinstance(data, Mapping):
        raise SpecError(source, "<root>", type(data).__name__, "a calibration file is a mapping (format, machine, fits)")
    try:
        model = _FileModel.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None
    if model.format != FILE_FORMAT:
        raise SpecError(source, "format", model.format, f"expected {FILE_FORMAT}")
    machine = MachineInfo(model.machine.kind, model.machine.cpu_model, model.machine.logical_cores, model.machine.gpu)
    fits = tuple(_fit_from_model(f, i, source) for i, f in enumerate(model.fits))
    seen: set[tuple[str, str, str]] = set()
    for i, f in enumerate(fits):
        if (f.kernel, f.device, f.dtype) in seen:
            raise SpecError(source, f"fits[{i}]", f"{f.kernel}/{f.device}/{f.dtype}", "a second fit of the same "
                                                                                        "kernel, device and dtype")
        seen.add((f.kernel, f.device, f.dtype))
    if check_machine:
        here = MachineInfo.current()
        if machine.kind != here.kind:
            raise SpecError(source, "machine.kind", machine.kind,
                            f"calibrated on another machine kind; this machine is {here.kind!r} "
                            f"(run dse calibrate here, or load with check_machine=False)")
        gpu_fits = any(f.device in GPU_DEVICES for f in fits)
        if gpu_fits and machine.gpu and here.gpu and machine.gpu != here.gpu:
            raise SpecError(source, "machine.gpu", machine.gpu, f"GPU fits made on another GPU; this one is {here.gpu!r}")
    return Calibration(machine, fits, source, model.note)


def load_calibration(path: str | Path, *, check_machine: bool = True) -> Calibration:
    """Read a calibration YAML file.

    Raises :class:`SpecError` naming the file, the field and the value for a missing or
    malformed file, and (field ``machine.kind``) for one made on another machine kind when
    ``check_machine``.
    """
    from dse.yamlio import read_yaml

    return calibration_from_dict(read_yaml(path), str(path), check_machine=check_machine)


def calibration_to_dict(cal: Calibration) -> dict[str, Any]:
    """The YAML mapping of ``cal`` (what :func:`save_calibration` writes)."""
    return {
        "format": FILE_FORMAT,
        "machine": {"kind": cal.machine.kind, "cpu_model": cal.machine.cpu_model,
                    "logical_cores": cal.machine.logical_cores, "gpu": cal.machine.gpu},
        "note": cal.note,
        "fits": [{"kernel": f.kernel, "device": f.device, "dtype": f.dtype, "terms": list(f.terms),
                  "coefficients_s": [float(c) for c in f.coefficients],
                  "mape_heldout": None if math.isnan(f.mape_heldout) else float(f.mape_heldout), "n_samples": f.n_samples, "n_heldout": f.n_heldout,
                  "params": dict(f.params)}
                 for f in cal.fits],
    }


def save_calibration(cal: Calibration, path: str | Path) -> None:
    """Write ``cal`` as YAML to ``path`` (replaced atomically); :class:`SpecError` if it cannot be written."""
    import yaml

    path = Path(path)
    text = "# Kernel calibration written by `dse calibrate`; see docs/calibration.md.\n" + \
        yaml.safe_dump(calibration_to_dict(cal), sort_keys=False, width=120, default_flow_style=None)
    try:
        replace_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    except OSError as exc:
        raise SpecError(str(path), "<file>", str(path), f"cannot write: {exc.strerror or exc}") from None
