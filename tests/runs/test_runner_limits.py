"""The time limit of ``dse solve`` counts from the start of problem building: the first solver gets what the
building left (at least ``MIN_SOLVER_S``), every later solver the whole limit. Before, the limit started
after building, so ``--time-limit 1`` on a 2,000-task dag on 256 devices ran for seconds past it."""

from __future__ import annotations

import pytest

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.runs import runner
from dse.runs.spec import SolverSpec
from dse.util.interrupt import StopToken


@pytest.mark.parametrize(("spent", "first"), [(0.0, 2.0), (0.5, 1.5), (5.0, runner.MIN_SOLVER_S)])
def test_the_first_solver_gets_what_building_left(monkeypatch, spent: float, first: float) -> None:
    problem = DagProblem(random_tables(1, n_ops=6, n_dev=2, max_preds=2), ("makespan", "energy"), memory=False)
    limits: list[float] = []
    real = dse.solvers.solve

    def recording(p, name, *, time_limit, **kwargs):
        limits.append(time_limit)
        return real(p, name, time_limit=0.05, **kwargs)  # the limit given is what counts here

    monkeypatch.setattr(dse.solvers, "solve", recording)
    settings = SolverSpec(name="all", time_limit_s=2.0, seed=0)
    fronts, _ = runner.run_spec_solvers(problem, settings, "all", 2.0, 0, StopToken(), quiet=True, spent_s=spent)
    assert len(limits) >= 2 and len(fronts) == len(limits)
    assert limits[0] == pytest.approx(first)  # 2 s less the building, by hand; never below the floor
    assert all(limit == 2.0 for limit in limits[1:])
