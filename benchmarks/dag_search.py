"""Search that adds to its seeds: NSGA-II and the memetic search against HEFT on the TF paper's RNN graphs.

Usage: python benchmarks/dag_search.py [--graphs rnn dynrnn] [--devices FILE ...] [--time 60]
                                       [--solvers memetic nsga2]

For every graph x device file (default: rnn and dynrnn on the 10-device generated file) it runs
HEFT, then each solver seeded with the heuristics for ``--time`` seconds (makespan only, the
paper's rules), and prints each result and how much shorter than HEFT it is. Reads the TF
paper's sample data beside the checkout and says so when it is absent. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import time

from dag_bounds import DATA, DEVICE_FILES, GRAPHS, tf_problem, warm_up  # the sibling script
from stopping import benchmark_stops

from dse.heuristics import run as run_heuristic
from dse.solvers import solve


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="*", default=["rnn", "dynrnn"], choices=list(GRAPHS))
    parser.add_argument("--devices", nargs="*", default=DEVICE_FILES[:1])
    parser.add_argument("--time", type=float, default=60.0)
    parser.add_argument("--solvers", nargs="*", default=["memetic", "nsga2"])
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"TF-paper sample data not found at {DATA}; nothing to measure (expected outside the workspace).")
        return 0
    warm_up(tf_problem(args.graphs[0], args.devices[0]))
    print(f"{'graph':<7} {'dev':>4} {'solver':<8} {'makespan':>12} {'vs HEFT':>8} {'wall s':>7}  notes")
    with benchmark_stops("dag_search") as stop:
        for device_file in args.devices:
            for graph in args.graphs:
                problem = tf_problem(graph, device_file)
                start = time.perf_counter()
                heft = run_heuristic(problem, "heft").makespan
                m = problem.tables.n_dev
                print(f"{graph:<7} {m:>4} {'heft':<8} {heft:>12,} {'':>8} {time.perf_counter() - start:>7.1f}", flush=True)
                for name in args.solvers:
                    stop.check()
                    front = stop.keep(solve(problem, name, time_limit=args.time, seed=0, progress=False),
                                      f"{graph} on {device_file}, {name}")
                    value = front.points[0].internal[0]
                    note = f"{front.stats.generations} generations" if front.stats.generations else front.stats.message
                    print(f"{graph:<7} {m:>4} {name:<8} {value:>12,} {1 - value / heft:>8.1%} {front.stats.wall_s:>7.1f}  "
                          f"{note}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
