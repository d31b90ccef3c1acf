"""POAS's schedule phase, for real: one GEMM's row parts run at once on several devices.

* CPU worker groups (``cpu:tN``): OpenBLAS's thread count is process-global
  (``threadpoolctl.threadpool_limits`` changes it for every thread), so a group
  of N threads is N Python threads, each multiplying its own contiguous rows
  with BLAS limited to one thread; numpy releases the GIL inside BLAS, so the
  groups really run side by side. The reference "all cores" time is one BLAS
  call with its own thread pool.
* GPU devices (``cuda``, ``tensorcore``, through PyTorch when CUDA exists):
  each on its own CUDA stream, copies in, multiply, copies out. ``cuda`` runs
  with TF32 off (CUDA cores; fp16/bf16 parts computed in fp32); ``tensorcore``
  runs fp16/bf16 natively and fp32 parts in fp16 (cuBLAS's TF32 switch is
  process-global), so its parts are checked at the fp16 tolerance.

:class:`CoExecutor` assembles ``C``, checks it against one single-device
product within the dtype's tolerance and times every device; :func:`profile_predictor`
fits each device's compute time on this GEMM's shape (POAS's predict phase
when no calibration file is given).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.calibrate import cuda_available
from dse.errors import SpecError
from dse.interrupt import Interrupted, stop_point
from dse.mapping.split_model import (
    DTYPE_TOLERANCE,
    GemmWorkload,
    Predictor,
    SplitDevice,
    SplitPlatform,
    host_memory_bytes,
    part_costs,
)
from dse.progress import Progress, silent

#: dtypes CPU worker groups run (numpy has no BLAS for fp16, no bf16 at all).
CPU_DTYPES = {"fp64": np.float64, "fp32": np.float32}
GPU_KINDS = ("gpu", "tensorcore")


def default_cpu_groups(cores: int | None = None, gpus: int = 0) -> tuple[int, ...]:
    """Two CPU worker groups splitting this machine's cores (one core reserved per GPU); at least one thread each."""
    cores = (cores or os.cpu_count() or 1) - gpus
    if cores <= 1:
        return (1,)
    return (cores // 2, cores - cores // 2)


def parse_devices(text: str | None, source: str = "--devices") -> SplitPlatform:
    """``cpu:t1,cpu:t1,cuda,tensorcore`` -> a :class:`SplitPlatform` of this machine.

    CPU groups share host memory; ``cuda`` and ``tensorcore`` share GPU 0's
    memory and host link, and one CPU core is reserved to drive the GPU.
    Raises :class:`SpecError` for an unknown device, a GPU device without CUDA,
    or more CPU threads than the cores left.
    """
    cores = os.cpu_count() or 1
    names = [t.strip() for t in text.split(",")] if text else []
    if any(not n for n in names):
        raise SpecError("command line", source, text, "an empty device name")
    gpus = 1 if any(n in ("cuda", "tensorcore") for n in names) else 0
    if not names:
        names = [f"cpu:t{t}" for t in default_cpu_groups(cores, 0)]
    devices: list[SplitDevice] = []
    mem = host_memory_bytes()
    threads = 0
    for i, name in enumerate(names):
        if name.startswith("cpu:t") and name[5:].isdigit() and int(name[5:]) > 0:
            t = int(name[5:])
            threads += t
            devices.append(SplitDevice(name=f"{name}/{i}", kind="cpu", fit_device=name, mem_bytes=mem, pool="host",
                                       active_w=15.0 * t, idle_w=0.0, threads=t))
        elif name in ("cuda", "tensorcore"):
            if not cuda_available():
                raise SpecError("command line", source, name,
                                "CUDA is not available here (install the gpu extra on a machine with a GPU)")
            devices.append(_gpu_device(name))
        else:
            raise SpecError("command line", source, name, "devices are cpu:tN (a group of N BLAS threads), cuda, tensorcore")
    if threads > cores - gpus:
        raise SpecError("command line", source, text,
                        f"{threads} CPU threads requested, {cores - gpus} cores available"
                        + (" (one is reserved to drive the GPU)" if gpus else ""))
    if len({d.name for d in devices}) != len(devices):
        raise SpecError("command line", source, text, "a GPU device is listed twice")
    return SplitPlatform("this machine", tuple(devices))


def _gpu_device(name: str) -> SplitDevice:  # pragma: no cover - needs CUDA
    import torch  # type: ignore[import-not-found, unused-ignore]

    props = torch.cuda.get_device_properties(0)
    kind = "gpu" if name == "cuda" else "tensorcore"
    return SplitDevice(name=name, kind=kind, fit_device=name, mem_bytes=int(props.total_memory * 0.9), pool="gpu0",
                       active_w=300.0, idle_w=0.0, link_gbps=25.0, link_latency_us=10.0,
                       granularity=8 if kind == "tensorcore" else 1)


def check_dtype(platform: SplitPlatform, dtype: str, source: str = "--dtype") -> None:
    """Raise :class:`SpecError` when a device here cannot run ``dtype``."""
    if dtype not in DTYPE_TOLERANCE:
        raise SpecError("command line", source, dtype, f"dtypes are {', '.join(DTYPE_TOLERANCE)}")
    cpus = [d.name for d in platform.devices if d.kind == "cpu"]
    if cpus and dtype not in CPU_DTYPES:
        raise SpecError("command line", source, dtype,
                        f"CPU worker groups run {' and '.join(CPU_DTYPES)} (devices {', '.join(cpus)})")


def tolerance(platform: SplitPlatform, dtype: str) -> float:
    """Relative error accepted for the assembled result: the dtype's, or fp16's where tensor cores run fp32 as fp16."""
    tol = DTYPE_TOLERANCE[dtype]
    if dtype == "fp32" and any(d.kind == "tensorcore" for d in platform.devices):
        tol = DTYPE_TOLERANCE["fp16"]
    return tol


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class RunTiming:
    """One co-executed run: per-device seconds from the common start to the device's last row, and the total."""

    device_s: tuple[float, ...]
    total_s: float


class CoExecutor:
    """Runs row parts of ``A @ B`` on ``platform``'s devices at once; operands drawn from ``seed``.

    Raises :class:`SpecError` for a dtype the devices cannot run.
    """

    def __init__(self, workload: GemmWorkload, platform: SplitPlatform, seed: int = 0) -> None:
        check_dtype(platform, workload.dtype)
        self.workload = workload
        self.platform = platform
        rng = np.random.default_rng(seed)
        dtype = CPU_DTYPES.get(workload.dtype, np.float32)
        self.A = rng.uniform(-1, 1, size=(workload.m, workload.k)).astype(dtype)
        self.B = rng.uniform(-1, 1, size=(workload.k, workload.n)).astype(dtype)
        self.C = np.zeros((workload.m, workload.n), dtype=dtype)
        self._gpu: Any = None
        if any(d.kind in GPU_KINDS for d in platform.devices):  # pragma: no cover - needs CUDA
            self._gpu = _TorchRunner(self.B, workload.dtype)

    def _cpu_part(self, threads: int, start: int, stop: int) -> list[tuple[int, int]]:
        bounds = np.linspace(start, stop, threads + 1).astype(int)
        return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]

    def run(self, rows: Sequence[tuple[int, int]]) -> RunTiming:
        """Run device ``d`` on rows ``rows[d] = (start, stop)`` (all at once), writing into ``self.C``."""
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped, unused-ignore]

        devices = self.platform.devices
        jobs: list[tuple[int, Any, tuple]] = []
        for d, (dev, (a, b)) in enumerate(zip(devices, rows, strict=True)):
            if b <= a:
                continue
            if dev.kind == "cpu":
                for lo, hi in self._cpu_part(dev.threads, a, b):
                    jobs.append((d, self._cpu_job, (lo, hi)))
            else:  # pragma: no cover - needs CUDA
                jobs.append((d, self._gpu.job, (dev, self.A, self.C, a, b)))
        finish = np.zeros(len(devices))
        barrier = threading.Barrier(len(jobs) + 1)
        errors: list[BaseException] = []
        lock = threading.Lock()
        start = [0.0]

        def work(d: int, fn: Any, args: tuple) -> None:
            try:
                barrier.wait()
                fn(*args)
                end = time.perf_counter()
                with lock:
                    finish[d] = max(finish[d], end - start[0])
            except BaseException as exc:  # re-raised in the caller's thread
                errors.append(exc)

        with threadpool_limits(limits=1, user_api="blas"):
            threads = [threading.Thread(target=work, args=job, daemon=True) for job in jobs]
            for t in threads:
                t.start()
            start[0] = time.perf_counter()
            barrier.wait()
            for t in threads:
                t.join()
            total = time.perf_counter() - start[0]
        if errors:
            raise errors[0]
        stop_point()  # between runs: a signal stops the measurements within one run's time
        return RunTiming(tuple(float(f) for f in finish), total)

    def _cpu_job(self, lo: int, hi: int) -> None:
        np.matmul(self.A[lo:hi], self.B, out=self.C[lo:hi])

    def timed(self, rows: Sequence[tuple[int, int]], repeat: int = 3) -> RunTiming:
        """One warm-up run then ``repeat`` runs; the per-device and total medians."""
        self.run(rows)
        runs = [self.run(rows) for _ in range(max(repeat, 1))]
        device_s = np.median(np.array([r.device_s for r in runs]), axis=0)
        return RunTiming(tuple(float(x) for x in device_s), float(np.median([r.total_s for r in runs])))

    def reference(self) -> np.ndarray:
        """The single-device product: one BLAS call on every core (float64 accumulate for low precisions)."""
        if self.A.dtype in (np.float32, np.float64) and self.workload.dtype in CPU_DTYPES:
            return np.matmul(self.A, self.B)
        return (self.A.astype(np.float64) @ self.B.astype(np.float64)).astype(self.A.dtype)  # pragma: no cover

    def all_cores_s(self, repeat: int = 3) -> float:
        """Median time of one BLAS call using every core (the usual single-device baseline on a CPU)."""
        np.matmul(self.A, self.B, out=self.C)
        times = []
        for _ in range(max(repeat, 1)):
            t0 = time.perf_counter()
            np.matmul(self.A, self.B, out=self.C)
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    def check(self, expected: np.ndarray, tol: float) -> tuple[bool, float]:
        """Whether ``self.C`` equals ``expected`` within ``tol`` (max abs error / max abs value); and that error."""
        scale = float(np.abs(expected).max()) or 1.0
        err = float(np.abs(self.C.astype(np.float64) - expected).max()) / scale
        return bool(err <= tol), err


class _TorchRunner:  # pragma: no cover - needs CUDA
    """GPU parts through PyTorch: pinned host buffers, one CUDA stream per device, ``B`` resident on the GPU."""

    def __init__(self, B: np.ndarray, dtype: str) -> None:
        import torch  # type: ignore[import-not-found, unused-ignore]

        self.torch = torch
        torch.backends.cuda.matmul.allow_tf32 = False
        self.dtype = dtype
        self.streams: dict[str, Any] = {}
        self.B32 = torch.from_numpy(B).cuda()

    def job(self, dev: SplitDevice, A: np.ndarray, C: np.ndarray, a: int, b: int) -> None:
        torch = self.torch
        stream = self.streams.setdefault(dev.name, torch.cuda.Stream())
        low = {"fp16": torch.float16, "bf16": torch.bfloat16}
        with torch.cuda.stream(stream):
            part = torch.from_numpy(A[a:b]).pin_memory().cuda(non_blocking=True)
            if dev.kind == "tensorcore":
                t = low.get(self.dtype, torch.float16)
                out = (part.to(t) @ self.B32.to(t)).to(part.dtype)
            else:
                out = part @ self.B32
            C[a:b] = out.cpu().numpy()
            stream.synchronize()


# --------------------------------------------------------------------------- predict phase


def _fit_line(rows: np.ndarray, seconds: np.ndarray) -> tuple[float, float]:
    """Least-squares ``seconds = slope * rows + intercept`` with both clamped to >= 0."""
    slope, intercept = np.polyfit(rows.astype(float), seconds, 1)
    if intercept < 0:
        slope, intercept = float(np.sum(rows * seconds) / np.sum(rows * rows)), 0.0
    return max(float(slope), 0.0), max(float(intercept), 0.0)


def profile_predictor(executor: CoExecutor, *, repeat: int = 3, progress: Progress | None = None) -> Predictor:
    """Fit each device's compute time on this GEMM's shape: the device alone on 1/8, 1/4 and 1/2 of the rows
    (median of ``repeat`` runs), a line in the row count. Devices with the same fit name are profiled once."""
    progress = progress or silent()
    w = executor.workload
    sizes = np.unique(np.maximum(np.array([w.m // 8, w.m // 4, w.m // 2]), 1))
    lines: dict[str, tuple[float, float]] = {}
    devices = executor.platform.devices
    for d, dev in enumerate(devices):
        if dev.fit_device in lines:
            continue
        seconds = []
        for r in sizes:
            rows = [(0, 0)] * len(devices)
            rows[d] = (0, int(r))
            seconds.append(executor.timed(rows, repeat).device_s[d])
            progress.update(f"profiled {dev.name} on {r} rows: {seconds[-1] * 1e3:.3g} ms")
        lines[dev.fit_device] = _fit_line(sizes, np.array(seconds))

    def predict(dev: SplitDevice, workload: GemmWorkload, rows: np.ndarray) -> np.ndarray:
        slope, intercept = lines[dev.fit_device]
        scale = (workload.n * workload.k) / (w.n * w.k)
        return slope * scale * np.asarray(rows, dtype=float) + intercept

    return predict


def predict_rows(workload: GemmWorkload, platform: SplitPlatform, predict: Predictor,
                 rows: Sequence[tuple[int, int]]) -> tuple[list[float], float]:
    """Predicted busy seconds per device for row ranges ``rows`` (copies included) and the split's time
    (max over devices and over each memory pool's shared host link)."""
    per_dev: list[float] = []
    links: dict[str, float] = {}
    b_once: dict[str, float] = {}
    for dev, (a, b) in zip(platform.devices, rows, strict=True):
        r = np.array([b - a])
        pc = part_costs(dev, workload, r, predict(dev, workload, r))
        per_dev.append(float(pc.time_s[0]))
        links[dev.pool] = links.get(dev.pool, 0.0) + float(pc.link_s[0])
        if b > a:
            b_once[dev.pool] = max(b_once.get(dev.pool, 0.0), pc.b_link_s)
    for pool, t in b_once.items():
        links[pool] += t
    return per_dev, max(per_dev + list(links.values()))


# --------------------------------------------------------------------------- optimize + schedule


@dataclass(frozen=True)
class DeviceReport:
    """One device of a co-executed split: its rows, predicted and measured seconds."""

    name: str
    rows: int
    row_range: tuple[int, int]
    predicted_s: float
    measured_s: float


@dataclass(frozen=True)
class CoexecReport:
    """What ``dse coexec`` prints and writes (``to_dict()`` is ``report.json``)."""

    workload: GemmWorkload
    split_mode: str
    devices: tuple[DeviceReport, ...]
    check: str
    rel_error: float
    tolerance: float
    measured_s: float
    predicted_s: float
    best_single_s: float
    best_single_device: str
    single_s: tuple[tuple[str, float, float], ...]
    all_cores_s: float
    predictor: str
    grid: tuple[tuple[tuple[int, ...], float], ...] = ()

    @property
    def speedup_vs_best_single(self) -> float:
        return self.best_single_s / self.measured_s if self.measured_s > 0 else float("inf")

    def to_dict(self) -> dict[str, Any]:
        w = self.workload
        return {
            "kernel": w.kernel, "m": w.m, "n": w.n, "k": w.k, "dtype": w.dtype, "split": self.split_mode,
            "devices": [{"name": d.name, "rows": d.rows, "row_range": list(d.row_range),
                         "predicted_s": d.predicted_s, "measured_s": d.measured_s} for d in self.devices],
            "check": self.check, "rel_error": self.rel_error, "tolerance": self.tolerance,
            "measured_s": self.measured_s, "predicted_s": self.predicted_s,
            "best_single_s": self.best_single_s, "best_single_device": self.best_single_device,
            "speedup_vs_best_single": self.speedup_vs_best_single,
            "single_devices": [{"name": n, "predicted_s": p, "measured_s": m} for n, p, m in self.single_s],
            "cpu_blas_all_cores_s": self.all_cores_s,
            "predictor": self.predictor,
            "grid": [{"rows": list(r), "measured_s": s} for r, s in self.grid],
        }

    def summary(self) -> str:
        """The printed report: one line per device, then the totals."""
        w = self.workload
        lines = [f"{w.kernel} {w.m}x{w.n}x{w.k} {w.dtype}, split {self.split_mode}, predictor {self.predictor}",
                 f"{'device':<16}{'rows':>9}{'predicted ms':>15}{'measured ms':>14}"]
        for d in self.devices:
            lines.append(f"{d.name:<16}{d.rows:>9}{d.predicted_s * 1e3:>15.4g}{d.measured_s * 1e3:>14.4g}")
        lines += [
            f"co-executed: predicted {self.predicted_s * 1e3:.4g} ms, measured {self.measured_s * 1e3:.4g} ms",
            f"best single device {self.best_single_device}: {self.best_single_s * 1e3:.4g} ms; "
            f"speed-up {self.speedup_vs_best_single:.3f}x",
            f"one BLAS call on every core: {self.all_cores_s * 1e3:.4g} ms",
            f"check: {self.check} (relative error {self.rel_error:.2g}, tolerance {self.tolerance:.0e})",
        ]
        return "\n".join(lines)


def compositions(total: int, parts: int) -> np.ndarray:
    """Every way of writing ``total`` as ``parts`` non-negative integers, (count, parts), lexicographic."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    rows = [np.column_stack([np.full(len(rest), first), rest])
            for first in range(total, -1, -1) for rest in [compositions(total - first, parts - 1)]]
    return np.vstack(rows)


def auto_split(workload: GemmWorkload, platform: SplitPlatform, predict: Predictor, seed: int = 0,
               time_limit: float = 10.0) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The split of least predicted time (CP-SAT over the family's tables): row ranges and chunk counts.

    Raises :class:`~dse.errors.InfeasibleError` when the GEMM fits no device's memory."""
    from ortools.sat.python import cp_model

    from dse.mapping.split import SplitProblem
    from dse.mapping.split_model import split_tables

    problem = SplitProblem(split_tables(workload, platform, predict, cost_model="profiled"), ("time",))
    problem.check_feasible()
    form = problem.cpsat()
    form.model.minimize(form.objective_vars[0])
    solver = cp_model.CpSolver()
    solver.parameters.random_seed = seed
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = time_limit
    status = solver.solve(form.model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        from dse.errors import InfeasibleError

        raise InfeasibleError("memory: no split of the GEMM fits the devices' memory")
    genome = form.to_genome(solver)
    return problem.parts.boundaries(genome), genome


def explicit_split(workload: GemmWorkload, platform: SplitPlatform, rows: Sequence[int],
                   source: str = "--split") -> list[tuple[int, int]]:
    """Row ranges from rows per device; raises :class:`SpecError` when they do not sum to ``m``, one is
    negative, or a part that another follows breaks its device's row granularity."""
    rows = [int(r) for r in rows]
    if len(rows) != len(platform.devices):
        raise SpecError("command line", source, ",".join(map(str, rows)),
                        f"give one row count per device ({len(platform.devices)}: {', '.join(platform.device_names)})")
    if any(r < 0 for r in rows) or sum(rows) != workload.m:
        raise SpecError("command line", source, ",".join(map(str, rows)),
                        f"row counts must be >= 0 and sum to m = {workload.m} (they sum to {sum(rows)})")
    last = max((i for i, r in enumerate(rows) if r > 0), default=-1)
    for i, (dev, r) in enumerate(zip(platform.devices, rows, strict=True)):
        if i != last and r % dev.granularity:
            raise SpecError("command line", source, r, f"{dev.name} takes rows in multiples of {dev.granularity}")
    bounds, start = [], 0
    for r in rows:
        bounds.append((start, start + r))
        start += r
    return bounds


def grid_splits(workload: GemmWorkload, platform: SplitPlatform, steps: int = 20) -> list[list[tuple[int, int]]]:
    """Every split on a grid of ``1/steps`` of the rows (5% steps by default), granularity respected."""
    from dataclasses import replace

    from dse.mapping.split_model import chunk_rows_for

    coarse = replace(workload, chunks=steps)
    chunk = chunk_rows_for(coarse, platform.devices)
    out = []
    for counts in compositions(-(-workload.m // chunk), len(platform.devices)):
        bounds, start = [], 0
        for c in counts:
            stop = min(start + int(c) * chunk, workload.m)
            bounds.append((start, stop))
            start = stop
        out.append(bounds)
    return out


def _grid_best(executor: CoExecutor, candidates: list[list[tuple[int, int]]], repeat: int,
               grid: list[tuple[tuple[int, ...], float]], progress: Progress, finalists: int = 3) -> list[tuple[int, int]]:
    """Time every candidate once (after a warm-up run), appending ``(rows, seconds)`` to ``grid``; then re-time
    the ``finalists`` fastest ``repeat`` times each, interleaved so that they see the same machine load, and
    return the one of least median time."""
    for i, cand in enumerate(candidates):
        t = executor.timed(cand, 1).total_s
        grid.append((tuple(b - a for a, b in cand), t))
        progress.update(f"grid split {i + 1}/{len(candidates)}: {t * 1e3:.4g} ms")
    order = np.argsort([t for _, t in grid], kind="stable")[:finalists]
    times: dict[int, list[float]] = {int(j): [] for j in order}
    for _ in range(max(repeat, 1)):
        for j in times:
            times[j].append(executor.run(candidates[j]).total_s)
    best = min(times, key=lambda j: (float(np.median(times[j])), j))
    return candidates[best]


def coexecute(workload: GemmWorkload, platform: SplitPlatform, split: str | Sequence[int] = "auto", *,
              predict: Predictor | None = None, predictor_name: str = "", repeat: int = 3, seed: int = 0,
              progress: Progress | None = None) -> CoexecReport:
    """Predict, optimize, adapt and run ``workload`` over ``platform``; returns the report.

    ``split``: ``auto`` (least predicted time, CP-SAT), ``grid`` (every 5% split
    measured once, the three fastest re-timed ``repeat`` times interleaved, the best
    median kept) or rows per device. ``predict`` defaults to
    :func:`profile_predictor` on this GEMM. Raises :class:`SpecError` for bad
    input and :class:`~dse.errors.InfeasibleError` when the GEMM fits no memory.
    """
    from dse.errors import InfeasibleError

    progress = progress or silent()
    w = workload
    need = (w.m * w.k + w.k * w.n + w.m * w.n) * w.itemsize
    host = min((d.mem_bytes for d in platform.devices if d.kind == "cpu"), default=host_memory_bytes())
    if need > host:
        name = next((d.name for d in platform.devices if d.kind == "cpu"), "host")
        raise InfeasibleError(f"memory: the {w.m}x{w.n}x{w.k} {w.dtype} GEMM needs {need:,} bytes for A, B and C; "
                              f"{name} has {host:,} bytes of host memory (over by {need - host:,})")
    check_dtype(platform, w.dtype)
    executor = CoExecutor(w, platform, seed)
    grid: list[tuple[tuple[int, ...], float]] = []
    try:
        return _measure(executor, w, platform, split, predict, predictor_name, repeat, seed, progress, grid)
    except Interrupted as stop:
        raise Interrupted(stop.signum, partial={"grid": [{"rows": list(r), "seconds": t} for r, t in grid]}) from None


def _measure(executor: CoExecutor, w: GemmWorkload, platform: SplitPlatform, split: str | Sequence[int],
             predict: Predictor | None, predictor_name: str, repeat: int, seed: int, progress: Progress,
             grid: list[tuple[tuple[int, ...], float]]) -> CoexecReport:
    """The measuring part of :func:`coexecute` (``grid`` filled as grid splits are timed)."""
    if predict is None:
        predict, predictor_name = profile_predictor(executor, repeat=repeat, progress=progress), "profiled on this GEMM"
    n_dev = len(platform.devices)
    if split == "auto":
        bounds, _ = auto_split(w, platform, predict, seed)
    elif split == "grid":
        bounds = _grid_best(executor, grid_splits(w, platform), repeat, grid, progress)
    elif isinstance(split, str):
        raise SpecError("command line", "--split", split, "auto, grid or rows per device R1,R2,...")
    else:
        bounds = explicit_split(w, platform, split)
    timing = executor.timed(bounds, repeat)
    ok, err = executor.check(executor.reference(), tol := tolerance(platform, w.dtype))
    predicted, total_pred = predict_rows(w, platform, predict, bounds)
    singles = []
    for d, dev in enumerate(platform.devices):
        rows = [(0, 0)] * n_dev
        rows[d] = (0, w.m)
        measured = executor.timed(rows, repeat).total_s
        singles.append((dev.name, predict_rows(w, platform, predict, rows)[1], measured))
        progress.update(f"{dev.name} alone: {measured * 1e3:.4g} ms")
    best_name, _, best_s = min(singles, key=lambda s: s[2])
    devices = tuple(DeviceReport(dev.name, b - a, (a, b), p, m)
                    for dev, (a, b), p, m in zip(platform.devices, bounds, predicted, timing.device_s, strict=True))
    return CoexecReport(
        workload=w, split_mode=split if isinstance(split, str) else "explicit", devices=devices,
        check="pass" if ok else "fail", rel_error=err, tolerance=tol, measured_s=timing.total_s,
        predicted_s=total_pred, best_single_s=best_s, best_single_device=best_name, single_s=tuple(singles),
        all_cores_s=executor.all_cores_s(repeat), predictor=predictor_name or "given", grid=tuple(grid))
