"""Exact fronts on Dask: the serial CP-SAT solver on one core against its regions on 2 local workers.

The problem is a random pipeline (8 ops on 3 devices, throughput, energy and latency; seed 3 of
:func:`dse.cost.synthetic.random_tables`) whose complete front has 25 points. The serial run uses one
CP-SAT search worker (one core); the distributed run a LocalCluster of 2 single-threaded worker
processes, warmed up first (imports, compiled kernels) by a run on a small problem, and each region task
one CP-SAT search worker. Prints the wall times, the speed-up and whether the two fronts have the same
objective values (and gap 0); and the CPU seconds of the serial run, of the workers and of the driver,
with the speed-up they imply when each worker has a core of its own (serial CPU over the workers'
CPU per worker; on a busy machine the wall times measure the load as much as the solver). ``--no-race``
turns the racing of duplicates off (the ``cpsat`` option ``race``): they run only while more worker
threads are free than the open boxes' searches (one per box and objective) can fill. ``--chain S`` sets the
``cpsat`` option ``chain_s`` (seconds a region's task goes on with the boxes its own points split off).

    .venv/bin/python benchmarks/distributed_exact.py [--workers 2] [--seed 3] [--repeats 1] [--no-race] [--chain S]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.pipeline import PipelineProblem

THREE = ("throughput", "energy", "latency")


def problem(seed: int, n_ops: int = 8, n_dev: int = 3) -> PipelineProblem:
    return PipelineProblem(random_tables(seed, n_ops=n_ops, n_dev=n_dev), THREE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=3, help="random_tables seed of the problem")
    parser.add_argument("--ops", type=int, default=8, help="the pipeline's ops")
    parser.add_argument("--devices", type=int, default=3, help="the pipeline's devices")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--no-race", dest="race", action="store_false",
                        help="no duplicates racing with other seeds on free worker threads")
    parser.add_argument("--chain", type=float, default=None,
                        help="the cpsat option chain_s: seconds a region's task goes on with the boxes its "
                        "points split off (0: one box per task; default: the option's default)")
    args = parser.parse_args()
    from stopping import benchmark_stops

    # this file's folder is on the path (for stopping.py) and this file is named like the Dask package:
    # the folder goes, so that `import distributed` (here, inside dse and in the workers) finds Dask
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    from distributed import Client, LocalCluster

    chain = {} if args.chain is None else {"chain_s": args.chain}
    target = problem(args.seed, n_ops=args.ops, n_dev=args.devices)
    with benchmark_stops("distributed") as stop, \
            LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                         silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        dse.solve(problem(0, n_ops=5), "cpsat", time_limit=60, seed=0, client=client, race=args.race)  # warm-up
        for rep in range(args.repeats):
            stop.check()
            t0, c0 = time.perf_counter(), time.process_time()
            serial = stop.keep(dse.solve(target, "cpsat", time_limit=args.time_limit, seed=rep, workers=1),
                               case="serial")
            t1, c1 = time.perf_counter(), time.process_time()
            w0 = sum(client.run(time.process_time).values())
            spread = stop.keep(dse.solve(target, "cpsat", time_limit=args.time_limit, seed=rep, client=client,
                                         race=args.race, **chain), case="distributed")
            t2, c2 = time.perf_counter(), time.process_time()
            w2 = sum(client.run(time.process_time).values())
            same = sorted(map(tuple, serial.internal().tolist())) == sorted(map(tuple, spread.internal().tolist()))
            gap = spread.certified.gap if spread.certified is not None else None
            print(f"repeat {rep}: front {len(serial)} points ({serial.status}); serial 1 core {t1 - t0:.2f} s; "
                  f"{args.workers} workers {t2 - t1:.2f} s ({spread.status}, gap {gap}); "
                  f"speed-up {(t1 - t0) / (t2 - t1):.2f}x; same front: {same}", flush=True)
            print(f"  CPU seconds: serial {c1 - c0:.2f}; distributed: workers {w2 - w0:.2f}, driver {c2 - c1:.2f}; "
                  f"speed-up if each worker had a core of its own: {(c1 - c0) / ((w2 - w0) / args.workers):.2f}x",
                  flush=True)
            print(f"  serial: {serial.stats.solver_calls} solves; distributed: {spread.stats.message}", flush=True)


if __name__ == "__main__":
    main()
