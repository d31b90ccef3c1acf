"""The kernel plugin on Dask workers: each worker's first task, on fresh workers, with and without it.

A driver registers a worker plugin that loads the compiled kernels of the problem's family into every
worker before its tasks run (:func:`dse.solvers.dask_tasks.load_kernels_on_workers`: the dag family's
decoder and heuristics, from numba's cache). Without it, each worker loads them inside its first task that calls one.
For each case, and with and without the plugin (without: the drivers' call replaced by one that registers
nothing, the code before the plugin), a fresh LocalCluster of ``--workers`` single-threaded worker
processes solves the problem once. Prints, per run: the wall time of the solve (the plugin's set-up
included), the seconds the plugin took to load the kernels on each worker, each worker's first task's
compute time (``front.stats.timings.tasks``) and the median compute time of the other tasks, and the load
average before and after. Writes the rows to ``out/worker_warmup.csv``.

Cases: the pipeline of ``distributed_exact.py`` (8 ops, 3 devices, 3 objectives) with CP-SAT's regions;
``xr_social_a`` (multimodel) with 2 NSGA-II islands of 100 for 20 generations; a dag of 30 tasks on 4
devices with 2 islands of 100 for 40 generations; a dag of 10 tasks on 3 devices with CP-SAT's regions.
The pipeline and multimodel families run no compiled kernel: the drivers register no plugin for them.

    .venv/bin/python benchmarks/worker_warmup.py [--workers 2] [--repeats 1] [--cases pipeline-exact,...]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.mapping.pipeline import PipelineProblem
from dse.mapping.registry import families
from dse.pareto import NO_RESULT, ParetoSet
from dse.solvers import cpsat_distributed, nsga2_islands

ISLANDS = {"islands": 2, "pop_size": 100, "island_generations": 10, "patience": None}


def pipeline_exact(client: Any) -> ParetoSet:
    problem = PipelineProblem(random_tables(3, n_ops=8, n_dev=3), ("throughput", "energy", "latency"))
    return dse.solve(problem, "cpsat", time_limit=600, seed=0, client=client)


def xr_islands(client: Any) -> ParetoSet:
    return dse.solve(dse.load_problem("xr_social_a"), "nsga2", time_limit=600, seed=0, client=client,
                     generations=20, **ISLANDS)


def dag_islands(client: Any) -> ParetoSet:
    problem = DagProblem(random_tables(5, n_ops=30, n_dev=4), ("makespan", "energy"))
    return dse.solve(problem, "nsga2", time_limit=600, seed=0, client=client, generations=40, **ISLANDS)


def dag_exact(client: Any) -> ParetoSet:
    problem = DagProblem(random_tables(5, n_ops=10, n_dev=3), ("makespan", "energy"))
    return dse.solve(problem, "cpsat", time_limit=600, seed=0, client=client)


CASES: dict[str, Callable[[Any], ParetoSet]] = {"pipeline-exact": pipeline_exact, "xr_social_a-islands": xr_islands,
                                                "dag-islands": dag_islands, "dag-exact": dag_exact}


@contextlib.contextmanager
def plugin(on: bool) -> Iterator[None]:
    """With ``on`` False, the drivers register no kernel plugin (as before it existed)."""
    if on:
        yield
        return
    with mock.patch.object(cpsat_distributed, "load_kernels_on_workers", lambda client, problem: None), \
            mock.patch.object(nsga2_islands, "load_kernels_on_workers", lambda client, problem: None):
        yield


def plugin_seconds(client: Any) -> list[float | None]:
    """The seconds the kernel plugin took on each worker (None: not registered, or a cold cache)."""
    names = [f"dse-kernels-{entry.name}" for entry in families().values() if entry.compiled_kernels]

    def loaded(dask_worker: Any) -> float | None:
        plugins = [dask_worker.plugins[n] for n in names if n in dask_worker.plugins]
        return plugins[0].loaded_s if plugins else None

    return list(client.run(loaded).values())


def first_tasks(front: ParetoSet) -> tuple[list[float], float | None]:
    """Each worker's first task's compute seconds (by start), and the median of the other tasks'."""
    assert front.stats.timings is not None
    ran = sorted((t for t in front.stats.timings.tasks if t.worker != NO_RESULT), key=lambda t: t.start_s)
    first: dict[str, int] = {}
    for t in ran:
        first.setdefault(t.worker, t.task)
    rest = [t.end_s - t.start_s for t in ran if t.task not in first.values()]
    return [t.end_s - t.start_s for t in ran if t.task in first.values()], statistics.median(rest) if rest else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated, of " + ", ".join(CASES))
    parser.add_argument("--out", type=Path, default=Path("out/worker_warmup.csv"))
    args = parser.parse_args()
    from csv_rows import write_rows
    from stopping import benchmark_stops

    # this file's folder is on the path (for stopping.py) and holds scripts named like packages: the folder
    # goes, so that `import distributed` (here, inside dse and in the workers) finds Dask
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    from distributed import Client, LocalCluster

    rows = []
    with benchmark_stops("worker_warmup") as stop:
        for rep in range(args.repeats):
            for case in args.cases.split(","):
                for on in ((False, True) if rep % 2 == 0 else (True, False)):
                    stop.check()
                    load_before = os.getloadavg()[0]
                    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
                            Client(cluster) as client, plugin(on):
                        start = time.perf_counter()
                        front = stop.keep(CASES[case](client), case=f"{case}, plugin {on}")
                        wall = time.perf_counter() - start
                        loads = plugin_seconds(client)
                    firsts, others = first_tasks(front)
                    row = {"repeat": rep, "case": case, "plugin": on, "wall_s": round(wall, 3),
                           "plugin_s": " ".join("-" if s is None else f"{s:.3f}" for s in loads),
                           "first_task_s": " ".join(f"{s:.3f}" for s in firsts),
                           "other_tasks_median_s": None if others is None else round(others, 3),
                           "tasks": len(front.stats.timings.task_s) if front.stats.timings else 0,
                           "status": front.status, "points": len(front),
                           "load_before": load_before, "load_after": os.getloadavg()[0]}
                    rows.append(row)
                    print(", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    write_rows(args.out, rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
