"""The DAG structure every dag kernel reads: compressed rows of in- and out-edges, levels, per-level reductions.

Oracles: the edge list read one edge at a time (rows), longest paths by recursion (levels) and plain
Python loops over each row (reductions), on seeded random DAGs and one with a repeated edge; and the
memory HEFT takes on a wide fork-join, where rows padded to the largest degree would cost n^2.
"""

from __future__ import annotations

import dataclasses
import functools
import tracemalloc

import numpy as np
import pytest

from dse.cost import CostTables
from dse.cost.synthetic import random_tables
from dse.heuristics import run as run_heuristic
from dse.mapping.dag import DagProblem
from dse.mapping.dag.structure import DagStructure


def _with_repeated_edge(tables: CostTables) -> CostTables:
    """``tables`` with its first edge given twice (two tensors from one producer to one consumer)."""
    def again(array: np.ndarray) -> np.ndarray:
        return np.concatenate([array, array[:1]])

    return dataclasses.replace(tables, edges=again(tables.edges), edge_bytes=again(tables.edge_bytes),
                               edge_size=again(tables.edge_size), transfer_time=again(tables.transfer_time),
                               transfer_energy=again(tables.transfer_energy))


@pytest.mark.parametrize("seed", range(12))
def test_rows_levels_and_reductions_follow_the_edge_list(seed: int) -> None:
    tables = random_tables(seed, n_ops=int(np.random.default_rng(seed).integers(1, 30)), n_dev=2, max_preds=4)
    if seed % 3 == 0 and tables.n_edges:
        tables = _with_repeated_edge(tables)
    st = DagStructure.of(tables)
    n, edges = tables.n_ops, tables.edges.tolist()
    into = [[(u, e) for e, (u, w) in enumerate(edges) if w == v] for v in range(n)]
    out = [[(w, e) for e, (u, w) in enumerate(edges) if u == v] for v in range(n)]
    assert st.pred_ptr.tolist() == np.cumsum([0] + [len(r) for r in into]).tolist()
    assert st.succ_ptr.tolist() == np.cumsum([0] + [len(r) for r in out]).tolist()
    assert len(st.pred_task) == len(st.pred_edge) == len(st.succ_task) == len(st.succ_edge) == tables.n_edges
    assert [st.predecessors(v) for v in range(n)] == into
    assert [st.successors(v) for v in range(n)] == out
    assert st.adjacency() == (into, out)

    @functools.cache
    def depth(v: int) -> int:
        return max((depth(u) + 1 for u, _ in into[v]), default=0)

    @functools.cache
    def height(v: int) -> int:
        return max((height(w) + 1 for w, _ in out[v]), default=0)

    assert st.depth.tolist() == [depth(v) for v in range(n)]
    for levels, key in ((st.depth_levels, depth), (st.height_levels, height)):
        assert [level.tolist() for level in levels] == [
            [v for v in range(n) if key(v) == k] for k in range(max(map(key, range(n)), default=-1) + 1)]
    rng = np.random.default_rng(seed)
    for rows, adjacency in ((st.pred_levels, into), (st.succ_levels, out)):
        for level in rows:
            assert [list(zip(level.task[lo:hi].tolist(), level.edge[lo:hi].tolist(), strict=True))
                    for lo, hi in zip(level.ptr[:-1], level.ptr[1:], strict=True)] == [adjacency[v]
                                                                                        for v in level.tasks]
            values = rng.integers(-3, 4, size=len(level.task))
            cut = [values[lo:hi].tolist() for lo, hi in zip(level.ptr[:-1], level.ptr[1:], strict=True)]
            assert level.max(values, -2).tolist() == [max([-2, *row]) for row in cut]
            assert level.min(values, 2).tolist() == [min([2, *row]) for row in cut]
            assert level.first(values == 1).tolist() == [
                lo + row.index(1) if 1 in row else -1 for lo, row in zip(level.ptr[:-1].tolist(), cut, strict=True)]


def test_heft_on_a_wide_fork_join_takes_memory_linear_in_the_edges() -> None:
    """One source, 1,998 parallel tasks, one sink on 4 devices: rows padded to the largest degree (1,998)
    would hold 4 x 2,000 x 1,998 int64 (128 MB) before anything else; building the problem and running
    HEFT stays within 16 MiB of Python allocations (numpy's arrays included)."""
    n, m = 2000, 4
    rng = np.random.default_rng(0)
    edges = np.array([(0, i) for i in range(1, n - 1)] + [(i, n - 1) for i in range(1, n - 1)], dtype=np.int64)
    transfer = rng.integers(1, 40, size=(len(edges), m, m)).astype(np.int64)
    transfer[:, np.arange(m), np.arange(m)] = 0
    tables = CostTables(
        op_names=tuple(f"t{i}" for i in range(n)), device_names=tuple(f"d{d}" for d in range(m)),
        time=rng.integers(5, 100, size=(n, m)).astype(np.int64), energy=np.zeros((n, m), dtype=np.int64),
        mem=np.zeros((n, m), dtype=np.int64), allowed=np.ones((n, m), dtype=bool), edges=edges,
        edge_bytes=np.ones(len(edges), dtype=np.int64), transfer_time=transfer,
        transfer_energy=np.zeros_like(transfer), idle_power_mw=np.zeros(m, dtype=np.int64),
        mem_capacity=np.ones(m, dtype=np.int64), time_unit="tu", seconds_per_time_unit=1e-9)
    run_heuristic(DagProblem(random_tables(0, n_ops=6, n_dev=m), ("makespan",), memory=False, insertion=True),
                  "heft")  # the compiled kernels are loaded before the count starts
    tracemalloc.start()
    try:
        result = run_heuristic(DagProblem(tables, ("makespan",), memory=False, insertion=True), "heft")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sorted(result.order.tolist()) == list(range(n))
    assert peak < 16 * 2**20
