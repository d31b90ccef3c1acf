"""Which side of the gap is loose on the TF paper's recurrent graphs: windows of the critical chain, alone.

Usage: python benchmarks/dag_chain_windows.py [--graph rnn] [--devices FILE] [--search 60]
                                              [--windows 8,27,47,340,600,900] [--width 25] [--time 20] [--seed 0]

The chain bound (``dse.mapping.dag.chain_bound``) cuts the critical chain into blocks and keeps every
block's own tasks; it drops everything that crosses blocks. This script asks how far the best
schedule is from that relaxation, window by window. It runs the memetic search for ``--search``
seconds (seed ``--seed``), then for each start position ``a`` in ``--windows`` takes the chain tasks
``a .. a + width`` and every task that descends from one of them and leads to another
(``dse.mapping.dag.chain_bound``'s side tasks), builds that sub-problem alone (every other task and
edge dropped, colocation dropped: a relaxation) and prints

* ``span``: the time from the window's first chain task's start to its last one's finish in the
  whole schedule;
* ``own``: the sub-problem scheduled with the schedule's devices and order (what the window costs
  without the rest of the graph);
* ``cpsat`` / ``cp bound``: CP-SAT on the sub-problem, ``--time`` seconds, one worker, hinted with
  ``own`` (the best schedule of the window alone it finds, and its proven bound);
* ``chain``: the chain bound of the sub-problem (at most ``--time`` seconds);
* ``plugged``: the whole schedule with the window's tasks moved to CP-SAT's devices.

``span`` far above ``cpsat`` with ``chain`` close to ``cpsat`` says the search is loose there;
``span`` close to ``cpsat`` and far above ``chain`` says the bound is. First it prints the same
comparison for the whole relaxation the chain bound sees: the chain and its blocks' side tasks
(``chain_blocks``, 8 inner tasks at most), every task that crosses a cut dropped, searched by the
memetic search for ``--search`` seconds, beside its chain bound. Every figure is printed; nothing
is asserted. Reads the TF paper's sample data beside the checkout (``dag_bounds.py``).
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
from dag_bounds import DATA, DEVICE_FILES, GRAPHS, warm_up
from stopping import benchmark_stops

from dse.cost import TableCostModel
from dse.inputs.importers.tfcsv import read_tf_devices, read_tf_graph
from dse.mapping.dag import DagProblem
from dse.mapping.dag.chain_bound import chain_blocks, chain_bound, chain_positions, critical_chain
from dse.model.workload import Workload
from dse.solvers import solve


def tf_problem_of(workload: Workload, device_file: str) -> DagProblem:
    """The makespan problem of ``workload`` on one TF-paper device file, under the paper's rules
    (the cost model of ``dag_bounds.tf_problem``)."""

    platform = read_tf_devices(DATA / "devices" / device_file)
    tables = TableCostModel(send_ops=10.0, scale=1000.0).tables(workload, platform)
    return DagProblem(tables, ("makespan",), memory=False, tensor_per_device=True, name=workload.name)


def window_workload(workload: Workload, keep: list[int]) -> Workload:
    """The ops ``keep`` (sorted indices) of ``workload`` and the edges between them, colocation dropped."""
    index = {v: i for i, v in enumerate(keep)}
    ops = tuple(dataclasses.replace(workload.ops[v], colocation=None) for v in keep)
    inside = [e for e, (s, d) in enumerate(workload.edges) if s in index and d in index]
    return dataclasses.replace(
        workload, name=f"{workload.name}-window", ops=ops,
        edges=tuple((index[workload.edges[e][0]], index[workload.edges[e][1]]) for e in inside),
        edge_bytes=tuple(workload.edge_bytes[e] for e in inside))


def measure(workload: Workload, problem: DagProblem, best: np.ndarray, device_file: str, start: int, width: int,
            limit: float, seed: int) -> dict[str, object]:
    n = problem.n_tasks
    chain = critical_chain(problem)
    lo, hi = chain_positions(problem, chain)
    end = min(start + width, len(chain) - 1)
    keep = sorted(set(chain[start:end + 1].tolist()) | set(np.flatnonzero((lo >= start) & (hi <= end)).tolist()))
    sub = tf_problem_of(window_workload(workload, keep), device_file)
    schedule = problem.schedule(best)
    own = sub.genome(best[keep], np.argsort(best[n:][keep], kind="stable"))  # the schedule's devices and order
    own_makespan = sub.schedule(own).makespan
    exact = solve(sub, "cpsat", time_limit=limit, seed=seed, progress=False, workers=1, resume=[own])
    row: dict[str, object] = {
        "first": problem.tables.op_names[chain[start]], "tasks": len(keep),
        "span": int(schedule.finish[chain[end]] - schedule.start[chain[start]]), "own": own_makespan,
        "cpsat": int(exact.points[0].internal[0]) if len(exact) else None,
        "cpsat_bound": exact.stats.best_bound[0] if exact.stats.best_bound else None,
        "chain": chain_bound(sub, upper=own_makespan, time_limit=limit), "plugged": None}
    if len(exact):
        plugged = best.copy()
        plugged[keep] = np.asarray(exact.points[0].genome)[:len(keep)]
        row["plugged"] = problem.schedule(plugged).makespan
    return row


def relaxation(workload: Workload, problem: DagProblem, device_file: str, search: float, limit: float,
               seed: int) -> tuple[int, int, int]:
    """``(tasks, best, bound)``: the chain bound's relaxation of ``problem`` (the critical chain and its
    blocks' tasks alone), the memetic search's best makespan on it in ``search`` seconds, and its chain
    bound (at most ``limit`` seconds)."""
    chain = critical_chain(problem)
    keep = sorted(set(chain.tolist()) | {v for block in chain_blocks(problem, chain) for v in block.inner})
    sub = tf_problem_of(window_workload(workload, keep), device_file)
    best = int(solve(sub, "memetic", time_limit=search, seed=seed, progress=False).points[0].internal[0])
    return len(keep), best, chain_bound(sub, upper=best, time_limit=limit, known=sub.lower_bound())


def main() -> int:

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="rnn", choices=list(GRAPHS))
    parser.add_argument("--devices", default=DEVICE_FILES[0])
    parser.add_argument("--search", type=float, default=60.0, help="seconds of memetic search for the schedule")
    parser.add_argument("--windows", default="8,27,47,340,600,900", help="chain positions where windows start")
    parser.add_argument("--width", type=int, default=25, help="chain tasks in a window, less one")
    parser.add_argument("--time", type=float, default=20.0, help="seconds for CP-SAT and the chain bound per window")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"TF-paper sample data not found at {DATA}; nothing to measure (expected outside the workspace).")
        return 0
    workload = read_tf_graph(DATA / "graphs" / GRAPHS[args.graph])
    problem = tf_problem_of(workload, args.devices)
    warm_up(problem)
    found = solve(problem, "memetic", time_limit=args.search, seed=args.seed, progress=False)
    best = np.asarray(found.points[0].genome, dtype=np.int64)
    print(f"{args.graph} on {args.devices}: memetic {args.search:.0f} s: {problem.schedule(best).makespan:,}")
    with benchmark_stops("dag_chain_windows") as stop:
        tasks, relaxed, bound = stop.keep(relaxation(workload, problem, args.devices, args.search, 3 * args.time,
                                                     args.seed), "relaxation")
        print(f"the chain bound's relaxation ({tasks:,} of {problem.n_tasks:,} tasks): memetic {relaxed:,}, "
              f"chain bound {bound:,}, gap {(relaxed - bound) / relaxed:.1%}", flush=True)
        print(f"{'window from':<60} {'tasks':>5} {'span':>8} {'own':>8} {'cpsat':>8} {'cp bound':>9} {'chain':>8} "
              f"{'plugged':>10}")
        for start in (int(a) for a in args.windows.split(",")):
            stop.check()
            r = stop.keep(measure(workload, problem, best, args.devices, start, args.width, args.time, args.seed),
                          f"window {start}")
            cp_bound = "-" if r["cpsat_bound"] is None else f"{r['cpsat_bound']:,.0f}"
            print(f"{str(r['first'])[:60]:<60} {r['tasks']:>5} {r['span']:>8,} {r['own']:>8,} {r['cpsat'] or 0:>8,} "
                  f"{cp_bound:>9} {r['chain']:>8,} {r['plugged'] or 0:>10,}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
