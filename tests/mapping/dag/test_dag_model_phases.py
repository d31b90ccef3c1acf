"""The dag family's CP-SAT model on a hand-sized chain (3 tasks, 2 devices): its variables and constraints
of each kind counted by hand from the model's description (:mod:`dse.mapping.dag.cpsat`), its horizon and
hint worked out by hand, and its exact front against brute force."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import dse
from dse.cost import CostTables
from dse.mapping.dag import DagProblem
from dse.pareto import nondominated
from tests.mapping.dag.test_dag_cpsat import brute_force


def chain_tables(identical: bool = False) -> CostTables:
    """Tasks a -> b -> c on devices p and q. Transfers cost 2 time units across; edge a -> b costs 9 pJ
    across; q idles at 1 mW. ``identical``: both devices the same (p's columns) and free transfers."""
    time = np.array([[4, 6], [5, 3], [2, 7]], dtype=np.int64)
    energy = np.array([[10, 20], [30, 15], [5, 25]], dtype=np.int64)
    tt = np.array([[[0, 2], [2, 0]], [[0, 2], [2, 0]]], dtype=np.int64)
    te = np.array([[[0, 9], [9, 0]], [[0, 0], [0, 0]]], dtype=np.int64)
    idle = np.array([0, 1], dtype=np.int64)
    if identical:
        time, energy = np.repeat(time[:, :1], 2, axis=1), np.repeat(energy[:, :1], 2, axis=1)
        tt, te, idle = np.zeros_like(tt), np.zeros_like(te), np.zeros_like(idle)
    return CostTables(
        op_names=("a", "b", "c"), device_names=("p", "q"), time=time, energy=energy,
        mem=np.zeros((3, 2), dtype=np.int64), allowed=np.ones((3, 2), dtype=bool),
        edges=np.array([[0, 1], [1, 2]], dtype=np.int64), edge_bytes=np.ones(2, dtype=np.int64),
        idle_power_mw=idle, mem_capacity=np.full(2, 100, dtype=np.int64), transfer_time=tt, transfer_energy=te)


#: The constraint kinds of a CP-SAT model proto these models use; any other counts as "other".
KINDS = ("linear", "exactly_one", "at_most_one", "bool_or", "bool_and", "interval", "no_overlap", "cumulative",
         "lin_max")


def kinds(model) -> Counter:
    """How many constraints of each kind the model holds."""
    return Counter(next((k for k in KINDS if getattr(c, f"has_{k}")()), "other") for c in model.Proto().constraints)


def domain(model, name: str) -> tuple[int, int]:
    """The least and largest value of the variable ``name``."""
    var = next(v for v in model.Proto().variables if v.name == name)
    bounds = list(var.domain)
    return bounds[0], bounds[-1]


def test_chain_model_has_the_hand_counted_variables_and_constraints() -> None:
    problem = DagProblem(chain_tables(), ("makespan", "energy"), memory=False)
    assert problem.constraints == ()
    model = problem.cpsat().model
    # variables: start and end per task (6), x per task and device (6), used per device (2), makespan,
    # cross[0, p, q] and cross[0, q, p] (edge a -> b costs energy across; b -> c does not), idle[q], energy
    assert len(model.Proto().variables) == 6 + 6 + 2 + 1 + 2 + 1 + 1
    assert kinds(model) == Counter({
        # per task: end = start + time on each device (2) and start >= the chosen device's head (1): 9;
        # per edge: start[v] >= end[u] and the transfer delay on each of the 2 device pairs: 6;
        # makespan >= end + tail per task: 3; used[d] <= sum of its x: 2; idle[q] = 0 or 1 * makespan: 2;
        # energy = sum of its terms: 1
        "linear": 9 + 6 + 3 + 2 + 2 + 1,
        "exactly_one": 3,                # one device per task
        "interval": 6,                   # an optional interval per task and device
        "no_overlap": 2,                 # one per device
        "lin_max": 1,                    # makespan = max end
        # the implications x[i, d] => used[d] (6; CP-SAT writes an implication as a one-literal and
        # enforced by its premise) and per cross literal that it implies both presence literals (2)
        "bool_and": 6 + 2,
        "bool_or": 2,                    # per cross literal: not both presence literals, or it holds
    })
    # horizon: every task at its slowest (6 + 5 + 7) after the longest transfer of each edge (2 + 2)
    low, high = domain(model, "makespan")
    assert high == 22
    # the chain's critical path at the fastest devices (4 + 3 + 2) is a floor of any makespan
    assert 9 <= low <= brute_force(problem)[1][:, 0].min()


def test_identical_devices_add_a_cumulative_relaxation_and_break_their_symmetry() -> None:
    problem = DagProblem(chain_tables(identical=True), ("makespan",), memory=False)
    model = problem.cpsat().model
    assert len(model.Proto().variables) == 6 + 6 + 2 + 1  # start, end, x, used, makespan
    assert kinds(model) == Counter({
        # tasks 9, precedence per edge 2 (no transfer delays), tails 3, used 2, and the first task in
        # topological order on the first device of the group (x[a, q] == 0): 1
        "linear": 9 + 2 + 3 + 2 + 1,
        "exactly_one": 3,
        "interval": 6 + 3,               # per task and device, plus one per task for the cumulative
        "no_overlap": 2,
        "lin_max": 1,
        "bool_and": 6,                   # x[i, d] => used[d]
        "cumulative": 1,                 # at most 2 tasks at a time over both devices
    })
    assert domain(model, "makespan") == (11, 11)  # the chain in sequence: 4 + 5 + 2, no transfers


def test_the_best_seed_hints_its_decoded_schedule() -> None:
    problem = DagProblem(chain_tables(), ("makespan", "energy"), memory=False)
    on_p = problem.genome([0, 0, 0], [0, 1, 2])
    model = problem.cpsat(seeds=[on_p]).model
    proto = model.Proto()
    hints = {proto.variables[v].name: value
             for v, value in zip(proto.solution_hint.vars, proto.solution_hint.values, strict=True)}
    # by hand: a, b, c in sequence on p: a [0, 4), b [4, 9), c [9, 11)
    assert hints == {"x[0,0]": 1, "x[0,1]": 0, "x[1,0]": 1, "x[1,1]": 0, "x[2,0]": 1, "x[2,1]": 0,
                     "start[0]": 0, "end[0]": 4, "start[1]": 4, "end[1]": 9, "start[2]": 9, "end[2]": 11}


@pytest.mark.parametrize("send_time", [None, [1, 2]])
def test_chain_front_equals_brute_force(send_time: list[int] | None) -> None:
    tables = chain_tables()
    if send_time is not None:  # the TF paper's rules: the producer's device sends once per remote device
        tables = tables.replaced(send_time=np.array(send_time, dtype=np.int64))
    problem = DagProblem(tables, ("makespan", "energy"), memory=False, tensor_per_device=send_time is not None)
    _, F = brute_force(problem)
    front = dse.solve(problem, "cpsat", time_limit=60, seed=0, workers=2)
    assert front.complete
    assert sorted(map(tuple, front.internal().tolist())) == sorted(map(tuple, F[nondominated(F)].tolist()))
