"""The family contract, checked for every registered family on the small seeded instances it provides.

A new family gets these checks by registering (``dse.mapping.registry``):

* CP-SAT's points re-evaluated by the vectorized evaluator give CP-SAT's values and are feasible;
* exhaustive search and CP-SAT give the same front, point for point (exact families);
* ``repair`` lands in bounds and is idempotent;
* ``decode`` agrees with ``evaluate`` (objective quantities and constraint slack);
* ``decode``, ``evaluate``, ``assignment`` and ``describe`` refuse a genome of the wrong length or with a
  gene out of bounds with a :class:`GenomeError` naming the gene (never an index error, a crash, or a
  silently wrapped index); ``repair`` one of the wrong length;
* every declared metric and objective appears as a column of ``front.csv``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dse
from dse.errors import GenomeError
from dse.mapping.registry import families
from dse.runs.runner import write_fronts

FAMILIES = sorted(families())
EXACT = [name for name in FAMILIES if families()[name].exact]
SEEDS = range(10)


def example(name: str, seed: int):
    return families()[name].examples(seed)


def test_every_builtin_family_is_registered() -> None:
    assert {"pipeline", "dag"} <= set(FAMILIES)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", EXACT)
def test_exhaustive_equals_cpsat_and_evaluator_agrees(name: str, seed: int) -> None:
    problem = example(name, seed)
    brute = dse.solve(problem, "exhaustive")
    exact = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    assert brute.status in ("optimal", "infeasible")
    assert exact.status == brute.status
    assert sorted(map(tuple, exact.internal().tolist())) == sorted(map(tuple, brute.internal().tolist()))
    if len(exact):
        assert all(p.proven for p in exact.points)
        ev = problem.evaluate(np.array([p.genome for p in exact.points]))
        assert ev.feasible.all()
        np.testing.assert_array_equal(ev.F, exact.internal())


@pytest.mark.parametrize("name", FAMILIES)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 50), data=st.data())
def test_repair_is_idempotent_and_in_bounds(name: str, seed: int, data: st.DataObject) -> None:
    problem = example(name, seed)
    width = problem.n_genes
    rows = data.draw(st.lists(st.lists(st.integers(-5, 20), min_size=width, max_size=width), min_size=1, max_size=6))
    X = np.array(rows, dtype=np.int64)
    R = problem.repair(X)
    assert R.shape == X.shape
    assert (R >= problem.lower).all() and (R <= problem.upper).all()
    np.testing.assert_array_equal(problem.repair(R), R)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", FAMILIES)
def test_decode_agrees_with_evaluate(name: str, seed: int) -> None:
    problem = example(name, seed)
    rng = np.random.default_rng(seed)
    X = problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(12, problem.n_genes)))
    ev = problem.evaluate(X)
    for k, x in enumerate(X):
        decoded = problem.decode(x)
        values = decoded.values()
        assert [values[o.internal_name] for o in problem.objectives] == ev.F[k].tolist()
        assert decoded.constraint_slack == pytest.approx(problem.slack(ev.G[k]))
        assert set(decoded.assignment()) == set(problem.tables.op_names)
        assert problem.describe(x)
        assert decoded.explain()


@pytest.mark.parametrize("name", FAMILIES)
def test_a_genome_that_does_not_fit_is_refused_by_name(name: str) -> None:
    problem = example(name, 0)
    good = problem.repair(problem.lower[None, :])[0]
    for short_or_long in (good[:-1], np.concatenate([good, good[:1]]), good[:0]):
        for call in (problem.decode, problem.evaluate, problem.repair, problem.assignment, problem.describe):
            with pytest.raises(GenomeError, match=f"takes {problem.n_genes}"):
                call(short_or_long)
    for gene in {0, problem.n_genes - 1}:
        for value in (int(problem.lower[gene]) - 1, int(problem.upper[gene]) + 1):
            bad = good.copy()
            bad[gene] = value
            name_of_gene = problem.gene_names[gene]
            for call in (problem.decode, problem.assignment, problem.describe):
                with pytest.raises(GenomeError, match=f"gene {gene} '{re.escape(name_of_gene)}' = {value} "):
                    call(bad)
            with pytest.raises(GenomeError, match=r"\(genome 1\)"):
                problem.evaluate(np.stack([good, bad]))


@pytest.mark.parametrize("name", FAMILIES)
def test_every_declared_metric_is_a_front_csv_column(name: str, tmp_path) -> None:
    entry = families()[name]
    problem, front = next((p, f) for p in map(entry.examples, range(50))
                          if len(f := dse.solve(p, "nsga2", time_limit=5, seed=0)))
    write_fronts(tmp_path, problem, [front])
    columns = set(pd.read_csv(tmp_path / "front.csv").columns)
    assert {m.column(problem.tables) for m in entry.metrics} <= columns
    assert set(front.columns) <= columns
    assert {"solver", "proven", "status", "genome"} <= columns
