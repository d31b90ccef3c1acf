"""The calibration's model: kernels, devices and dtypes it knows, the machine it was measured on,
and the fitted seconds-per-call models (:class:`KernelFit`, :class:`Calibration`) with their terms.

What the cost models read; measuring is :mod:`dse.cost.calibration.measure`, fitting :mod:`dse.cost.calibration.fit`,
the YAML files :mod:`dse.cost.calibration.files`.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dse.errors import SpecError
from dse.model.dtypes import DTYPE_BYTES  # the dtypes a GEMM is profiled in

KERNELS = ("gemm", "spmm", "spmv")
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
class PairContention:
    """How much one CPU worker group slows down while another runs beside it (``dse calibrate``).

    ``slowdown`` is the CPU time of ``device``'s GEMM while a group ``beside`` runs a GEMM
    of its own at the same time, over its CPU time alone (>= 1 when they contend): what the
    two share in hardware (memory bandwidth, the last-level cache, a core's SMT siblings).
    CPU time leaves out the time either waits for a core taken by other programs; that
    share is counted apart, at run time (:mod:`dse.mapping.split.contention`). ``spread``:
    (slowest - fastest) / median of the rounds' ratios; ``rounds``: how many were timed.
    """

    device: str
    beside: str
    slowdown: float
    spread: float = 0.0
    rounds: int = 0


@dataclass(frozen=True)
class Calibration:
    """The fits measured on ``machine``; ``source`` says where it came from (a file, or a run);
    ``contention``: the slowdowns of groups run side by side (empty in files made before they were measured)."""

    machine: MachineInfo
    fits: tuple[KernelFit, ...]
    source: str
    note: str = ""
    contention: tuple[PairContention, ...] = ()
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

    def slowdown(self, device: str, beside: str) -> float | None:
        """The measured slowdown of group ``device`` while group ``beside`` runs (None when not measured)."""
        for pair in self.contention:
            if (pair.device, pair.beside) == (device, beside):
                return pair.slowdown
        return None


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
