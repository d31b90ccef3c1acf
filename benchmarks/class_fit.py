"""CPU seconds of the class-defaults fit (``dse.runs.accuracy_fit.fit_class_defaults`` on every measurement).

Usage: python benchmarks/class_fit.py [--repeat 3] [--tree DIR ...]

Each run is a fresh process that loads ``models/measurements``, fits the class defaults (the work the
committed-defaults test repeats) and reports the fit's CPU seconds (``time.process_time``, the loading
and imports left out) and whether the text of ``models/defaults/device_classes.yaml`` it would write is
the committed file. ``--tree DIR`` (repeatable) times the package in ``DIR`` (its ``PYTHONPATH``) as
well: the runs of the trees alternate, so a load that comes and goes falls on each alike. Prints each
run with the load average, then the median per tree and its ratio to the first tree's (the current
checkout's); writes ``benchmarks/results/class_fit.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from csv_rows import write_rows
from stopping import BenchmarkStop, benchmark_stops

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: What one run executes: the fit, timed, and the comparison with the committed file, as one JSON line.
RUN = """
import json, time
from dse.model.device_defaults import catalog_defaults, defaults_path
from dse.runs import accuracy, accuracy_fit
rows = accuracy.load_measurements()
start = time.process_time()
fitted = accuracy_fit.fit_class_defaults(rows)
cpu = time.process_time() - start
committed = defaults_path().read_text()
header = "".join(line for line in committed.splitlines(keepends=True) if line.startswith("#"))
same = accuracy_fit.class_defaults_yaml(catalog_defaults(), fitted, header) == committed
print(json.dumps({"cpu_s": cpu, "committed": same}))
"""


def timed(stop: BenchmarkStop, tree: Path) -> tuple[float, bool]:
    """The fit's CPU seconds in a fresh process of ``tree`` and whether it gives the committed file;
    raises ``SystemExit`` naming the tree when the run fails."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = stop.run([sys.executable, "-c", RUN], cwd=tree, env=env, capture_output=True)
    if done.returncode:
        raise SystemExit(f"{tree}: the fit failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["cpu_s"]), bool(result["committed"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per tree")
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="another checkout to time beside this one (repeatable)")
    args = parser.parse_args()
    trees = [ROOT, *(tree.resolve() for tree in args.tree)]
    rows: list[dict[str, object]] = []
    print(f"{'run':>3} {'tree':<40} {'cpu s':>6} {'committed':>9} {'load':>5}", flush=True)
    with benchmark_stops("class_fit") as stop:
        for run in range(args.repeat):
            for tree in trees:
                stop.check()
                cpu, same = stop.keep(timed(stop, tree), f"run {run} {tree}")
                load = os.getloadavg()[0]
                rows.append({"run": run, "tree": str(tree), "cpu_s": round(cpu, 3), "committed": same,
                             "load_1min": round(load, 2)})
                print(f"{run:>3} {str(tree)[-40:]:<40} {cpu:>6.2f} {str(same):>9} {load:>5.1f}", flush=True)
    print(f"\n{'tree':<40} {'median cpu s':>12} {'/ first':>8}")
    first = None
    for tree in trees:
        median = statistics.median(float(str(r["cpu_s"])) for r in rows if r["tree"] == str(tree))
        first = first or median
        print(f"{str(tree)[-40:]:<40} {median:>12.2f} {median / first:>8.2f}")
    write_rows(RESULTS / "class_fit.csv", rows)


if __name__ == "__main__":
    main()
