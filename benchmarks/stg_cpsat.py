"""CP-SAT proof rates on Standard-Task-Graph-style graphs on identical processors.

Usage: python benchmarks/stg_cpsat.py [--sizes 50 100] [--procs 2 4 8] [--count 3] [--limits 10 60]

For each size, method (sameprob, samepred, layrprob, layrpred), seed and processor count: the
makespan CP-SAT proves optimal within the size's time limit (``--limits``, one per size), or its
best schedule and lower bound when it runs out; HEFT's makespan beside it. Prints the share
proven per size and processor count, the median seconds, the mean gap of the rest, and writes a CSV.
Solves go through ``dse.solve``, as a user's do (bounds and model build inside the time limit); run
``python -m dse.solvers.warmup`` first for warm-cache figures.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path

from stopping import benchmark_stops

import dse
from dse.cost import TableCostModel
from dse.heuristics import run as run_heuristic
from dse.inputs.builders.stg_generator import METHODS, stg_random_graph
from dse.inputs.importers.identical import identical_platform
from dse.mapping.dag import DagProblem


def summarize(rows: list[dict], sizes: list[int], procs_list: list[int], out: Path) -> None:
    """Print the proof rates of the finished runs and write them to ``out/stg_cpsat.csv``."""
    if not rows:
        return
    print("\nsize  P  proven   median s  mean gap of unproven")
    for size in sizes:
        for procs in procs_list:
            sel = [r for r in rows if r["size"] == size and r["procs"] == procs]
            if not sel:
                continue
            open_ = [r for r in sel if not r["proven"]]
            gap = sum((r["cpsat"] - r["bound"]) / r["cpsat"] for r in open_) / len(open_) if open_ else 0.0
            median = statistics.median(r["seconds"] for r in sel)
            print(f"{size:>4} {procs:>2}  {sum(r['proven'] for r in sel):>3}/{len(sel):<3}  {median:>8.2f}  {gap:.2%}")
        sel = [r for r in rows if r["size"] == size]
        if sel:
            print(f"{size:>4} all {sum(r['proven'] for r in sel):>3}/{len(sel):<3}  "
                  f"{statistics.median(r['seconds'] for r in sel):>8.2f}  (all processor counts)")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "stg_cpsat.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100])
    parser.add_argument("--procs", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--count", type=int, default=3, help="graphs per method and size")
    parser.add_argument("--limits", type=float, nargs="+", default=[10.0, 60.0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    rows: list[dict] = []
    print(f"{'graph':<26} {'P':>2} {'heft':>6} {'cpsat':>6} {'bound':>6} {'proven':>6} {'s':>6}")
    with benchmark_stops("stg_cpsat") as stop:
        try:
            for size, limit in zip(args.sizes, args.limits, strict=False):
                for method in METHODS:
                    for seed in range(args.count):
                        workload = stg_random_graph(size, method, seed)
                        for procs in args.procs:
                            tables = TableCostModel().tables(workload, identical_platform(procs))
                            problem = DagProblem(tables, ("makespan",), memory=False, name=workload.name)
                            heft = run_heuristic(problem, "heft").makespan
                            stop.check()
                            front = stop.keep(dse.solve(problem, "cpsat", time_limit=limit, seed=0, progress=False),
                                              f"{workload.name} on {procs} processors")
                            value = front.points[0].internal[0]
                            bound = front.stats.best_bound[0]
                            row = dict(graph=workload.name, size=size, procs=procs, heft=heft, cpsat=value, bound=bound,
                                       proven=front.status == "optimal", seconds=round(front.stats.wall_s, 2))
                            rows.append(row)
                            print(f"{workload.name:<26} {procs:>2} {heft:>6} {value:>6} {bound:>6.0f} "
                                  f"{'yes' if row['proven'] else 'no':>6} {row['seconds']:>6}", flush=True)
        finally:
            summarize(rows, args.sizes, args.procs, args.out)


if __name__ == "__main__":
    main()
