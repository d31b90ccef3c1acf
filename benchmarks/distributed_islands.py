"""NSGA-II islands on Dask: one serial population against islands on 2 local workers, at one evaluation budget.

The problem is a multimodel XRBench scenario (``problems/xr_social_a.yaml`` by default: its fronts have
about ten points), whose genomes are evaluated by simulating the scenario: a few milliseconds each, so a
generation of 100 takes 0.1 to 0.35 s of CPU on the ``xr_*`` problems. Every run gets a fresh copy of
the problem, without the simulation memo an earlier run filled (a pickled problem leaves it behind). The serial run is one population of ``--pop`` for ``--generations`` generations in this
process; the distributed runs are ``--workers`` islands of ``--pop`` each for ``generations / workers``
generations, on a LocalCluster of single-threaded worker processes warmed up first (imports, the
problem's kernels) by a short run of their own: the same evaluation budget. No patience: every run
spends its whole budget. Prints, per repeat and mode (serial, asynchronous islands, synchronous islands):
the wall time, the evaluations and evaluations per second (and their ratio to the serial run's, the
speed-up), the hypervolume of the front (all fronts of a repeat measured against one reference point,
from the serial front's baselines and every front's points) and its ratio to the serial run's; the CPU
seconds of this process and of the workers, the CPU seconds per island task, the speed-up the CPU times
imply when each worker has a core of its own (serial CPU per evaluation over the workers' per evaluation
and worker), and the load average while it ran (the machine may be shared: wall times then measure the
load as much as the search). Writes the rows to ``out/distributed_islands.csv``.

    .venv/bin/python benchmarks/distributed_islands.py [--problem xr_social_a] [--workers 2]
        [--pop 100] [--generations 60] [--repeats 2]
"""

from __future__ import annotations

import argparse
import csv
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import dse

FIELDS = ["repeat", "mode", "wall_s", "evaluations", "evals_per_s", "speedup", "hypervolume", "hv_ratio",
          "front_points", "driver_cpu_s", "workers_cpu_s", "cpu_s_per_task", "speedup_core_per_worker",
          "load_before", "load_after", "message"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="xr_social_a", help="a problem name or spec file")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pop", type=int, default=100, help="the population of the serial run and of each island")
    parser.add_argument("--generations", type=int, default=60, help="the serial run's; each island runs 1/workers")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("out/distributed_islands.csv"))
    args = parser.parse_args()
    from stopping import benchmark_stops

    # this file's folder is on the path (for stopping.py) and holds scripts named like packages: the folder
    # goes, so that `import distributed` (here, inside dse and in the workers) finds Dask
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    from distributed import Client, LocalCluster
    from distributed.protocol.pickle import dumps, loads

    problem = dse.load_problem(args.problem)
    budget = {"pop_size": args.pop, "patience": None}
    per_island = max(1, args.generations // args.workers)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(f"{args.problem}: {problem.n_genes} genes, objectives {[o.name for o in problem.objectives]}; serial "
          f"{args.generations} generations of {args.pop}; {args.workers} islands of {args.pop}, {per_island} "
          f"generations each; {os.cpu_count()} CPUs", flush=True)
    with benchmark_stops("distributed_islands") as stop, \
            LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                         silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client, \
            args.out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        # warm-up: imports and compiled kernels here and in every worker
        dse.solve(loads(dumps(problem)), "nsga2", time_limit=600, seed=99, generations=2, **budget)
        dse.solve(problem, "nsga2", time_limit=600, seed=99, client=client, generations=2, island_generations=1,
                  islands=args.workers, **budget)
        for rep in range(args.repeats):
            fronts: dict[str, Any] = {}
            figures: dict[str, dict[str, Any]] = {}
            for mode in ("serial", "asynchronous", "synchronous"):
                stop.check()
                fresh = loads(dumps(problem))  # no memo of an earlier run's simulations
                load = os.getloadavg()[0]
                w0 = sum(client.run(time.process_time).values())
                t0, c0 = time.perf_counter(), time.process_time()
                if mode == "serial":
                    front = dse.solve(fresh, "nsga2", time_limit=3600, seed=rep, generations=args.generations,
                                      **budget)
                else:
                    front = dse.solve(fresh, "nsga2", time_limit=3600, seed=rep, client=client,
                                      islands=args.workers, generations=per_island,
                                      synchronous=mode == "synchronous", **budget)
                t1, c1 = time.perf_counter(), time.process_time()
                w1 = sum(client.run(time.process_time).values())
                fronts[mode] = stop.keep(front, case=f"repeat {rep} {mode}")
                merged = re.search(r"(\d+) epochs merged", front.stats.message)
                tasks = int(merged.group(1)) if merged else 0
                figures[mode] = {"repeat": rep, "mode": mode, "wall_s": t1 - t0, "evaluations": front.stats.evaluations,
                                 "evals_per_s": front.stats.evaluations / (t1 - t0), "front_points": len(front),
                                 "driver_cpu_s": c1 - c0, "workers_cpu_s": w1 - w0 if mode != "serial" else 0.0,
                                 "cpu_s_per_task": (w1 - w0) / tasks if tasks else 0.0,
                                 "load_before": load, "load_after": os.getloadavg()[0],
                                 "message": front.stats.message}
            reference = fronts["serial"].reference_point(others=[fronts["asynchronous"], fronts["synchronous"]])
            serial = figures["serial"]
            serial_hv = fronts["serial"].hypervolume(reference)
            serial_cpu_per_eval = serial["driver_cpu_s"] / serial["evaluations"]
            for mode, row in figures.items():
                hv = fronts[mode].hypervolume(reference)
                row |= {"hypervolume": hv, "hv_ratio": hv / serial_hv if serial_hv else float("nan"),
                        "speedup": row["evals_per_s"] / serial["evals_per_s"],
                        "speedup_core_per_worker": serial_cpu_per_eval / (row["workers_cpu_s"] / row["evaluations"]
                                                                          / args.workers)
                        if row["workers_cpu_s"] else 1.0}
                writer.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in row.items()})
                handle.flush()
                print(f"repeat {rep} {mode:12s}: {row['wall_s']:6.2f} s, {row['evaluations']:,} evaluations, "
                      f"{row['evals_per_s']:6.1f}/s ({row['speedup']:.2f}x serial); hypervolume {hv:.4g} "
                      f"({row['hv_ratio']:.4f} of serial), {row['front_points']} points; CPU s: driver "
                      f"{row['driver_cpu_s']:.2f}, workers {row['workers_cpu_s']:.2f} "
                      f"({row['cpu_s_per_task']:.2f} per task); a core per worker: "
                      f"{row['speedup_core_per_worker']:.2f}x; load {row['load_before']:.1f} -> "
                      f"{row['load_after']:.1f}", flush=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
