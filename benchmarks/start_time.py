"""Whole-process wall times of one-off ``dse solve`` runs from a fresh process.

Usage: python benchmarks/start_time.py [--repeat 5] [--only heft-stg50,time-limit-dag] [--tree DIR ...]

Cases (each a fresh ``python -m dse.cli solve ... --quiet`` process, timed from its start to its exit):

* ``heft-stg50``: ``--solver heuristic:heft`` on a 50-task Standard-Task-Graph-style graph (``sameprob``,
  seed 0) on 4 identical processors (``platform: {identical: 4}``, the graph as an ``.stg`` file);
* ``time-limit-dag``: ``--solver cpsat --time-limit 1`` on ``stop_times.py``'s 2,000-task dag on 256
  devices (128 CPUs and 128 GPUs, a star of links).

``--tree DIR`` (repeatable) times the package in ``DIR`` (its ``PYTHONPATH``) as well, in the same session:
the runs of the trees alternate, so a load that comes and goes falls on each alike, and each tree's median is
printed with its ratio to the first tree's (the current checkout's). Before timing, each tree's compiled
kernels are warmed (``python -m dse.solvers.warmup``) and one untimed run per case writes the bytecode;
bytecode goes to ``benchmarks/results/pycache`` (``PYTHONPYCACHEPREFIX``), so that a tree whose folders
hold no ``__pycache__`` and an environment with ``PYTHONDONTWRITEBYTECODE`` are timed as an installed
package is. Prints each run, then the median, minimum and maximum per tree and case, with the load average;
writes ``benchmarks/results/start_time.csv``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml
from csv_rows import write_rows
from stop_times import BIG_DAG
from stopping import BenchmarkStop, benchmark_stops

from dse.inputs.builders.stg_generator import stg_random_graph
from dse.inputs.importers.stg import write_stg

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
STG50 = {"name": "stg50", "family": "dag", "platform": {"identical": 4},
         "workload": {"format": "stg", "path": "stg50.stg"}, "objectives": ["makespan"]}


def cases(folder: Path) -> dict[str, list[str]]:
    """The ``dse`` arguments of each case, their spec files written in ``folder``."""
    write_stg(stg_random_graph(50, "sameprob", 0), folder / "stg50.stg")
    (folder / "stg50.yaml").write_text(yaml.safe_dump(STG50))
    (folder / "big_dag.yaml").write_text(yaml.safe_dump(BIG_DAG))
    return {"heft-stg50": ["solve", str(folder / "stg50.yaml"), "--solver", "heuristic:heft"],
            "time-limit-dag": ["solve", str(folder / "big_dag.yaml"), "--solver", "cpsat", "--time-limit", "1"]}


def environment(tree: Path) -> dict[str, str]:
    """The environment a run of ``tree`` gets: its package first on the path, bytecode under results/."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    env["PYTHONPYCACHEPREFIX"] = str(RESULTS / "pycache")
    return env


def timed(stop: BenchmarkStop, tree: Path, args: list[str], out: Path) -> tuple[float, float]:
    """Seconds from the start of ``python -m dse.cli ARGS --out OUT --quiet`` to its exit, and the CPU seconds
    (user and system) it and its children used; raises ``SystemExit`` naming the tree when the command fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = stop.run([sys.executable, "-m", "dse.cli", *args, "--out", str(out), "--quiet"], cwd=out.parent,
                    env=environment(tree), capture_output=True)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode:
        raise SystemExit(f"{tree}: dse {' '.join(args)} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per tree and case")
    parser.add_argument("--only", help="comma-separated case names (default: all)")
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="another checkout to time beside this one (repeatable)")
    args = parser.parse_args()
    trees = [ROOT, *(tree.resolve() for tree in args.tree)]
    rows: list[dict[str, object]] = []
    with benchmark_stops("start_time") as stop, tempfile.TemporaryDirectory(prefix="dse-start-") as name:
        folder = Path(name)
        table = cases(folder)
        chosen = args.only.split(",") if args.only else list(table)
        for tree in trees:
            stop.run([sys.executable, "-m", "dse.solvers.warmup", "--quiet"], cwd=folder, env=environment(tree))
        print(f"{'case':<16} {'run':>3} {'tree':<40} {'wall s':>7} {'cpu s':>6} {'load':>5}", flush=True)
        for case in chosen:
            for tree in trees:  # the bytecode and the first run's file-system cache
                timed(stop, tree, table[case], folder / "warm")
            for run in range(args.repeat):
                for tree in trees:
                    wall, cpu = stop.keep(timed(stop, tree, table[case], folder / f"out{run}"), f"{case} {tree}")
                    load = os.getloadavg()[0]
                    rows.append({"case": case, "run": run, "tree": str(tree), "wall_s": round(wall, 3),
                                 "cpu_s": round(cpu, 3), "load_1min": round(load, 2)})
                    print(f"{case:<16} {run:>3} {str(tree)[-40:]:<40} {wall:>7.2f} {cpu:>6.2f} {load:>5.1f}",
                          flush=True)
    print(f"\n{'case':<16} {'tree':<40} {'median s':>8} {'min':>6} {'max':>6} {'/ first':>8} {'cpu s':>6} "
          f"{'/ first':>8}")
    for case in chosen:
        firsts: tuple[float, float] | None = None
        for tree in trees:
            mine = [r for r in rows if r["case"] == case and r["tree"] == str(tree)]
            walls = [float(str(r["wall_s"])) for r in mine]
            wall = statistics.median(walls)
            cpu = statistics.median(float(str(r["cpu_s"])) for r in mine)
            firsts = firsts or (wall, cpu)
            print(f"{case:<16} {str(tree)[-40:]:<40} {wall:>8.2f} {min(walls):>6.2f} {max(walls):>6.2f} "
                  f"{wall / firsts[0]:>8.2f} {cpu:>6.2f} {cpu / firsts[1]:>8.2f}")
    write_rows(RESULTS / "start_time.csv", rows)


if __name__ == "__main__":
    main()
