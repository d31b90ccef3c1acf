"""HEFT on fork-join graphs: one source fanning out to many parallel tasks that join in one sink.

Usage: python benchmarks/fork_join.py [--tasks 4000 448] [--devices 8] [--repeat 3] [--before DIR]
                                      [--saga-python PATH]

A fork-join of n tasks (one source, n - 2 parallel tasks, one sink) on ``--devices`` heterogeneous
devices: work, output sizes, device speeds and link rates drawn with a fixed seed, costed as in
``saga_compare.py`` (the classic HEFT model: time = work / speed, an edge costs size / link rate, no
send rule, insertion on). The source's out-degree and the sink's in-degree are n - 2, so anything
kept per task and padded to the largest degree costs n^2. 448 tasks is the size of a seismology
workflow (one source fanning out to about 445 tasks that join in one sink).

Each case runs in a fresh process, which loads the compiled kernels on a small instance first and
then prints the best of ``--repeat`` wall times of ``dse.heuristics.run(problem, "heft")``: on a new
problem (its first call builds the DAG structure and the heuristics' graph; the problem's own
construction is timed apart) and called again on the same problem; the makespan; the process's peak
RSS (``resource.getrusage``) over those calls beside its RSS after the warm-up; and last, traced
apart because tracing slows every allocation, the peak of the Python allocations (``tracemalloc``,
numpy's arrays included) while one more problem is built and HEFT first runs on it. Rows also go to
``out/fork-join/figures.csv``.

``--before DIR`` first runs the same cases with ``DIR`` first on the path (the parent folder of an
earlier copy of the ``dse`` package), so that before and after figures come from one run on one
machine. saga 2.1.0's HEFT runs on the same instances when ``--saga-python`` names a Python that has
it, or ``out/saga-venv`` exists (``saga_compare.py`` creates it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from csv_rows import write_rows
from saga_compare import run_saga
from stopping import BenchmarkStop, benchmark_stops

from dse.cost import TableCostModel
from dse.heuristics import run
from dse.mapping.dag import DagProblem
from dse.model.platform import Device, Link, Platform
from dse.model.workload import Op, Workload

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out" / "fork-join"
VENV_PYTHON = ROOT / "out" / "saga-venv" / "bin" / "python"
#: Internal time units per unit of work / speed (as in saga_compare.py).
SCALE = 1000.0


def fork_join(n: int, m: int, seed: int = 0) -> tuple[Workload, Platform]:
    """The fork-join workload of ``n`` tasks and a platform of ``m`` devices fully linked at random rates."""
    rng = np.random.default_rng(seed)
    ops = tuple(Op(f"t{i}", work=float(rng.integers(5, 100)), output_bytes=float(rng.integers(1, 40)))
                for i in range(n))
    sink = n - 1
    edges = tuple([(0, i) for i in range(1, sink)] + [(i, sink) for i in range(1, sink)])
    devices = tuple(Device(f"d{j}", "generic", {}, 1.0, 1.0, 0.0, 1.0, speed=float(rng.integers(1, 5)))
                    for j in range(m))
    links = tuple(Link(f"d{a}", f"d{b}", float(rng.integers(1, 10)), 0.0) for a in range(m) for b in range(a + 1, m))
    return Workload(f"fork-join-{n}", ops, edges), Platform(f"random-{m}", devices, links)


def problem_of(n: int, m: int) -> DagProblem:
    """The HEFT problem of :func:`fork_join` (integer times, insertion on)."""
    workload, platform = fork_join(n, m)
    return DagProblem(TableCostModel(scale=SCALE).tables(workload, platform), ("makespan",), memory=False,
                      insertion=True, name=workload.name)


def child(n: int, m: int, repeat: int) -> None:
    """One case in this (fresh) process: prints its figures as one JSON line."""
    run(problem_of(30, 2), "heft")  # loads the compiled kernels: not part of the figures
    rss_base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    build = first = best = float("inf")
    for _ in range(repeat):  # a new problem each time: the DAG structure and the heuristics' graph are built
        start = time.perf_counter()
        problem = problem_of(n, m)
        built = time.perf_counter()
        result = run(problem, "heft")
        build, first = min(build, built - start), min(first, time.perf_counter() - built)
    for _ in range(repeat):  # the same problem again: its structure and graph are kept
        start = time.perf_counter()
        run(problem, "heft")
        best = min(best, time.perf_counter() - start)
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del problem
    tracemalloc.start()  # last: tracing slows allocations down and adds to the RSS
    run(problem_of(n, m), "heft")
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps({"tasks": result.devices.size, "edges": 2 * (n - 2), "build_s": build, "first_s": first,
                      "best_s": best, "makespan": result.makespan / SCALE, "traced_mib": traced / 2**20,
                      "rss_base_mib": rss_base / 1024, "rss_peak_mib": rss_peak / 1024}))


def measure(tag: str, path: list[str], n: int, m: int, repeat: int, stop: BenchmarkStop) -> dict | None:
    """Run :func:`child` in a fresh process with ``path`` first on ``sys.path``; its figures, or None."""
    done = stop.run([sys.executable, __file__, "--child", str(n), "--devices", str(m), "--repeat", str(repeat)],
                    capture_output=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(path)})
    if done.returncode:
        print(f"[{tag}] {n} tasks: failed ({done.stderr.strip().splitlines()[-1:]})")
        return None
    row = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"[{tag}] fork-join {row['tasks']} tasks ({row['edges']} edges) x {m} devices, HEFT (best of {repeat}): "
          f"{row['first_s']:.3f} s on a new problem (built in {row['build_s']:.3f} s before), "
          f"{row['best_s']:.3f} s called again; makespan {row['makespan']:,.1f}; peak traced "
          f"{row['traced_mib']:.1f} MiB (build and first call), peak RSS {row['rss_peak_mib']:.0f} MiB "
          f"({row['rss_base_mib']:.0f} MiB after the warm-up)", flush=True)
    return {"tree": tag, "devices": m, **row}


def saga(n: int, m: int, python: Path, repeat: int) -> None:
    """saga's HEFT on the same instance, in its own Python."""
    workload, platform = fork_join(n, m)
    figures = run_saga(python, workload, platform, repeat)
    if figures:
        print(f"[saga 2.1.0] fork-join {n} tasks x {m} devices: HEFT best of {repeat} {figures['seconds']:.3f} s, "
              f"makespan {figures['makespan']:,.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[4000, 448])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", default=None, help="an earlier copy of the dse package's parent folder")
    parser.add_argument("--saga-python", default=None, help="a Python that has anrg-saga 2.1.0")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.devices, args.repeat)
        return
    python = Path(args.saga_python) if args.saga_python else VENV_PYTHON if VENV_PYTHON.exists() else None
    if python is None:
        print("(saga is not measured: give --saga-python, or create out/saga-venv with saga_compare.py)")
    trees = [("now", [str(ROOT)])]
    if args.before:
        trees.insert(0, ("before", [str(Path(args.before).resolve()), str(ROOT)]))
    rows = []
    with benchmark_stops("fork_join") as stop:
        for n in args.tasks:
            for tag, path in trees:
                stop.check()
                row = measure(tag, path, n, args.devices, args.repeat, stop)
                if row:
                    rows.append(row)
            if python is not None:
                saga(n, args.devices, python, args.repeat)
    if rows:
        write_rows(OUT / "figures.csv", rows)


if __name__ == "__main__":
    main()
