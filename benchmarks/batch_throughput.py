"""Batch sweep throughput: jobs per minute with 1 and 2 local workers, and the store's cost per job.

A sweep of small jobs (a 3-op pipeline on 2 devices, exhaustive front: a few
milliseconds of solving each) measures what the batch machinery costs: Dask
scheduling, result transfer and the SQLite commit. Each cluster is warmed up
(worker imports) before it is timed. The store's overhead is the time spent
committing finished jobs, per job, from the runs themselves and from a direct
run of 2,000 commits. ``--scale-out`` also runs the sweep through ``dse batch
--scheduler`` against a ``dask scheduler`` and two ``dask worker`` processes.

    .venv/bin/python benchmarks/batch_throughput.py [--jobs 120] [--scale-out]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from stopping import BenchmarkStop, benchmark_stops

import dse.store.batch
from dse.runs.sweep import expand_jobs
from dse.store.database import JobResult, Store

SPEC = {
    "name": "tiny", "family": "pipeline", "objectives": ["throughput", "energy"],
    "platform": {"name": "tiny", "devices": [
        {"name": "cpu", "kind": "cpu", "peak_tflops": {"fp32": 1.0}, "mem_bw_gbps": 100, "mem_gib": 64,
         "idle_w": 20, "active_w": 100},
        {"name": "gpu", "kind": "gpu", "peak_tflops": {"fp32": 10.0}, "mem_bw_gbps": 900, "mem_gib": 16,
         "idle_w": 30, "active_w": 250}],
        "links": [{"a": "cpu", "b": "gpu", "bandwidth_gbps": 16, "latency_us": 5, "energy_pj_per_byte": 20}]},
    "workload": {"name": "three", "ops": [
        {"name": "load", "op_class": "memcpy", "bytes_moved": 4e6, "output_bytes": 4e6},
        {"name": "mm", "op_class": "gemm", "flops": 2e10, "bytes_moved": 2e7, "resident_bytes": 1e7,
         "output_bytes": 1e6, "inputs": ["load"]},
        {"name": "act", "op_class": "elementwise", "flops": 1e6, "bytes_moved": 2e6, "output_bytes": 1e6,
         "inputs": ["mm"]}]},
    "solver": {"name": "exhaustive", "time_limit_s": 30, "seed": 0},
}


def _grid(n_jobs: int) -> dict[str, list[int]]:
    return {"constraints.power_w": list(range(200, 200 + n_jobs))}


def _local(workers: int, n_jobs: int, folder: Path, stop: BenchmarkStop) -> tuple[float, float]:
    """(jobs per minute, store ms per job) of one sweep on a warmed-up LocalCluster."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.CRITICAL)
    with Client(cluster) as client:
        warm = expand_jobs(SPEC, {"constraints.power_w": [100 + k for k in range(workers * 2)]})
        stop.keep(dse.store.batch.execute(warm, folder / f"warm{workers}.sqlite", client), "warm-up")
        jobs = expand_jobs(SPEC, _grid(n_jobs))
        report = stop.keep(dse.store.batch.execute(jobs, folder / f"w{workers}.sqlite", client), f"{workers} worker(s)")
    cluster.close()
    assert report.finished == n_jobs and report.failed == 0, report
    return report.finished / report.wall_s * 60, report.store_write_s / report.finished * 1e3


def _store_only(folder: Path, n: int = 2000) -> float:
    """ms per commit of ``n`` finished jobs (each with a real 2-point front) into a fresh store."""
    job = expand_jobs(SPEC)[0]
    result = JobResult.from_dict(dse.store.batch.run_job(job.spec, job.source, job.base))
    jobs = expand_jobs(SPEC, _grid(n))
    with Store(folder / "store_only.sqlite") as store:
        start = time.perf_counter()
        for j in jobs:
            store.record(j, result)
        return (time.perf_counter() - start) / n * 1e3


def _scale_out(n_jobs: int, folder: Path, stop: BenchmarkStop) -> float:
    """Jobs per minute through ``dse batch --scheduler`` with a scheduler and two workers as processes."""
    dask = shutil.which("dask", path=str(Path(sys.executable).parent)) or "dask"
    sched_file = folder / "scheduler.json"
    procs = [subprocess.Popen([dask, "scheduler", "--scheduler-file", str(sched_file), "--no-dashboard",
                               "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for _ in range(2):
            procs.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        with Client(address) as client:
            client.wait_for_workers(2, timeout=60)
            warm = expand_jobs(SPEC, {"constraints.power_w": [100, 101, 102, 103]})
            stop.keep(dse.store.batch.execute(warm, folder / "warm_remote.sqlite", client), "warm-up")
        spec = folder / "tiny.yaml"
        spec.write_text(yaml.safe_dump(SPEC))
        grid = folder / "grid.yaml"
        grid.write_text(yaml.safe_dump(_grid(n_jobs)))
        store = folder / "remote.sqlite"
        start = time.perf_counter()
        done = stop.run([sys.executable, "-m", "dse.cli", "batch", str(spec), "--grid", str(grid),
                               "--store", str(store), "--scheduler", address, "--quiet"],
                        capture_output=True, timeout=600)
        wall = time.perf_counter() - start
        assert done.returncode == 0, done.stderr
        frame = dse.store.batch.load(store)
        assert len(frame) == n_jobs and set(frame["status"]) == {"done"}, frame["status"].value_counts()
        return n_jobs / wall * 60
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=120, help="jobs per sweep")
    parser.add_argument("--scale-out", action="store_true", help="also run against dask scheduler + 2 dask workers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, benchmark_stops("batch_throughput") as stop:
        folder = Path(tmp)
        print(f"sweep of {args.jobs} small jobs (3-op pipeline, 2 devices, exhaustive)")
        rates = {}
        for workers in (1, 2):
            rate, store_ms = _local(workers, args.jobs, folder, stop)
            rates[workers] = rate
            print(f"  LocalCluster, {workers} worker process(es): {rate:7.0f} jobs/min; "
                  f"store commit {store_ms:.2f} ms/job")
        print(f"  2 workers / 1 worker: {rates[2] / rates[1]:.2f}x")
        stop.check()
        print(f"  store alone, 2,000 commits of a 2-point job: {_store_only(folder):.2f} ms/job")
        if args.scale_out:
            print(f"  dse batch --scheduler, dask scheduler + 2 dask worker processes: "
                  f"{_scale_out(args.jobs, folder, stop):7.0f} jobs/min (CLI start-up included)")


if __name__ == "__main__":
    main()
