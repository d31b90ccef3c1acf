"""The memetic search's moves: a move of a colocation-group member moves the group (the repair would
otherwise undo it), and a segment move puts a run of critical-path tasks on one device."""

from __future__ import annotations

import dataclasses

import numpy as np

from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.solvers.local_search import (
    CriticalPath,
    _feasible,
    _segment_moves,
    critical_path,
    group_leaders,
    neighbours,
)


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
    tasks = np.arange(7, -1, -1)  # the chain 0 -> 1 -> ... -> 7, last task first
    path = CriticalPath(tasks, tasks - 1, np.ones(8, dtype=bool), np.full(8, 5))
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


def test_feasibility_read_off_the_device_genes_matches_a_full_evaluation() -> None:
    """The search's feasibility test (allowed devices and colocation groups read off the genes, the other
    constraints evaluated) agrees with :meth:`DagProblem.evaluate` on unrepaired genomes, which break the
    allowed devices and the groups, with and without a memory constraint."""
    kinds = set()
    for seed in range(12):
        tables = random_tables(seed, 9, 3, disallow=0.15)
        groups = tuple("g" if i in (2, 5) else "h" if i in (3, 7, 8) else None for i in range(9))
        problem = DagProblem(dataclasses.replace(tables, colocation=groups), ("makespan",),
                             memory=seed % 2 == 0)
        rng = np.random.default_rng(seed)
        X = rng.integers(problem.lower, problem.upper + 1, size=(40, problem.n_genes))
        X[:20] = problem.repair(X[:20])
        makespan = problem.schedule_population(X[:, :9], X[:, 9:], problem.insertion)[0]
        expected = problem.evaluate(X).feasible
        kinds |= set(expected.tolist())
        assert np.array_equal(_feasible(problem, X, makespan), expected)
    assert kinds == {False, True}  # both kinds occurred


def test_critical_path_steps_follow_the_arrivals_and_the_device_holders() -> None:
    """Each step of the compiled walk names the first producer (predecessor order) whose input arrives
    exactly at the task's start, by the numpy send rule (``DagStructure.send_delays``), or else the task
    before it on its device that held the device until then; the path starts at the task that finishes
    last and ends where neither holds."""
    for seed in range(40):
        tables = random_tables(seed, 12, 3)
        if seed % 2 == 0:  # the TF rules: sends occupy the producer's device
            tables = dataclasses.replace(tables, send_time=np.random.default_rng(seed).integers(1, 30, size=3))
        problem = DagProblem(tables, ("makespan",), memory=False, tensor_per_device=seed % 2 == 0)
        st, n = problem.structure, problem.n_tasks
        x = problem.repair(np.random.default_rng(seed).integers(problem.lower, problem.upper + 1,
                                                                  size=(1, problem.n_genes)))[0]
        schedule = problem.schedule(x, insertion=False)
        start, finish, release = schedule.start, schedule.finish, schedule.release
        delay, _ = st.send_delays(x[:n], tables, problem.tensor_per_device)
        path = critical_path(problem, x)
        assert path[0][0] == int(np.argmax(finish))
        for task, cause, by_data, gap in (path[i] for i in range(len(path))):
            arrivals = [u for u, e in st.predecessors(task) if finish[u] + delay[e] == start[task]]
            if by_data:
                assert cause == arrivals[0]
            elif cause >= 0:
                assert not arrivals and x[cause] == x[task] and release[cause] == start[task]
                assert start[cause] <= start[task]
            else:
                assert not arrivals
            assert gap == (start[task] - finish[cause] if cause >= 0 else 0)
        assert path[len(path) - 1][1] == -1


def test_neighbours_are_repaired_distinct_and_new() -> None:
    """The rows come out as :meth:`DagProblem.repair` leaves them (devices the task may not use replaced,
    colocation groups together), each once, none equal to the genome they start from."""
    for seed in range(20):
        tables = random_tables(seed, 10, 3, disallow=0.3)
        groups = tuple("g" if i in (2, 5, 8) else None for i in range(10))
        problem = DagProblem(dataclasses.replace(tables, colocation=groups), ("makespan",), memory=False)
        rng = np.random.default_rng(seed)
        x = problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(1, problem.n_genes)))[0]
        fastest = np.argsort(problem.tables.time, axis=1, kind="stable")[:, :3]  # some not allowed
        Y = neighbours(problem, x, critical_path(problem, x), rng, 64, fastest, group_leaders(problem))
        assert len(Y)
        assert np.array_equal(problem.repair(Y), Y)
        assert len(np.unique(Y, axis=0)) == len(Y)
        assert (Y != x).any(axis=1).all()
