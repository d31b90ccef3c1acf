"""A DVFS device that runs no op has no clock: its level gene is 0 in ``repair`` and in the CP-SAT model, so
one mapping has one genome, and no view shows a clock for it.

The premise is checked first: an idle device's level changes no cost (the roofline model charges a
device's idle power, which does not depend on its operating point, only when it runs an op; its ops'
level tables are read only for ops it runs).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
from ortools.sat.python import cp_model

import dse
from dse.cost import RooflineCostModel
from dse.inputs.builders import build
from dse.mapping.pipeline import PipelineProblem
from dse.model.platform import load_platform

ROOT = Path(__file__).resolve().parents[3]


def small_dvfs_problem(objectives: tuple[str, str] = ("throughput", "energy")) -> PipelineProblem:
    """A one-layer GCN (3 ops) on the DVFS server: 3 device genes, the cpu's and the gpu's level genes."""
    platform = load_platform(ROOT / "models" / "platforms" / "server_cpu_gpu_fpga_dvfs.yaml")
    return PipelineProblem(RooflineCostModel().tables(build("gcn", dataset="cora", layers=1), platform), objectives)


def test_an_idle_device_level_changes_no_objective() -> None:
    """Every assignment of the small problem, every level of every DVFS device that runs none of its ops:
    the same period, energy and latency as at level 0."""
    problem = small_dvfs_problem(("latency", "energy"))
    n, dvfs = problem.tables.n_ops, problem.dvfs_devices.tolist()
    counts = problem.upper[n:] + 1
    for devices in itertools.product(range(problem.tables.n_dev), repeat=n):
        idle = [k for k, d in enumerate(dvfs) if d not in devices]
        for levels in itertools.product(*(range(int(c)) for c in counts)):
            x = np.array([*devices, *levels])
            canonical = x.copy()
            canonical[[n + k for k in idle]] = 0
            ev = problem.evaluate(np.stack([x, canonical]), metrics=True)
            assert (ev.F[0] == ev.F[1]).all() and ev.metrics["period"][0] == ev.metrics["period"][1]


def test_repair_gives_a_device_that_runs_nothing_level_zero() -> None:
    problem = dse.load_problem("quickstart")  # genes: 7 devices, level[cpu], level[gpu]
    X = np.array([[1, 1, 1, 1, 1, 1, 1, 2, 2],     # all on the gpu: the cpu's level 2 means nothing
                  [0, 1, 1, 1, 1, 1, 1, 2, 1],     # the cpu runs l0.combine: its level stays
                  [2, 2, 2, 2, 2, 2, 2, 1, 2]])    # all on the fpga: neither the cpu's nor the gpu's level
    assert problem.repair(X).tolist() == [[1, 1, 1, 1, 1, 1, 1, 0, 2], [0, 1, 1, 1, 1, 1, 1, 2, 1],
                                          [2, 2, 2, 2, 2, 2, 2, 0, 0]]
    assert problem.repair(X[0]).tolist() == [1, 1, 1, 1, 1, 1, 1, 0, 2]  # one genome as well
    assert problem.with_levels(np.full(7, 2)).tolist() == [2] * 7 + [0, 0]  # the "only fpga" baseline
    again = problem.repair(problem.repair(X))
    assert (again == problem.repair(X)).all()


def test_cpsat_fixes_the_level_of_a_device_that_runs_nothing() -> None:
    """With every op on the gpu the model has no solution with the cpu at its 1500 MHz level (z[0, 2]), and
    one with the gpu at any of its levels."""
    problem = small_dvfs_problem()
    gpu = problem.tables.device_names.index("gpu")

    def status(level_var: str) -> int:
        form = problem.cpsat()
        names = {v.name: k for k, v in enumerate(form.model.proto.variables)}
        for i in range(problem.tables.n_ops):
            form.model.add(form.model.get_bool_var_from_proto_index(names[f"x[{i},{gpu}]"]) == 1)
        form.model.add(form.model.get_bool_var_from_proto_index(names[level_var]) == 1)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        return solver.solve(form.model)

    assert status("z[0,2]") == cp_model.INFEASIBLE  # the cpu runs nothing: level 0 only
    assert status("z[0,0]") in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    assert status(f"z[{gpu},2]") in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def test_two_cpsat_runs_give_one_genome_per_mapping() -> None:
    """The quickstart solved twice by CP-SAT (seeds 0 and 1; before the idle levels were fixed, a mapping with
    nothing on the cpu came back with the cpu's level gene at 2): every genome is canonical (a DVFS device
    that runs nothing at level 0, as repair gives it), a point found by both runs (its ops' devices and its
    objective values) has the same level genes, and both fronts' values are the brute-force front's (every
    one of its 19,683 genomes evaluated). The re-specified quickstart's front holds some op-to-device
    assignments at two clock settings (e.g. cpu 2000 MHz and gpu 1095 MHz, and cpu 1500 MHz and gpu 765
    MHz: two trade-offs), so the assignment alone does not name a point."""
    problem = dse.load_problem("quickstart")
    brute = dse.solve(problem, "exhaustive", progress=False)
    runs = [dse.solve(problem, "cpsat", time_limit=30, seed=seed, workers=2, progress=False) for seed in (0, 1)]
    levels_of: dict[tuple[tuple[int, ...], tuple[float, ...]], tuple[int, ...]] = {}
    n = problem.tables.n_ops
    for front in runs:
        assert front.status == "optimal"
        assert sorted(map(tuple, front.internal().tolist())) == sorted(map(tuple, brute.internal().tolist()))
        G = np.array([p.genome for p in front.points], dtype=np.int64)
        assert (problem.repair(G) == G).all()
        for g, values in zip(G.tolist(), front.internal().tolist(), strict=True):
            assert all(level == 0 for d, level in zip(problem.dvfs_devices.tolist(), g[n:], strict=True)
                       if d not in g[:n]), g  # a DVFS device that runs nothing: level 0
            point = (tuple(g[:n]), tuple(values))
            assert levels_of.setdefault(point, tuple(g[n:])) == tuple(g[n:])
    assert any(len({levels for (ops, _), levels in levels_of.items() if ops == key}) > 1
               for key in {ops for ops, _ in levels_of})  # an assignment at two clock settings


def test_describe_names_the_clock_of_used_dvfs_devices_only() -> None:
    problem = dse.load_problem("quickstart")
    assert problem.describe([1] * 7 + [0, 2]).endswith(" @ gpu 765 MHz")
    assert problem.describe([0] + [1] * 6 + [1, 2]).endswith(" @ cpu 2000 MHz, gpu 765 MHz")
    assert "@" not in problem.describe([2] * 7 + [0, 0])  # the fpga has no operating points
    text = problem.decode(np.array([2] * 7 + [0, 0])).explain()
    assert "MHz" not in text
