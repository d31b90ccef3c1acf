"""The insertion search (per-device sorted free gaps) and the compiled list-scheduling kernel.

Oracles: a brute-force earliest-slot search over every candidate start, and a plain Python
list scheduler written here from the decoder's documented rules (module docstring of
:mod:`dse.mapping.dag.problem`), run on seeded random instances.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.mapping.dag.structure import Timeline


def _fits(busy: list[tuple[int, int]], c: int, length: int) -> bool:
    """A task on [c, c + length] meets no busy interval's open interior and contains no zero-length task
    strictly inside; a zero-length task only may not fall strictly inside a busy interval."""
    for s, e in busy:
        if length == 0:
            if s < c < e:
                return False
        elif s == e:
            if c < s < c + length:
                return False
        elif s < c + length and c < e:
            return False
    return True


def _earliest_brute(busy: list[tuple[int, int]], ready: int, length: int) -> int:
    """Earliest start: ``ready`` or some busy end after it (the only places a start can move to)."""
    for c in sorted({ready, *(e for _, e in busy if e >= ready)}):
        if _fits(busy, c, length):
            return c
    raise AssertionError("the last busy end always fits")


@pytest.mark.parametrize("seed", range(30))
def test_timeline_finds_the_earliest_slot(seed: int) -> None:
    rng = np.random.default_rng(seed)
    line, busy = Timeline(), []
    for _ in range(60):
        ready = int(rng.integers(0, 200))
        length = int(rng.choice([0, 0, 1, 3, 10, 25]))
        s = line.earliest(ready, length)
        assert s == _earliest_brute(busy, ready, length)
        line.insert(s, s + length)
        busy.append((s, s + length))
        assert line.tail == max(e for _, e in busy)


def test_contiguous_work_leaves_no_gap_to_scan() -> None:
    line = Timeline()
    for _ in range(1000):
        start = line.earliest(0, 5)
        line.insert(start, start + 5)
        assert len(line.gap_start) == 1  # only the open gap after the last task
    assert line.tail == 5000 and line.earliest(0, 1) == 5000


def _reference_decode(problem: DagProblem, x: np.ndarray, insertion: bool) -> int:
    """The decoder's rules, written out one task at a time with brute-force slot search."""
    t, n = problem.tables, problem.n_tasks
    dev, keys = x[:n], x[n:]
    preds: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for e, (u, v) in enumerate(t.edges.tolist()):
        preds[v].append((u, e))
    key = np.zeros(n, dtype=np.int64)
    for v in problem.structure.topo.tolist():  # precedence-consistent keys
        key[v] = max([int(keys[v])] + [int(key[u]) for u, _ in preds[v]])
    order = sorted(range(n), key=lambda v: (key[v], problem.structure.topo_pos[v]))
    remote = [sorted({int(dev[d]) for s, d in t.edges.tolist() if s == u and dev[d] != dev[u]}) for u in range(n)]
    finish, busy = {}, {d: [] for d in range(t.n_dev)}
    for v in order:
        d = int(dev[v])
        ready = 0
        for u, e in preds[v]:
            a = int(dev[u])
            delay = int(t.edge_transfer_time(e, a, d))
            if problem.tensor_per_device and a != d:
                delay += (remote[u].index(d) + 1) * int(t.send_time[a])
            ready = max(ready, finish[u] + delay)
        occupy = int(t.time[v, d]) + (len(remote[v]) * int(t.send_time[d]) if problem.tensor_per_device else 0)
        s = _earliest_brute(busy[d], ready, occupy) if insertion else max([ready] + [e for _, e in busy[d]])
        busy[d].append((s, s + occupy))
        finish[v] = s + int(t.time[v, d])
    return max(finish.values(), default=0)


@pytest.mark.parametrize("seed", range(25))
def test_compiled_decoders_follow_the_written_rules(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tables = random_tables(seed, n_ops=int(rng.integers(3, 14)), n_dev=int(rng.integers(2, 5)), max_preds=3)
    tables = dataclasses.replace(tables, time=np.where(rng.random(tables.time.shape) < 0.15, 0, tables.time),
                                 send_time=rng.integers(0, 6, size=tables.n_dev).astype(np.int64))
    for tf in (False, True):
        problem = DagProblem(tables, ("makespan",), memory=False, tensor_per_device=tf)
        X = problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(8, problem.n_genes)))
        vectorized = problem.evaluate(X).F[:, 0]
        for x, value in zip(X, vectorized, strict=True):
            assert value == _reference_decode(problem, x, insertion=False)
            assert problem.schedule(x, insertion=True).makespan == _reference_decode(problem, x, insertion=True)


def test_only_the_order_of_the_priority_keys_matters() -> None:
    # Scaling the priority genes by 1000 keeps their order, so every schedule is the same; the kernel then
    # sorts keys spread far wider than the task count (its comparison sort, not its counting sort). Shifting
    # them below zero keeps their order too.
    tables = random_tables(3, n_ops=40, n_dev=3, max_preds=3)
    problem = DagProblem(tables, ("makespan", "energy"), memory=False)
    X = problem.repair(np.random.default_rng(3).integers(problem.lower, problem.upper + 1, size=(10, problem.n_genes)))
    n = problem.n_tasks
    # keys beyond the genome's bounds (evaluate refuses them), so the decoder is called directly
    makespan = problem.schedule_population(X[:, :n], X[:, n:])[0]
    assert np.array_equal(makespan, problem.schedule_population(X[:, :n], X[:, n:] * 1000)[0])
    assert np.array_equal(makespan, problem.schedule_population(X[:, :n], X[:, n:] - 10 * n)[0])
    assert np.array_equal(makespan, problem.evaluate(X).F[:, 0])


@pytest.mark.parametrize("seed", range(10))
def test_numpy_send_rule_follows_the_written_rules(seed: int) -> None:
    """``DagStructure.send_delays`` (the numpy rule behind critical paths, heuristics and Gantt transfer bars)
    gives per edge the delay and per task the send time written out in :func:`_reference_decode`."""
    rng = np.random.default_rng(100 + seed)
    tables = random_tables(seed, n_ops=int(rng.integers(3, 14)), n_dev=int(rng.integers(2, 5)), max_preds=3)
    tables = dataclasses.replace(tables, send_time=rng.integers(0, 6, size=tables.n_dev).astype(np.int64))
    problem = DagProblem(tables, ("makespan",), memory=False, tensor_per_device=True)
    edges = tables.edges.tolist()
    for _ in range(8):
        dev = rng.integers(0, tables.n_dev, size=problem.n_tasks)
        remote = [sorted({int(dev[d]) for s, d in edges if s == u and dev[d] != dev[u]}) for u in range(problem.n_tasks)]
        delay, extra = problem.structure.send_delays(dev, tables, True)
        for e, (u, v) in enumerate(edges):
            a, b = int(dev[u]), int(dev[v])
            expected = int(tables.edge_transfer_time(e, a, b)) + ((remote[u].index(b) + 1) * int(tables.send_time[a])
                                                                  if a != b else 0)
            assert delay[e] == expected
        assert extra.tolist() == [len(remote[u]) * int(tables.send_time[dev[u]]) for u in range(problem.n_tasks)]
