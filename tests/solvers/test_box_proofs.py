"""What a proof that one box is empty tells the other boxes, and how the serial box search shares its time.

:func:`~dse.solvers.cpsat_boxes.close_box` is checked by hand and against brute force (every point of a
random finite "feasible set" is looked at); the shared budgets by hand, and by a serial run whose first box
search runs out of its budget and still ends on exhaustive search's front.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

import dse
from dse.pareto import OPTIMAL
from dse.runs.spec import build_problem, spec_from_dict
from dse.solvers import cpsat as cpsat_module
from dse.solvers.certificate import box_stakes
from dse.solvers.cpsat_boxes import (
    BOX_FLOOR_S,
    CpSatRunner,
    Solve,
    box_budget,
    box_shares,
    close_box,
    proven_empty,
    search_box,
)
from dse.solvers.exhaustive import genomes_from_index
from dse.solvers.registry import collect_seeds


def test_close_box_by_hand() -> None:
    """Closed: f < (10, 6) holds no point. (5, 10): below it in f1 only, so no point of it has f2 < 6 (its
    f1 < 5 < 10): corner (1, 0) -> (1, 6). (12, 4): below it in f2 only, so f1 >= 10: corner (0, 2) -> (10, 2),
    open still (f1 may be 10 or 11). (8, 5): inside
    the closed box, dropped. (20, 20): above it in both, nothing is known: unchanged. (11, 3) with corner
    (10, 0): below in f2, f1 >= 10 already: unchanged."""
    boxes = [(5, 10), (12, 4), (8, 5), (20, 20), (11, 3)]
    lowers = {(5, 10): (1, 0), (12, 4): (0, 2), (8, 5): (0, 0), (20, 20): (0, 0), (11, 3): (10, 0)}
    kept, raised = close_box(boxes, lowers, (10, 6))
    assert kept == [(5, 10), (12, 4), (20, 20), (11, 3)]
    assert raised == {(5, 10): (1, 6), (12, 4): (10, 2), (20, 20): (0, 0), (11, 3): (10, 0)}
    # a box whose raised corner reaches its upper corner is empty: f1 < 10 and f1 >= 10
    assert close_box([(10, 9)], {(10, 9): (0, 0)}, (20, 5)) == ([(10, 9)], {(10, 9): (0, 5)})
    assert close_box([(10, 9)], {(10, 9): (0, 0)}, (20, 9)) == ([], {})


@settings(max_examples=200, deadline=None)
@given(k=st.integers(2, 3), data=st.data())
def test_close_box_never_cuts_off_a_point(k: int, data: st.DataObject) -> None:
    """Brute force: a random set of points in a small grid, a closed box holding none of them, open boxes
    whose lower corners are at or below their points. After :func:`close_box`, every point of a kept box
    is at or above its new corner, and no dropped box held a point."""
    grid = st.tuples(*[st.integers(0, 7)] * k)
    closed = data.draw(st.tuples(*[st.integers(1, 8)] * k), label="closed")
    points = [p for p in data.draw(st.lists(grid, max_size=25), label="points")
              if not all(a < b for a, b in zip(p, closed, strict=True))]
    boxes = data.draw(st.lists(st.tuples(*[st.integers(1, 9)] * k), min_size=1, max_size=6, unique=True),
                      label="boxes")
    lowers = {}
    for u in boxes:
        inside = [p for p in points if all(a < b for a, b in zip(p, u, strict=True))]
        least = np.min(np.array(inside), axis=0) if inside else np.array(u) - 1
        slack = data.draw(st.tuples(*[st.integers(0, 3)] * k), label="slack")
        lowers[u] = tuple(int(v) for v in np.maximum(0, least - np.array(slack)))
    kept, raised = close_box(boxes, lowers, closed)
    for u in boxes:
        inside = [p for p in points if all(a < b for a, b in zip(p, u, strict=True))]
        if u not in kept:
            assert not inside, (u, inside)
            continue
        for p in inside:
            assert all(a >= b for a, b in zip(p, raised[u], strict=True)), (u, p, raised[u])


def test_box_budget_by_hand() -> None:
    """600 s, a share of 1/60: 10 s; share 1 (one box): everything; a box that ran out of 10 s (at least
    20 s): 20 s; a share of 1/1,000: the floor; never more than remains."""
    assert box_budget(600.0, 1 / 60) == pytest.approx(10.0)
    assert box_budget(600.0, 1.0) == 600.0
    assert box_budget(600.0, 1 / 60, at_least=20.0) == 20.0
    assert box_budget(600.0, 1e-3) == BOX_FLOOR_S
    assert box_budget(0.5, 1e-3) == 0.5
    assert box_budget(15.0, 0.5, at_least=20.0) == 15.0
    assert box_shares(np.array([3.0, 1.0, 0.0])).tolist() == [0.75, 0.25, 0.0]
    assert box_shares(np.zeros(4)).tolist() == [0.25] * 4


def test_box_stakes_by_hand() -> None:
    """Throughput (items/s = 1e9 / period in ns) and energy (mJ = pJ / 1e9). The box from corner (1e6 ns,
    2e9 pJ) to (2e6 ns, 4e9 pJ) spans 1,000 to 500 items/s and 2 to 4 mJ. Reference (100 items/s, 3 mJ):
    500 x 1 = 500, and the same with the energy unbounded (cut at the reference). Reference (600 items/s,
    3 mJ): 400 x 1. Reference (1,200 items/s, 3 mJ): past the box, 0. No reference: 1 each."""
    problem = build_problem(spec_from_dict({**SPEC, "objectives": ["throughput", "energy"]}, "<test>"))
    box = ((1e6, 2e9), (2e6, 4e9))
    unbounded = ((1e6, 2e9), (2e6, None))
    assert box_stakes(problem, [box, unbounded], np.array([-100.0, 3.0])).tolist() == pytest.approx([500, 500])
    assert box_stakes(problem, [box], np.array([-600.0, 3.0])).tolist() == pytest.approx([400])
    assert box_stakes(problem, [box], np.array([-1200.0, 3.0])).tolist() == [0.0]
    assert box_stakes(problem, [box, unbounded], None).tolist() == [1.0, 1.0]


SPEC = {"name": "pipeline6", "family": "pipeline", "platform": "edge_soc",
        "workload": {"builder": "random_pipeline", "n_ops": 6, "seed": 1},
        "objectives": ["throughput", "energy", "latency"]}


def test_a_box_out_of_its_budget_is_searched_again_after_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first search of every box comes back empty-handed, as one cut short by its budget: the run moves
    on to the other boxes, searches each again later, and still ends optimal on exhaustive search's front
    (every mapping evaluated). A box cut so may be split by the points of boxes searched after it, or closed by
their proofs, before its turn comes again."""
    problem = build_problem(spec_from_dict(SPEC, "<test>"))
    exhaustive = dse.solve(problem, "exhaustive")
    real = cpsat_module.search_box
    searched: list[tuple[int, ...]] = []

    def cut_first(runner: Any, box: tuple[int, ...], *args: Any, **kwargs: Any) -> list[Solve]:
        searched.append(box)
        if searched.count(box) == 1:
            return [Solve(cp_model.UNKNOWN, None, None, float("nan"))]
        return real(runner, box, *args, **kwargs)

    monkeypatch.setattr(cpsat_module, "search_box", cut_first)
    front = dse.solve(problem, "cpsat", time_limit=60, seed=0, workers=1)
    assert front.status == OPTIMAL
    assert sorted(map(tuple, front.internal().tolist())) == sorted(map(tuple, exhaustive.internal().tolist()))
    assert len(exhaustive) >= 3
    assert sum(searched.count(box) >= 2 for box in set(searched)) >= 2
    # some box's second search waited for other boxes' searches (it is not searched again at once)
    assert any(searched[k + 1] != box for k, box in enumerate(searched[:-1]) if searched.index(box) == k)


def test_the_regions_a_box_search_proves_empty_hold_no_mapping() -> None:
    """Brute force: every mapping of a 6-op pipeline (throughput, energy, latency) evaluated. For the whole
    region and for boxes around its front, searched with each objective first, none of the regions
    :func:`proven_empty` names holds a feasible mapping, and the head's region reaches the point the search
    ended on (its first objective's bound is that point's value: the proof is tight)."""
    problem = build_problem(spec_from_dict(SPEC, "<test>"))
    lower, upper = problem.lower, problem.upper
    size = int(np.prod(upper - lower + 1))
    ev = problem.evaluate(genomes_from_index(np.arange(size), lower, upper))
    feasible = ev.F[ev.feasible]
    form = problem.cpsat(seeds=collect_seeds(problem), deadline=time.monotonic() + 60)
    runner = CpSatRunner(form, seed=0, workers=1, deterministic=False)
    top = tuple(runner.upper(v) + 1 for v in form.objective_vars)
    middle = tuple(int(v) for v in np.median(feasible, axis=0))
    checked = 0
    for box in (top, middle, tuple(int(v) + 1 for v in feasible.min(axis=0))):
        for first in range(3):
            solves = search_box(runner, box, lambda: 10.0, None, first)
            regions = proven_empty(runner, box, first, solves)
            assert regions
            for region in regions:
                assert not np.all(feasible < np.array(region), axis=1).any(), (box, first, region)
                checked += 1
            if solves[0].values is not None:
                assert regions[0][first] == solves[0].values[first]
    assert checked >= 9
