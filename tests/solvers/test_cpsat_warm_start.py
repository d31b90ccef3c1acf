"""CP-SAT warm-started by NSGA-II (``CpsatOptions.warm_start_s``): the front NSGA-II finds joins the resumed
points, and the complete exact front is exhaustive search's (every mapping evaluated: the oracle) whatever
the warm start found."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.pipeline import PipelineProblem
from dse.pareto import OPTIMAL
from dse.solvers.context import solve_context
from dse.solvers.cpsat import warm_started


def pipeline(seed: int, three: bool) -> PipelineProblem:
    rng = np.random.default_rng(900 + seed)
    tables = random_tables(seed, n_ops=int(rng.integers(4, 7)), n_dev=int(rng.integers(2, 4)))
    objectives = ("throughput", "energy", "latency") if three else ("throughput", "energy")
    return PipelineProblem(tables, objectives, memory=bool(seed % 2))


def values(front) -> list[tuple[float, ...]]:
    return sorted(map(tuple, front.internal().tolist()))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 60), three=st.booleans())
def test_a_warm_started_front_is_the_exhaustive_front(seed: int, three: bool) -> None:
    problem = pipeline(seed, three)
    warm = dse.solve(problem, "cpsat", time_limit=60, seed=seed, warm_start_s=0.3)
    exhaustive = dse.solve(problem, "exhaustive")
    assert warm.status == OPTIMAL and values(warm) == values(exhaustive)
    assert warm.certified is not None and warm.certified.gap == 0.0


def test_the_warm_start_adds_nsga2_s_feasible_points_to_the_resumed_ones() -> None:
    problem = pipeline(3, three=False)
    given_before = np.zeros(problem.n_genes, dtype=np.int64)
    with solve_context(seed=0, time_limit=30, resume=[given_before]) as ctx:
        warmed = warm_started(problem, ctx, 0.3)
    added = warmed.resume[1:]
    assert np.array_equal(warmed.resume[0], given_before) and len(added) >= 1
    assert problem.evaluate(np.array(added)).feasible.all()


@pytest.mark.parametrize("option", [-1, "soon"])
def test_a_bad_warm_start_is_refused_naming_the_option(option: object) -> None:
    with pytest.raises(ValueError, match="warm_start_s"):
        dse.solve(pipeline(0, three=False), "cpsat", time_limit=5, warm_start_s=option)
