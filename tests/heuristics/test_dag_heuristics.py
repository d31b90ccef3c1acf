"""Classic heuristics on the dag family, the independent schedule validator, and decoder agreement.

* Topcuoglu et al. 2002's example: HEFT 80 and CPOP 86, as published;
* every heuristic on small and random graphs: valid schedule, makespan equal to its
  genome's decoded makespan, never below the critical-path bound;
* the validator rejects hand-broken schedules;
* the vectorized and one-genome decoders agree, and their schedules are valid.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np
import pytest

import dse
from dse.cost import CostTables
from dse.heuristics import (
    LIST_SCHEDULERS,
    PARTITIONERS,
    SCHEDULERS,
    SeedHeuristicWarning,
    genome_of,
    names,
    run,
    seed_genomes,
)
from dse.heuristics.base import graph_of
from dse.heuristics.cpop import cpop_plan, critical_path
from dse.heuristics.heft import heft_plan
from dse.heuristics.peft import peft_plan
from dse.heuristics.schedulers import simulate
from dse.mapping.dag import DagProblem
from dse.mapping.dag.validate import validate_schedule
from tests.conftest import random_tables

ALL = names()


def _zeros(*shape: int) -> np.ndarray:
    return np.zeros(shape, dtype=np.int64)


def make_tables(n: int, edges: list[tuple[int, int]], m: int, seed: int, *, disallow: float = 0.2,
                coloc: int = 3, capacity: str = "loose") -> CostTables:
    """Heterogeneous random costs on a given DAG, some disallowed pairs, one colocation group."""
    rng = np.random.default_rng(seed)
    E = len(edges)
    allowed = rng.random((n, m)) >= disallow
    allowed[np.arange(n), rng.integers(0, m, n)] = True
    colocation: list[str | None] = [None] * n
    if coloc and n >= coloc:
        group = rng.choice(n, size=coloc, replace=False)
        allowed[group, rng.integers(0, m)] = True  # the group has a common device
        for i in group:
            colocation[i] = "grp"
    tt = rng.integers(0, 30, size=(E, m, m)).astype(np.int64)
    tt[:, np.arange(m), np.arange(m)] = 0
    mem = rng.integers(1, 20, size=(n, m)).astype(np.int64)
    cap = np.full(m, int(mem.max(axis=1).sum()), dtype=np.int64)
    return CostTables(
        op_names=tuple(f"t{i}" for i in range(n)),
        device_names=tuple(f"d{j}" for j in range(m)),
        time=rng.integers(1, 50, size=(n, m)).astype(np.int64),
        energy=rng.integers(0, 100, size=(n, m)).astype(np.int64),
        mem=mem,
        allowed=allowed,
        edges=np.array(edges, dtype=np.int64).reshape(-1, 2),
        edge_bytes=rng.integers(0, 100, size=E).astype(np.int64),
        transfer_time=tt,
        transfer_energy=_zeros(E, m, m),
        idle_power_mw=_zeros(m),
        mem_capacity=cap,
        send_time=rng.integers(0, 5, size=m).astype(np.int64),
        colocation=tuple(colocation),
    )


def random_dag(seed: int, n: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(1000 + seed)
    edges = []
    for v in range(1, n):
        for u in rng.choice(v, size=int(rng.integers(0, min(3, v) + 1)), replace=False):
            edges.append((int(u), v))
    return edges


GRAPHS = {
    "chain": (6, [(i, i + 1) for i in range(5)]),
    "fork": (6, [(0, i) for i in range(1, 6)]),
    "join": (6, [(i, 5) for i in range(5)]),
    "diamond": (4, [(0, 1), (0, 2), (1, 3), (2, 3)]),
    "random0": (12, random_dag(0, 12)),
    "random1": (20, random_dag(1, 20)),
    "random2": (30, random_dag(2, 30)),
}


def problems(graph: str) -> list[DagProblem]:
    n, edges = GRAPHS[graph]
    seed = zlib.crc32(graph.encode())
    out = []
    for tf in (False, True):
        t = make_tables(n, edges, 3, seed + tf)
        out.append(DagProblem(t, ("makespan", "energy"), memory=True, tensor_per_device=tf))
    return out


def decoded(problem: DagProblem, devices: np.ndarray, order: np.ndarray, insertion: bool):
    return problem.schedule(problem.genome(devices, order), insertion=insertion)


def assert_valid(problem: DagProblem, sched) -> None:
    errors = validate_schedule(problem, sched.device, sched.start, sched.finish, sched.release)
    assert errors == [], errors


# --------------------------------------------------------------------------- Topcuoglu 2002


@pytest.fixture
def topcuoglu() -> DagProblem:
    W = [(14, 16, 9), (13, 19, 18), (11, 13, 19), (13, 8, 17), (12, 13, 10),
         (13, 16, 9), (7, 15, 11), (5, 11, 14), (18, 12, 20), (21, 7, 16)]
    C = [(1, 2, 18), (1, 3, 12), (1, 4, 9), (1, 5, 11), (1, 6, 14), (2, 8, 19), (2, 9, 16), (3, 7, 23),
         (4, 8, 27), (4, 9, 23), (5, 9, 13), (6, 8, 15), (7, 10, 17), (8, 10, 11), (9, 10, 13)]
    n, m, E = 10, 3, len(C)
    tt = np.zeros((E, m, m), dtype=np.int64)
    for k, (_, _, c) in enumerate(C):
        tt[k] = c
        tt[k, np.arange(m), np.arange(m)] = 0
    tables = CostTables(
        op_names=tuple(f"n{i + 1}" for i in range(n)), device_names=("P1", "P2", "P3"),
        time=np.array(W, dtype=np.int64), energy=_zeros(n, m), mem=_zeros(n, m),
        allowed=np.ones((n, m), dtype=bool), edges=np.array([(a - 1, b - 1) for a, b, _ in C], dtype=np.int64),
        edge_bytes=_zeros(E), transfer_time=tt, transfer_energy=_zeros(E, m, m), idle_power_mw=_zeros(m),
        mem_capacity=_zeros(m))
    return DagProblem(tables, ("makespan",), memory=False, insertion=True)


def test_topcuoglu_ranks(topcuoglu: DagProblem) -> None:
    g = graph_of(topcuoglu)
    rank = g.upward_rank() / g.S
    np.testing.assert_allclose(rank, [108, 77, 80, 80, 69, 63 + 1 / 3, 42 + 2 / 3, 35 + 2 / 3, 44 + 1 / 3, 14 + 2 / 3])
    assert g.upward_rank()[2] == g.upward_rank()[3]  # the published tie n3 = n4 = 80 is exact


def test_topcuoglu_heft_80(topcuoglu: DagProblem) -> None:
    r = run(topcuoglu, "heft")
    assert r.makespan == 80 and r.insertion
    # published schedule (Fig. 2 of the paper): order n1 n3 n4 n2 n5 n6 n9 n7 n8 n10 and
    # n1,n3,n5,n7 on P3; n4,n6,n9,n10 on P2; n2,n8 on P1
    assert (r.order + 1).tolist() == [1, 3, 4, 2, 5, 6, 9, 7, 8, 10]
    assert r.devices.tolist() == [2, 0, 2, 1, 2, 1, 2, 0, 1, 1]
    s = decoded(topcuoglu, r.devices, r.order, True)
    assert s.start.tolist() == [0, 27, 9, 18, 28, 26, 38, 57, 56, 73]
    _, _, start, finish = heft_plan(topcuoglu)  # HEFT's own timing equals the decoded one
    assert start.tolist() == s.start.tolist() and finish.max() == 80


def test_topcuoglu_cpop_86(topcuoglu: DagProblem) -> None:
    r = run(topcuoglu, "cpop")
    assert r.makespan == 86 and r.insertion
    _, path = critical_path(graph_of(topcuoglu))
    assert (path + 1).tolist() == [1, 2, 9, 10]
    assert set(r.devices[path].tolist()) == {1}  # the critical path on P2 (cost 54)
    assert cpop_plan(topcuoglu)[3].max() == 86


def test_topcuoglu_every_heuristic_valid(topcuoglu: DagProblem) -> None:
    for name in ALL:
        r = run(topcuoglu, name)
        s = decoded(topcuoglu, r.devices, r.order, r.insertion)
        assert s.makespan == r.makespan >= topcuoglu.critical_path_bound()
        assert_valid(topcuoglu, s)


# --------------------------------------------------------------------------- every heuristic


@pytest.mark.parametrize("graph", list(GRAPHS))
@pytest.mark.parametrize("name", ALL)
def test_heuristic_contract(name: str, graph: str) -> None:
    for problem in problems(graph):
        t = problem.tables
        r = run(problem, name)
        n = problem.n_tasks
        assert r.name == name and r.devices.dtype == np.int64
        assert sorted(r.order.tolist()) == list(range(n))
        assert t.allowed[np.arange(n), r.devices].all()
        group = [i for i, g in enumerate(t.colocation) if g is not None]
        assert len(set(r.devices[group].tolist())) == 1
        s = decoded(problem, r.devices, r.order, r.insertion)
        assert s.makespan == r.makespan
        assert_valid(problem, s)
        assert r.makespan >= problem.critical_path_bound()
        if "+" in name:  # the device-queue simulation is what the decoder reproduces
            sim = simulate(problem, r.devices, name.split("+")[1])
            assert sim[4] == r.makespan and sim[1].tolist() == s.start.tolist()


@pytest.mark.parametrize("graph", ["diamond", "random1", "random2"])
def test_list_schedulers_own_timing_is_the_decoded_one(graph: str) -> None:
    """In per-edge mode HEFT / CPOP / PEFT's own insertion timing is exactly what the decoder gives."""
    problem = problems(graph)[0]
    for name, plan in (("heft", heft_plan), ("cpop", cpop_plan), ("peft", peft_plan)):
        _, order, start, _ = plan(problem)
        r = run(problem, name)
        assert r.order.tolist() == order.tolist()
        assert decoded(problem, r.devices, r.order, True).start.tolist() == start.tolist()


@pytest.mark.parametrize("graph", ["random1", "random2"])
@pytest.mark.parametrize("insertion", [False, True])
def test_genome_of_reproduces_under_the_problem_decoder(graph: str, insertion: bool) -> None:
    for base in problems(graph):
        problem = DagProblem(base.tables, ("makespan",), memory=False, insertion=insertion,
                             tensor_per_device=base.tensor_per_device)
        for name in ALL:
            r = run(problem, name)
            assert problem.schedule(genome_of(problem, r)).makespan == r.makespan, name


def test_memory_capacity_is_respected() -> None:
    """Device 0 is much faster, but holds only half the tasks: no heuristic may overflow it."""
    n, m = 6, 2
    E = n - 1
    tables = CostTables(
        op_names=tuple(f"t{i}" for i in range(n)), device_names=("fast", "slow"),
        time=np.tile(np.array([[1, 20]], dtype=np.int64), (n, 1)), energy=_zeros(n, m),
        mem=np.full((n, m), 10, dtype=np.int64), allowed=np.ones((n, m), dtype=bool),
        edges=np.array([(i, i + 1) for i in range(E)], dtype=np.int64), edge_bytes=_zeros(E),
        transfer_time=_zeros(E, m, m), transfer_energy=_zeros(E, m, m), idle_power_mw=_zeros(m),
        mem_capacity=np.array([30, 30], dtype=np.int64))
    problem = DagProblem(tables, ("makespan",), memory=True)
    for name in ALL:
        r = run(problem, name)
        assert_valid(problem, decoded(problem, r.devices, r.order, r.insertion))


def test_run_rejects_unknown_names_and_lists_valid_ones() -> None:
    problem = problems("diamond")[0]
    with pytest.raises(ValueError, match="heft.*cp\\+pct"):
        run(problem, "nope")
    with pytest.raises(ValueError):
        run(problem, "cp+nope")
    assert len(ALL) == len(LIST_SCHEDULERS) + len(PARTITIONERS) * len(SCHEDULERS)


def test_hash_is_a_stable_name_hash() -> None:
    t = make_tables(8, random_dag(5, 8), 3, 5, disallow=0.0, coloc=0)
    problem = DagProblem(t, ("makespan",), memory=False)
    devices = PARTITIONERS["hash"](problem)
    assert devices.tolist() == [zlib.crc32(name.encode()) % 3 for name in t.op_names]


def test_seed_genomes_and_solve_heuristic() -> None:
    base = problems("random2")[0]
    problem = DagProblem(base.tables, ("makespan", "energy"), memory=False)
    seeds = seed_genomes(problem)
    assert 3 <= len(seeds) <= len(ALL)
    assert all(s.shape == (problem.n_genes,) for s in seeds)
    with pytest.warns(SeedHeuristicWarning, match="heuristic 'bogus' failed .*ValueError: unknown heuristic"):
        assert len(seed_genomes(problem, ["heft", "bogus"])) == 1
    for name in ("heft", "cp+pct"):
        front = dse.solve(problem, f"heuristic:{name}")
        assert len(front.points) == 1 and front.solver == f"heuristic:{name}"
        assert front.points[0].internal[0] == run(problem, name).makespan


# --------------------------------------------------------------------------- validator


@pytest.fixture
def diamond() -> DagProblem:
    """0 -> {1, 2} -> 3 on two devices; every time 10, every transfer 5, sends 3 (tensor mode)."""
    n, m = 4, 2
    edges = [(0, 1), (0, 2), (1, 3), (2, 3)]
    tt = np.full((4, m, m), 5, dtype=np.int64)
    tt[:, np.arange(m), np.arange(m)] = 0
    tables = CostTables(
        op_names=("a", "b", "c", "d"), device_names=("x", "y"), time=np.full((n, m), 10, dtype=np.int64),
        energy=_zeros(n, m), mem=np.full((n, m), 4, dtype=np.int64), allowed=np.ones((n, m), dtype=bool),
        edges=np.array(edges, dtype=np.int64), edge_bytes=_zeros(4), transfer_time=tt,
        transfer_energy=_zeros(4, m, m), idle_power_mw=_zeros(m), mem_capacity=np.array([16, 16], dtype=np.int64),
        send_time=np.array([3, 3], dtype=np.int64))
    return DagProblem(tables, ("makespan",), memory=True)


def rules(errors: list[str]) -> set[str]:
    return {e.split(":")[0] for e in errors}


def test_validator_accepts_a_hand_made_valid_schedule(diamond: DagProblem) -> None:
    dev = np.array([0, 0, 1, 0])
    start = np.array([0, 10, 15, 25])  # c waits for the transfer (10 + 5); d for c's result (25 + 5 = 30)
    finish = start + 10
    assert rules(validate_schedule(diamond, dev, start, finish)) == {"precedence"}
    start = np.array([0, 10, 15, 30])
    assert validate_schedule(diamond, dev, start, start + 10) == []


def test_validator_catches_overlap(diamond: DagProblem) -> None:
    dev = np.array([0, 0, 0, 1])
    start = np.array([0, 10, 15, 40])  # b [10, 20) and c [15, 25) on x
    errors = validate_schedule(diamond, dev, start, start + 10)
    assert rules(errors) == {"overlap"} and "b" in errors[0] and "c" in errors[0]


def test_validator_catches_precedence_violation(diamond: DagProblem) -> None:
    dev = np.array([0, 0, 0, 0])
    start = np.array([0, 5, 20, 30])  # b starts before a finishes, on the same device
    assert rules(validate_schedule(diamond, dev, start, start + 10)) == {"precedence", "overlap"}


def test_validator_catches_missing_transfer_delay(diamond: DagProblem) -> None:
    dev = np.array([0, 1, 0, 0])
    start = np.array([0, 10, 10, 24])  # b on y starts at a's finish: the transfer (5) is missing
    errors = validate_schedule(diamond, dev, start, start + 10)
    assert len(errors) == 2 and rules(errors) == {"precedence"}  # a -> b and b -> d
    assert "transfer 5" in errors[0]
    start = np.array([0, 15, 10, 30])
    assert validate_schedule(diamond, dev, start, start + 10) == []


def test_validator_tensor_mode_sends(diamond: DagProblem) -> None:
    tf = DagProblem(diamond.tables, ("makespan",), memory=True, tensor_per_device=True)
    dev = np.array([0, 1, 1, 0])
    start = np.array([0, 15, 28, 48])  # a sends once to y (3) -> arrives 10 + 3 + 5 = 18
    errors = validate_schedule(tf, dev, start, start + 10)
    assert rules(errors) == {"precedence"} and "1 send(s) of 3" in errors[0]
    # b's send to x keeps y busy until 31; c's tensor reaches x at 41 + 3 + 5 = 49
    start = np.array([0, 18, 31, 49])
    assert validate_schedule(tf, dev, start, start + 10) == []
    start_early = np.array([0, 18, 28, 49])
    assert rules(validate_schedule(tf, dev, start_early, start_early + 10)) == {"overlap"}  # b still sending
    release = start + 10
    assert rules(validate_schedule(tf, dev, start, start + 10, release)) == {"release"}  # sends missing
    release = release + np.array([3, 3, 3, 0])
    assert validate_schedule(tf, dev, start, start + 10, release) == []


def test_validator_catches_memory_overflow(diamond: DagProblem) -> None:
    dev = np.array([0, 0, 0, 0])
    start = np.array([0, 10, 20, 30])
    small = dataclasses.replace(diamond.tables, mem_capacity=np.array([15, 15], dtype=np.int64))
    errors = validate_schedule(DagProblem(small, ("makespan",), memory=True), dev, start, start + 10)
    assert rules(errors) == {"memory"} and "16 > capacity 15" in errors[0]
    assert validate_schedule(diamond, dev, start, start + 10) == []


def test_validator_catches_duration_device_and_colocation(diamond: DagProblem) -> None:
    t = dataclasses.replace(diamond.tables, allowed=np.array([[1, 1], [1, 0], [1, 1], [1, 1]], dtype=bool),
                            colocation=("g", None, None, "g"))
    problem = DagProblem(t, ("makespan",), memory=False)
    dev = np.array([0, 1, 0, 1])
    start = np.array([0, 15, 10, 30])
    finish = start + 10
    finish[2] += 1
    errors = validate_schedule(problem, dev, start, finish)
    assert rules(errors) == {"allowed", "duration", "colocation"}


# --------------------------------------------------------------------------- decoders agree


def _agreement_problem(seed: int, tf: bool, send0: int | None) -> DagProblem:
    t = random_tables(seed, n_ops=12, n_dev=3, disallow=0.2, max_preds=3)
    send = np.random.default_rng(seed).integers(0, 5, size=3).astype(np.int64)
    if send0 is not None:
        send[0] = send0
    return DagProblem(dataclasses.replace(t, send_time=send), ("makespan", "energy"), memory=False,
                      tensor_per_device=tf)


@pytest.mark.parametrize("tf", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_decoders_agree_and_schedules_are_valid(seed: int, tf: bool) -> None:
    problem = _agreement_problem(seed, tf, send0=None)
    rng = np.random.default_rng(seed)
    n, m = problem.n_tasks, problem.tables.n_dev
    X = problem.repair(np.column_stack([rng.integers(0, m, (40, n)), rng.integers(0, n, (40, n))]))
    F = problem.evaluate(X).F
    for x, f in zip(X, F, strict=True):
        s = problem.schedule(x, insertion=False)
        assert s.makespan == f[0]
        assert_valid(problem, s)
        assert_valid(problem, problem.schedule(x, insertion=True))


def test_vectorized_decoder_ignores_padding_predecessors() -> None:
    # regression: the padding predecessor (task n, device 0) once counted as a remote producer
    n, m = 2, 2
    tables = CostTables(
        op_names=("a", "b"), device_names=("x", "y"), time=np.full((n, m), 10, dtype=np.int64),
        energy=_zeros(n, m), mem=_zeros(n, m), allowed=np.ones((n, m), dtype=bool),
        edges=np.array([(0, 1)], dtype=np.int64), edge_bytes=_zeros(1), transfer_time=_zeros(1, m, m),
        transfer_energy=_zeros(1, m, m), idle_power_mw=_zeros(m), mem_capacity=_zeros(m),
        send_time=np.array([5, 0], dtype=np.int64))
    problem = DagProblem(tables, ("makespan",), memory=False, tensor_per_device=True)
    x = problem.genome([1, 1])  # both on y: no transfer at all, makespan 20
    assert problem.schedule(x, insertion=False).makespan == 20
    assert problem.evaluate(x[None, :]).F[0, 0] == 20
