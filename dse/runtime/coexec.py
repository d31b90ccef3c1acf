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

import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from dse.cost.calibration.measure import cuda_available
from dse.errors import SpecError
from dse.mapping.split.contention import (
    ContentionModel,
    capacity_from_share,
    corun_predictor,
    finish_times,
    host_threads,
)
from dse.mapping.split.model import (
    DTYPE_TOLERANCE,
    GemmWorkload,
    Predictor,
    SplitDevice,
    SplitPlatform,
    host_memory_bytes,
    part_costs,
)
from dse.util.interrupt import Interrupted, stop_point
from dse.util.progress import Progress, silent

#: Default relative difference between a part's measured and predicted time above which ``--split auto``
#: re-splits with the measured rates (POAS's adapt step).
ADAPT_THRESHOLD = 0.10  # |predicted - measured| / measured
#: Seconds the background probe keeps the cores busy (:func:`probe_background`).
PROBE_S = 0.3
#: Ratio between two timings of one configuration above which the report says the machine was busy
#: between them (below it, run-to-run noise).
BUSY_RATIO = 1.1

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
                 rows: Sequence[tuple[int, int]], model: ContentionModel | None = None) -> tuple[list[float], float]:
    """Predicted busy seconds per device for row ranges ``rows`` (copies included) and the split's time
    (max over devices and over each memory pool's shared host link). With ``model``, each device's compute
    runs beside the others' under :func:`~dse.mapping.split.contention.finish_times` (``predict`` is then
    the time alone on an idle machine); without it, at ``predict``'s time."""
    per_dev: list[float] = []
    links: dict[str, float] = {}
    b_once: dict[str, float] = {}
    counts = [np.array([b - a]) for a, b in rows]
    compute = [float(np.asarray(predict(dev, workload, r), dtype=float).reshape(-1)[0]) if r[0] > 0 else 0.0
               for dev, r in zip(platform.devices, counts, strict=True)]
    if model is not None:
        compute = [float(t) for t in finish_times(compute, platform.devices, model)]
    for dev, r, c in zip(platform.devices, counts, compute, strict=True):
        pc = part_costs(dev, workload, r, np.array([c]))
        per_dev.append(float(pc.time_s[0]))
        links[dev.pool] = links.get(dev.pool, 0.0) + float(pc.link_s[0])
        if r[0] > 0:
            b_once[dev.pool] = max(b_once.get(dev.pool, 0.0), pc.b_link_s)
    for pool, t in b_once.items():
        links[pool] += t
    return per_dev, max(per_dev + list(links.values()))


@dataclass(frozen=True)
class Probe:
    """What :func:`probe_background` saw: the share of a core each probe thread got, the runnable threads of
    other programs in this process's scheduling group (mean over samples), and the cores the group got."""

    share: float
    background: float
    capacity: float


def _scheduling_group(pid: int | str) -> str | None:
    """The autogroup (login session's scheduling group) of ``pid``; None where autogroups are off or unreadable."""
    try:
        return Path(f"/proc/{pid}/autogroup").read_text().split()[0]
    except (OSError, IndexError):
        return None


def group_pids() -> list[int]:
    """Other processes that share this process's scheduling group: its autogroup's members, or every process
    when autogroups are off (then the scheduler shares the cores thread by thread machine-wide). Empty where
    ``/proc`` cannot be read."""
    try:
        enabled = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
        pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and int(p.name) != os.getpid()]
    except (OSError, ValueError):
        return []
    mine = _scheduling_group("self") if enabled else None
    if mine is None:
        return pids
    return [p for p in pids if _scheduling_group(p) == mine]


def runnable_threads(pids: Sequence[int]) -> int:
    """Threads of ``pids`` that are runnable now (state R in ``/proc/PID/task/TID/stat``); gone ones count 0."""
    count = 0
    for pid in pids:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                stat = (task / "stat").read_text()
            except OSError:
                continue
            if stat[stat.rfind(")") + 2:stat.rfind(")") + 3] == "R":
                count += 1
    return count


def probe_background(threads: int, cores: int | None = None, seconds: float = PROBE_S) -> Probe:
    """How much of the cores ``threads`` busy threads of ours get now (:class:`Probe`).

    The threads multiply small matrices (BLAS on one thread) for ``seconds``; a thread's share is its CPU time
    (``time.thread_time``) over the wall time. Meanwhile the runnable threads of other processes in our
    scheduling group are counted every 20 ms (:func:`runnable_threads`); the cores the group gets follow
    (:func:`~dse.mapping.split.contention.capacity_from_share`).
    """
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped, unused-ignore]

    cores = cores or os.cpu_count() or 1
    a = np.ones((192, 192), dtype=np.float32)
    out = [np.empty_like(a) for _ in range(threads)]
    shares = [0.0] * threads
    start = threading.Barrier(threads + 1)
    pids = group_pids()
    counts: list[int] = []

    def spin(i: int) -> None:
        start.wait()
        wall, cpu = time.perf_counter(), time.thread_time()
        while time.perf_counter() - wall < seconds:
            np.matmul(a, a, out=out[i])
        shares[i] = (time.thread_time() - cpu) / max(time.perf_counter() - wall, 1e-9)

    with threadpool_limits(limits=1, user_api="blas"):
        workers = [threading.Thread(target=spin, args=(i,), daemon=True) for i in range(threads)]
        for t in workers:
            t.start()
        start.wait()
        began = time.perf_counter()
        while time.perf_counter() - began < seconds:
            counts.append(runnable_threads(pids))
            time.sleep(0.02)
        for t in workers:
            t.join()
    share = min(1.0, float(np.mean(shares)))
    background = float(np.mean(counts)) if counts else 0.0
    return Probe(share, background, capacity_from_share(share, threads, background, cores))


def plan_split(workload: GemmWorkload, platform: SplitPlatform, predict: Predictor, model: ContentionModel,
               seed: int = 0) -> tuple[list[tuple[int, int]], str]:
    """The split of least predicted time under contention, and why a single device was kept ('' otherwise).

    CP-SAT solves the family over tables in which every device runs for the whole split
    (:func:`~dse.mapping.split.contention.corun_predictor`); the split it finds is then predicted with
    :func:`predict_rows` (devices finishing at different times) and kept unless one device alone on the
    whole GEMM is predicted to be at least as fast: co-execution predicted not to pay.
    """
    bounds, _ = auto_split(workload, platform, corun_predictor(predict, platform, model), seed)
    _, total = predict_rows(workload, platform, predict, bounds, model)
    n_dev = len(platform.devices)
    singles = []
    for d in range(n_dev):
        rows = [(0, 0)] * n_dev
        rows[d] = (0, workload.m)
        singles.append((predict_rows(workload, platform, predict, rows, model)[1], d, rows))
    best_s, best_d, best_rows = min(singles)
    if sum(1 for a, b in bounds if b > a) > 1 and best_s <= total:
        return best_rows, (f"{platform.devices[best_d].name} alone predicted {best_s * 1e3:.4g} ms, "
                           f"the split {total * 1e3:.4g} ms")
    return bounds, ""


def measured_rates(predict: Predictor, platform: SplitPlatform, predicted: Sequence[float],
                   measured: Sequence[float]) -> Predictor:
    """``predict`` rescaled per device by its measured over predicted time (devices that took rows; the others
    keep theirs): POAS's adapt step, the rates each device showed in the run."""
    factor = {dev.name: (m / p if p > 0 and m > 0 else 1.0)
              for dev, p, m in zip(platform.devices, predicted, measured, strict=True)}

    def rescaled(dev: SplitDevice, workload: GemmWorkload, rows: np.ndarray) -> np.ndarray:
        return np.asarray(predict(dev, workload, rows), dtype=float) * factor[dev.name]

    return rescaled


def part_errors(predicted: Sequence[float], measured: Sequence[float]) -> list[float]:
    """Prediction error ``(predicted - measured) / measured`` of each part that ran (nan for empty parts)."""
    return [(p - m) / m if m > 0 and p > 0 else math.nan for p, m in zip(predicted, measured, strict=True)]


# --------------------------------------------------------------------------- optimize + schedule


@dataclass(frozen=True)
class DeviceReport:
    """One device of a co-executed split: its rows, predicted and measured seconds."""

    name: str
    rows: int
    row_range: tuple[int, int]
    predicted_s: float
    measured_s: float

    @property
    def error(self) -> float:
        """Prediction error ``(predicted - measured) / measured`` (nan for an empty part)."""
        return part_errors([self.predicted_s], [self.measured_s])[0]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rows": self.rows, "row_range": list(self.row_range),
                "predicted_s": self.predicted_s, "measured_s": self.measured_s,
                "error": None if math.isnan(self.error) else self.error}


@dataclass(frozen=True)
class AdaptReport:
    """How ``--split auto`` got to its split: the contention it assumed, the first run measured against its
    prediction, whether it re-split with the measured rates, and whether it fell back to one device."""

    threshold: float
    probe: Probe
    slowdowns: tuple[tuple[str, str, float], ...]
    first: tuple[DeviceReport, ...]
    first_predicted_s: float
    first_measured_s: float
    adapted: bool
    fallback: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "probe_core_share": self.probe.share,
                "background_threads": self.probe.background, "group_cores": self.probe.capacity,
                "slowdowns": [{"device": a, "beside": b, "slowdown": s} for a, b, s in self.slowdowns],
                "first": {"devices": [d.to_dict() for d in self.first], "predicted_s": self.first_predicted_s,
                          "measured_s": self.first_measured_s},
                "adapted": self.adapted, "fallback": self.fallback}


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
    adapt: AdaptReport | None = None
    #: The run was one device alone in the configuration of the best single device (that device, or a
    #: group of as many threads): the two times are two runs of one configuration, not a speed-up.
    same_as_best_single: bool = False

    @property
    def prediction_error(self) -> float:
        """Prediction error ``(predicted - measured) / measured`` of the split that ran."""
        return (self.predicted_s - self.measured_s) / self.measured_s if self.measured_s > 0 else math.nan

    @property
    def speedup_vs_best_single(self) -> float:
        """The best single device's time over the run's; nan when the run was the best single device's
        configuration itself (:attr:`same_as_best_single`): no speed-up of a configuration over itself."""
        if self.same_as_best_single:
            return math.nan
        return self.best_single_s / self.measured_s if self.measured_s > 0 else float("inf")

    @property
    def devices_run(self) -> tuple[DeviceReport, ...]:
        """The devices that took rows in the run."""
        return tuple(d for d in self.devices if d.rows > 0)

    def to_dict(self) -> dict[str, Any]:
        w = self.workload
        return {
            "kernel": w.kernel, "m": w.m, "n": w.n, "k": w.k, "dtype": w.dtype, "split": self.split_mode,
            "devices": [d.to_dict() for d in self.devices],
            "check": self.check, "rel_error": self.rel_error, "tolerance": self.tolerance,
            "measured_s": self.measured_s, "predicted_s": self.predicted_s,
            "prediction_error": None if math.isnan(self.prediction_error) else self.prediction_error,
            "best_single_s": self.best_single_s, "best_single_device": self.best_single_device,
            "speedup_vs_best_single": None if math.isnan(self.speedup_vs_best_single) else self.speedup_vs_best_single,
            "same_as_best_single": self.same_as_best_single,
            "single_devices": [{"name": n, "predicted_s": p, "measured_s": m} for n, p, m in self.single_s],
            "cpu_blas_all_cores_s": self.all_cores_s,
            "predictor": self.predictor,
            "grid": [{"rows": list(r), "measured_s": s} for r, s in self.grid],
            "adapt": None if self.adapt is None else self.adapt.to_dict(),
        }

    def summary(self) -> str:
        """The printed report: one line per device, then the totals."""
        w = self.workload
        lines = [f"{w.kernel} {w.m}x{w.n}x{w.k} {w.dtype}, split {self.split_mode}, predictor {self.predictor}",
                 f"{'device':<16}{'rows':>9}{'predicted ms':>15}{'measured ms':>14}{'error':>9}"]
        for d in self.devices:
            error = "" if math.isnan(d.error) else f"{d.error:+.1%}"
            lines.append(f"{d.name:<16}{d.rows:>9}{d.predicted_s * 1e3:>15.4g}{d.measured_s * 1e3:>14.4g}"
                         f"{error:>9}")
        lines += self._adapt_lines()
        ran = self.devices_run
        what = "co-executed" if len(ran) > 1 else f"{ran[0].name} alone" if ran else "nothing ran"
        lines += [
            f"{what}: predicted {self.predicted_s * 1e3:.4g} ms, measured {self.measured_s * 1e3:.4g} ms "
            f"({self.prediction_error:+.1%})",
            self._best_single_line(),
            f"one BLAS call on every core: {self.all_cores_s * 1e3:.4g} ms",
            f"check: {self.check} (relative error {self.rel_error:.2g}, tolerance {self.tolerance:.0e})",
        ]
        return "\n".join(lines)

    def _best_single_line(self) -> str:
        """The run against the best single device: the speed-up, or, when the run was the best single
        device's configuration, the two timings of that configuration and what their ratio means."""
        best = f"{self.best_single_s * 1e3:.4g} ms"
        if not self.same_as_best_single:
            return f"best single device {self.best_single_device}: {best}; speed-up {self.speedup_vs_best_single:.3f}x"
        name = self.devices_run[0].name
        line = f"ran {name} alone (the best single device): {self.measured_s * 1e3:.4g} ms"
        if self.measured_s == self.best_single_s:  # the best single device's own run, reported as the answer
            return f"{line}; no speed-up: no split beat one device"
        ratio = max(self.measured_s, self.best_single_s) / min(self.measured_s, self.best_single_s)
        other = "" if self.best_single_device == name else f" ({self.best_single_device})"
        why = "the machine was busy" if ratio > BUSY_RATIO else "run-to-run noise"
        return (f"{line}; the re-timed single-device run{other} {best}, a {ratio:.2f}x difference between two "
                f"runs of the same configuration: {why}")

    def _adapt_lines(self) -> list[str]:
        a = self.adapt
        if a is None:
            return []
        pairs = ", ".join(f"{d} beside {b} x{x:.3f}" for d, b, x in a.slowdowns) or "none measured"
        lines = [f"contention: at the start {a.probe.share:.2f} of a core per thread, {a.probe.background:.2f} "
                 f"runnable threads of other programs beside ours, {a.probe.capacity:.2f} cores for them and ours; "
                 f"pair slowdowns: {pairs}"]
        if a.adapted:
            first = ", ".join(f"{d.name} {d.rows} rows {d.predicted_s * 1e3:.4g}/{d.measured_s * 1e3:.4g} ms"
                              for d in a.first)
            lines.append(f"adapted: the first split ({first}, predicted/measured) was off by more than "
                         f"{a.threshold:.0%}; re-split with the measured rates")
        if a.fallback:
            lines.append(f"fell back to one device: {a.fallback}")
        return lines


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
    from dse.mapping.split.model import split_tables

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
    from dse.mapping.split.model import chunk_rows_for

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
              progress: Progress | None = None, contention: ContentionModel | None = None,
              adapt_threshold: float = ADAPT_THRESHOLD) -> CoexecReport:
    """Predict, optimize, adapt and run ``workload`` over ``platform``; returns the report.

    ``split``: ``auto`` (least predicted time under contention, CP-SAT; re-split with the measured rates when
    a part's measured time differs from its prediction by more than ``adapt_threshold`` on the first timing and
    on the mean of it and a second one, so that one noisy timing does not move the split; one device alone when
    co-execution is predicted or measured not to pay), ``grid`` (every 5% split measured once, the three
    fastest re-timed ``repeat`` times interleaved, the best median kept) or rows per device. ``predict`` (each
    device's time alone on an idle machine) defaults to :func:`profile_predictor` on this GEMM, scaled back
    by the core share the probe found. ``contention``: the machine's cores and pair slowdowns (a
    calibration's, :func:`~dse.mapping.split.contention.calibrated_contention`; default: this machine's cores,
    no slowdowns); its background is measured here (:func:`probe_background`). Raises :class:`SpecError` for
    bad input and :class:`~dse.errors.InfeasibleError` when the GEMM fits no memory.
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
    if not 0 < adapt_threshold < 10:
        raise SpecError("command line", "--adapt-threshold", adapt_threshold, "must be a fraction above 0 (0.1 = 10%)")
    executor = CoExecutor(w, platform, seed)
    grid: list[tuple[tuple[int, ...], float]] = []
    try:
        return _measure(executor, w, platform, split, predict, predictor_name, repeat, seed, progress, grid,
                        contention or ContentionModel(os.cpu_count() or 1), adapt_threshold)
    except Interrupted as stop:
        raise Interrupted(stop.signum, partial={"grid": [{"rows": list(r), "seconds": t} for r, t in grid]}) from None


def _idle_machine(profiled: Predictor, model: ContentionModel) -> Predictor:
    """A profile taken at the probe's load, back to each device's time alone on an idle machine: times the
    core share the device alone got (its threads beside the background)."""

    def predict(dev: SplitDevice, workload: GemmWorkload, rows: np.ndarray) -> np.ndarray:
        share = model.core_share(host_threads(dev)) if dev.kind == "cpu" else 1.0
        return np.asarray(profiled(dev, workload, rows), dtype=float) * share

    return predict


def _off(predicted: Sequence[float], timing: RunTiming, threshold: float) -> bool:
    """Whether a part's measured time differs from its prediction by more than ``threshold``."""
    return any(abs(e) > threshold for e in part_errors(predicted, timing.device_s) if not math.isnan(e))


def _pooled(first: RunTiming, second: RunTiming) -> RunTiming:
    """Two timings of one split as one: the mean of their per-device and total medians."""
    return RunTiming(tuple((a + b) / 2 for a, b in zip(first.device_s, second.device_s, strict=True)),
                     (first.total_s + second.total_s) / 2)


def _device_reports(platform: SplitPlatform, bounds: Sequence[tuple[int, int]], predicted: Sequence[float],
                    measured: Sequence[float]) -> tuple[DeviceReport, ...]:
    return tuple(DeviceReport(dev.name, b - a, (a, b), p, m)
                 for dev, (a, b), p, m in zip(platform.devices, bounds, predicted, measured, strict=True))


def _measure(executor: CoExecutor, w: GemmWorkload, platform: SplitPlatform, split: str | Sequence[int],
             predict: Predictor | None, predictor_name: str, repeat: int, seed: int, progress: Progress,
             grid: list[tuple[tuple[int, ...], float]], contention: ContentionModel,
             threshold: float) -> CoexecReport:
    """The measuring part of :func:`coexecute` (``grid`` filled as grid splits are timed)."""
    probe = probe_background(sum(host_threads(d) for d in platform.devices), contention.cores)
    model = replace(contention, background=probe.background, capacity=probe.capacity)
    progress.update(f"probe: {probe.share:.2f} of a core per thread, {probe.background:.2f} runnable threads of "
                    f"other programs beside ours, {probe.capacity:.2f} cores for them and ours")
    if predict is None:
        profiled = profile_predictor(executor, repeat=repeat, progress=progress)
        predict, predictor_name = _idle_machine(profiled, model), "profiled on this GEMM"
    n_dev = len(platform.devices)
    adapt: AdaptReport | None = None
    fallback = ""
    if split == "auto":
        bounds, fallback = plan_split(w, platform, predict, model, seed)
    elif split == "grid":
        bounds = _grid_best(executor, grid_splits(w, platform), repeat, grid, progress)
    elif isinstance(split, str):
        raise SpecError("command line", "--split", split, "auto, grid or rows per device R1,R2,...")
    else:
        bounds = explicit_split(w, platform, split)
    predicted, total_pred = predict_rows(w, platform, predict, bounds, model)
    timing = executor.timed(bounds, repeat)
    if split == "auto":
        if _off(predicted, timing, threshold):  # confirm on a second timing before adapting to what may be noise
            timing = _pooled(timing, executor.timed(bounds, repeat))
            progress.update(f"re-timed the split: {timing.total_s * 1e3:.4g} ms")
        first = _device_reports(platform, bounds, predicted, timing.device_s)
        first_total = (total_pred, timing.total_s)
        adapted = _off(predicted, timing, threshold)
        if adapted:  # POAS's adapt step: re-split with the rates the runs measured, and time the new split
            predict = measured_rates(predict, platform, predicted, timing.device_s)
            bounds, fallback = plan_split(w, platform, predict, model, seed)
            predicted, total_pred = predict_rows(w, platform, predict, bounds, model)
            timing = executor.timed(bounds, repeat)
            progress.update(f"adapted: {[b - a for a, b in bounds]} rows, {timing.total_s * 1e3:.4g} ms")
        slowdowns = tuple((a, b, x) for (a, b), x in model.slowdown)
        adapt = AdaptReport(threshold, probe, slowdowns, first, *first_total, adapted, fallback)
    ok, err = executor.check(executor.reference(), tol := tolerance(platform, w.dtype))
    singles, single_runs = [], []
    for d, dev in enumerate(platform.devices):
        rows = [(0, 0)] * n_dev
        rows[d] = (0, w.m)
        run = executor.timed(rows, repeat)
        single_runs.append((rows, run))
        singles.append((dev.name, predict_rows(w, platform, predict, rows, model)[1], run.total_s))
        progress.update(f"{dev.name} alone: {run.total_s * 1e3:.4g} ms")
    best = min(range(n_dev), key=lambda d: singles[d][2])
    best_name, _, best_s = singles[best]
    if adapt is not None and sum(1 for a, b in bounds if b > a) > 1 and timing.total_s > best_s:
        # co-execution measured not to pay: the best single device's run is the answer
        note = f"the split measured {timing.total_s * 1e3:.4g} ms, {best_name} alone {best_s * 1e3:.4g} ms"
        bounds, timing = single_runs[best]
        predicted, total_pred = predict_rows(w, platform, predict, bounds, model)
        adapt = replace(adapt, fallback=note)
    ran = [d for d, (a, b) in enumerate(bounds) if b > a]
    same = len(ran) == 1 and platform.devices[ran[0]].fit_device == platform.devices[best].fit_device
    return CoexecReport(
        workload=w, split_mode=split if isinstance(split, str) else "explicit",
        devices=_device_reports(platform, bounds, predicted, timing.device_s),
        check="pass" if ok else "fail", rel_error=err, tolerance=tol, measured_s=timing.total_s,
        predicted_s=total_pred, best_single_s=best_s, best_single_device=best_name, single_s=tuple(singles),
        all_cores_s=executor.all_cores_s(repeat), predictor=predictor_name or "given", grid=tuple(grid), adapt=adapt,
        same_as_best_single=same)
