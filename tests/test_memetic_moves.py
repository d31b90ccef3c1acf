"""The memetic search's moves: a move of a colocation-group member moves the group (the repair would
otherwise undo it), and a segment move puts a run of critical-path tasks on one device."""

from __future__ import annotations

import dataclasses

import numpy as np

from dse.mapping.dag import DagProblem
from dse.solvers.memetic import _segment_moves, critical_path, group_leaders, neighbours
from dse.synthetic import random_tables


def grouped_problem(seed: int) -> DagProblem:
    """A 10-task random DAG on 3 devices, every device allowed, where tasks 2, 5 and 8 form one colocation group."""
    tables = random_tables(seed, 10, 3, disallow=0.0)
    groups = tuple("g" if i in (2, 5, 8) else None for i in range(10))
    return DagProblem(dataclasses.replace(tables, colocation=groups), ("makespan",), memory=False)


def test_group_leaders_name_the_first_task_of_each_group() -> None:
    leader = group_leaders(grouped_problem(0))
    assert leader.tolist() == [0, 1, 2, 3, 4, 2, 6, 7, 2, 9]  # by hand: the group's first task leads


def test_neighbours_that_move_a_group_member_move_the_whole_group() -> None:
    for seed in range(20):
        problem = grouped_problem(seed)
        rng = np.random.default_rng(seed)
        x = problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(1, problem.n_genes)))[0]
        path = critical_path(problem, x)
        fastest = np.argsort(problem.tables.time, axis=1, kind="stable")[:, :3]
        Y = neighbours(problem, x, path, rng, 64, fastest, group_leaders(problem), segments=0)
        assert len(Y) and (Y != x).any(axis=1).all()  # every neighbour differs from x after the repair
        moved_group = Y[:, 2] != x[2]
        assert (Y[moved_group][:, [5, 8]] == Y[moved_group][:, [2]]).all()


def test_segment_moves_put_a_run_of_the_path_on_one_device() -> None:
    x = np.array([0, 1, 2, 0, 1, 2, 0, 1] + list(range(8)), dtype=np.int64)
    path = [(v, v - 1, True, 5) for v in range(7, -1, -1)]  # the chain 0 -> 1 -> ... -> 7, last task first
    fastest = np.zeros((8, 3), dtype=np.int64)
    rows = _segment_moves(x, path, np.random.default_rng(1), fastest, None, 12)
    assert rows.shape == (12, 16)
    assert (rows[:, 8:] == x[8:]).all()  # priorities untouched
    assert (rows[:, :8] != x[:8]).any(axis=1).sum() >= 6  # most rows move something (x alternates devices)
    for row in rows:
        changed = np.flatnonzero(row[:8] != x[:8])
        if len(changed):
            run = np.arange(changed.min(), changed.max() + 1)  # the changed tasks span one run of the chain,
            assert len(np.unique(row[run])) == 1  # which now sits on one device


def test_scores_read_the_same_feasibility_as_a_full_evaluation() -> None:
    """``evaluate_scheduled`` (makespans already decoded) gives what ``evaluate`` gives, memory limits included."""
    for seed in range(10):
        tables = random_tables(seed, 8, 3)
        problem = DagProblem(tables, ("makespan", "energy"), memory=True, tensor_per_device=seed % 2 == 1)
        rng = np.random.default_rng(seed)
        X = problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(30, problem.n_genes)))
        makespan = problem.schedule_population(X[:, :8], X[:, 8:], problem.insertion)[0]
        fast, full = problem.evaluate_scheduled(X, makespan), problem.evaluate(X)
        assert np.array_equal(fast.F, full.F) and np.array_equal(fast.G, full.G)
