"""CP-SAT's flexible job shop against brute force, the heuristics and an independent validator."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.mapping.dag.validate import validate_schedule
from dse.pareto import nondominated
from dse.solvers.registry import collect_seeds


def brute_force(problem: DagProblem) -> tuple[np.ndarray, np.ndarray]:
    """Every device assignment x every task permutation as priorities, decoded without insertion.

    The non-insertion list schedules over all topological orders include every semi-active
    schedule, hence an optimal one for any objective that grows with the makespan.
    """
    n, m = problem.n_tasks, problem.tables.n_dev
    devices = np.array(list(itertools.product(range(m), repeat=n)), dtype=np.int64)
    orders = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    X = np.concatenate([np.repeat(devices, len(orders), axis=0), np.tile(orders, (len(devices), 1))], axis=1)
    ev = problem.evaluate(X)
    return X[ev.feasible], ev.F[ev.feasible]


def tiny(seed: int, objectives=("makespan",), identical: bool = False, memory: bool = False) -> DagProblem:
    rng = np.random.default_rng(seed)
    t = random_tables(seed, n_ops=int(rng.integers(4, 6)), n_dev=int(rng.integers(2, 4)), disallow=0.15)
    if identical:
        t = dataclasses.replace(
            t, time=np.repeat(t.time[:, :1], t.n_dev, axis=1), energy=np.repeat(t.energy[:, :1], t.n_dev, axis=1),
            mem=np.repeat(t.mem[:, :1], t.n_dev, axis=1), allowed=np.ones_like(t.allowed),
            transfer_time=np.zeros_like(t.transfer_time), transfer_energy=np.zeros_like(t.transfer_energy),
            idle_power_mw=np.full(t.n_dev, t.idle_power_mw[0]), mem_capacity=np.full(t.n_dev, t.mem_capacity[0]))
    return DagProblem(t, objectives, memory=memory)


def assert_valid(problem: DagProblem, genome) -> None:
    s = problem.schedule(np.asarray(genome))
    assert validate_schedule(problem, s.device, s.start, s.finish, s.release) == []


@pytest.mark.parametrize("seed", range(25))
def test_optimal_makespan_equals_brute_force(seed: int) -> None:
    problem = tiny(seed, identical=seed % 5 == 0, memory=seed % 3 == 0)
    _, F = brute_force(problem)
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    if len(F) == 0:
        assert front.status == "infeasible" and len(front) == 0
        return
    assert front.status == "optimal" and front.points[0].proven
    assert front.points[0].internal[0] == F[:, 0].min()
    assert_valid(problem, front.points[0].genome)


@pytest.mark.parametrize("seed", range(12))
def test_makespan_energy_front_equals_brute_force(seed: int) -> None:
    problem = tiny(100 + seed, objectives=("makespan", "energy"))
    _, F = brute_force(problem)
    exact = F[nondominated(F)]
    front = dse.solve(problem, "cpsat", time_limit=60, seed=0, workers=2)
    assert front.complete
    assert sorted(map(tuple, front.internal().tolist())) == sorted(map(tuple, exact.tolist()))
    for p in front.points:
        assert_valid(problem, p.genome)


@pytest.mark.parametrize("seed", range(6))
def test_cpsat_is_no_worse_than_any_heuristic(seed: int) -> None:
    rng = np.random.default_rng(seed)
    t = random_tables(200 + seed, n_ops=int(rng.integers(10, 16)), n_dev=3, disallow=0.1, max_preds=3)
    problem = DagProblem(t, ("makespan",), memory=False)
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0)
    seeds = np.array(collect_seeds(problem))
    best_heuristic = problem.evaluate(seeds).F[:, 0].min()
    assert front.points[0].internal[0] <= best_heuristic
    assert front.stats.best_bound[0] <= front.points[0].internal[0]
    assert_valid(problem, front.points[0].genome)


def test_time_limit_reports_a_schedule_and_a_bound() -> None:
    t = random_tables(7, n_ops=40, n_dev=4, disallow=0.0, max_preds=3)
    problem = DagProblem(t, ("makespan",), memory=False)
    front = dse.solve(problem, "cpsat", time_limit=5.0, seed=0)
    assert len(front) == 1
    assert problem.critical_path_bound() <= front.stats.best_bound[0] + 1e-9
    assert front.stats.best_bound[0] <= front.points[0].internal[0]
    assert "gap" in front.stats.message


@pytest.mark.parametrize("seed", range(3))
def test_memetic_lies_between_the_optimum_and_its_seeds(seed: int) -> None:
    """The memetic search never returns worse than its best seed, never better than the proven optimum
    (brute force), and its critical path ends at the task that finishes last."""
    from dse.solvers.memetic import critical_path

    problem = tiny(seed + 100)
    _, F = brute_force(problem)
    seeds = collect_seeds(problem)
    ev = problem.evaluate(np.array(seeds))
    best_seed = int(ev.F[ev.feasible, 0].min())
    front = dse.solve(problem, "memetic", time_limit=0.5, seed=0)
    value = front.points[0].internal[0]
    assert F[:, 0].min() <= value <= best_seed
    genome = np.array(front.points[0].genome)
    path = critical_path(problem, genome)
    assert path[0][0] == int(np.argmax(problem.schedule(genome).finish))
    assert path[-1][1] == -1
