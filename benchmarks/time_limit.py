"""The time limit as a promise, and certificate gaps of fronts cut short.

Usage: python benchmarks/time_limit.py [--procs 2 4 8] [--count 2] [--limit 10] [--cuts 1 5 30]

Part 1: for 50-task Standard-Task-Graph-style graphs on identical processors, ``dse solve SPEC
--solver cpsat --time-limit L`` in a fresh process, with an empty kernel cache (cold: the background
compilation starts, as on a first run; the script waits for it between runs so runs do not overlap)
and with the warm cache: the whole command's wall time, the status, the makespan against HEFT's.

Part 2: the certificate gap of CP-SAT fronts cut at each of ``--cuts`` seconds, on the bundled
``split_gemm`` and ``quickstart`` problems and on the quickstart with three objectives (throughput,
energy, latency). Writes ``benchmarks/results/time_limit.csv`` and ``certificate_gaps.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from stopping import BenchmarkStop, benchmark_stops

import dse
from dse.cost import TableCostModel
from dse.heuristics import run as run_heuristic
from dse.inputs.builders.stg_generator import METHODS, stg_random_graph
from dse.inputs.importers.identical import identical_platform
from dse.inputs.importers.stg import write_stg
from dse.mapping.dag import DagProblem
from dse.runs.spec import build_problem, spec_from_dict
from dse.util.yamlio import read_yaml

ROOT = Path(__file__).resolve().parents[1]


def _solve(spec: Path, limit: float, cache: Path | None, stop: BenchmarkStop) -> tuple[float, dict]:
    env = dict(os.environ)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    out = spec.parent / "out"
    start = time.monotonic()
    done = stop.run([sys.executable, "-m", "dse.cli", "solve", str(spec), "--solver", "cpsat", "--time-limit",
                     str(limit), "--out", str(out), "--quiet"], cwd=ROOT, env=env, capture_output=True)
    if done.returncode:
        raise SystemExit(f"dse solve {spec.name} failed (exit {done.returncode}): {done.stderr.strip()}")
    wall = time.monotonic() - start
    return wall, json.loads((out / "front.json").read_text())["fronts"][0]


def _wait_for_stamp(cache: Path, timeout: float = 300.0) -> float:
    """Seconds until the background compilation has written its stamp in ``cache``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout and not list(cache.glob("dse-kernels-*.stamp")):
        time.sleep(0.5)
    return time.monotonic() - start


def time_limits(procs: list[int], count: int, limit: float, rows: list[dict], stop: BenchmarkStop) -> None:
    print(f"{'graph':<24} {'P':>2} {'cache':>5} {'wall s':>7} {'status':>10} {'cpsat':>6} {'heft':>6}")
    for p in procs:
        for k in range(count):
            workload = stg_random_graph(50, METHODS[k % len(METHODS)], k)
            heft = run_heuristic(DagProblem(TableCostModel().tables(workload, identical_platform(p)), ("makespan",),
                                            memory=False), "heft").makespan
            with tempfile.TemporaryDirectory() as folder:
                write_stg(workload, Path(folder) / "g.stg")
                spec = Path(folder) / "spec.yaml"
                spec.write_text(f"name: {workload.name}\nfamily: dag\nplatform: {{identical: {p}}}\n"
                                "workload: {format: stg, path: g.stg}\nobjectives: [makespan]\n")
                for kind in ("cold", "warm"):
                    cache = Path(folder) / "cache" if kind == "cold" else None
                    if cache is not None:
                        cache.mkdir()
                    wall, front = stop.keep(_solve(spec, limit, cache, stop), f"{workload.name} {kind}")
                    value = front["points"][0]["internal"][0] if front["points"] else None
                    row = dict(graph=workload.name, procs=p, cache=kind, wall_s=round(wall, 2), status=front["status"],
                               cpsat=value, heft=heft)
                    if cache is not None:
                        row["background_compile_s"] = round(_wait_for_stamp(cache), 1)
                    rows.append(row)
                    print(f"{workload.name:<24} {p:>2} {kind:>5} {wall:>7.2f} {front['status']:>10} "
                          f"{value if value is not None else '-':>6} {heft:>6}", flush=True)


def certificate_gaps(cuts: list[float], rows: list[dict], stop: BenchmarkStop) -> None:
    quick = read_yaml(ROOT / "problems" / "quickstart.yaml")
    three = {**quick, "name": "quickstart_3obj", "objectives": ["throughput", "energy", "latency"]}
    cases = [("split_gemm", dse.load_problem("split_gemm")), ("quickstart", dse.load_problem("quickstart")),
             ("quickstart, 3 objectives", build_problem(spec_from_dict(three, "quickstart_3obj", ROOT / "problems")))]
    print(f"\n{'problem':<26} {'cut s':>6} {'status':>10} {'points':>6} {'gap':>8}  certificate")
    for name, problem in cases:
        for cut in cuts:
            stop.check()
            front = stop.keep(dse.solve(problem, "cpsat", time_limit=cut, seed=0, progress=False), f"{name} cut at {cut:g} s")
            cert = front.certificate()
            assert cert is not None
            rows.append(dict(problem=name, cut_s=cut, status=front.status, points=len(front), gap=cert.gap,
                             wall_s=round(front.stats.wall_s, 2)))
            print(f"{name:<26} {cut:>6g} {front.status:>10} {len(front):>6} {cert.gap:>8.2%}  {cert.describe()}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--count", type=int, default=2, help="graphs per processor count")
    parser.add_argument("--limit", type=float, default=10.0)
    parser.add_argument("--cuts", type=float, nargs="+", default=[1.0, 5.0, 30.0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    limits: list[dict] = []
    gaps: list[dict] = []
    with benchmark_stops("time_limit") as stop:
        try:
            time_limits(args.procs, args.count, args.limit, limits, stop)
            certificate_gaps(args.cuts, gaps, stop)
        finally:  # what finished is written, also after a stop
            args.out.mkdir(parents=True, exist_ok=True)
            for name, rows in (("time_limit.csv", limits), ("certificate_gaps.csv", gaps)):
                if not rows:
                    continue
                with open(args.out / name, "w", newline="") as fh:
                    writer = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
                    writer.writeheader()
                    writer.writerows(rows)


if __name__ == "__main__":
    main()
