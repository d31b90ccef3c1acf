"""Scale of the dag family: HEFT on large DAGs, decoder throughput, NSGA-II against HEFT.

Usage: python benchmarks/dag_scale.py [--heft-sizes 1000 3000] [--nsga-size 300] [--nsga-time 30] [--seeds 3]

Graphs are layered random DAGs (25 tasks a layer, 3 producers each) with heterogeneous integer
costs on 8 devices (``dse.synthetic``-style tables: every task, device and transfer cost drawn at
random). Prints HEFT's wall time (ranks, insertion scheduling and the decode check), the
vectorized decoder's schedules per second at population 100, and NSGA-II seeded with the
heuristics against HEFT within ``--nsga-time`` seconds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dse.cost import CostTables
from dse.heuristics import run as run_heuristic
from dse.mapping.dag import DagProblem
from dse.solvers.nsga2 import solve_nsga2


def layered_tables(n: int, m: int, seed: int, width: int = 25, preds: int = 3) -> CostTables:
    rng = np.random.default_rng(seed)
    edges = []
    for i in range(width, n):
        layer = i // width
        prev = np.arange((layer - 1) * width, layer * width)
        for s in rng.choice(prev, size=preds, replace=False):
            edges.append((int(s), i))
    e = len(edges)
    tt = rng.integers(1, 40, size=(e, m, m)).astype(np.int64)
    tt[:, np.arange(m), np.arange(m)] = 0
    return CostTables(
        op_names=tuple(f"t{i}" for i in range(n)), device_names=tuple(f"d{d}" for d in range(m)),
        time=rng.integers(5, 100, size=(n, m)).astype(np.int64), energy=np.zeros((n, m), dtype=np.int64),
        mem=np.zeros((n, m), dtype=np.int64), allowed=np.ones((n, m), dtype=bool),
        edges=np.array(edges, dtype=np.int64), edge_bytes=np.ones(e, dtype=np.int64), transfer_time=tt,
        transfer_energy=np.zeros((e, m, m), dtype=np.int64), idle_power_mw=np.zeros(m, dtype=np.int64),
        mem_capacity=np.full(m, 1, dtype=np.int64), time_unit="tu", seconds_per_time_unit=1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heft-sizes", type=int, nargs="+", default=[1000, 3000])
    parser.add_argument("--nsga-size", type=int, default=300)
    parser.add_argument("--nsga-time", type=float, default=30.0)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    for n in args.heft_sizes:
        problem = DagProblem(layered_tables(n, 8, seed=n), ("makespan",), memory=False, insertion=True)
        start = time.perf_counter()
        result = run_heuristic(problem, "heft")
        print(f"HEFT {n} tasks x 8 devices: {time.perf_counter() - start:.3f} s (makespan {result.makespan})")
    problem = DagProblem(layered_tables(args.nsga_size, 8, seed=1), ("makespan",), memory=False)
    X = problem.repair(np.random.default_rng(0).integers(problem.lower, problem.upper + 1, size=(100, problem.n_genes)))
    start = time.perf_counter()
    problem.evaluate(X)
    print(f"vectorized decoder, {args.nsga_size} tasks, population 100: "
          f"{100 / (time.perf_counter() - start):,.0f} schedules/s")
    start = time.perf_counter()
    for x in X[:20]:
        problem.schedule(x, insertion=False)
    print(f"one-genome decoder: {20 / (time.perf_counter() - start):,.0f} schedules/s")
    for seed in range(args.seeds):
        problem = DagProblem(layered_tables(args.nsga_size, 8, seed=100 + seed), ("makespan",), memory=False)
        heft = run_heuristic(problem, "heft").makespan
        front = solve_nsga2(problem, time_limit=args.nsga_time, seed=seed, patience=None)
        best = front.points[0].internal[0]
        print(f"NSGA-II vs HEFT, {args.nsga_size} tasks, seed {seed}: {best} vs {heft} "
              f"({1 - best / heft:+.1%}), {front.stats.generations} generations in {front.stats.wall_s:.0f} s")


if __name__ == "__main__":
    main()
