"""A throughput model of the Dask drivers, fed with measured task and message times, checked at 2 workers.

Runs each mode on a LocalCluster of ``--workers`` single-threaded worker processes against its serial run:
the exact mode on the pipeline of ``distributed_exact.py`` (25-point front), the NSGA-II islands on
``xr_social_a`` at the evaluation budget of ``distributed_islands.py``. From each distributed run's
:class:`~dse.pareto.DriverTimings` it prints the model's inputs (median and quartiles of the task compute
time t, the message overhead m = round trip - t, the driver's time per result d, and for the exact mode the
open boxes after each result), the model's wall time and speed-up at the measured worker count against the
measured ones (the model's check), and its speed-up at ``--predict`` workers (docs/distributed.md, "A
throughput model"). Then the SIGKILL check: ``dse solve SPEC --solver cpsat --workers 2 --out DIR`` on a
3-objective pipeline spec (random_pipeline, 14 ops; 106-point front) killed with SIGKILL once its
checkpoint holds ``--kill-at`` points, rerun with ``--resume DIR``; prints the points at the kill, the
CP-SAT solves after the resume against the whole serial run's, and whether the fronts are the same (gap 0).
Writes the rows to ``benchmarks/results/distributed_model.csv``.

    .venv/bin/python benchmarks/distributed_model.py [--workers 2] [--predict 100] [--skip-islands]
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import dse
from dse.pareto import DriverTimings
from dse.runs.spec import build_problem, load_spec

#: Scheduler time per task (Dask's documentation: "about 1 ms of overhead per task"): a cap of its own.
SCHEDULER_S = 0.001
#: Network round trip added per task on a real cluster (assumed: a LAN; not measurable on one machine).
NETWORK_S = 0.001
#: Expected maximum of n standard normal draws (the synchronous epoch waits for its slowest island).
NORMAL_MAX = {1: 0.0, 2: 0.5642, 4: 1.0294, 8: 1.4236, 16: 1.7660, 32: 2.0697, 64: 2.3419, 100: 2.5076}

KILL_SPEC = {"name": "pipeline14", "family": "pipeline", "platform": "edge_soc",
             "workload": {"builder": "random_pipeline", "n_ops": 14, "seed": 3},
             "objectives": ["throughput", "energy", "latency"],
             "solver": {"name": "cpsat", "time_limit_s": 600, "seed": 0, "options": {"cpsat": {"workers": 1}}}}


@dataclass(frozen=True)
class Inputs:
    """The model's inputs from one run: task compute time t, message overhead m, driver time per result d
    (means, as the totals need, with medians and quartiles for the spread), the tasks, the set-up time."""

    t: float
    m: float
    d: float
    tasks: int
    setup_s: float
    spread: str

    @staticmethod
    def of(timings: DriverTimings, wall_s: float) -> Inputs:
        overhead = [max(0.0, r - t) for r, t in zip(timings.round_trip_s, timings.task_s, strict=True)]

        def summary(name: str, xs: tuple[float, ...] | list[float]) -> str:
            q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
            return f"{name} median {q[1] * 1e3:.1f} ms (quartiles {q[0] * 1e3:.1f}-{q[2] * 1e3:.1f})"

        spread = "; ".join([summary("t", timings.task_s), summary("m", overhead), summary("d", timings.driver_s)])
        return Inputs(statistics.fmean(timings.task_s), statistics.fmean(overhead), statistics.fmean(timings.driver_s),
                      len(timings.task_s), wall_s - timings.span_s, spread)


def exact_wall(inputs: Inputs, boxes: list[int], k: int, workers: int, extra_m: float = 0.0) -> float:
    """The exact mode's modelled wall time: the set-up, then per result the time it takes the cluster to
    deliver one: (t + m) over the tasks that can run (the workers, at most k objectives x the open boxes
    then), never faster than the driver (d) or the scheduler allow."""
    total = inputs.setup_s
    for open_boxes in [1, *boxes[:-1]]:  # the boxes open when each task was chosen
        running = max(1, min(workers, k * open_boxes))
        total += max((inputs.t + inputs.m + extra_m) / running, inputs.d, SCHEDULER_S)
    return total


def islands_rate(inputs: Inputs, evals_per_task: float, workers: int, synchronous: bool, sd: float,
                 extra_m: float = 0.0) -> float:
    """Evaluations per second of ``workers`` islands in steady state: asynchronous, min(W / (t + m), 1 / d,
    1 / scheduler) epochs per second; synchronous, W epochs per round of the slowest island's t (mean + sd x
    the expected maximum of W normal draws) + m + W d."""
    m = inputs.m + extra_m
    if synchronous:
        slowest = inputs.t + sd * NORMAL_MAX.get(workers, NORMAL_MAX[100])
        return workers * evals_per_task / (slowest + m + workers * max(inputs.d, SCHEDULER_S))
    return evals_per_task * min(workers / (inputs.t + m), 1 / max(inputs.d, SCHEDULER_S))


def _row(mode: str, serial_s: float, distributed_s: float, measured: float, inputs: Inputs, model: float,
         predicted: float, load: float) -> dict[str, Any]:
    """One CSV row: a mode's wall times and speed-ups (measured, modelled, predicted) and the model's inputs."""
    return {"mode": mode, "serial_s": serial_s, "distributed_s": distributed_s, "measured_speedup": measured,
            "t_mean_s": inputs.t, "m_mean_s": inputs.m, "d_mean_s": inputs.d, "tasks": inputs.tasks,
            "setup_s": inputs.setup_s, "model_speedup": model, "predicted_speedup": predicted, "load": load,
            "spread": inputs.spread}


def run_exact(client: Any, args: argparse.Namespace, writer: Any, exact_problem: Callable[..., Any]) -> None:
    target = exact_problem(3)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    serial = dse.solve(target, "cpsat", time_limit=600, seed=0, workers=1)
    t1 = time.perf_counter()
    spread = dse.solve(target, "cpsat", time_limit=600, seed=0, client=client)
    t2 = time.perf_counter()
    timings = spread.stats.timings
    assert timings is not None
    inputs = Inputs.of(timings, t2 - t1)
    boxes = [n for _, n in timings.open_regions]
    k = len(target.objectives)
    same = sorted(map(tuple, serial.internal().tolist())) == sorted(map(tuple, spread.internal().tolist()))
    measured = (t1 - t0) / (t2 - t1)
    model_w = exact_wall(inputs, boxes, k, args.workers)
    far = exact_wall(inputs, boxes, k, args.predict, NETWORK_S)
    print(f"exact: serial {t1 - t0:.2f} s ({serial.stats.solver_calls} solves), {args.workers} workers {t2 - t1:.2f} s "
          f"({inputs.tasks} tasks, same front: {same}, gap {spread.certified.gap if spread.certified else None}); "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)
    print(f"  inputs: {inputs.spread}; set-up {inputs.setup_s:.2f} s; open boxes median "
          f"{statistics.median(boxes):.0f}, max {max(boxes)}, mean {statistics.fmean(boxes):.1f}", flush=True)
    print(f"  model at {args.workers}: {model_w:.2f} s, speed-up {(t1 - t0) / model_w:.2f}x (measured {measured:.2f}x); "
          f"at {args.predict}: {far:.2f} s, speed-up {(t1 - t0) / far:.2f}x (tasks capped by 3 x open boxes: "
          f"{statistics.fmean(min(args.predict, k * b) for b in [1, *boxes[:-1]]):.1f} running on average)",
          flush=True)
    writer.writerow(_row("exact", t1 - t0, t2 - t1, measured, inputs, (t1 - t0) / model_w, (t1 - t0) / far, load))


def run_islands(client: Any, args: argparse.Namespace, writer: Any) -> None:
    from distributed.protocol.pickle import dumps, loads

    problem = dse.load_problem("xr_social_a")
    budget: dict[str, Any] = {"pop_size": 100, "patience": None}
    per_island = max(1, args.generations // args.workers)
    dse.solve(loads(dumps(problem)), "nsga2", time_limit=600, seed=99, generations=2, **budget)  # warm-up
    dse.solve(problem, "nsga2", time_limit=600, seed=99, client=client, generations=2, island_generations=1,
              islands=args.workers, **budget)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    serial = dse.solve(loads(dumps(problem)), "nsga2", time_limit=3600, seed=0, generations=args.generations,
                       **budget)
    serial_rate = serial.stats.evaluations / (time.perf_counter() - t0)
    for synchronous in (False, True):
        mode = "synchronous" if synchronous else "asynchronous"
        t1 = time.perf_counter()
        front = dse.solve(loads(dumps(problem)), "nsga2", time_limit=3600, seed=0, client=client,
                          islands=args.workers, generations=per_island, synchronous=synchronous, **budget)
        wall = time.perf_counter() - t1
        timings = front.stats.timings
        assert timings is not None
        inputs = Inputs.of(timings, wall)
        sd = statistics.pstdev(timings.task_s)
        per_task = (front.stats.evaluations - len(front)) / inputs.tasks  # the seeds counted at the start aside
        measured = front.stats.evaluations / wall / serial_rate
        rate_w = islands_rate(inputs, per_task, args.workers, synchronous, sd)
        model_w = (front.stats.evaluations / (inputs.setup_s + front.stats.evaluations / rate_w)) / serial_rate
        far = islands_rate(inputs, per_task, args.predict, synchronous, sd, NETWORK_S) / serial_rate
        print(f"islands {mode}: serial {serial_rate:.0f} evaluations/s; {args.workers} islands {wall:.2f} s, "
              f"{front.stats.evaluations / wall:.0f}/s ({inputs.tasks} tasks); load {load:.1f} -> "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        print(f"  inputs: {inputs.spread}; t sd {sd * 1e3:.0f} ms; set-up {inputs.setup_s:.2f} s; "
              f"{per_task:.0f} evaluations per task", flush=True)
        print(f"  model at {args.workers}: speed-up {model_w:.2f}x with the set-up, "
              f"{rate_w / serial_rate:.2f}x in steady state (measured {measured:.2f}x); at {args.predict}: "
              f"{far:.2f}x in steady state", flush=True)
        writer.writerow(_row(f"islands {mode}", serial.stats.wall_s, wall, measured, inputs, model_w, far, load))


def kill_and_resume(args: argparse.Namespace, writer: Any) -> None:
    """The SIGKILL check (module docstring)."""
    # psutil comes with distributed
    import psutil  # type: ignore[import-untyped]

    work = args.out.parent / "distributed_model_kill"
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "pipeline14.yaml"
    spec.write_text(yaml.safe_dump(KILL_SPEC))
    killed, again = work / "killed", work / "again"
    checkpoint = killed / "checkpoint-cpsat.json"
    checkpoint.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    driver = subprocess.Popen([sys.executable, "-m", "dse.cli", "solve", str(spec), "--solver", "cpsat",
                               "--workers", "2", "--out", str(killed), "--quiet"], stdout=subprocess.DEVNULL)
    points, start = 0, time.perf_counter()
    try:
        while driver.poll() is None:
            if checkpoint.is_file():
                points = len(json.loads(checkpoint.read_text())["values"])
                if points >= args.kill_at:
                    break
            time.sleep(0.05)
        children = psutil.Process(driver.pid).children(recursive=True) if driver.poll() is None else []
        os.kill(driver.pid, signal.SIGKILL)
    finally:
        driver.kill()
        code = driver.wait()
    at_kill = time.perf_counter() - start
    orphans = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    for child in orphans:  # the cluster's worker processes, left without their driver
        child.kill()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dse.cli", "solve", str(spec), "--resume", str(killed), "--workers", "2",
                    "--out", str(again), "--quiet"], check=True, stdout=subprocess.DEVNULL)
    resumed_s = time.perf_counter() - t0
    front = next(f for f in json.loads((again / "front.json").read_text())["fronts"] if f["solver"] == "cpsat")
    t1 = time.perf_counter()
    serial = dse.solve(build_problem(load_spec(spec)), "cpsat", time_limit=600, seed=0, workers=1)
    serial_s = time.perf_counter() - t1
    same = sorted(tuple(p["internal"]) for p in front["points"]) == sorted(map(tuple, serial.internal().tolist()))
    gap = front.get("certificate", {}).get("gap")
    print(f"SIGKILL: driver killed (exit {code}) after {at_kill:.1f} s with {points} points in its checkpoint, "
          f"{len(orphans)} worker processes left behind (ended); resumed run {resumed_s:.1f} s, "
          f"{front['stats']['solver_calls']} CP-SAT solves, {len(front['points'])} points, status {front['status']}, "
          f"gap {gap}; the serial run {serial_s:.1f} s, {serial.stats.solver_calls} solves, {len(serial)} points; "
          f"same front: {same}; load {load:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)
    print(f"  resumed: {front['stats']['message']}", flush=True)
    writer.writerow({"mode": "sigkill", "serial_s": serial_s, "distributed_s": resumed_s, "tasks": points,
                     "load": load, "spread": f"exit {code}; same front {same}; gap {gap}; resumed solves "
                     f"{front['stats']['solver_calls']} vs serial {serial.stats.solver_calls}"})


FIELDS = ["mode", "serial_s", "distributed_s", "measured_speedup", "t_mean_s", "m_mean_s", "d_mean_s", "tasks",
          "setup_s", "model_speedup", "predicted_speedup", "load", "spread"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--predict", type=int, default=100, help="the worker count to predict the speed-up at")
    parser.add_argument("--generations", type=int, default=60, help="the serial islands budget (as distributed_islands)")
    parser.add_argument("--kill-at", type=int, default=20, help="the checkpoint's points at the SIGKILL")
    parser.add_argument("--skip-islands", action="store_true")
    parser.add_argument("--skip-kill", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/distributed_model.csv"))
    args = parser.parse_args()
    # this file's folder holds scripts named like packages: it goes from the path once distributed_exact is
    # imported (here, not at the top: the workers' processes import this file without that folder), so
    # that `import distributed` (here, inside dse and in the workers) finds Dask
    from distributed_exact import problem as exact_problem
    from stopping import benchmark_stops

    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    from distributed import Client, LocalCluster

    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} CPUs; load {os.getloadavg()}", flush=True)
    # a stop (SIGINT, SIGTERM) ends the run between its three parts, each part's rows already written
    with benchmark_stops("distributed_model") as stop, args.out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                          silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
            dse.solve(exact_problem(0, n_ops=5), "cpsat", time_limit=60, seed=0, client=client)  # warm-up
            run_exact(client, args, writer, exact_problem)
            handle.flush()
            stop.keep(None, case="exact")
            if not args.skip_islands:
                run_islands(client, args, writer)
                handle.flush()
                stop.keep(None, case="islands")
        if not args.skip_kill:
            kill_and_resume(args, writer)
            stop.keep(None, case="SIGKILL and resume")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
