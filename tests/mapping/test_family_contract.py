"""The family contract (:mod:`dse.testing`), checked for every registered family on the small seeded
instances it provides, one check and instance per test; and the checks themselves shown to fail on a
family that breaks each promise.

A new family gets these checks by registering (``dse.mapping.registry``); a family registered from
another package calls :func:`dse.testing.check_family` from its own tests.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dse
from dse import testing
from dse.errors import GenomeError
from dse.mapping.pipeline import PipelineProblem
from dse.mapping.registry import families
from dse.pareto import make_points

FAMILIES = sorted(families())
EXACT = [name for name in FAMILIES if families()[name].exact]
SEEDS = range(10)


def example(name: str, seed: int):
    return families()[name].examples(seed)


def test_every_builtin_family_is_registered() -> None:
    assert {"pipeline", "dag"} <= set(FAMILIES)


@pytest.mark.parametrize("name", FAMILIES)
def test_family_exact_is_read_off_the_problem_class(name: str) -> None:
    """No family sets ``exact``: the entry says what the class says (whether it overrides ``cpsat``)."""
    entry = families()[name]
    for seed in range(3):
        assert entry.exact == (example(name, seed).exact_unsupported() is None)
        testing.check_exact_flag(entry, example(name, seed))
    assert {"pipeline", "dag", "split"} <= set(EXACT) and "multimodel" not in EXACT  # the classes, by hand


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", EXACT)
def test_exhaustive_equals_cpsat_and_evaluator_agrees(name: str, seed: int) -> None:
    testing.check_exact_agrees(example(name, seed))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", FAMILIES)
def test_nsga2_front_is_feasible_and_never_beats_the_exhaustive_one(name: str, seed: int) -> None:
    problem = example(name, seed)
    exact = dse.solve(problem, "exhaustive", time_limit=60, seed=0, progress=False)
    approx = dse.solve(problem, "nsga2", time_limit=60, seed=seed, progress=False, pop_size=10, generations=15)
    testing.check_approximate_front(problem, approx, exact)


@pytest.mark.parametrize("name", FAMILIES)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 50), data=st.data())
def test_repair_is_idempotent_and_in_bounds(name: str, seed: int, data: st.DataObject) -> None:
    problem = example(name, seed)
    width = problem.n_genes
    rows = data.draw(st.lists(st.lists(st.integers(-5, 20), min_size=width, max_size=width), min_size=1, max_size=6))
    testing.check_repair(problem, np.array(rows, dtype=np.int64))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", FAMILIES)
def test_decode_agrees_with_evaluate(name: str, seed: int) -> None:
    testing.check_decode(example(name, seed), seed)


@pytest.mark.parametrize("name", FAMILIES)
def test_a_genome_that_does_not_fit_is_refused_by_name(name: str) -> None:
    testing.check_genome_refusals(example(name, 0))


@pytest.mark.parametrize("name", FAMILIES)
def test_every_declared_metric_is_a_front_csv_column(name: str) -> None:
    entry = families()[name]
    problem, front = next((p, f) for p in map(entry.examples, range(50))
                          if len(f := dse.solve(p, "nsga2", time_limit=5, seed=0, progress=False, pop_size=10,
                                                  generations=15)))
    testing.check_metric_columns(entry, problem, front)


# --------------------------------------------------------------------------- the checks can fail


def _broken(method: str, replace) -> PipelineProblem:
    """The pipeline family's first example with ``method`` replaced by ``replace(original)``."""
    problem = families()["pipeline"].examples(0)
    setattr(problem, method, replace(getattr(problem, method)))
    return problem


def _first_gene_past_its_bound(repair):
    def wrapped(X):
        R = repair(X)
        R[..., 0] = 99
        return R
    return wrapped


class _OffByOne:
    """A decoded mapping whose objective quantities are one more than the evaluator's."""

    def __init__(self, decoded) -> None:
        self.decoded = decoded

    def values(self) -> dict[str, int]:
        return {k: v + 1 for k, v in self.decoded.values().items()}

    def __getattr__(self, name: str):
        return getattr(self.decoded, name)


def test_the_repair_check_catches_a_gene_out_of_bounds() -> None:
    problem = _broken("repair", _first_gene_past_its_bound)
    with pytest.raises(AssertionError, match=r"family 'pipeline', .*repair left gene 0 of row 0 at 99, outside"):
        testing.check_repair(problem, testing.random_rows(problem, 0))


def test_the_decode_check_catches_objectives_that_differ() -> None:
    problem = _broken("decode", lambda decode: lambda x: _OffByOne(decode(x)))
    with pytest.raises(AssertionError, match="decode gives objectives"):
        testing.check_decode(problem, 0)


def test_the_refusal_check_catches_an_index_error() -> None:
    problem = _broken("describe", lambda describe: lambda genome: str(problem.tables.op_names[len(genome) * 100]))
    with pytest.raises(AssertionError, match=r"describe\(.*raised IndexError"):
        testing.check_genome_refusals(problem)
    with pytest.raises(GenomeError):  # what the check asks of the real family
        families()["pipeline"].examples(0).describe(np.zeros(1, dtype=np.int64))


def test_the_front_checks_catch_a_point_off_the_exact_front() -> None:
    problem = families()["pipeline"].examples(0)
    exact = dse.solve(problem, "exhaustive", time_limit=60, seed=0, progress=False)
    assert exact.status == "optimal" and len(exact) >= 2
    testing.check_approximate_front(problem, exact, exact)
    # a feasible mapping that the first front point dominates, passed off as the exact front
    X = problem.repair(np.random.default_rng(0).integers(problem.lower, problem.upper + 1, (400, problem.n_genes)))
    ev = problem.evaluate(X)
    best = np.array(exact.points[0].internal)
    behind = next(x for x, f, ok in zip(X, ev.F, ev.feasible, strict=True) if ok and (best <= f).all() and
                  (best < f).any())
    fake = dataclasses.replace(exact, points=tuple(make_points(problem, behind[None, :], "exhaustive")))
    with pytest.raises(AssertionError, match="dominates the exact front's"):
        testing.check_approximate_front(problem, exact, fake)
    with pytest.raises(AssertionError, match="is neither on nor behind the exact front"):
        testing.check_approximate_front(problem, exact, dataclasses.replace(exact, points=exact.points[1:]))
    wrong = dataclasses.replace(exact.points[0], internal=tuple(v - 1 for v in exact.points[0].internal))
    with pytest.raises(AssertionError, match="re-evaluate to"):
        testing.check_approximate_front(problem, dataclasses.replace(exact, points=(wrong,)))


def test_check_family_names_the_family_and_the_seed() -> None:
    entry = dataclasses.replace(families()["pipeline"],
                                examples=lambda seed: _broken("repair", _first_gene_past_its_bound))
    with pytest.raises(AssertionError, match=r"^pipeline example 3: family 'pipeline', problem .*repair left"):
        testing.check_family(entry, seeds=[3])
