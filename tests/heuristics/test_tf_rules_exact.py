"""CP-SAT under the TF paper's rules (sends occupy the producer, one tensor per remote device) against brute force.

The golden values come from brute force: every device assignment x every task permutation as
priorities, decoded by the non-insertion list scheduler (the evaluator is the truth). Those
schedules include every semi-active schedule, so their best makespan (and makespan-energy
front) is the optimum the exact model must prove. Each schedule CP-SAT returns is also checked
by the independent validator of :mod:`dse.mapping.dag.validate`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.pareto import nondominated
from dse.solvers.registry import collect_seeds
from tests.mapping.dag.test_dag_cpsat import assert_valid, brute_force


def tf_tiny(seed: int, objectives=("makespan",), identical: bool = False) -> DagProblem:
    """4-5 tasks, 2-3 devices, fan-out so producers feed several devices, send times 1..15."""
    rng = np.random.default_rng(900 + seed)
    t = random_tables(seed, n_ops=int(rng.integers(4, 6)), n_dev=int(rng.integers(2, 4)), disallow=0.1,
                      max_preds=3)
    send = rng.integers(1, 16, size=t.n_dev).astype(np.int64)
    if identical:  # identical devices: only the send order by device index tells them apart
        t = dataclasses.replace(
            t, time=np.repeat(t.time[:, :1], t.n_dev, axis=1), energy=np.repeat(t.energy[:, :1], t.n_dev, axis=1),
            allowed=np.ones_like(t.allowed), idle_power_mw=np.full(t.n_dev, t.idle_power_mw[0]),
            transfer_time=np.broadcast_to(t.transfer_time[:, :1, 1:2], t.transfer_time.shape).copy()
            * (1 - np.eye(t.n_dev, dtype=np.int64)))
        send = np.full(t.n_dev, send[0])
    t = dataclasses.replace(t, send_time=send)
    return DagProblem(t, objectives, memory=bool(seed % 3 == 0), tensor_per_device=True, name=f"tf{seed}")


def test_tf_problems_are_exact() -> None:
    assert tf_tiny(0).exact_unsupported() is None


@pytest.mark.parametrize("seed", range(12))
def test_tf_optimal_makespan_equals_brute_force(seed: int) -> None:
    problem = tf_tiny(seed, identical=seed % 4 == 1)
    _, F = brute_force(problem)
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    if len(F) == 0:
        assert front.status == "infeasible"
        return
    assert front.status == "optimal" and front.points[0].proven
    assert front.points[0].internal[0] == F[:, 0].min()
    assert_valid(problem, front.points[0].genome)


@pytest.mark.parametrize("seed", range(6))
def test_tf_makespan_energy_front_equals_brute_force(seed: int) -> None:
    problem = tf_tiny(seed + 40, objectives=("makespan", "energy"))
    _, F = brute_force(problem)
    truth = sorted(map(tuple, F[nondominated(F)].tolist()))
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    assert front.status == ("optimal" if truth else "infeasible")
    assert sorted(map(tuple, front.internal().tolist())) == truth
    for p in front.points:
        assert_valid(problem, p.genome)


def test_send_rule_changes_the_optimum() -> None:
    """A fork u -> v, u -> w whose consumers sit on two remote devices: hand-computed optimum.

    Tasks: u (10 on d0, 100 elsewhere), v and w (10 on d1/d2, 100 on d0); every transfer 5,
    sends 20 each on d0. On one device: 10 + 100 + 100 = 210. u on d0, v on d1, w on d2: u ends at
    10, the send to d1 ends at 30 (v starts 35, ends 45), the send to d2 at 50 (w starts 55, ends
    65): makespan 65. Putting v and w on d1 together: one send, both wait for 10 + 20 + 5 = 35, run
    one after the other: 55 < 65. Without the send rule (sends free) the split wins (25 < 35).
    """
    inf = 100
    tables = random_tables(0, n_ops=3, n_dev=3, disallow=0.0)
    tables = dataclasses.replace(
        tables, edges=np.array([[0, 1], [0, 2]]), edge_bytes=np.ones(2, dtype=np.int64),
        time=np.array([[10, inf, inf], [inf, 10, 10], [inf, 10, 10]]), allowed=np.ones((3, 3), dtype=bool),
        transfer_time=np.full((2, 3, 3), 5) * (1 - np.eye(3, dtype=np.int64)),
        transfer_energy=np.zeros((2, 3, 3), dtype=np.int64), send_time=np.array([20, 20, 20]))
    tf = DagProblem(tables, ("makespan",), memory=False, tensor_per_device=True)
    front = dse.solve(tf, "cpsat", time_limit=10, seed=0, workers=2)
    assert front.points[0].internal[0] == 55 and front.points[0].proven
    free = DagProblem(dataclasses.replace(tables, send_time=np.zeros(3, dtype=np.int64)), ("makespan",),
                      memory=False, tensor_per_device=True)
    assert dse.solve(free, "cpsat", time_limit=10, seed=0, workers=2).points[0].internal[0] == 25


def test_a_model_too_large_to_build_is_refused_with_its_size(monkeypatch: pytest.MonkeyPatch,
                                                             imports_asked: list[str]) -> None:
    import dse.mapping.dag.cpsat as dag_cpsat

    problem = tf_tiny(3)
    monkeypatch.setattr(dag_cpsat, "MAX_PAIR_CONSTRAINTS", 1)
    assert "precedence constraints exceed 1" in str(problem.exact_model_too_large())
    front = dse.solve(problem, "cpsat", time_limit=5, seed=0, workers=2)
    # neither before the clock nor after: OR-Tools costs 0.4 s to import, and no model is built
    assert not [name for name in imports_asked if name.startswith("ortools")]
    # the model is refused, but the heuristic mappings it was handed are kept (never a lost mapping), unproven
    assert front.status == "time_limit" and len(front) == 1 and not front.points[0].proven
    seeds = problem.evaluate(np.array(collect_seeds(problem)))
    assert front.points[0].internal[0] == seeds.F[seeds.feasible, 0].min()  # the best of its seeds
    assert "precedence constraints exceed 1" in front.stats.message
    certificate = front.certificate()  # nothing proven by CP-SAT: the bound is the problem's own alone
    assert certificate is not None and not certificate.proven
    assert certificate.bound == problem.objectives[0].to_user(np.array(problem.objective_lower_bounds()))[0]


TF_GRAPH = """Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations, RAM storage,Device constraint ,name
1,2;3,,,60,100,9,NO,a
2,4,1,,10,40,0,NO,b
3,4,1,,10,60,0,NO,c
4,,2;3,,5,30,7,NO,d
"""
TF_DEVICES = """Id,RAM,#operations,commnication speed,type
0,1000,10,5;20,CPU
1,2000,20,40,GPU
2,3000,40,,GPU
"""


def test_dse_solve_runs_cpsat_on_a_tf_spec(tmp_path, capsys: pytest.CaptureFixture) -> None:
    """A spec with TF-paper CSV files: ``dse solve --solver all`` runs CP-SAT (no longer skipped), and its
    proven optimum equals brute force over the loaded problem."""
    import yaml

    import dse
    from dse import cli

    (tmp_path / "g.csv").write_text(TF_GRAPH)
    (tmp_path / "d.csv").write_text(TF_DEVICES)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"name": "tf", "family": "dag", "objectives": ["makespan"],
                                    "platform": {"format": "tfcsv", "path": "d.csv"},
                                    "workload": {"format": "tfcsv", "path": "g.csv"},
                                    "solver": {"name": "all", "time_limit_s": 10, "seed": 0}}))
    assert cli.main(["solve", str(spec), "--quiet", "--solver", "cpsat"]) == 0
    captured = capsys.readouterr()
    assert "skipped" not in captured.err and "== cpsat: 1 Pareto points, status optimal" in captured.out
    problem = dse.load_problem(spec)
    assert problem.tensor_per_device and problem.tables.send_time.any()
    _, F = brute_force(problem)
    front = dse.solve(problem, "cpsat", time_limit=10, seed=0, workers=2)
    assert front.points[0].proven and front.points[0].internal[0] == F[:, 0].min()
