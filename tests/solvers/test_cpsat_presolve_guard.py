"""A claim of infeasibility from CP-SAT is confirmed without presolve before a search region is closed.

OR-Tools 9.15's presolve reported INFEASIBLE for a box of the objective space that holds Pareto points:
the 14-op random pipeline below (seed 3, edge SoC; throughput, energy and latency), its objectives bounded
to ``f < BOX``, minimizing objective 0 or 2 first (objective 1 first gave a point; without presolve every
order did). The distributed box search lost three Pareto points through it while certifying its front
complete. Both paths are run: the model presolved with every INFEASIBLE confirmed without presolve (a
large model's), and the model solved without presolve (a small one's, as this one is). The points inside the
box are checked by the family's evaluator, not by CP-SAT.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from ortools.sat.python import cp_model

from dse.mapping.base import Formulation
from dse.runs.spec import build_problem, spec_from_dict
from dse.solvers.cpsat_boxes import CpSatRunner, search_box
from dse.solvers.registry import collect_seeds
from dse.util import interrupt
from dse.util.interrupt import StopToken

SPEC = {"name": "pipeline14", "family": "pipeline", "platform": "edge_soc",
        "workload": {"builder": "random_pipeline", "n_ops": 14, "seed": 3},
        "objectives": ["throughput", "energy", "latency"]}
#: (period ns, energy pJ, latency ns) upper corner, exclusive. Inside it, found by the exact serial front and
#: checked here by the evaluator: the mapping 1 1 0 1 1 1 1 1 1 1 0 1 1 1 at (42184348, 1622997939590, 40482573).
BOX = (42252901, 1633345797974, 40553986)
INSIDE = np.array([1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1])


@pytest.fixture(scope="module")
def runner():
    problem = build_problem(spec_from_dict(SPEC, "<test>"))
    form = problem.cpsat(seeds=collect_seeds(problem), deadline=time.monotonic() + 60)
    return problem, CpSatRunner(form, seed=0, workers=1, deterministic=False)


def test_the_box_holds_a_feasible_mapping_by_the_evaluator(runner) -> None:
    problem, _ = runner
    ev = problem.evaluate(INSIDE[None])
    assert ev.feasible[0] and all(int(v) < u for v, u in zip(ev.F[0], BOX, strict=True))


@pytest.mark.parametrize("presolve_from", [0, interrupt.PRESOLVE_FROM_VARIABLES])  # presolved, then confirmed; not presolved
@pytest.mark.parametrize("first", [0, 1, 2])
def test_every_search_order_finds_a_point_in_the_box(runner, first: int, presolve_from: int, monkeypatch) -> None:
    monkeypatch.setattr(interrupt, "PRESOLVE_FROM_VARIABLES", presolve_from)
    problem, cpsat = runner
    solves = search_box(cpsat, BOX, lambda: 20.0, None, first)
    end = solves[-1]
    assert end.genome is not None, [int(s.status) for s in solves]
    ev = problem.evaluate(np.asarray(end.genome)[None])
    assert ev.feasible[0] and all(int(v) < u for v, u in zip(ev.F[0], BOX, strict=True))


def test_an_infeasible_left_unconfirmed_by_a_stop_proves_nothing(monkeypatch) -> None:
    """A stop before presolve's INFEASIBLE is confirmed (a beaten or dominated task of the distributed search):
    the solve is UNKNOWN and proves no bound. The model (x in -10..10, x >= 25) is infeasible, by hand; a bound
    above x's own lower end, -10, would be a claim (CP-SAT answers 0 for an infeasible model's bound)."""
    monkeypatch.setattr(interrupt, "PRESOLVE_FROM_VARIABLES", 0)  # presolved: its INFEASIBLE needs confirming
    model = cp_model.CpModel()
    x = model.new_int_var(-10, 10, "x")
    model.add(x >= 25)
    form = Formulation(model, [x], lambda solver: np.zeros(1, dtype=np.int64), lambda genome: None)
    token = StopToken()
    token.request()
    solve = CpSatRunner(form, seed=0, workers=1, deterministic=False, token=token).minimize(x, 5.0, None)
    assert solve.status == cp_model.UNKNOWN
    assert not solve.bound > -10
