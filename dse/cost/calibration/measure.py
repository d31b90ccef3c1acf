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

The model and the file format are described in ``docs/calibration.md``. This module measures;
the fitted model is :mod:`dse.cost.calibration.model`, the fitting :mod:`dse.cost.calibration.fit`, the
files :mod:`dse.cost.calibration.files` (their public names are importable from here too).
"""

from __future__ import annotations

import itertools
import math
import operator
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.cost.calibration.files import (
    FILE_FORMAT,
    calibration_from_dict,
    calibration_to_dict,
    load_calibration,
    save_calibration,
)
from dse.cost.calibration.fit import (
    fit_kernel,
    mape,
)
from dse.cost.calibration.model import (
    CACHE_CANDIDATES_BYTES,
    CPU_DTYPES,
    CUDA_DTYPES,
    DEFAULT_CACHE_BYTES,
    DEFAULT_INNER_CACHE_BYTES,
    FIT_PARAMS,
    GPU_DEVICES,
    GPU_KERNELS,
    KERNEL_DIMS,
    KERNEL_TERMS,
    KERNELS,
    TENSORCORE_DTYPES,
    Calibration,
    KernelFit,
    MachineInfo,
    PairContention,
    check_devices,
    check_dtypes,
    check_kernels,
    device_dtypes,
    device_threads,
    kernel_terms,
)
from dse.errors import SpecError
from dse.model.dtypes import DTYPE_BYTES
from dse.util.interrupt import stop_point
from dse.util.progress import Progress, silent

if TYPE_CHECKING:
    import pandas as pd

#: Public names: this module's (measuring) and, as before the split, those of the model, fitting and files modules.
__all__ = [
    "CACHE_CANDIDATES_BYTES",
    "CLOCKS",
    "CPU_DTYPES",
    "CUDA_DTYPES",
    "Calibration",
    "DEFAULT_CACHE_BYTES",
    "DEFAULT_INNER_CACHE_BYTES",
    "DTYPE_BYTES",
    "FILE_FORMAT",
    "FIT_PARAMS",
    "GPU_DEVICES",
    "GPU_KERNELS",
    "KERNELS",
    "KERNEL_DIMS",
    "KERNEL_TERMS",
    "KernelFit",
    "LONG_CALL_S",
    "MAX_SPMM_WORK",
    "MAX_WINDOWS",
    "MachineInfo",
    "PairContention",
    "ROUNDS",
    "SHORT_CALL_BUDGET_S",
    "SparseCase",
    "TENSORCORE_DTYPES",
    "calibration_from_dict",
    "calibration_plan",
    "calibration_to_dict",
    "check_clock",
    "check_devices",
    "check_dtypes",
    "check_kernels",
    "cuda_available",
    "device_dtypes",
    "device_threads",
    "fit_kernel",
    "gemm_shapes",
    "kernel_terms",
    "contention_estimate",
    "contention_pairs",
    "load_calibration",
    "mape",
    "measure_contention",
    "profile_samples",
    "random_csr",
    "report_frame",
    "row_cv",
    "run_calibration",
    "save_calibration",
    "sparse_cases",
    "spmm_widths",
    "time_call",
]

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
    rounds) and ``spread`` ((max - min) / median over the rounds: how noisy the machine was). Raises :class:`~dse.util.interrupt.Interrupted` when a signal asks for a stop (checked
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
    import pandas as pd
    records = []
    for key, row in rows.items():
        values = np.asarray(times[key])
        median = float(np.median(values))
        records.append({**row, "seconds": median, "spread": float((values.max() - values.min()) / median)}
                       | ({"rounds_timed": len(values)} if partial else {}))
    return pd.DataFrame(records)


# ----------------------------------------------------------------------------- contention

#: Rows of ``A`` each thread multiplies by the shared ``B`` (CONTENTION_SHAPE = rows, n, k) per call, and
#: calls per timed sample, when groups are run side by side: about 80 ms of one core per sample.
CONTENTION_SHAPE = (512, 1024, 1024)
CONTENTION_CALLS = 3
#: Rounds (alone, then beside) per ordered pair; the least ratio counts (:func:`measure_contention`).
CONTENTION_ROUNDS = 7


def contention_pairs(devices: Sequence[str], cores: int | None = None) -> list[tuple[str, str]]:
    """Ordered pairs (device, beside) of CPU worker groups that fit the cores together (a group beside
    another of its own kind included: ``cpu:t1`` beside ``cpu:t1``)."""
    cores = cores or os.cpu_count() or 1
    cpus = sorted({d for d in devices if d not in GPU_DEVICES})
    pairs = []
    for a, b in itertools.combinations_with_replacement(cpus, 2):
        if device_threads(a) + device_threads(b) <= cores:
            pairs += [(a, b)] if a == b else [(a, b), (b, a)]
    return pairs


def _group_cpu_seconds(threads: int, a_parts: list[np.ndarray], b: np.ndarray, c_parts: list[np.ndarray],
                       beside: int, calls: int) -> tuple[float, float]:
    """Run ``threads`` threads, each multiplying its own rows ``calls`` times, while ``beside`` other threads
    multiply theirs in a loop; returns the measured threads' mean CPU seconds and the share of a core the
    ``beside`` threads got meanwhile (1 when there are none)."""
    start = threading.Barrier(threads + beside)
    stop = threading.Event()
    cpu = [0.0] * threads
    side_cpu = [0.0] * beside
    wall = [0.0, 0.0]

    def measured(i: int) -> None:
        start.wait()
        if i == 0:
            wall[0] = time.perf_counter()
        t0 = time.thread_time()
        for _ in range(calls):
            np.matmul(a_parts[i], b, out=c_parts[i])
        cpu[i] = time.thread_time() - t0

    def side(j: int) -> None:
        part = threads + j
        start.wait()
        t0 = time.thread_time()
        while not stop.is_set():
            np.matmul(a_parts[part], b, out=c_parts[part])
        side_cpu[j] = time.thread_time() - t0

    workers = [threading.Thread(target=measured, args=(i,), daemon=True) for i in range(threads)]
    sides = [threading.Thread(target=side, args=(j,), daemon=True) for j in range(beside)]
    for t in workers + sides:
        t.start()
    for t in workers:
        t.join()
    wall[1] = time.perf_counter()
    stop.set()
    for t in sides:
        t.join()
    share = 1.0 if not beside else min(1.0, sum(side_cpu) / beside / max(wall[1] - wall[0], 1e-9))
    return float(np.mean(cpu)), share


def measure_contention(devices: Sequence[str], *, rounds: int = CONTENTION_ROUNDS, seed: int = 0,
                       progress: Progress | None = None) -> tuple[PairContention, ...]:
    """The slowdown of each CPU worker group while another runs beside it (:func:`contention_pairs`).

    Both groups run as the co-execution executor runs them: one Python thread per group thread, BLAS
    limited to one thread, each multiplying its own rows of ``A`` by the shared ``B``. Time is each
    thread's CPU time (``time.thread_time``), so waiting for a core taken by other programs is left out;
    what is left is what the groups share in hardware. Per round the measured group runs alone, then
    beside the other. Each round's time beside is taken over the least time alone of all rounds, and
    its excess over 1 is divided by the share of a core the other group got meanwhile (on a loaded
    machine it runs part of the time only); the least of these ratios is kept, at least 1. Interference
    from outside (other programs' cache traffic, a host that takes the virtual CPU away) only ever adds
    time, while what the two groups share is there in every round, so the least times estimate it (as
    ``timeit`` takes the least of its repeats); a median let a few disturbed rounds set the figure
    (x1.6 on an idle machine whose groups ran side by side at x1.0 moments later). ``spread`` still
    reports how far the rounds' ratios ranged. Raises :class:`~dse.util.interrupt.Interrupted` on a stop
    signal (checked between rounds).
    """
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped, unused-ignore]

    progress = progress or silent()
    rows, n, k = CONTENTION_SHAPE
    rng = np.random.default_rng([seed, 3])
    b = rng.random((k, n), dtype=np.float32)
    results = []
    with threadpool_limits(limits=1, user_api="blas"):
        for device, beside in contention_pairs(devices):
            t_dev, t_side = device_threads(device), device_threads(beside)
            a_parts = [rng.random((rows, k), dtype=np.float32) for _ in range(t_dev + t_side)]
            c_parts = [np.empty((rows, n), dtype=np.float32) for _ in range(t_dev + t_side)]
            _group_cpu_seconds(t_dev, a_parts, b, c_parts, 0, 1)  # warm-up
            alone, beside_rounds = [], []
            for r in range(rounds):
                stop_point()
                alone.append(_group_cpu_seconds(t_dev, a_parts, b, c_parts, 0, CONTENTION_CALLS)[0])
                beside_rounds.append(_group_cpu_seconds(t_dev, a_parts, b, c_parts, t_side, CONTENTION_CALLS))
                progress.update(f"contention {device} beside {beside}: round {r + 1}/{rounds}, "
                                f"x{beside_rounds[-1][0] / alone[-1]:.3f}")
            results.append(contention_estimate(device, beside, alone, beside_rounds))
    return tuple(results)


def contention_estimate(device: str, beside: str, alone: Sequence[float],
                        together: Sequence[tuple[float, float]]) -> PairContention:
    """The :class:`PairContention` of rounds timed alone (CPU seconds) and beside the other group
    (``(CPU seconds, share of a core the other group got)``): the least of ``1 + (beside / least alone - 1)
    / share`` over the rounds (``share`` at least 0.25), at least 1; ``spread`` = (largest - smallest) /
    median of those ratios (see :func:`measure_contention`)."""
    fastest_alone = min(alone)
    ratios = [1.0 + (t / fastest_alone - 1.0) / max(share, 0.25) for t, share in together]
    median = float(np.median(ratios))
    spread = float((max(ratios) - min(ratios)) / median) if median > 0 else 0.0
    return PairContention(device, beside, max(1.0, min(ratios)), spread, len(ratios))


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
                    clock: str = "wall",
                    contention_rounds: int = CONTENTION_ROUNDS) -> tuple[Calibration, pd.DataFrame]:
    """Profile ``kernels`` on ``devices`` and fit them; returns the calibration and its report.

    The report (:func:`report_frame`) has one row per fit: ``kernel, device, dtype, samples,
    heldout, mape_heldout, spread, coefficients``; ``report.attrs["samples"]`` holds the
    measured samples (:func:`profile_samples`). ``dtypes`` restricts the element types
    (default: fp32 on CPU devices and ``cuda``; fp16, bf16 and tf32 on ``tensorcore``); ``gpu``
    forces the GPU devices on or off (default: whether :func:`cuda_available`). Without CUDA the
    GPU devices are skipped with one note on stderr. ``clock="thread"`` reads the calling
    thread's CPU time instead of the wall clock (:data:`CLOCKS`; ``cpu:t1`` only). With ``gemm`` among the
    kernels, every pair of CPU devices that fits the cores is also run side by side
    (:func:`measure_contention`, ``contention_rounds`` rounds; 0 skips it). Raises
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
    contention = measure_contention(planned_cpu, rounds=contention_rounds, seed=seed, progress=progress) \
        if contention_rounds and "gemm" in kernels else ()
    machine = MachineInfo.current()
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    note = (f"dse calibrate {'--quick ' if quick else ''}--kernels {','.join(kernels)} "
            f"--devices {','.join(devices)} --seed {seed} --clock {clock}; measured {stamp}; "
            f"1-min load average {load_before} before, {_load_average()} after")
    calibration = Calibration(machine, fits, "measured on this machine", note, contention)
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
    import pandas as pd
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
