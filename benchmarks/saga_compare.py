"""HEFT as a user calls it against saga 2.1.0's HEFT, measured in the same run.

Usage: python benchmarks/saga_compare.py [--sizes 1000 3000] [--repeat 3] [--saga-python PATH] [--no-install]

Cases: layered random DAGs (``--sizes`` tasks, 25 a layer, 3 producers each, 8 devices) and, when
``../shared/data/tf-paper`` is beside the checkout, the TF paper's dynamic-RNN graph on its
``toyDevices.csv`` (10 devices). Every case is one instance for both: compute time = work / speed,
an edge costs size / link rate (the classic HEFT model, no send rule), insertion on.

Last, the command line on the dynamic-RNN graph under the TF rules: the solve step ``dse solve
--solver heuristic:heft`` reports against HEFT's first call in a script that loads the same spec
(both in fresh processes, so both pay the one-time loads), and both whole processes.

For each case it prints the best of ``--repeat`` wall times of: our HEFT alone
(``dse.heuristics.run``), ``dse.solve(problem, "heuristic:heft")`` (HEFT, the evaluation, the
single-device baselines and the result object), saga's ``HeftScheduler().schedule`` (in a separate
Python 3.12 process), and both makespans. saga runs from ``--saga-python``, else from
``out/saga-venv`` (created with ``python3.12 -m venv`` and ``pip install anrg-saga==2.1.0`` unless
``--no-install``); the script says so when that is not possible and times ours alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from stopping import BenchmarkStop, benchmark_stops

import dse
from dse.cost import TableCostModel
from dse.heuristics import run as run_heuristic
from dse.inputs.importers.tfcsv import read_tf_devices, read_tf_graph
from dse.mapping.dag import DagProblem
from dse.model.platform import Device, Link, Platform
from dse.model.workload import Op, Workload

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tf-paper"
VENV = ROOT / "out" / "saga-venv"

SAGA_RUNNER = r'''
import json, sys, time
from saga import Network, TaskGraph
from saga.schedulers import HeftScheduler
case = json.load(open(sys.argv[1]))
repeat = int(sys.argv[2])
network = Network.create(nodes=[(d, s) for d, s in case["devices"]],
                         edges=[(a, b, r) for a, b, r in case["links"]] + [(d, d) for d, _ in case["devices"]])
graph = TaskGraph.create(tasks=[(t, c) for t, c in case["tasks"]], dependencies=[(a, b, s) for a, b, s in case["edges"]])
best = float("inf")
for _ in range(repeat):
    start = time.perf_counter()
    schedule = HeftScheduler().schedule(network, graph)
    best = min(best, time.perf_counter() - start)
print(json.dumps({"seconds": best, "makespan": schedule.makespan}))
'''


def layered(n: int, m: int, seed: int, width: int = 25, preds: int = 3) -> tuple[Workload, Platform]:
    """A layered random DAG with integer work and sizes, on ``m`` devices fully linked at random rates."""
    rng = np.random.default_rng(seed)
    ops = tuple(Op(f"t{i}", work=float(rng.integers(5, 100)), output_bytes=float(rng.integers(1, 40)))
                for i in range(n))
    edges = []
    for i in range(width, n):
        prev = np.arange((i // width - 1) * width, (i // width) * width)
        edges += [(int(s), i) for s in rng.choice(prev, size=preds, replace=False)]
    devices = tuple(Device(f"d{j}", "generic", {}, 1.0, 1.0, 0.0, 1.0, speed=float(rng.integers(1, 5)))
                    for j in range(m))
    links = tuple(Link(f"d{a}", f"d{b}", float(rng.integers(1, 10)), 0.0) for a in range(m) for b in range(a + 1, m))
    return Workload(f"layered-{n}", ops, tuple(edges)), Platform(f"random-{m}", devices, links)


def cases(sizes: list[int]) -> list[tuple[str, Workload, Platform]]:
    out = [(f"layered {n} tasks x 8 devices", *layered(n, 8, seed=n)) for n in sizes]
    if DATA.is_dir():  # without colocation groups and device constraints, which saga's HEFT does not know
        graph = read_tf_graph(DATA / "graphs" / "dynamic_rnn_graph.csv")
        graph = dataclasses.replace(graph, ops=tuple(dataclasses.replace(op, colocation=None, device_type=None)
                                                     for op in graph.ops))
        out.append(("TF dynamic_rnn x toyDevices (no colocation, no device constraints)", graph,
                    read_tf_devices(DATA / "devices" / "toyDevices.csv")))
    else:
        print(f"({DATA} is absent: the TF dynamic-RNN case is skipped)")
    return out


def saga_python(path: str | None, install: bool) -> Path | None:
    """The Python that has saga 2.1.0, creating ``out/saga-venv`` when allowed; None (and why) otherwise."""
    if path:
        return Path(path)
    python = VENV / "bin" / "python"
    if python.exists():
        return python
    base = shutil.which("python3.12")
    if not install or base is None:
        print("saga: no python3.12 (or --no-install): saga 2.1.0's HEFT is not measured")
        return None
    try:
        subprocess.run([base, "-m", "venv", str(VENV)], check=True, capture_output=True, timeout=300)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "anrg-saga==2.1.0"], check=True,
                       capture_output=True, timeout=600)
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"saga: could not install anrg-saga==2.1.0 into {VENV} ({exc}): saga is not measured")
        return None
    return python


def run_saga(python: Path, workload: Workload, platform: Platform, repeat: int) -> dict | None:
    names = [op.name for op in workload.ops]
    case = {"tasks": [[op.name, op.work] for op in workload.ops],
            "edges": [[names[s], names[d], b] for (s, d), b in zip(workload.edges, workload.edge_bytes, strict=True)],
            "devices": [[d.name, d.speed] for d in platform.devices],
            "links": [[a.name, b.name, platform.route(a.name, b.name)[0]]
                      for i, a in enumerate(platform.devices) for b in platform.devices[i + 1:]]}
    folder = ROOT / "out" / "saga-compare"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "case.json").write_text(json.dumps(case))
    (folder / "runner.py").write_text(SAGA_RUNNER)
    done = subprocess.run([str(python), str(folder / "runner.py"), str(folder / "case.json"), str(repeat)],
                          capture_output=True, text=True, timeout=1800)
    if done.returncode:
        print(f"  saga failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


CLI_ALONE = r'''
import sys, time
import dse
from dse.heuristics import run
problem = dse.load_problem(sys.argv[1])
start = time.monotonic()
run(problem, "heft")
print(f"{time.monotonic() - start:.4f}")
'''


def cli_figures(repeat: int, stop: BenchmarkStop) -> None:
    """``dse solve SPEC --solver heuristic:heft`` (dynamic_rnn on toyDevices, the TF rules) against a script that
    loads the same spec and runs HEFT, each in a fresh process: the solve step the CLI reports against HEFT's
    first call in the script, and both whole processes (the CLI also writes front.csv, front.json, pareto.png)."""
    import re

    folder = ROOT / "out" / "saga-compare"
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "dynrnn-toy.yaml"
    spec.write_text("name: dynrnn\nfamily: dag\nobjectives: [makespan]\n"
                    f"platform: {{format: tfcsv, path: {DATA / 'devices' / 'toyDevices.csv'}}}\n"
                    f"workload: {{format: tfcsv, path: {DATA / 'graphs' / 'dynamic_rnn_graph.csv'}}}\n")
    (folder / "alone.py").write_text(CLI_ALONE)
    dse_cli = [sys.executable, "-m", "dse.cli", "solve", str(spec), "--solver", "heuristic:heft",
               "--out", str(folder / "cli-out")]
    rows = {"cli": [], "cli_solve": [], "script": [], "script_heft": []}
    for _ in range(repeat):
        start = time.perf_counter()
        done = _checked(stop.run(dse_cli, capture_output=True))
        rows["cli"].append(time.perf_counter() - start)
        rows["cli_solve"].append(float(re.search(r"== heuristic:heft: .*, ([0-9.]+) s", done.stdout).group(1)))
        start = time.perf_counter()
        done = _checked(stop.run([sys.executable, str(folder / "alone.py"), str(spec)], capture_output=True))
        rows["script"].append(time.perf_counter() - start)
        rows["script_heft"].append(float(done.stdout.split()[-1]))
    med = {k: float(np.median(v)) for k, v in rows.items()}
    print(f"\nCLI, dynamic_rnn x toyDevices under the TF rules (fresh processes, median of {repeat}):")
    print(f"  solve step the CLI reports  {med['cli_solve']:7.3f} s   HEFT's first call in a script "
          f"{med['script_heft']:7.3f} s   ({med['cli_solve'] / med['script_heft']:.2f}x)")
    print(f"  whole process: dse solve    {med['cli']:7.3f} s   script (load spec, HEFT) "
          f"{med['script']:7.3f} s   ({med['cli'] / med['script']:.2f}x; the CLI also writes three files)")


def _checked(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """``done`` when it exited 0; raises SystemExit with its error output otherwise."""
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, done.args[:4]))} failed (exit {done.returncode}): {done.stderr.strip()}")
    return done


def best_of(repeat: int, call) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = call()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--saga-python", default=None)
    parser.add_argument("--no-install", action="store_true")
    args = parser.parse_args()
    python = saga_python(args.saga_python, not args.no_install)
    scale = 1000.0  # times in thousandths of the work / speed unit, as under the TF rules
    warm = DagProblem(TableCostModel(scale=scale).tables(*layered(30, 2, seed=0)), ("makespan",), insertion=True)
    run_heuristic(warm, "heft")  # the compiled kernels are loaded once per process: not part of the figures
    dse.solve(warm, "heuristic:heft")
    with benchmark_stops("saga_compare") as stop:
        for label, workload, platform in cases(args.sizes):
            stop.check()
            tables = TableCostModel(scale=scale).tables(workload, platform)
            problem = DagProblem(tables, ("makespan",), memory=False, insertion=True, name=workload.name)
            alone, res = best_of(args.repeat, lambda p=problem: run_heuristic(p, "heft"))
            solved, front = stop.keep(best_of(args.repeat, lambda p=problem: dse.solve(p, "heuristic:heft")), label)
            ours = res.makespan / scale  # type: ignore[attr-defined]
            print(f"\n{label}: {problem.n_tasks} tasks, {tables.n_edges} edges, {tables.n_dev} devices")
            print(f"  HEFT alone            {alone:7.3f} s   makespan {ours:,.1f}")
            print(f"  dse.solve heuristic   {solved:7.3f} s   ({solved / alone:.2f}x HEFT alone)")
            if python is not None:
                saga = run_saga(python, workload, platform, args.repeat)
                if saga:
                    print(f"  saga 2.1.0 HEFT       {saga['seconds']:7.3f} s   makespan {saga['makespan']:,.1f}   "
                          f"(saga / dse.solve: {saga['seconds'] / solved:.1f}x)")
        if DATA.is_dir():
            cli_figures(max(args.repeat, 3), stop)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
