"""Best schedule vs proven lower bound on WfCommons' scientific workflows (dag family, makespan).

Usage: python benchmarks/workflows.py [--time 30] [--quick] [--recipes montage genome ...]
                                      [--workers 2] [--seed 0]

Needs the optional extra ``bench`` (``pip install -e '.[bench]'``, i.e. ``wfcommons>=1.6``).

Instances: WfCommons' recipes montage, epigenomics, cycles, seismology, blast, bwa, genome
(1000Genome), soykb and srasearch, each generated at about 60, 180 and 450 tasks (a recipe's
smallest size is that of its smallest base graph: below it the nearest size it allows is taken and
printed), with a fixed seed per (recipe, size). Each workflow is written as WfFormat JSON under
``out/workflows/`` and read back with the engine's importer (``dse.inputs.importers.wfformat``): an op
per task whose work is its runtime in seconds, an edge per dependency carrying the bytes of the files
the child reads from the parent. Networks: heterogeneous, 4, 8 or 16 nodes, node speeds drawn from
[1, 4], every pair linked at a rate drawn from [1, 10], all rates then scaled so that the
communication-to-computation ratio (the mean over edges and distinct node pairs of bytes / rate, over
the mean over tasks and nodes of runtime / speed) is 0.2, 1 or 5. One network and one ratio per
(recipe, size), by a fixed rotation over the 27 instances (node count by recipe + size, ratio by
recipe + 2 size, modulo 3: every pair of them occurs three times). Costs: the table cost model, times
in milliseconds (``work / speed``, ``bytes / rate``, rounded up), no memory limits, non-insertion decoding.

Methods per instance (every search with ``--seed``):

* ``heuristic``: every registered heuristic of the dag family (``dse.heuristics.names()``), the best
  one named, its time the time of that heuristic alone;
* ``memetic``: the memetic search (``dse.solvers.memetic``) for ``--time`` seconds, its time the moment
  its final makespan was first reached (read from its progress reports, every local-search step);
* ``cpsat``: the family's exact model (``DagProblem.cpsat``) given every heuristic's schedule and the
  memetic search's best (computed before it, outside its time; the best is its hint and its horizon),
  solved by CP-SAT with ``--workers`` for ``--time`` seconds (its makespan floor from the family's
  bounds is computed within the first tenth), its time the moment its last improving solution was
  found.

Every schedule is decoded by the problem's decoder and checked by the family's independent validator
(``dse.mapping.dag.validate``); a schedule it rejects stops the run. Proven lower bounds: the critical
path, the communication bound (``dse.mapping.dag.bounds``), the assignment relaxation's load bound
(``DagProblem.objective_lower_bounds``), the destructive bound, the chain bound
(``dse.mapping.dag.chain_bound``) and the windowed load bound (``dse.mapping.dag.load_bound``), each
of the last three given ``--time`` seconds, and CP-SAT's proven bound (its model starts from the
family's bounds); the gap is
``(best - bound) / best`` with the best makespan of the three methods and the largest bound. Prints
a row per instance, then per recipe the best makespan of each method, the bound and the median gap,
and writes every figure to ``out/workflows.csv``. ``--quick``: three small instances, 5 s each.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import logging
import random
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from stopping import benchmark_stops

from dse.cost import TableCostModel
from dse.heuristics import genome_of
from dse.heuristics import names as heuristic_names
from dse.heuristics import run as run_heuristic
from dse.inputs.importers import read_workload
from dse.mapping.cpsat_common import ModelBuildTimeout
from dse.mapping.dag import DagProblem
from dse.mapping.dag.bounds import destructive_bound
from dse.mapping.dag.chain_bound import chain_bound
from dse.mapping.dag.load_bound import load_bound
from dse.mapping.dag.validate import validate_schedule
from dse.model.platform import Device, Link, Platform
from dse.model.workload import Workload
from dse.solvers import solve
from dse.util.interrupt import active_token, run_cpsat
from dse.util.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out"
#: Recipe name -> its class in ``wfcommons.wfchef.recipes``.
RECIPES = {"montage": "MontageRecipe", "epigenomics": "EpigenomicsRecipe", "cycles": "CyclesRecipe",
           "seismology": "SeismologyRecipe", "blast": "BlastRecipe", "bwa": "BwaRecipe", "genome": "GenomeRecipe",
           "soykb": "SoykbRecipe", "srasearch": "SrasearchRecipe"}
SIZES = (60, 180, 450)
NODES = (4, 8, 16)
CCRS = (0.2, 1.0, 5.0)
SPEEDS = (1.0, 4.0)
RATES = (1.0, 10.0)
#: Times in thousandths of a second (the runtimes are given to the millisecond).
SCALE = 1000.0
QUICK = (("montage", 60), ("genome", 60), ("srasearch", 60))
INSTALL = "pip install -e '.[bench]'   (or: pip install 'wfcommons>=1.6')"


@dataclass(frozen=True)
class Instance:
    recipe: str
    asked: int
    nodes: int
    ccr: float
    seed: int


def rotation(recipes: list[str], sizes: tuple[int, ...]) -> list[Instance]:
    """One network and one ratio per (recipe, size): nodes by ``recipe + size``, ratio by
    ``recipe + 2 size`` (indices modulo 3), a seed per pair."""
    return [Instance(r, s, NODES[(i + j) % 3], CCRS[(i + 2 * j) % 3], 1000 * i + j)
            for i, r in enumerate(RECIPES) if r in recipes for j, s in enumerate(SIZES) if s in sizes]


def recipe_class(name: str) -> Any:
    return getattr(importlib.import_module("wfcommons.wfchef.recipes"), RECIPES[name])


def smallest_size(cls: Any) -> int:
    """The number of tasks of the recipe's smallest base graph (the least size it generates)."""
    folder = Path(importlib.import_module(cls.__module__).__file__).parent
    summary = json.loads((folder / "microstructures" / "summary.json").read_text())
    return min(int(g["order"]) for g in summary["base_graphs"].values())


def generate(instance: Instance, folder: Path) -> tuple[Path, int]:
    """The instance's workflow written as WfFormat JSON (fixed seed); its path and the size asked of
    the recipe (the nearest one it allows)."""
    from wfcommons import WorkflowGenerator

    cls = recipe_class(instance.recipe)
    size = max(instance.asked, smallest_size(cls))
    random.seed(instance.seed)  # the recipes draw from both generators (scipy's draws use numpy's)
    np.random.seed(instance.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        workflow = WorkflowGenerator(cls.from_num_tasks(size)).build_workflow(f"{instance.recipe}-{size}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{instance.recipe}-{size}.json"
    workflow.write_json(path)
    return path, size


def network(instance: Instance, workload: Workload) -> Platform:
    """``instance.nodes`` nodes of speeds drawn from :data:`SPEEDS`, every pair linked at a rate drawn
    from :data:`RATES`, the rates scaled to the instance's communication-to-computation ratio."""
    rng = np.random.default_rng(instance.seed)
    m = instance.nodes
    speed = rng.uniform(*SPEEDS, size=m)
    pairs = [(a, b) for a in range(m) for b in range(a + 1, m)]
    rate = rng.uniform(*RATES, size=len(pairs))
    work = np.array([op.work for op in workload.ops])
    size = np.array(workload.edge_bytes)
    computation = float(work.mean() * (1.0 / speed).mean())
    communication = float(size.mean() * (1.0 / rate).mean()) if len(size) else 0.0
    rate *= communication / (instance.ccr * computation) if communication else 1.0
    devices = tuple(Device(f"n{j}", "cpu", {}, 1.0, 1.0, 0.0, 1.0, speed=float(speed[j])) for j in range(m))
    links = tuple(Link(f"n{a}", f"n{b}", float(r), 0.0) for (a, b), r in zip(pairs, rate, strict=True))
    return Platform(f"hetero-{m}", devices, links)


def checked(problem: DagProblem, genome: np.ndarray, method: str) -> int:
    """The decoded makespan of ``genome`` after the family's validator accepted its schedule (raises
    SystemExit naming the method and the first broken rule otherwise)."""
    schedule = problem.schedule(genome)
    errors = validate_schedule(problem, schedule.device, schedule.start, schedule.finish, schedule.release)
    if errors:
        raise SystemExit(f"{problem.name}: the {method} schedule breaks {len(errors)} rule(s): {errors[0]}")
    return int(schedule.makespan)


class _Recorder(Progress):
    """A progress reporter that keeps, instead of printing, the time of every makespan reported."""

    def __init__(self) -> None:
        super().__init__("record", enabled=True, every_s=0.0)
        self.times: list[tuple[float, int]] = []

    def due(self) -> bool:
        return True

    def update(self, message: str, force: bool = False) -> None:
        found = re.search(r"makespan ([0-9,]+)", message)
        if found:
            self.times.append((self.elapsed(), int(found.group(1).replace(",", ""))))


def first_time(times: list[tuple[float, int]], value: int, default: float) -> float:
    """The first time at which ``value`` or better was reached (``default`` when never reported)."""
    return next((t for t, v in times if v <= value), default)


def heuristics(problem: DagProblem) -> tuple[str, int, float, list[np.ndarray]]:
    """Every registered heuristic: the best one's name, validated makespan and own time, and every
    heuristic's genome (the best first)."""
    best: tuple[str, int, float] | None = None
    genomes: list[np.ndarray] = []
    for name in heuristic_names():
        start = time.perf_counter()
        try:
            result = run_heuristic(problem, name)
        except Exception:  # noqa: BLE001 - a heuristic that cannot take this problem is left out
            continue
        spent = time.perf_counter() - start
        genome = genome_of(problem, result)
        if best is None or result.makespan < best[1]:
            best = (name, checked(problem, genome, f"heuristic {name}"), spent)
            genomes.insert(0, genome)
        else:
            genomes.append(genome)
    assert best is not None
    return (*best, genomes)


def memetic(problem: DagProblem, limit: float, seed: int) -> tuple[int, float, np.ndarray]:
    recorder = _Recorder()
    start = time.perf_counter()
    front = solve(problem, "memetic", time_limit=limit, seed=seed, progress=recorder)
    wall = time.perf_counter() - start
    genome = np.array(front.points[0].genome, dtype=np.int64)
    makespan = checked(problem, genome, "memetic")
    return makespan, first_time(recorder.times, makespan, wall), genome


class _LoggedSolver:
    """A CP-SAT solver whose ``solve`` records the time and objective of every solution found."""

    def __init__(self, start: float) -> None:
        from ortools.sat.python import cp_model

        self.solver = cp_model.CpSolver()
        self.parameters = self.solver.parameters
        self.times: list[tuple[float, int]] = []
        outer = self

        class Callback(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                outer.times.append((time.perf_counter() - start, int(self.objective_value)))

        self.callback = Callback()

    def solve(self, model: Any) -> Any:
        return self.solver.solve(model, self.callback)

    def stop_search(self) -> None:
        self.solver.stop_search()


def cpsat(problem: DagProblem, limit: float, workers: int, seed: int,
          hints: list[np.ndarray]) -> tuple[int | None, float, float | None, int | None]:
    """CP-SAT on the family's model hinted with ``hints`` (the best of them the hint): its validated makespan
    (None when it found nothing), the time its last solution was found, its proven bound and the model's
    makespan floor (the family's bounds it starts from; both None when the model was not built in time)."""
    from ortools.sat.python import cp_model

    start = time.perf_counter()
    deadline = time.monotonic() + limit
    try:
        form = problem.cpsat(seeds=hints, deadline=deadline)
    except ModelBuildTimeout:  # built too slowly to search: nothing found, nothing proven
        return None, time.perf_counter() - start, None, None
    objective = form.objective_vars[0]
    floor = int(form.model.proto.variables[objective.index].domain[0])
    form.model.minimize(objective)
    logged = _LoggedSolver(start)
    logged.parameters.max_time_in_seconds = max(0.01, deadline - time.monotonic())
    logged.parameters.random_seed = seed
    logged.parameters.num_workers = workers
    status = run_cpsat(logged, form.model, active_token())
    bound = float(max(logged.solver.best_objective_bound, floor))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, time.perf_counter() - start, bound, floor
    makespan = checked(problem, form.to_genome(logged.solver), "cpsat")
    return makespan, logged.times[-1][0] if logged.times else 0.0, bound, floor


def measure(instance: Instance, limit: float, workers: int, seed: int) -> dict[str, Any]:
    path, size = generate(instance, OUT / "workflows")
    workload = read_workload("wfformat", path)
    tables = TableCostModel(scale=SCALE, time_unit="ms").tables(workload, network(instance, workload))
    problem = DagProblem(tables, ("makespan",), memory=False, name=f"{instance.recipe}-{size}")
    row: dict[str, Any] = {"recipe": instance.recipe, "asked": instance.asked, "size": size, "tasks": problem.n_tasks,
                           "edges": tables.n_edges, "nodes": instance.nodes, "ccr": instance.ccr}
    row["heuristic"], row["heuristic_ms"], row["heuristic_s"], genomes = heuristics(problem)
    row["memetic_ms"], row["memetic_s"], memetic_genome = memetic(problem, limit, seed)
    row["cpsat_ms"], row["cpsat_s"], row["cpsat_bound"], row["cpsat_floor"] = cpsat(
        problem, limit, workers, seed, [memetic_genome, *genomes])
    found = [v for v in (row["heuristic_ms"], row["memetic_ms"], row["cpsat_ms"]) if v is not None]
    best = min(found)
    row["critical_path"] = problem.critical_path_bound()
    row["communication"] = problem.lower_bound()
    row["load_lp"] = int(problem.objective_lower_bounds()[0])
    known = max(row["communication"], row["load_lp"])
    start = time.perf_counter()
    row["destructive"] = destructive_bound(problem, upper=best, time_limit=limit, known=row["communication"])
    row["destructive_s"] = time.perf_counter() - start
    start = time.perf_counter()
    row["chain"] = chain_bound(problem, upper=best, time_limit=limit, known=row["communication"])
    row["chain_s"] = time.perf_counter() - start
    start = time.perf_counter()
    row["load"] = load_bound(problem, upper=best, time_limit=limit, known=row["communication"])
    row["load_s"] = time.perf_counter() - start
    names = ("critical_path", "communication", "load_lp", "destructive", "chain", "load", "cpsat_bound")
    bound = max(known, *(row[k] for k in names if row[k] is not None))
    row["best"], row["bound"] = best, int(np.ceil(bound))
    row["binding"] = "+".join(k for k in names if row[k] is not None and np.ceil(row[k]) == row["bound"])
    row["gap"] = (best - row["bound"]) / best
    return row


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value / 1000:,.0f}"


def print_row(r: dict[str, Any]) -> None:
    print(f"{r['recipe']:<11} {r['tasks']:>4} {r['nodes']:>3} {r['ccr']:>4g} "
          f"{r['heuristic']:>12} {_ms(r['heuristic_ms']):>8} {r['heuristic_s']:>5.1f} "
          f"{_ms(r['memetic_ms']):>8} {r['memetic_s']:>5.1f} {_ms(r['cpsat_ms']):>8} {r['cpsat_s']:>5.1f} "
          f"{_ms(r['critical_path']):>7} {_ms(r['communication']):>7} {_ms(r['load_lp']):>7} "
          f"{_ms(r['destructive']):>7} {_ms(r['chain']):>7} {_ms(r['load']):>7} {_ms(r['cpsat_bound']):>7} "
          f"{r['gap']:>6.1%} {r['binding']}", flush=True)


def print_summary(rows: list[dict[str, Any]]) -> None:
    print("\nper recipe: makespans and bounds summed over its instances (seconds; a method that found no "
          "schedule on some instance is summed over the others, marked with how many it found), the median "
          "and largest gap of its instances")
    print(f"{'recipe':<11} {'heuristic':>11} {'memetic':>11} {'cpsat':>11} {'best':>9} {'bound':>9} "
          f"{'median gap':>10} {'max gap':>8}")
    for recipe in dict.fromkeys(r["recipe"] for r in rows):
        mine = [r for r in rows if r["recipe"] == recipe]
        cells = []
        for key in ("heuristic_ms", "memetic_ms", "cpsat_ms"):
            found = [r[key] for r in mine if r[key] is not None]
            mark = "" if len(found) == len(mine) else f" ({len(found)}/{len(mine)})"
            cells.append(f"{_ms(sum(found)) if found else '-'}{mark}")
        gaps = [r["gap"] for r in mine]
        print(f"{recipe:<11} {cells[0]:>11} {cells[1]:>11} {cells[2]:>11} {_ms(sum(r['best'] for r in mine)):>9} "
              f"{_ms(sum(r['bound'] for r in mine)):>9} {np.median(gaps):>10.1%} {max(gaps):>8.1%}")
    gaps = [r["gap"] for r in rows]
    print(f"{'all':<11} {'':>65} {np.median(gaps):>10.1%} {max(gaps):>8.1%}")


def warm_up() -> None:
    """Compile (or load from numba's cache) the decoder's, the bounds' and the searches' kernels before
    anything is timed, on a small generated workflow."""
    instance = Instance("genome", 60, 4, 1.0, 0)
    path, _ = generate(instance, OUT / "workflows" / "warm-up")
    workload = read_workload("wfformat", path)
    problem = DagProblem(TableCostModel(scale=SCALE).tables(workload, network(instance, workload)), ("makespan",),
                         memory=False)
    solve(problem, "memetic", time_limit=1.0, seed=0, progress=False)
    destructive_bound(problem, time_limit=1.0)
    chain_bound(problem, time_limit=1.0)
    load_bound(problem, time_limit=1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=float, default=30.0, help="seconds for each search and each bound")
    parser.add_argument("--quick", action="store_true", help="three small instances, 5 s each (smoke use)")
    parser.add_argument("--recipes", nargs="*", default=list(RECIPES), choices=list(RECIPES))
    parser.add_argument("--sizes", nargs="*", type=int, default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--workers", type=int, default=2, help="CP-SAT search workers")
    parser.add_argument("--seed", type=int, default=0, help="seed of every search")
    parser.add_argument("--csv", type=Path, default=OUT / "workflows.csv")
    args = parser.parse_args()
    try:
        importlib.import_module("wfcommons")
    except ImportError:
        print(f"wfcommons is not installed: nothing to measure; install it with {INSTALL}")
        return 0
    logging.getLogger("wfcommons").setLevel(logging.ERROR)
    instances = rotation(args.recipes, tuple(args.sizes))
    limit = args.time
    if args.quick:
        instances = [i for i in rotation(list(RECIPES), SIZES) if (i.recipe, i.asked) in QUICK]
        limit = 5.0
    warm_up()
    print(f"{len(instances)} instances, {limit:g} s per search and per bound, {args.workers} CP-SAT workers; "
          "makespans and bounds in seconds, times (s) to each method's makespan")
    print(f"{'recipe':<11} {'tasks':>4} {'nod':>3} {'ccr':>4} {'heuristic':>12} {'':>8} {'s':>5} "
          f"{'memetic':>8} {'s':>5} {'cpsat':>8} {'s':>5} {'cpath':>7} {'comm':>7} {'loadLP':>7} "
          f"{'destr':>7} {'chain':>7} {'load':>7} {'cpbound':>7} {'gap':>6} binding")
    rows: list[dict[str, Any]] = []
    with benchmark_stops("workflows") as stop:
        for instance in instances:
            stop.check()
            if instance.asked < (size := smallest_size(recipe_class(instance.recipe))):
                print(f"({instance.recipe}: {instance.asked} tasks asked, its smallest size is {size})")
            rows.append(stop.keep(measure(instance, limit, args.workers, args.seed), str(instance)))
            print_row(rows[-1])
            args.csv.parent.mkdir(parents=True, exist_ok=True)
            with args.csv.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    if rows:
        print_summary(rows)
        print(f"wrote {args.csv}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
