"""Exact fronts with three objectives (throughput, energy, latency of ``pipeline``) against exhaustive search.

Golden fronts come from exhaustive search (every genome evaluated, nondominated filter), an
oracle independent of the CP-SAT model and of the box-splitting driver.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.pipeline import PipelineProblem
from dse.solvers.cpsat_boxes import split_boxes

THREE = ("throughput", "energy", "latency")


def three_objective_problem(seed: int) -> PipelineProblem:
    """4-7 ops on 2-3 devices; some with a deadline, a power cap or memory limits."""
    rng = np.random.default_rng(500 + seed)
    tables = random_tables(seed, n_ops=int(rng.integers(4, 8)), n_dev=int(rng.integers(2, 4)))
    deadline = int(rng.integers(80, 300)) if seed % 3 == 1 else None
    power = int(rng.integers(5, 30)) if seed % 4 == 2 else None
    return PipelineProblem(tables, THREE, deadline=deadline, power_cap_mw=power, memory=bool(seed % 2))


def testsplit_boxes_by_hand() -> None:
    """Local upper bounds after two points, worked by hand.

    Start: one box (10, 10, 10). z1 = (3, 4, 5) splits it into (3,10,10), (10,4,10), (10,10,5).
    z2 = (5, 2, 7) lies only in (10,4,10) (5 < 10, 2 < 4, 7 < 10), which splits into (5,4,10),
    (10,2,10), (10,4,7); none of the five is inside another.
    """
    boxes = split_boxes([(10, 10, 10)], (3, 4, 5))
    assert sorted(boxes) == [(3, 10, 10), (10, 4, 10), (10, 10, 5)]
    boxes = split_boxes(boxes, (5, 2, 7))
    assert sorted(boxes) == [(3, 10, 10), (5, 4, 10), (10, 2, 10), (10, 4, 7), (10, 10, 5)]
    # a box inside another is dropped: z = (1, 1, 1) in (2, 2, 2) and (3, 3, 3) leaves children of both,
    # and (2, 1, 2) lies inside (3, 1, 3)
    assert (2, 1, 2) not in split_boxes([(2, 2, 2), (3, 3, 3)], (1, 1, 1))


@pytest.mark.parametrize("seed", range(8))
def test_three_objective_front_equals_exhaustive(seed: int) -> None:
    problem = three_objective_problem(seed)
    brute = dse.solve(problem, "exhaustive")
    exact = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    assert brute.status in ("optimal", "infeasible")
    assert exact.status == brute.status
    assert exact.complete == (brute.status == "optimal")
    assert sorted(map(tuple, exact.internal().tolist())) == sorted(map(tuple, brute.internal().tolist()))
    if len(exact):
        assert all(p.proven for p in exact.points)
        ev = problem.evaluate(np.array([p.genome for p in exact.points]))
        np.testing.assert_array_equal(ev.F, exact.internal())


def test_pareto_set_carries_every_objective() -> None:
    problem = three_objective_problem(0)
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    assert len(front) >= 3 and front.internal().shape[1] == 3
    columns = [o.column for o in problem.objectives]
    assert set(columns) <= set(front.to_frame().columns)
    doc = json.loads(front.to_json())
    assert [o["name"] for o in doc["objectives"]] == list(THREE)
    assert all(len(p["internal"]) == 3 for p in doc["points"])
    assert front.hypervolume(front.reference_point()) > 0  # 3-D indicators


def test_time_limit_keeps_points_found() -> None:
    problem = PipelineProblem(random_tables(3, n_ops=14, n_dev=3), THREE, memory=False)
    front = dse.solve(problem, "cpsat", time_limit=0.5, seed=0, workers=2)
    assert front.status in ("time_limit", "optimal")
    ev = problem.evaluate(np.array([p.genome for p in front.points]).reshape(-1, problem.n_genes))
    assert ev.feasible.all()
