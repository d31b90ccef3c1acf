"""A pipeline CP-SAT model past the literal budget is refused with its size and the budget before any of it
is built, and CP-SAT returns the heuristic seeds with the reason (as the dag family does past its pair
budget). Counted by hand on the hand-computed instance (3 ops, each allowed on both of 2 devices, 3 edges):
6 assignment literals and 3 x 2 x 2 = 12 edge-pair literals, 18 in all."""

from __future__ import annotations

import pytest
from ortools.sat.python import cp_model

import dse
import dse.mapping.pipeline.cpsat as pipeline_cpsat
from dse.mapping.cpsat_common import ModelTooLarge
from dse.mapping.pipeline import PipelineProblem
from tests.mapping.pipeline.test_pipeline_hand import hand_tables


def _never_built(*args, **kwargs):
    raise AssertionError("a CP-SAT model was started")


def test_a_model_one_literal_past_the_budget_is_refused_before_it_is_built(monkeypatch) -> None:
    problem = PipelineProblem(hand_tables(), ("throughput", "energy"), memory=False)
    monkeypatch.setenv(pipeline_cpsat.MODEL_BUDGET_ENV, "17")
    monkeypatch.setattr(cp_model, "CpModel", _never_built)  # the builder imports ortools when called
    with pytest.raises(ModelTooLarge) as caught:
        pipeline_cpsat.build_pipeline_model(problem)
    assert "18 literals (6 assignment, 12 edge-pair) exceed the budget of 17" in str(caught.value)
    assert pipeline_cpsat.MODEL_BUDGET_ENV in str(caught.value)


def test_a_model_at_the_budget_is_built(monkeypatch) -> None:
    problem = PipelineProblem(hand_tables(), ("throughput", "energy"), memory=False)
    monkeypatch.setenv(pipeline_cpsat.MODEL_BUDGET_ENV, "18")
    form = pipeline_cpsat.build_pipeline_model(problem)
    assert form.notes[0].startswith("6 assignment vars, 12 edge-pair vars")


def test_cpsat_past_the_budget_returns_the_seeds_with_the_reason(monkeypatch, imports_asked: list[str]) -> None:
    problem = PipelineProblem(hand_tables(), ("throughput", "energy"), memory=False)
    monkeypatch.setenv(pipeline_cpsat.MODEL_BUDGET_ENV, "17")
    monkeypatch.setattr(cp_model, "CpModel", _never_built)  # the builder imports ortools when called
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0)
    assert "exceed the budget of 17" in front.stats.message
    assert not [name for name in imports_asked if name.startswith("ortools")]  # not even before the clock
    assert front.points and not any(p.proven for p in front.points)
