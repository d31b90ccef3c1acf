"""LNS or memetic islands on Dask against the serial solver on one TF-paper graph, at one time budget.

The problem is one graph of the TF paper (``conv`` by default) on one of its device files, makespan only,
the paper's rules (:func:`dag_bounds.tf_problem`; the sample data lives beside the checkout, and the script
says so when it is absent). Each repeat runs the serial solver in this process (its default CP-SAT search
workers unless ``--serial-workers``), then the solver as islands on a LocalCluster of ``--workers``
single-threaded worker processes (one island each, one CP-SAT search worker per window), asynchronous and,
with ``--synchronous``, synchronous, every run for ``--time`` seconds with the same seed. The kernels are
compiled (or loaded from numba's cache) here and in every worker first, by a short run of each kind.

Prints, per run: the makespan found (and its ratio to the serial run's), the LNS windows re-solved or the
memetic local-search steps taken, per second of wall time, and the islands' rate over the serial run's
(the speed-up in windows or steps per second), the CPU seconds of this process and of the workers, the
speed-up the CPU times imply with a free core per worker (memetic only: the workers' steps per CPU second
times the workers, over the serial run's per CPU second; an estimate, not a measured wall time), and the load
average before and after (the machine may be shared: the rates measure the load as much as the
search). Writes the rows to ``out/distributed_dag_islands.csv``.

    .venv/bin/python benchmarks/distributed_dag_islands.py [--solver lns] [--graph conv] [--time 30]
        [--workers 2] [--repeats 1] [--synchronous] [--warm-share 0.5] [--island-windows 4] [--island-steps 500]
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import dse

#: What the rate counts per solver: the stats message's phrase before which the count stands.
COUNTED = {"lns": "windows re-solved", "memetic": "local-search steps"}
#: The solver options the command line sets, per solver.
OPTIONS = {"lns": ("warm_share", "island_windows", "island_steps"), "memetic": ("island_steps",)}


def counted(message: str, solver: str) -> int:
    """The windows (lns) or local-search steps (memetic) a run's stats message reports, summed over its phases
    (the islands' epoch size, ``epochs of 500 local-search steps``, left out)."""
    return sum(int(n) for n in re.findall(rf"(?<!epochs of )\b(\d+) {COUNTED[solver]}", message))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solver", choices=list(COUNTED), default="lns")
    parser.add_argument("--graph", default="conv", help="conv, rnn or dynrnn")
    parser.add_argument("--devices", default=None, help="a device file of the TF paper's (default: the 10-device one)")
    parser.add_argument("--time", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--synchronous", action="store_true", help="also run the synchronous islands")
    parser.add_argument("--serial-workers", type=int, default=None, help="the serial LNS's CP-SAT search workers")
    parser.add_argument("--warm-share", type=float, default=None, help="the LNS's share of local search first")
    parser.add_argument("--island-windows", type=int, default=None)
    parser.add_argument("--island-steps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("out/distributed_dag_islands.csv"))
    args = parser.parse_args()
    from csv_rows import write_rows
    from dag_bounds import DATA, DEVICE_FILES, tf_problem, warm_up
    from stopping import benchmark_stops

    if not DATA.is_dir():
        print(f"TF-paper sample data not found at {DATA}; nothing to measure (expected outside the workspace).")
        return 0
    # this file's folder is on the path and holds scripts named like packages: the folder goes, so that
    # `import distributed` (here, inside dse and in the workers) finds Dask
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    from distributed import Client, LocalCluster

    problem = tf_problem(args.graph, args.devices or DEVICE_FILES[0])
    given = {"warm_share": args.warm_share, "island_windows": args.island_windows, "island_steps": args.island_steps}
    options: dict[str, Any] = {k: given[k] for k in OPTIONS[args.solver] if given[k] is not None}
    serial_options = {k: v for k, v in options.items() if k == "warm_share"}
    if args.serial_workers is not None and args.solver == "lns":
        serial_options["workers"] = args.serial_workers
    modes = ["serial", "asynchronous"] + (["synchronous"] if args.synchronous else [])
    rows: list[dict[str, Any]] = []
    print(f"{args.solver} on {problem.name}: {problem.n_tasks} tasks, {problem.tables.n_dev} devices; {args.time:g} s "
          f"per run; {args.workers} workers; {os.cpu_count()} CPUs; options {options}", flush=True)
    with benchmark_stops("distributed_dag_islands") as stop, \
            LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                         silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        warm_up(problem)  # kernels here, then in every worker
        dse.solve(problem, args.solver, time_limit=2.0, seed=99, client=client, progress=False)
        for rep in range(args.repeats):
            serial: dict[str, Any] = {}
            for mode in modes:
                stop.check()
                load = os.getloadavg()[0]
                w0 = sum(client.run(time.process_time).values())
                t0, c0 = time.perf_counter(), time.process_time()
                if mode == "serial":
                    front = dse.solve(problem, args.solver, time_limit=args.time, seed=rep, progress=False,
                                      **serial_options)
                else:
                    front = dse.solve(problem, args.solver, time_limit=args.time, seed=rep, client=client,
                                      progress=False, islands=args.workers, synchronous=mode == "synchronous",
                                      **options)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                workers_cpu = sum(client.run(time.process_time).values()) - w0 if mode != "serial" else 0.0
                stop.keep(front, case=f"repeat {rep} {mode}")
                makespan = int(front.points[0].internal[0]) if len(front) else -1
                count = counted(front.stats.message, args.solver)
                row = {"repeat": rep, "mode": mode, "solver": args.solver, "problem": problem.name, "wall_s": wall,
                       "makespan": makespan, "counted": count, "per_s": count / wall, "driver_cpu_s": cpu,
                       "workers_cpu_s": workers_cpu, "load_before": load, "load_after": os.getloadavg()[0],
                       "status": front.status, "message": front.stats.message}
                serial = serial or row
                row["makespan_ratio"] = makespan / serial["makespan"] if serial["makespan"] > 0 else float("nan")
                row["speedup"] = row["per_s"] / serial["per_s"] if serial["per_s"] else float("nan")
                # memetic, with a free core per worker: the steps per CPU second of the workers, times the workers,
                # over the serial run's per CPU second of this process (an estimate from CPU time, not a wall time;
                # none for the LNS, whose windows end on wall-clock limits whatever the CPU they got)
                serial_rate = serial["counted"] / serial["driver_cpu_s"] if serial["driver_cpu_s"] else 0.0
                row["speedup_core_per_worker"] = (count / workers_cpu * args.workers / serial_rate
                                                  if workers_cpu and serial_rate and args.solver == "memetic"
                                                  else float("nan") if workers_cpu else 1.0)
                rows.append(row)
                print(f"repeat {rep} {mode:12s}: makespan {makespan:,} ({row['makespan_ratio']:.4f} of serial), "
                      f"{count:,} {COUNTED[args.solver]} in {wall:.1f} s, {row['per_s']:.1f}/s ({row['speedup']:.2f}x "
                      f"serial; a core per worker: {row['speedup_core_per_worker']:.2f}x); CPU s: driver {cpu:.1f}, "
                      f"workers {workers_cpu:.1f}; load {load:.1f} -> "
                      f"{row['load_after']:.1f}; {front.status}", flush=True)
                write_rows(args.out, [{k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()}
                                      for r in rows])
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
