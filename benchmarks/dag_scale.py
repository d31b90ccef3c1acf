"""Scale of the dag family: HEFT on large DAGs, decoder throughput, loading large TF problems, NSGA-II.

Usage: python benchmarks/dag_scale.py [--heft-sizes 1000 3000] [--decoder-size 300] [--repeat 5]
                                      [--tf-devices 100 1000] [--nsga-size 300] [--nsga-time 30] [--seeds 3]
                                      [--before DIR]

Graphs are layered random DAGs (25 tasks a layer, 3 producers each) with heterogeneous integer
costs (every task, device and transfer cost drawn at random). Prints HEFT's wall time on 8 devices
(ranks, insertion scheduling and the decode check); the vectorized decoder's schedules per second
at ``--decoder-size`` tasks x 10 devices, population 100, and the insertion decoder's genomes per
second (best of ``--repeat``); the same decoder under the TF paper's send rules on its dynamic-RNN
graph and 10-device file; the wall time and peak RSS of ``dse.load_problem`` of the TF paper's
dynamic-RNN graph on its 100-device file and on generated device files of ``--tf-devices`` devices
(each in a fresh process; needs ``../shared/data/tf-paper``, says so when absent), and the time and
added peak RSS of the transfer bars of a Gantt chart (``dse.viz.transfers``) of HEFT's schedule on
the 100-device file; then NSGA-II
seeded with the heuristics against HEFT within ``--nsga-time`` seconds (``--seeds 0`` skips it).

``--before DIR`` first runs the same figures (NSGA-II aside) with ``DIR`` first on ``sys.path`` (a
copy of an earlier ``dse`` package), so that before/after figures come from one run on one machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
from stopping import BenchmarkStop, benchmark_stops

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tf-paper"
OUT = ROOT / "out" / "dag-scale"

LOAD = textwrap.dedent("""
    import resource, sys, time
    import dse
    from dse.solvers.registry import lookup
    import dse.solvers.nsga2, dse.solvers.cpsat  # the solvers the spec check imports, loaded before the clock
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    problem = dse.load_problem(sys.argv[1])
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{seconds:.2f} {peak / 1024:.0f} {(peak - base) / 1024:.0f} {problem.n_tasks} {problem.tables.n_edges}")
""")


GANTT = textwrap.dedent("""
    import resource, sys, time
    import dse
    from dse.heuristics import run
    from dse.viz import transfers
    problem = dse.load_problem(sys.argv[1])
    result = run(problem, "heft")
    x = problem.genome(result.devices, result.order)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    rows = transfers(problem, problem.decode(x), x)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{seconds:.2f} {(peak - base) / 1024:.0f} {len(rows)}")
""")


def layered_tables(n: int, m: int, seed: int, width: int = 25, preds: int = 3):
    from dse.cost import CostTables

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


def best_of(repeat: int, call) -> float:
    """The least CPU time of ``repeat`` calls (the process's own time: steadier than wall time on a
    shared machine; the work is single-threaded)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def tf_specs(device_counts: list[int]) -> list[tuple[str, Path]]:
    """Spec files of the dynamic-RNN graph on the paper's 100-device file and on generated ones."""
    if not DATA.is_dir():
        print(f"({DATA} is absent: the TF load figures are skipped)")
        return []
    OUT.mkdir(parents=True, exist_ok=True)
    graph = DATA / "graphs" / "dynamic_rnn_graph.csv"
    files = [("100 devices (paper's file)", DATA / "devices" / "2017_02_02_09_57_23-100-10-100-10000000-10-60-0.6.csv")]
    rng = np.random.default_rng(0)
    for m in device_counts:
        path = OUT / f"devices-{m}.csv"
        if not path.exists():
            rows = ["Id,RAM,#operations,commnication speed,type"]
            for i in range(m):
                rates = ";".join(str(int(r)) for r in rng.integers(10, 60, size=m - 1 - i))
                rows.append(f"{i},10000000,{int(rng.integers(10, 100))},{rates},{'GPU' if i % 2 else 'CPU'}")
            path.write_text("\n".join(rows) + "\n")
        files.append((f"{m} devices (generated)", path))
    specs = []
    for label, devices in files:
        spec = OUT / f"spec-{devices.stem}.yaml"
        spec.write_text(f"name: dynrnn\nfamily: dag\nobjectives: [makespan]\n"
                        f"platform: {{format: tfcsv, path: {devices}}}\nworkload: {{format: tfcsv, path: {graph}}}\n")
        specs.append((label, spec))
    return specs


def figures(args: argparse.Namespace, tag: str, stop: BenchmarkStop) -> None:
    from dse.heuristics import run as run_heuristic
    from dse.mapping.dag import DagProblem

    warm = DagProblem(layered_tables(50, 2, seed=0), ("makespan",), memory=False, insertion=True)
    run_heuristic(warm, "heft")  # one-time costs (compiled kernels loaded once per process) stay out of the figures
    warm.evaluate(warm.repair(np.zeros((2, warm.n_genes), dtype=np.int64)))
    for n in args.heft_sizes:
        stop.check()
        problem = DagProblem(layered_tables(n, 8, seed=n), ("makespan",), memory=False, insertion=True)
        result = run_heuristic(problem, "heft")
        seconds = best_of(args.repeat, lambda p=problem: run_heuristic(p, "heft"))
        print(f"[{tag}] HEFT {n} tasks x 8 devices: {seconds:.3f} s (makespan {result.makespan})")
    stop.check()
    n = args.decoder_size
    problem = DagProblem(layered_tables(n, 10, seed=1), ("makespan",), memory=False)
    X = problem.repair(np.random.default_rng(0).integers(problem.lower, problem.upper + 1, size=(100, problem.n_genes)))
    seconds = best_of(args.repeat, lambda: problem.evaluate(X))
    print(f"[{tag}] vectorized decoder, {n} tasks x 10 devices, population 100: {100 / seconds:,.0f} schedules/s")
    inserting = DagProblem(layered_tables(n, 10, seed=1), ("makespan",), memory=False, insertion=True)
    seconds = best_of(args.repeat, lambda: inserting.evaluate(X[:20]))
    print(f"[{tag}] insertion decoder, {n} tasks x 10 devices: {20 / seconds:,.0f} genomes/s")
    if DATA.is_dir():  # the TF paper's rules: one send per remote device, in device-index order
        from dag_bounds import DEVICE_FILES, tf_problem  # the sibling script

        tf = tf_problem("dynrnn", DEVICE_FILES[0])
        X = tf.repair(np.random.default_rng(0).integers(tf.lower, tf.upper + 1, size=(100, tf.n_genes)))
        tf.evaluate(X[:2])
        seconds = best_of(args.repeat, lambda: tf.evaluate(X))
        print(f"[{tag}] TF rules, dynamic_rnn ({tf.n_tasks} tasks) x 10 devices, population 100: "
              f"{100 / seconds:,.0f} schedules/s")
    for label, spec in tf_specs(args.tf_devices):
        done = stop.run([sys.executable, "-P", "-c", LOAD, str(spec)], capture_output=True,
                        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=1800)
        if done.returncode:
            print(f"[{tag}] load dynamic_rnn on {label}: failed ({done.stderr.strip().splitlines()[-1:]})")
            continue
        seconds, peak, added, tasks, edges = done.stdout.split()
        print(f"[{tag}] load dynamic_rnn ({tasks} tasks, {edges} edges) on {label}: {seconds} s, "
              f"peak RSS {peak} MiB ({added} MiB above the imported package)")
    for label, spec in tf_specs([])[:1]:  # the paper's 100-device file: a Gantt chart's transfer bars
        done = stop.run([sys.executable, "-P", "-c", GANTT, str(spec)], capture_output=True,
                        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=1800)
        if done.returncode:
            print(f"[{tag}] Gantt transfers of HEFT's dynamic_rnn schedule on {label}: failed "
                  f"({done.stderr.strip().splitlines()[-1:]})")
            continue
        seconds, added, rows = done.stdout.split()
        print(f"[{tag}] Gantt transfers of HEFT's dynamic_rnn schedule on {label} ({rows} transfers): "
              f"{seconds} s, peak RSS +{added} MiB")


def nsga(args: argparse.Namespace, stop: BenchmarkStop) -> None:
    from dse.heuristics import run as run_heuristic
    from dse.mapping.dag import DagProblem
    from dse.solvers import solve

    for seed in range(args.seeds):
        problem = DagProblem(layered_tables(args.nsga_size, 8, seed=100 + seed), ("makespan",), memory=False)
        heft = run_heuristic(problem, "heft").makespan
        stop.check()
        front = stop.keep(solve(problem, "nsga2", time_limit=args.nsga_time, seed=seed, progress=False, patience=None),
                          f"NSGA-II, seed {seed}")
        best = front.points[0].internal[0]
        print(f"NSGA-II vs HEFT, {args.nsga_size} tasks, seed {seed}: {best} vs {heft} "
              f"({1 - best / heft:+.1%}), {front.stats.generations} generations in {front.stats.wall_s:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heft-sizes", type=int, nargs="+", default=[1000, 3000])
    parser.add_argument("--decoder-size", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tf-devices", type=int, nargs="*", default=[100, 1000])
    parser.add_argument("--nsga-size", type=int, default=300)
    parser.add_argument("--nsga-time", type=float, default=30.0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--before", default=None, help="an earlier copy of the dse package's parent folder")
    parser.add_argument("--tag", default="now", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.before:
        argv = [a for a in sys.argv[1:]]
        k = argv.index("--before")
        del argv[k: k + 2]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(args.before).resolve()), str(ROOT)])}
    with benchmark_stops("dag_scale") as stop:
        if args.before:
            stop.run([sys.executable, __file__, *argv, "--seeds", "0", "--tag", "before"], env=env)
        figures(args, args.tag, stop)
        if args.tag == "now":
            nsga(args, stop)


if __name__ == "__main__":
    main()
