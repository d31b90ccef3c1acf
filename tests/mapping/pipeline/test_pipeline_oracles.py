"""The three oracles agree on the pipeline family: exhaustive == CP-SAT, NSGA-II feasible and not better."""

from __future__ import annotations

import numpy as np
import pytest

import dse
from dse.mapping.pipeline import PipelineProblem, example_problem
from tests.conftest import random_tables

SEEDS = range(60)


def random_problem(seed: int) -> PipelineProblem:
    """Random tables plus a random subset of deadline / power cap / memory, some of them infeasible."""
    return example_problem(seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_exhaustive_front_equals_cpsat_front(seed: int) -> None:
    problem = random_problem(seed)
    exact = dse.solve(problem, "exhaustive")
    cp = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=1)
    assert exact.status in ("optimal", "infeasible")
    assert cp.status == exact.status
    assert sorted(map(tuple, cp.internal().tolist())) == sorted(map(tuple, exact.internal().tolist()))
    assert all(p.proven for p in cp.points)
    # every CP-SAT point, re-evaluated, gives CP-SAT's objective values and is feasible
    if len(cp):
        ev = problem.evaluate(np.array([p.genome for p in cp.points]))
        assert ev.feasible.all()
        np.testing.assert_array_equal(ev.F, cp.internal())


def test_some_random_instances_are_infeasible_and_some_feasible() -> None:
    statuses = [dse.solve(random_problem(s), "exhaustive").status for s in SEEDS]
    assert statuses.count("infeasible") >= 3
    assert statuses.count("optimal") >= 30


@pytest.mark.parametrize("seed", range(8))
def test_nsga2_front_is_feasible_and_never_dominates_exact(seed: int) -> None:
    problem = random_problem(seed)
    exact = dse.solve(problem, "exhaustive")
    approx = dse.solve(problem, "nsga2", time_limit=10, seed=seed, pop_size=24, generations=40)
    if exact.status == "infeasible":
        assert len(approx) == 0
        return
    E = exact.internal()
    for p in approx.points:
        assert p.feasible
        f = np.array(p.internal)
        dominates = (f <= E).all(axis=1) & (f < E).any(axis=1)
        assert not dominates.any(), f"NSGA-II point {f} dominates an exact point"


def test_nsga2_is_reproducible() -> None:
    problem = random_problem(3)
    a = dse.solve(problem, "nsga2", seed=7, pop_size=20, generations=15)
    b = dse.solve(problem, "nsga2", seed=7, pop_size=20, generations=15)
    assert [p.genome for p in a.points] == [p.genome for p in b.points]


def test_cpsat_time_limit_returns_points_found_so_far() -> None:
    problem = PipelineProblem(random_tables(5, n_ops=8, n_dev=3), memory=False)
    front = dse.solve(problem, "cpsat", time_limit=1e-6, seed=0)
    assert front.status in ("time_limit", "optimal")
    assert not front.complete or front.status == "optimal"


def test_nsga2_interrupt_returns_front_so_far() -> None:
    problem = random_problem(1)

    def interrupt(gen, elapsed, X, F):
        if gen == 3:
            raise KeyboardInterrupt
        return False

    front = dse.solve(problem, "nsga2", seed=0, pop_size=16, generations=50, callback=interrupt)
    assert front.status == "interrupted"
    assert front.stats.generations == 3
    assert len(front) >= 1 and all(p.feasible for p in front.points)


def test_exhaustive_refuses_large_spaces() -> None:
    from dse.errors import SpaceTooLargeError

    problem = PipelineProblem(random_tables(0, n_ops=30, n_dev=4), memory=False)
    with pytest.raises(SpaceTooLargeError, match="exceed the bound"):
        dse.solve(problem, "exhaustive")


def test_cpsat_front_values_do_not_depend_on_seed() -> None:
    problem = PipelineProblem(random_tables(11, n_ops=8, n_dev=3), memory=True)
    a = dse.solve(problem, "cpsat", time_limit=30, seed=0)
    b = dse.solve(problem, "cpsat", time_limit=30, seed=5)
    assert a.complete and b.complete
    np.testing.assert_array_equal(a.internal(), b.internal())
