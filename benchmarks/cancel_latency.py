"""How soon a region task's worker thread is free once the driver tells the task its box is dominated.

The exact mode on Dask (``dse.solvers.cpsat_distributed``) cancels a running task whose box no longer meets
the open region. Dask cannot cancel a task that is already running, so the driver also sets the task's own
Dask event, which the task's search polls every ``STOP_POLL_S`` seconds. This measures that path on a
search that would not end by itself: one single-threaded worker process, ResNet-50 on the DVFS server
(``docs/examples/resnet50_dvfs_spec.yaml``), the whole region searched with a budget of 120 s. After
``--after`` seconds of search the script does what the driver does (sets the task's event, cancels its
future), submits a probe task to the same worker, and times until the probe's result arrives: the worker's
one thread is then free for the next region. Prints each repeat and the median and largest.

    .venv/bin/python benchmarks/cancel_latency.py [--repeats 5] [--after 2]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

import dse
from dse.solvers.cpsat_distributed import _Settings, domains_task, region_task
from dse.solvers.dask_tasks import STOP_POLL_S

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "examples" / "resnet50_dvfs_spec.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--after", type=float, default=2.0, help="seconds of search before the task is told to stop")
    args = parser.parse_args()
    from stopping import benchmark_stops

    # this folder holds distributed_*.py: it goes from the path, so that `import distributed` finds Dask
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    from distributed import Client, Event, LocalCluster

    problem = dse.load_problem(SPEC)
    settings = _Settings(seed=0, workers=1, deterministic=False, hints=True)
    key = "cancel-latency"
    with benchmark_stops("cancel_latency") as stop, \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                         silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        shared = client.scatter(problem, broadcast=True)
        _, highs = client.submit(domains_task, shared, key, settings, 120.0, pure=False).result()  # the model
        top = tuple(h + 1 for h in highs)
        print(f"ResNet-50 DVFS, the whole region from objective 1, budget 120 s; told to stop after {args.after:g} s "
              f"(the task polls its event every {STOP_POLL_S:g} s)", flush=True)
        waits = []
        for rep in range(args.repeats):
            stop.check()
            event = f"dse-stop-{key}-task{rep}"
            task = client.submit(region_task, shared, key, top, 0, None, settings, 120.0, task_event=event,
                                 pure=False)
            time.sleep(args.after)
            if task.done():
                print(f"repeat {rep}: the search ended by itself within {args.after:g} s; not counted", flush=True)
                continue
            told = time.perf_counter()
            Event(event, client=client).set()
            task.cancel()
            probe = client.submit(time.monotonic, pure=False)
            stop.keep(probe.result(), case=f"repeat {rep}")
            waits.append(time.perf_counter() - told)
            print(f"repeat {rep}: the worker's thread was free {waits[-1]:.3f} s after the task was told to stop",
                  flush=True)
        if waits:
            print(f"median {statistics.median(waits):.3f} s, largest {max(waits):.3f} s over {len(waits)} repeats",
                  flush=True)


if __name__ == "__main__":
    main()
