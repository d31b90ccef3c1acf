"""The communication-aware makespan lower bounds: never above the optimum (brute force over every
assignment and order, with and without the TF send rule and colocation), never below the
critical-path bound, and exact on a hand-computed chain; the destructive bound never below the
communication bound and above it on some of the brute-forced instances; the load bounds
(:mod:`dse.mapping.dag.load_bound`) never above the optimum either, exact on a hand-computed
split-join-split graph where every other bound falls short, and the exact model's floor."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dse.cost import CostTables
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.mapping.dag.bounds import (
    communication_bound,
    destructive_bound,
    task_device_bounds,
    time_to_end,
)
from dse.mapping.dag.load_bound import least_slot, load_bound, load_task_device_bounds
from tests.mapping.dag.test_dag_cpsat import brute_force


def chain_of_two() -> DagProblem:
    """a -> b; a takes 10 on d0 and 50 on d1, b the reverse; the tensor takes 5 from d0 to d1 and 7 back."""
    transfer = np.array([[[0, 5], [7, 0]]], dtype=np.int64)
    tables = CostTables(
        op_names=("a", "b"), device_names=("d0", "d1"), time=np.array([[10, 50], [50, 10]], dtype=np.int64),
        energy=np.zeros((2, 2), dtype=np.int64), mem=np.zeros((2, 2), dtype=np.int64),
        allowed=np.ones((2, 2), dtype=bool), edges=np.array([[0, 1]], dtype=np.int64),
        edge_bytes=np.ones(1, dtype=np.int64), transfer_time=transfer, transfer_energy=np.zeros_like(transfer),
        idle_power_mw=np.zeros(2, dtype=np.int64), mem_capacity=np.ones(2, dtype=np.int64),
        time_unit="tu", seconds_per_time_unit=1e-9)
    return DagProblem(tables, ("makespan",), memory=False)


def test_chain_of_two_by_hand() -> None:
    """By hand: a on d0 (10), the tensor to d1 (5), b on d1 (10) = 25; every other placement takes 60. The
    critical path with free transfers says 20; the communication bound finds the 25."""
    problem = chain_of_two()
    assert problem.critical_path_bound() == 20
    assert communication_bound(problem) == 25 == problem.lower_bound()
    tf = DagProblem(dataclasses.replace(problem.tables, send_time=np.array([3, 4], dtype=np.int64)), ("makespan",),
                    memory=False, tensor_per_device=True)
    assert communication_bound(tf) == 28  # by hand: the send from d0 occupies it 3 more before the tensor leaves


def test_time_to_end_by_hand() -> None:
    """From a's start: on d0, 10 + the transfer 5 + b on d1 10 = 25 (b on d0 would take 10 + 50); on d1,
    50 + b there 10 = 60 (b on d0 would wait for the transfer back, 7). From b's start: its own time."""
    problem = chain_of_two()
    assert time_to_end(problem).tolist() == [[25, 60], [50, 10]]
    assert destructive_bound(problem, upper=25) == 25  # nothing to refute above the communication bound


def random_problem(seed: int) -> DagProblem:
    """3-5 tasks on 2-3 devices; odd seeds under the TF send rule, every third a colocated pair."""
    rng = np.random.default_rng(seed)
    tables = random_tables(seed, n_ops=int(rng.integers(3, 6)), n_dev=int(rng.integers(2, 4)), disallow=0.15,
                           max_preds=3)
    tf = seed % 2 == 1
    if tf:
        tables = dataclasses.replace(tables, send_time=rng.integers(0, 20, size=tables.n_dev).astype(np.int64))
    if seed % 3 == 0:
        together = (tables.allowed[0] & tables.allowed[-1]).any()
        colocation = ("g", *[None] * (tables.n_ops - 2), "g") if together else ()
        tables = dataclasses.replace(tables, colocation=colocation)
    return DagProblem(tables, ("makespan",), memory=False, tensor_per_device=tf)


SEEDS = range(60)


@pytest.fixture(scope="module")
def optima() -> dict[int, int]:
    """Per seed the optimal makespan by brute force (every assignment x every order)."""
    found = {}
    for seed in SEEDS:
        _, F = brute_force(random_problem(seed))
        assert len(F)
        found[seed] = int(F[:, 0].min())
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_never_above_the_optimum(seed: int, optima: dict[int, int]) -> None:
    problem = random_problem(seed)
    best = optima[seed]
    assert problem.critical_path_bound() <= problem.lower_bound() <= best
    assert problem.lower_bound() <= destructive_bound(problem, upper=best) <= best
    assert destructive_bound(problem) <= best  # without a known schedule: bisection up to the serial bound


def test_destructive_bound_refutes_makespans(optima: dict[int, int]) -> None:
    """On some instances the refutations lift the bound above the communication bound (up to the optimum)."""
    lifted = [s for s in SEEDS if destructive_bound(random_problem(s), upper=optima[s]) > random_problem(s).lower_bound()]
    assert len(lifted) >= 5, lifted


def test_two_edges_from_one_producer_count_it_once() -> None:
    """a -> b twice (two tensors), every time 10, transfers 1000: by hand the optimum is 20 (both on one
    device); the bounds must not count a as two producers sharing b's device (30)."""
    transfer = np.full((2, 2, 2), 1000, dtype=np.int64) * (1 - np.eye(2, dtype=np.int64))
    tables = dataclasses.replace(chain_of_two().tables, time=np.full((2, 2), 10, dtype=np.int64),
                                 edges=np.array([[0, 1], [0, 1]], dtype=np.int64),
                                 edge_bytes=np.ones(2, dtype=np.int64), transfer_time=transfer,
                                 transfer_energy=np.zeros_like(transfer))
    problem = DagProblem(tables, ("makespan",), memory=False)
    assert communication_bound(problem) == 20 == destructive_bound(problem, upper=20)


def test_load_bounds_never_above_the_optimum(optima: dict[int, int]) -> None:
    """A seeded loop over every third brute-forced instance: the heads and tails raised by load are at least
    the communication bound's, every bound at most the optimum, the refutations at least the static bound."""
    for seed in list(SEEDS)[::3]:
        problem = random_problem(seed)
        best = optima[seed]
        head, tail, span, static = load_task_device_bounds(problem)
        old_head, old_tail, _ = task_device_bounds(problem)
        assert (head >= old_head).all() and (tail >= old_tail).all()
        assert problem.lower_bound() <= static <= best
        assert static <= load_bound(problem, upper=best) <= best, seed


def split_join_split() -> DagProblem:
    """Three tasks of 10 (a, b, c), a join j of 1, three tasks of 10 (x, y, z) after it; two identical devices,
    free transfers."""
    names = ("a", "b", "c", "j", "x", "y", "z")
    edges = np.array([[0, 3], [1, 3], [2, 3], [3, 4], [3, 5], [3, 6]], dtype=np.int64)
    free = np.zeros((len(edges), 2, 2), dtype=np.int64)
    tables = dataclasses.replace(
        chain_of_two().tables, op_names=names, time=np.array([[10, 10]] * 3 + [[1, 1]] + [[10, 10]] * 3),
        energy=np.zeros((7, 2), dtype=np.int64), mem=np.zeros((7, 2), dtype=np.int64), allowed=np.ones((7, 2), dtype=bool),
        edges=edges, edge_bytes=np.ones(len(edges), dtype=np.int64), transfer_time=free, transfer_energy=free)
    return DagProblem(tables, ("makespan",), memory=False)


def test_load_bound_by_hand() -> None:
    """By hand: two of a, b, c share a device, so j starts at 20 at best; likewise two of x, y, z run one after
    the other after j: the optimum is 20 + 1 + 20 = 41. The critical path says 21, the assignment
    relaxation (61 / 2) 31; counting the slots of the three tasks before j (and after it) finds the 41,
    and the exact model starts its makespan there."""
    problem = split_join_split()
    assert problem.critical_path_bound() == 21 == destructive_bound(problem, upper=41)
    assert problem.objective_lower_bounds() == (31.0,)
    head, tail, _, static = load_task_device_bounds(problem)
    assert head[3].tolist() == [20, 20] and tail[3].tolist() == [20, 20] and static == 41
    assert load_bound(problem) == 41
    assert "lower bound 41" in problem.cpsat().notes[0]


def test_least_slot_by_hand() -> None:
    """Slots of 10 on two devices from 0: the third task ends at 20; slots 10, 20 on one device and 8, 11,
    14 on the other (from 5, every 3): the fourth ends at 14; a device of zero-time tasks holds them all."""
    offset = np.array([[0, 0], [0, 5], [0, 3]])
    least = np.array([[10, 10], [10, 3], [0, 7]])
    assert least_slot(offset, least, np.array([3, 4, 5])).tolist() == [20, 14, 0]
