"""Genomes of front points: an int64-backed sequence that behaves as the tuple of its ints; and the dag
family's memory of genomes it just decoded, which must never change what an evaluation returns."""

from __future__ import annotations

import json
import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.util.genome import Genome


@given(st.lists(st.integers(-(2**62), 2**62), max_size=30))
def test_genome_is_the_tuple_of_its_ints(values: list[int]) -> None:
    g = Genome(np.array(values, dtype=np.int64))
    t = tuple(values)
    assert g == t and t == g and hash(g) == hash(t)
    assert len(g) == len(t) and list(g) == values and all(type(v) is int for v in g)
    assert {g: 1}[t] == 1 and t in {g}
    assert g[:3] == t[:3] and (len(t) == 0 or (g[0] == t[0] and g[-1] == t[-1]))
    assert np.array_equal(np.asarray(g), np.array(values, dtype=np.int64))
    assert pickle.loads(pickle.dumps(g)) == g
    assert json.loads(json.dumps(list(g))) == values
    assert g != (*t, 0) and g != list(t)  # a list is not a tuple, as with tuples themselves


def test_genome_copies_and_is_read_only() -> None:
    source = np.arange(5, dtype=np.int64)
    g = Genome(source)
    source[0] = 99
    assert g[0] == 0
    view = np.asarray(g)
    assert not view.flags.writeable
    copy = np.array(g)
    copy[0] = 7  # np.array copies: writable
    assert g[0] == 0


def test_points_carry_genomes_equal_to_their_rows() -> None:
    problem = DagProblem(random_tables(4, 12, 3), ("makespan", "energy"))
    front = dse.solve(problem, "nsga2", time_limit=2, seed=0, progress=False)
    for p in front.points:
        assert isinstance(p.genome, Genome)
        assert p.internal == tuple(problem.evaluate(np.asarray(p.genome)).F[0])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.booleans())
def test_a_decoded_genome_evaluates_as_if_it_were_not_remembered(seed: int, insertion: bool, tf: bool) -> None:
    """The makespans :meth:`DagProblem.schedule` remembers are those a fresh decode gives (independent
    source: a second problem over the same tables that never decoded these genomes)."""
    tables = random_tables(seed, 10, 3)
    warm = DagProblem(tables, ("makespan", "energy"), insertion=insertion, tensor_per_device=tf)
    fresh = DagProblem(tables, ("makespan", "energy"), insertion=insertion, tensor_per_device=tf)
    rng = np.random.default_rng(seed)
    X = warm.repair(rng.integers(warm.lower, warm.upper + 1, size=(6, warm.n_genes)))
    for x in X[:4]:
        warm.schedule(x)  # remembered
    warm.schedule(X[0], insertion=not insertion)  # remembered under the other decoder: must not be used
    assert np.array_equal(warm.evaluate(X).F, fresh.evaluate(X).F)
    assert np.array_equal(warm.evaluate(X[:2]).F, fresh.evaluate(X[:2]).F)
