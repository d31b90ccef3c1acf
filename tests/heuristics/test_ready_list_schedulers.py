"""The ready-set list schedulers (ETF, FLB, DPS, MCT, MET, MinMin, MaxMin, Sufferage, Duplex).

* hand-worked schedules on two small instances (the steps are in the comments);
* their own timing is the decoder's without insertion (per-edge mode);
* on random graphs (hypothesis) every one gives a schedule the independent validator accepts,
  with memory capacities, colocation groups, disallowed devices and the TF send rule;
* the seed collection runs them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dse.cost import CostTables
from dse.heuristics import LIST_SCHEDULERS, names, run, seed_genomes
from dse.heuristics.base import graph_of
from dse.heuristics.ready_list import ready_list_schedule
from dse.mapping.dag import DagProblem
from dse.mapping.dag.validate import validate_schedule
from tests.heuristics.test_dag_heuristics import make_tables, random_dag

READY_SET = ("etf", "flb", "dps", "mct", "met", "minmin", "maxmin", "sufferage", "duplex")
P, Q = 0, 1


def uniform_problem(times: list[tuple[int, int]], edges: list[tuple[int, int, int]]) -> DagProblem:
    """Tasks with the given (P, Q) times; each edge ``(u, v, c)`` costs ``c`` between the devices, 0 on one."""
    n, m, E = len(times), 2, len(edges)
    tt = np.zeros((E, m, m), dtype=np.int64)
    for k, (_, _, c) in enumerate(edges):
        tt[k] = c
        tt[k, np.arange(m), np.arange(m)] = 0
    zeros = np.zeros((n, m), dtype=np.int64)
    tables = CostTables(
        op_names=tuple(f"t{i}" for i in range(n)), device_names=("P", "Q"), time=np.array(times, dtype=np.int64),
        energy=zeros, mem=zeros, allowed=np.ones((n, m), dtype=bool),
        edges=np.array([(u, v) for u, v, _ in edges], dtype=np.int64).reshape(-1, 2),
        edge_bytes=np.zeros(E, dtype=np.int64), transfer_time=tt, transfer_energy=np.zeros((E, m, m), dtype=np.int64),
        idle_power_mw=np.zeros(m, dtype=np.int64), mem_capacity=np.zeros(m, dtype=np.int64))
    return DagProblem(tables, ("makespan",), memory=False, insertion=False)


# Independent tasks s0, s1, s2 (P 1, Q 2) and L (P 4, Q 7), the batch of Braun et al.'s setting.
# Hand-worked (CT = completion time, device ready times start at 0; ties: lower index):
# minmin    CTs s0 1|2, s1 1|2, s2 1|2, L 4|7 -> s0 P [0,1]; s1 2|2, s2 2|2, L 5|7 -> s1 P [1,2];
#           s2 3|2, L 6|7 -> s2 Q [0,2]; L 6|9 -> P [2,6]. Makespan 6.
# maxmin    minima 1, 1, 1, 4 -> L P [0,4]; s0 5|2, s1 5|2, s2 5|2 -> all 2, s0 Q [0,2];
#           s1 5|4, s2 5|4 -> s1 Q [2,4]; s2 5|6 -> P [4,5]. Makespan 5.
# sufferage sufferages s0 1, s1 1, s2 1, L 3 -> L P [0,4]; s0 3, s1 3, s2 3 (CT 2 each) -> s0 Q [0,2];
#           s1 5|4, s2 5|4 -> 1 each -> s1 Q [2,4]; s2 5|6 -> P [4,5]. Makespan 5.
# duplex    minmin 6, maxmin 5 -> maxmin's schedule, 5.
# mct       arrival order s0 s1 s2 L: s0 1|2 -> P [0,1]; s1 2|2 -> P [1,2]; s2 3|2 -> Q [0,2];
#           L 6|9 -> P [2,6]. Makespan 6.
# met       every task is fastest on P: s0 [0,1], s1 [1,2], s2 [2,3], L [3,7]. Makespan 7.
INDEPENDENT = {
    "minmin": ([0, 1, 2, 3], [P, P, Q, P], 6),
    "maxmin": ([3, 0, 1, 2], [Q, Q, P, P], 5),
    "sufferage": ([3, 0, 1, 2], [Q, Q, P, P], 5),
    "duplex": ([3, 0, 1, 2], [Q, Q, P, P], 5),
    "mct": ([0, 1, 2, 3], [P, P, Q, P], 6),
    "met": ([0, 1, 2, 3], [P, P, P, P], 7),
}


@pytest.mark.parametrize("name", list(INDEPENDENT))
def test_hand_worked_independent_tasks(name: str) -> None:
    problem = uniform_problem([(1, 2), (1, 2), (1, 2), (4, 7)], [])
    order, devices, makespan = INDEPENDENT[name]
    r = run(problem, name)
    assert (r.order.tolist(), r.devices.tolist(), r.makespan, r.insertion) == (order, devices, makespan, False)


# a -> b, a -> c (each edge 1 between devices), x independent; times (P, Q): a 2|9, b 3|9, c 3|9, x 1|1.
# Static levels (mean time, no communication): a 5.5 + 6 = 11.5, b 6, c 6, x 1.
# rank_u (mean costs, mean transfer 1): a 5.5 + 1 + 6 = 12.5, b 6, c 6, x 1.
# etf  ESTs a 0|0, x 0|0 -> tie, larger level a -> P [0,2]; b 2|3, c 2|3, x 0|0 -> x Q [0,1];
#      b 2|3, c 2|3 -> tie, levels 6 = 6 -> b P [2,5]; c P 5, Q max(3, 1) = 3 -> c Q [3,12]. Makespan 12.
# flb  no enabling device yet, earliest idle P: a 0, x 0 -> larger rank a P [0,2] (b, c: enabling P);
#      idle Q: b EP 2 / Q 3, c EP 2 / Q 3, x Q 0 -> x Q [0,1]; idle Q (1): b 2 | 3, c 2 | 3 -> b P [2,5];
#      c EP P 5, idle Q 3 -> c Q [3,12]. Makespan 12.
# dps  priority rank_u - dynamic top level: a 12.5, x 1 -> a, EFT P 2 | Q 9 -> P [0,2] (top levels of b, c: 3);
#      b 3, c 3, x 1 -> b, EFT P 5 | Q 12 -> P [2,5]; c 3, x 1 -> c, EFT P 8 | Q 12 -> P [5,8];
#      x EFT P 9 | Q 1 -> Q [0,1]. Makespan 8.
FORK = {
    "etf": ([0, 3, 1, 2], [P, P, Q, Q], [0, 2, 3, 0], 12),
    "flb": ([0, 3, 1, 2], [P, P, Q, Q], [0, 2, 3, 0], 12),
    "dps": ([0, 1, 2, 3], [P, P, P, Q], [0, 2, 5, 0], 8),
}


@pytest.mark.parametrize("name", list(FORK))
def test_hand_worked_fork_with_a_free_task(name: str) -> None:
    problem = uniform_problem([(2, 9), (3, 9), (3, 9), (1, 1)], [(0, 1, 1), (0, 2, 1)])
    order, devices, start, makespan = FORK[name]
    r = run(problem, name)
    assert (r.order.tolist(), r.devices.tolist(), r.makespan) == (order, devices, makespan)
    assert problem.schedule(problem.genome(r.devices, r.order)).start.tolist() == start


def test_flb_tracks_the_enabling_device() -> None:
    """After a on P, b and c are enabled by P; the engine's state says so (checked by the FLB trace above)."""
    problem = uniform_problem([(2, 9), (3, 9), (3, 9), (1, 1)], [(0, 1, 1), (0, 2, 1)])
    seen = []

    def rule(state, ready):  # noqa: ANN001 - a test rule
        seen.append({int(v): int(state.enabling[v]) for v in ready.tasks})
        return int(ready.finish.min(axis=1).argmin()), int(ready.finish.min(axis=0).argmin())

    ready_list_schedule(graph_of(problem), rule)
    assert seen[0] == {0: -1, 3: -1}  # x is picked first (finish 1), then a
    assert seen[2] == {1: P, 2: P}


def test_every_ready_set_scheduler_is_registered() -> None:
    for name in READY_SET:
        assert name in LIST_SCHEDULERS and name in names()


@pytest.mark.parametrize("seed", range(4))
def test_own_timing_is_the_decoded_one(seed: int) -> None:
    """Per-edge mode: the engine's own start times are what the decoder gives without insertion."""
    n = 25
    problem = DagProblem(make_tables(n, random_dag(seed, n), 3, seed, coloc=0), ("makespan",), memory=False,
                         insertion=False)
    g = graph_of(problem)
    for rule in (lambda s, r: (0, int(r.finish[0].argmin())), lambda s, r: (len(r.tasks) - 1, 0)):
        devices, order, start, fin = ready_list_schedule(g, rule)
        sched = problem.schedule(problem.genome(devices, order))
        assert sched.start.tolist() == start.tolist() and sched.makespan == fin.max()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), m=st.integers(1, 4), tf=st.booleans(),
       memory=st.booleans())
def test_schedules_are_valid_on_random_graphs(seed: int, n: int, m: int, tf: bool, memory: bool) -> None:
    tables = make_tables(n, random_dag(seed, n), m, seed, coloc=3 if n >= 6 else 0)
    problem = DagProblem(tables, ("makespan", "energy"), memory=memory, tensor_per_device=tf)
    for name in READY_SET:
        r = run(problem, name)
        assert sorted(r.order.tolist()) == list(range(n))
        s = problem.schedule(problem.genome(r.devices, r.order), insertion=r.insertion)
        assert s.makespan == r.makespan >= problem.critical_path_bound()
        assert validate_schedule(problem, s.device, s.start, s.finish, s.release) == [], name


def test_seed_genomes_run_the_new_schedulers() -> None:
    problem = uniform_problem([(1, 2), (1, 2), (1, 2), (4, 7)], [])
    seeds = {bytes(g.tobytes()) for g in seed_genomes(problem)}
    for name in ("maxmin", "met"):  # two schedules no other heuristic here needs to find
        r = run(problem, name)
        assert problem.genome(r.devices, r.order).tobytes() in seeds
