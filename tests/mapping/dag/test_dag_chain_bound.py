"""The chain-of-blocks makespan lower bound (:mod:`dse.mapping.dag.chain_bound`): a block cost equals
the brute-force optimum of the block alone on two devices and never exceeds it with pool devices; the
bound is exact on one hand-computed example, never above the brute-force optimum (random DAGs, the TF
send rule, colocation), equal to it on diamonds that form one block, and above the destructive bound
on some of them."""

from __future__ import annotations

import numpy as np
import pytest

from dse.cost import CostTables
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.mapping.dag.bounds import communication_bound, destructive_bound
from dse.mapping.dag.chain_bound import (
    Block,
    BlockModel,
    block_costs,
    chain_blocks,
    chain_bound,
    critical_chain,
)
from tests.mapping.dag.test_dag_cpsat import brute_force
from tests.mapping.dag.test_dag_lower_bound import SEEDS, random_problem


def tables_of(time: np.ndarray, edges: list[tuple[int, int]], transfer: np.ndarray,
              send: np.ndarray | None = None) -> CostTables:
    """Tables with explicit times and transfer times, nothing else costed."""
    n, m = time.shape
    return CostTables(
        op_names=tuple(f"t{i}" for i in range(n)), device_names=tuple(f"d{d}" for d in range(m)),
        time=time.astype(np.int64), energy=np.zeros((n, m), dtype=np.int64), mem=np.zeros((n, m), dtype=np.int64),
        allowed=np.ones((n, m), dtype=bool), edges=np.array(edges, dtype=np.int64).reshape(-1, 2),
        edge_bytes=np.ones(len(edges), dtype=np.int64), transfer_time=transfer.astype(np.int64),
        transfer_energy=np.zeros_like(transfer, dtype=np.int64), idle_power_mw=np.zeros(m, dtype=np.int64),
        mem_capacity=np.ones(m, dtype=np.int64), send_time=send, time_unit="tu", seconds_per_time_unit=1e-9)


TWO_BRANCHES = [(0, 1), (1, 2), (2, 5), (0, 3), (3, 4), (4, 5)]  # s -> a1 -> a2 -> t, s -> b1 -> b2 -> t


def test_two_branches_by_hand() -> None:
    """Six tasks of 10 on two devices, every transfer 15. By hand: all on one device takes 60; the best
    puts b1 and b2 on the second device (b1 starts at 10 + 15, b2 ends at 45) with t there, a2's tensor
    arriving at 30 + 15 = 45: t ends at 55. No schedule is shorter: if a branch stays with s, the other
    must move (else 60), it starts no earlier than 25 and ends at 45, and t then waits for one transfer
    (45 + 10) or runs after both branches on s's device (60). The communication bound sees only t's
    producers (50); the chain bound, one block holding both branches, finds the 55."""
    m = 2
    transfer = np.full((6, m, m), 15) * (1 - np.eye(m, dtype=np.int64))
    problem = DagProblem(tables_of(np.full((6, m), 10), TWO_BRANCHES, transfer), ("makespan",), memory=False)
    assert chain_blocks(problem) == (Block(0, 5, (1, 2, 3, 4)),)
    assert communication_bound(problem) == 50
    assert chain_bound(problem, upper=60) == 55
    _, F = brute_force(problem)
    assert F[:, 0].min() == 55


def block_subproblem(problem: DagProblem, block: Block, a: int, b: int) -> DagProblem:
    """The block alone, the entry taking no time on ``a``, the exit on ``b``: its optimal makespan is the
    least time from the entry's finish to the exit's finish."""
    t = problem.tables
    tasks = [block.entry, *block.inner, block.exit]
    where = {v: i for i, v in enumerate(tasks)}
    keep = [k for k, (u, v) in enumerate(t.edges.tolist()) if u in where and v in where]
    time = t.time[tasks].copy()
    time[0] = 0
    allowed = t.allowed[tasks].copy()
    allowed[0] = np.arange(t.n_dev) == a
    allowed[-1] &= np.arange(t.n_dev) == b
    sub = tables_of(time, [(where[int(u)], where[int(v)]) for u, v in t.edges[keep]], t.transfer_time[keep],
                    t.send_time).replaced(allowed=allowed)
    return DagProblem(sub, ("makespan",), memory=False, tensor_per_device=problem.tensor_per_device)


def random_block_problem(seed: int, m: int) -> DagProblem:
    """Five tasks, the first an ancestor and the last a descendant of all; odd seeds under the TF rule."""
    rng = np.random.default_rng(seed)
    edges = {(0, 1), (0, 2), (1, 4), (2, 4), (3, 4)} | {(0, 3)} | ({(1, 3)} if seed % 3 else {(2, 3)})
    n = 5
    transfer = rng.integers(0, 40, size=(len(edges), m, m)) * (1 - np.eye(m, dtype=np.int64))
    send = rng.integers(0, 10, size=m) if seed % 2 else None
    tables = tables_of(rng.integers(1, 40, size=(n, m)), sorted(edges), transfer, send)
    return DagProblem(tables, ("makespan",), memory=False, tensor_per_device=send is not None)


@pytest.mark.parametrize("seed", range(12))
def test_block_cost_against_brute_force(seed: int) -> None:
    """Two devices: every device is taken exactly, so the cost is the block's optimum; four: pool devices
    stand for the others, and the cost never exceeds the optimum."""
    for m in (2, 4):
        problem = random_block_problem(seed, m)
        block = Block(0, 4, (1, 2, 3))
        model = BlockModel.of(problem, block, problem.tables.time)
        pairs = [(a, b) for a in range(m) for b in range(m)][:: 1 if m == 2 else 5]
        cost = block_costs(problem, model, np.array([a for a, _ in pairs]), np.array([b for _, b in pairs]))
        for (a, b), c in zip(pairs, cost.tolist(), strict=True):
            _, F = brute_force(block_subproblem(problem, block, a, b))
            best = int(F[:, 0].min())
            assert c == best if m == 2 else c <= best, (m, a, b, c, best)


def diamond(seed: int, edges: list[tuple[int, int]]) -> DagProblem:
    """Random times and transfers on a diamond of two branches (one block), two or three devices; odd
    seeds under the TF rule."""
    rng = np.random.default_rng(seed)
    n = max(max(e) for e in edges) + 1
    m = 2 if n > 5 else int(rng.integers(2, 4))
    transfer = rng.integers(5, 40, size=(len(edges), m, m)) * (1 - np.eye(m, dtype=np.int64))
    send = rng.integers(0, 10, size=m) if seed % 2 else None
    tables = tables_of(rng.integers(5, 40, size=(n, m)), edges, transfer, send)
    return DagProblem(tables, ("makespan",), memory=False, tensor_per_device=send is not None)


@pytest.mark.parametrize("edges", [[(0, 1), (1, 2), (2, 4), (0, 3), (3, 4)], TWO_BRANCHES], ids=["deep", "twin"])
def test_exact_on_diamonds(edges: list[tuple[int, int]]) -> None:
    """A diamond is one block, whose cost is exact on two or three devices: the bound is the brute-force
    optimum, above the destructive bound on some instances."""
    lifted = 0
    for seed in range(16):
        problem = diamond(seed, edges)
        _, F = brute_force(problem)
        best = int(F[:, 0].min())
        assert chain_bound(problem, upper=best) == best
        lifted += best > destructive_bound(problem, upper=best)
    assert lifted >= 3, lifted


@pytest.fixture(scope="module")
def optima() -> dict[int, int]:
    """Per seed of :func:`tests.mapping.dag.test_dag_lower_bound.random_problem` the optimal makespan by brute force."""
    return {seed: int(brute_force(random_problem(seed))[1][:, 0].min()) for seed in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_never_above_the_optimum(seed: int, optima: dict[int, int]) -> None:
    """Random DAGs, odd seeds under the TF rule, every third with a colocated pair; also from no bound."""
    problem = random_problem(seed)
    best = optima[seed]
    assert communication_bound(problem) <= chain_bound(problem, upper=best) <= best
    assert chain_bound(problem, upper=best, known=0) <= best
    assert chain_bound(problem) <= best  # without a known schedule: up to every task at its fastest in sequence


def test_chains_with_side_tasks_and_colocation() -> None:
    """A chain 0 -> ... -> 5 with random extra edges (side tasks between chain tasks), TF sends on odd
    seeds, the second and fifth task colocated on every third seed: never above brute force."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        base = random_tables(seed, n_ops=6, n_dev=2, disallow=0.1, max_preds=2)
        edges = sorted({tuple(e) for e in base.edges.tolist()} | {(i, i + 1) for i in range(5)})
        transfer = rng.integers(0, 60, size=(len(edges), 2, 2)) * (1 - np.eye(2, dtype=np.int64))
        tables = tables_of(base.time, edges, transfer, rng.integers(0, 20, size=2) if seed % 2 else None)
        tables = tables.replaced(allowed=base.allowed,
                                 colocation=(None, "g", None, None, "g", None) if seed % 3 == 0 else ())
        problem = DagProblem(tables, ("makespan",), memory=False, tensor_per_device=bool(seed % 2))
        X, F = brute_force(problem)
        if not len(F):
            continue
        assert chain_bound(problem, upper=int(F[:, 0].min()), known=0) <= F[:, 0].min()


def test_blocks_and_chain() -> None:
    """The critical chain follows the fastest times; blocks tile it; a chain off the DAG's edges is refused."""
    time = np.array([[10, 50], [50, 10], [10, 10], [10, 10]])
    transfer = np.zeros((3, 2, 2), dtype=np.int64)
    problem = DagProblem(tables_of(time, [(0, 1), (1, 3), (0, 2)], transfer), ("makespan",), memory=False)
    assert critical_chain(problem).tolist() == [0, 1, 3]
    assert chain_blocks(problem) == (Block(0, 1, ()), Block(1, 3, ()))
    with pytest.raises(ValueError, match="follow edges"):
        chain_blocks(problem, chain=np.array([0, 3]))


def test_time_limit_returns_what_is_proven() -> None:
    """No time at all: the bound it started from, never more."""
    problem = diamond(1, TWO_BRANCHES)
    assert chain_bound(problem, upper=10_000, time_limit=0.0) == communication_bound(problem)
    assert chain_bound(problem, upper=10_000, time_limit=0.0, known=7) == 7

