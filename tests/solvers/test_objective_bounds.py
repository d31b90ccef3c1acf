"""The families' objective bounds (``MappingProblem.objective_lower_bounds``) against brute force.

The oracle is every genome of a small seeded instance, evaluated by the family's own evaluator (no
part of the bounds' code): every feasible mapping must reach or exceed the bound in every objective,
and within limits on the objectives (a box ``F <= at_most`` drawn at random, some around the
feasible values and some below all of them) every feasible mapping inside the box must too; a bound
above a limit claims the box is empty, which brute force must confirm. The limits are drawn from the
feasible values themselves, so each seed tests boxes that hold mappings and boxes that do not.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dse.cost.synthetic import random_tables
from dse.mapping.base import MappingProblem
from dse.mapping.multimodel import MultiModelProblem
from dse.mapping.pipeline import PipelineProblem
from dse.mapping.registry import families
from dse.util.assignment_relaxation import AssignmentRelaxation
from dse.util.lp_bounds import LinearProgram, lagrangian_bound, minimum_at_least

FAMILIES = ("pipeline", "dag", "split")


def _every_feasible(problem: MappingProblem) -> np.ndarray:
    """Internal objective values of every feasible genome (brute force), shape (n, k)."""
    X = np.array(list(itertools.product(*(range(int(lo), int(hi) + 1)
                                          for lo, hi in zip(problem.lower, problem.upper, strict=True)))),
                 dtype=np.int64).reshape(-1, problem.n_genes)
    ev = problem.evaluate(X)
    return ev.F[ev.feasible]


def _check_box(problem: MappingProblem, F: np.ndarray, at_most: list[int | None]) -> None:
    bounds = np.array(problem.objective_lower_bounds(at_most))
    assert bounds.shape == (len(problem.objectives),)
    limit = np.array([np.inf if v is None else v for v in at_most])
    inside = F[(F <= limit).all(axis=1)]
    if np.isinf(bounds).all() and (bounds > 0).all():
        assert not len(inside), f"box {at_most} claimed empty, holds {inside[:3].tolist()}"
    else:
        assert not np.isinf(bounds).any() or (bounds < 0).all()
        assert (inside >= bounds).all(), f"box {at_most}: bound {bounds} above {inside.min(axis=0)}"
    if (bounds > np.where(np.isinf(limit), np.inf, limit)).any():
        assert not len(inside)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 5_000), family=st.sampled_from(FAMILIES), data=st.data())
def test_every_feasible_mapping_respects_the_bounds(seed: int, family: str, data: st.DataObject) -> None:
    problem = families()[family].examples(seed)
    F = _every_feasible(problem)
    bounds = np.array(problem.objective_lower_bounds())
    if not len(F):
        return  # nothing to check against (the bound may prove it or not)
    assert np.isfinite(bounds).all()
    assert (F >= bounds).all()
    for _ in range(4):
        at_most: list[int | None] = []
        for j in range(F.shape[1]):
            values = np.unique(F[:, j])
            pick = data.draw(st.integers(-1, len(values)), label=f"limit {j}")
            at_most.append(None if pick == len(values) else int(values[pick]) if pick >= 0 else int(values[0]) - 1)
        _check_box(problem, F, at_most)


@pytest.mark.parametrize("seed", range(8))
def test_the_pipeline_bounds_are_no_weaker_than_the_sum_of_cheapest_energies(seed: int) -> None:
    """The energy bound is at least every op's cheapest energy summed (the weakest bound worth the name),
    and the period bound at least the slowest op at its fastest device."""
    problem = PipelineProblem(random_tables(seed, n_ops=5, n_dev=3), ("throughput", "energy"), memory=False)
    t = problem.tables
    period, energy = problem.objective_lower_bounds()
    assert energy >= np.where(t.allowed, t.energy, np.iinfo(np.int64).max).min(axis=1).sum()
    assert period >= np.where(t.allowed, t.time, np.iinfo(np.int64).max).min(axis=1).max()


def test_a_power_cap_lowers_the_greatest_throughput_by_hand() -> None:
    """Two ops, two devices, no edges, no idle power, a 6 mW cap (energy <= 6 x period), worked by hand.

    Each op takes 10 ns and 100 pJ on d0, 20 ns and 20 pJ on d1. Mappings: both on d0 (period 20,
    200 pJ > 120: over the cap); one on each (period 20, 120 pJ = 6 x 20: fits); both on d1 (period
    40, 40 pJ). So the least period is 20 and the least energy 40.

    The relaxation with a share ``s`` (0..2) of the ops on d0: period >= max(10 s, 20 (2 - s)),
    energy = 40 + 80 s <= 6 x period. Its least period: s = 1 (20), where the cap binds; least energy
    40 at s = 0. Within period <= 19 only d0 fits each op and both on d0 load it 20: proven empty.
    Within energy <= 100: s <= 3/4, so period >= 20 (2 - 3/4) = 25.
    """
    t = random_tables(0, n_ops=2, n_dev=2)
    none = np.zeros((0, 2, 2), dtype=np.int64)
    t = t.replaced(time=np.array([[10, 20], [10, 20]], dtype=np.int64),
                   energy=np.array([[100, 20], [100, 20]], dtype=np.int64),
                   mem=np.zeros((2, 2), dtype=np.int64), edges=np.zeros((0, 2), dtype=np.int64),
                   edge_bytes=np.zeros(0, dtype=np.int64), edge_size=np.zeros(0), transfer_time=none,
                   transfer_energy=none, idle_power_mw=np.zeros(2, dtype=np.int64), allowed=np.ones((2, 2), dtype=bool))
    problem = PipelineProblem(t, ("throughput", "energy"), power_cap_mw=6, memory=False)
    assert problem.objective_lower_bounds() == (20.0, 40.0)
    assert problem.objective_lower_bounds([19, None]) == (math.inf, math.inf)
    assert problem.objective_lower_bounds([None, 100]) == (25.0, 40.0)


def test_the_lagrangian_bound_of_a_tiny_program_by_hand() -> None:
    """min x0 + 2 x1 with x0 + x1 == 1, x0 <= 0.25 (0 <= x <= 1): optimum 0.25 + 1.5 = 1.75 (by hand);
    the duals' bound meets it, any other multipliers stay below it, and an infeasible program
    (x0 + x1 == 3 within the unit box) is proven so."""
    from scipy import sparse

    lp = LinearProgram(np.array([1.0, 2.0]), sparse.csr_matrix([[1.0, 0.0]]), np.array([0.25]),
                       sparse.csr_matrix([[1.0, 1.0]]), np.array([1.0]), np.zeros(2), np.ones(2))
    assert minimum_at_least(lp) == pytest.approx(1.75, abs=1e-6)
    assert minimum_at_least(lp) <= 1.75
    for y_ub, y_eq in [(0.0, 0.0), (1.0, 2.0), (5.0, -3.0), (0.5, 1.5)]:
        assert lagrangian_bound(lp, np.array([y_ub]), np.array([y_eq])) <= 1.75
    infeasible = LinearProgram(lp.c, lp.A_ub, lp.b_ub, lp.A_eq, np.array([3.0]), lp.lower, lp.upper)
    assert minimum_at_least(infeasible) == math.inf


def test_an_op_with_no_option_left_proves_the_box_empty() -> None:
    relaxed = AssignmentRelaxation(
        op=np.array([0, 0, 1]), device=np.array([0, 1, 1]), time=np.array([5, 9, 7]), energy=np.array([1, 1, 1]),
        mem=np.zeros(3, dtype=np.int64), n_ops=2, idle_mw=np.zeros(2, dtype=np.int64), mem_capacity=None,
        power_cap_mw=None, span_floor=0, span_ceiling=100, energy_ceiling=100)
    assert relaxed.lower_bounds(span_at_most=6) == (math.inf, math.inf)  # op 1 needs 7
    assert relaxed.lower_bounds(span_at_most=7) == (7.0, 2.0)  # op 0 on d0 (5), op 1 on d1 (7)


def test_a_family_without_bounds_states_none() -> None:
    problem = families()["multimodel"].examples(0)
    assert isinstance(problem, MultiModelProblem)
    assert problem.objective_lower_bounds() == tuple(-math.inf for _ in problem.objectives)
