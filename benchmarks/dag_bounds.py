"""Best schedule vs proven lower bound on the TF paper's graphs, under the paper's rules (sends occupy the sender).

Usage: python benchmarks/dag_bounds.py [--graphs conv rnn dynrnn] [--devices FILE ...] [--time 60]
                                       [--cpsat-max-cells 5000] [--workers 2] [--lns SECONDS]
                                       [--chain-inner 8] [--seed 0]

For every graph x device file (default: the conv graph on the three generated device files of
``../shared/data/tf-paper/devices``, 10, 50 and 100 devices) it prints

* the best schedule found within ``--time`` seconds: the best heuristic, then the memetic search
  (critical-path local search, ``dse.solvers.memetic``) and CP-SAT (the exact TF-rule model,
  ``dse.mapping.dag.cpsat``) each given ``--time`` seconds, the better of the two; with ``--lns``
  also the large-neighbourhood search (``dse.solvers.lns``) given that many seconds (a longer run,
  printed apart and counted in the best); every search runs with ``--seed``;
* the proven lower bound: the largest of the critical-path bound (every task at its fastest, free
  transfers), the communication bound (``dse.mapping.dag.bounds``: per task and device the earliest
  start and the shortest tail, transfers, the first send and producers or consumers sharing a
  device counted), the destructive bound (makespans refuted up to the best schedule, at most
  ``--time`` seconds), the chain bound (``dse.mapping.dag.chain_bound``: the critical chain cut
  into blocks of at most ``--chain-inner`` tasks, each block's cost from its entry's device to its
  exit's found exactly by enumeration; at most ``--time`` seconds) and CP-SAT's proven bound (only
  where tasks x devices <= ``--cpsat-max-cells``; CP-SAT starts from the destructive and chain
  bounds of its first tenth of the time);
* the gap ``(best - bound) / best``.

Reads the TF paper's sample data beside the checkout and says so when it is absent. Every figure
is printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from stopping import benchmark_stops

from dse.cost import TableCostModel
from dse.heuristics import names as heuristic_names
from dse.heuristics import run as run_heuristic
from dse.mapping.dag import DagProblem
from dse.solvers import solve

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tf-paper"
GRAPHS = {"conv": "convolutional_network_graph.csv", "rnn": "recurrent_network.csv", "dynrnn": "dynamic_rnn_graph.csv"}
DEVICE_FILES = ["2017_02_02_09_57_09-10-10-100-100000000-10-60-0.6.csv",
                "2017_02_03_11_22_48-50-10-100-100000000-10-60-0.6.csv",
                "2017_02_02_09_57_23-100-10-100-10000000-10-60-0.6.csv"]


def tf_problem(graph: str, device_file: str) -> DagProblem:
    """The makespan problem of one TF-paper graph on one device file, under the paper's rules."""
    from dse.inputs.importers.tfcsv import read_tf_devices, read_tf_graph

    workload = read_tf_graph(DATA / "graphs" / GRAPHS[graph])
    platform = read_tf_devices(DATA / "devices" / device_file)
    tables = TableCostModel(send_ops=10.0, scale=1000.0).tables(workload, platform)
    return DagProblem(tables, ("makespan",), memory=False, tensor_per_device=True, name=f"{graph}/{platform.name}")


def warm_up(problem: DagProblem) -> None:
    """Compile (or load from numba's cache) the decoder's, the heuristics' and the memetic search's kernels
    before anything is timed: a second of memetic search on ``problem``, its result dropped."""
    solve(problem, "memetic", time_limit=1.0, seed=0, progress=False)


def best_heuristic(problem: DagProblem) -> tuple[str, int]:
    results = {}
    for name in heuristic_names():
        try:
            results[name] = run_heuristic(problem, name).makespan
        except Exception:  # noqa: BLE001 - a heuristic that cannot take this problem is left out
            continue
    name = min(results, key=results.__getitem__)
    return name, int(results[name])


def measure(graph: str, device_file: str, limit: float, max_cells: int, workers: int,
            lns: float, chain_inner: int, seed: int = 0) -> dict[str, object]:
    # imported here: the other scripts import tf_problem alone, also with an earlier copy of the package
    from dse.mapping.dag.bounds import destructive_bound
    from dse.mapping.dag.chain_bound import chain_bound

    problem = tf_problem(graph, device_file)
    row: dict[str, object] = {"graph": graph, "devices": problem.tables.n_dev, "tasks": problem.n_tasks}
    start = time.perf_counter()
    row["heuristic"], row["heuristic_makespan"] = best_heuristic(problem)
    row["heuristics_s"] = time.perf_counter() - start
    memetic = solve(problem, "memetic", time_limit=limit, seed=seed, progress=False)
    row["memetic"] = memetic.points[0].internal[0] if len(memetic) else None
    row["critical_path_bound"] = problem.critical_path_bound()
    bound = row["communication_bound"] = problem.lower_bound()
    row["cpsat"] = row["cpsat_bound"] = None
    if problem.n_tasks * problem.tables.n_dev <= max_cells:
        exact = solve(problem, "cpsat", time_limit=limit, seed=seed, progress=False, workers=workers)
        row["cpsat"] = exact.points[0].internal[0] if len(exact) else None
        row["cpsat_bound"] = exact.stats.best_bound[0] if exact.stats.best_bound else None
        row["cpsat_status"] = exact.status
    row["lns"] = (solve(problem, "lns", time_limit=lns, seed=seed, progress=False).points[0].internal[0]
                  if lns > 0 else None)
    found = [v for v in (row["heuristic_makespan"], row["memetic"], row["cpsat"], row["lns"])
             if isinstance(v, (int, np.integer))]
    start = time.perf_counter()
    row["destructive_bound"] = destructive_bound(problem, upper=int(min(found)), time_limit=limit, known=bound)
    row["destructive_s"] = time.perf_counter() - start
    start = time.perf_counter()
    row["chain_bound"] = chain_bound(problem, upper=int(min(found)), time_limit=limit, known=bound,
                                     max_inner=chain_inner)
    row["chain_s"] = time.perf_counter() - start
    bounds = [v for v in (bound, row["destructive_bound"], row["chain_bound"], row["cpsat_bound"])
              if isinstance(v, (int, float, np.integer))]
    best, proven = int(min(found)), float(max(bounds))
    row["best"], row["bound"], row["gap"] = best, proven, (best - proven) / best
    return row


def _found(makespan: object) -> str:
    """A search's makespan with thousands separators, ``-`` where the search did not run or found nothing."""
    return "-" if not isinstance(makespan, (int, np.integer)) else f"{int(makespan):,}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="*", default=["conv"], choices=list(GRAPHS))
    parser.add_argument("--devices", nargs="*", default=DEVICE_FILES)
    parser.add_argument("--time", type=float, default=60.0, help="seconds for each search (memetic, CP-SAT)")
    parser.add_argument("--cpsat-max-cells", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2, help="CP-SAT search workers")
    parser.add_argument("--lns", type=float, default=0.0, help="seconds for the large-neighbourhood search (0: off)")
    parser.add_argument("--chain-inner", type=int, default=8, help="most tasks inside one block of the chain bound")
    parser.add_argument("--seed", type=int, default=0, help="seed of every search")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"TF-paper sample data not found at {DATA}; nothing to measure (expected outside the workspace).")
        return 0
    warm_up(tf_problem(args.graphs[0], args.devices[0]))
    print(f"{'graph':<7} {'dev':>4} {'best heuristic':>22} {'memetic':>10} {'cpsat':>10} {'lns':>10} {'cp bound':>10} "
          f"{'comm bound':>11} {'destructive':>12} {'chain':>12} {'cpsat bound':>12} {'best':>10} {'bound':>10} "
          f"{'gap':>7}")
    with benchmark_stops("dag_bounds") as stop:
        for device_file in args.devices:
            for graph in args.graphs:
                stop.check()
                r = stop.keep(measure(graph, device_file, args.time, args.cpsat_max_cells, args.workers, args.lns,
                                      args.chain_inner, args.seed), f"{graph} on {device_file}")
                cp_bound = "-" if r["cpsat_bound"] is None else f"{r['cpsat_bound']:,.0f}"
                print(f"{r['graph']:<7} {r['devices']:>4} {r['heuristic']:>10} {r['heuristic_makespan']:>11,} "
                      f"{_found(r['memetic']):>10} {_found(r['cpsat']):>10} {_found(r['lns']):>10} {r['critical_path_bound']:>10,} "
                      f"{r['communication_bound']:>11,} {r['destructive_bound']:>7,} {r['destructive_s']:>3.0f}s "
                      f"{r['chain_bound']:>7,} {r['chain_s']:>3.0f}s {cp_bound:>12} "
                      f"{r['best']:>10,} {r['bound']:>10,.0f} {r['gap']:>7.1%}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
