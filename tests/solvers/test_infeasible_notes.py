"""Python users get what CLI users get: a solve with no feasible point carries the diagnosis ``dse solve``
exits 3 with (``front.notes``), straight from ``dse.solve``.

Golden values: the quickstart's cheapest mapping in average power is all on the GPU at its lowest clock,
far above 5 W (its idle power alone is tens of watts), so a 5 W cap is infeasible and the diagnosis names
the power cap; the CLI's line is the yardstick of the Python note.
"""

from __future__ import annotations

import dataclasses

import pytest
import yaml

import dse
from dse.errors import InfeasibleError
from dse.pareto import INFEASIBLE, INTERRUPTED
from dse.runs.runner import check_some_feasible
from dse.solvers import INFEASIBLE_NOTE, diagnosed
from dse.util.interrupt import interruptible
from tests.conftest import ROOT, run_cli, write_yaml

POWER_5W = {"constraints.power_w": 5}


def infeasible_notes(front) -> list[str]:
    return [n for n in front.notes if n.startswith(INFEASIBLE_NOTE)]


@pytest.mark.parametrize("solver", ["cpsat", "nsga2"])
def test_an_infeasible_solve_says_which_constraint_and_by_how_much(solver: str) -> None:
    problem = dse.load_problem("quickstart", changes=POWER_5W)
    front = dse.solve(problem, solver, time_limit=2, seed=0)
    assert not any(p.feasible for p in front.points)
    (note,) = infeasible_notes(front)
    assert note.startswith("infeasible: power cap 5 W cannot be met: the lowest average power of any mapping "
                           "meeting the other constraints is "), note
    assert "workers" not in note and "assignment vars" not in note  # not the solver's internal message
    assert f"'{note}'" in repr(front)


def test_the_note_is_the_line_the_cli_exits_with(tmp_path, capsys) -> None:
    data = yaml.safe_load((ROOT / "problems" / "quickstart.yaml").read_text())
    data["constraints"]["power_w"] = 5
    spec = write_yaml(tmp_path / "five_watts.yaml", data)
    code, _, err = run_cli(capsys, "solve", str(spec), "--solver", "cpsat", "--time-limit", "5", "--quiet",
                           "--out", str(tmp_path / "out"))
    assert code == 3
    front = dse.solve(dse.load_problem(str(spec)), "cpsat", time_limit=5, seed=0)
    (note,) = infeasible_notes(front)
    assert f"error: {note}" in err.splitlines(), err


def test_a_feasible_front_has_no_diagnosis() -> None:
    front = dse.solve(dse.load_problem("quickstart"), "cpsat", time_limit=10, seed=0)
    assert any(p.feasible for p in front.points) and infeasible_notes(front) == []


def test_the_cli_reuses_the_fronts_diagnosis(monkeypatch) -> None:
    problem = dse.load_problem("quickstart", changes=POWER_5W)
    front = dse.solve(problem, "cpsat", time_limit=5, seed=0)
    (note,) = infeasible_notes(front)

    def no_second_diagnosis(*args, **kwargs):
        raise AssertionError("diagnosed twice")

    monkeypatch.setattr(problem, "diagnose", no_second_diagnosis)
    with pytest.raises(InfeasibleError) as caught:
        check_some_feasible(problem, [front])
    assert str(caught.value) == note


def test_an_interrupted_front_is_left_as_it_is(monkeypatch) -> None:
    problem = dse.load_problem("quickstart", changes=POWER_5W)
    front = dse.solve(problem, "cpsat", time_limit=5, seed=0)
    stopped = dataclasses.replace(front, status=INTERRUPTED, notes=())
    monkeypatch.setattr(problem, "diagnose", lambda *a, **k: pytest.fail("an interrupted solve is not diagnosed"))
    assert diagnosed(problem, stopped) is stopped


def test_a_stop_during_the_diagnosis_leaves_the_front_as_it_is(monkeypatch) -> None:
    front = dse.solve(dse.load_problem("quickstart", changes=POWER_5W), "cpsat", time_limit=5, seed=0)
    bare = dataclasses.replace(front, notes=())
    problem = dse.load_problem("quickstart", changes=POWER_5W)  # nothing diagnosed for it yet
    with interruptible() as token:
        def cut_short(*args, **kwargs) -> str:  # Ctrl-C arrives while the diagnosis searches
            token.request()
            return "power cap 5 W cannot be met: (a search cut short)"

        monkeypatch.setattr(problem, "diagnose", cut_short)
        assert diagnosed(problem, bare) is bare


def test_a_proven_diagnosis_serves_the_later_fronts(monkeypatch) -> None:
    problem = dse.load_problem("quickstart", changes=POWER_5W)
    asked: list[bool] = []
    diagnose = problem.diagnose

    def counted(*args, **kwargs) -> str:
        asked.append(kwargs["proven"])
        return diagnose(*args, **kwargs)

    monkeypatch.setattr(problem, "diagnose", counted)
    exact = dse.solve(problem, "cpsat", time_limit=5, seed=0)
    approx = dse.solve(problem, "nsga2", time_limit=2, seed=0)  # no proof of its own: dse solve --solver all
    assert exact.status == INFEASIBLE and asked == [True]
    assert infeasible_notes(approx) == infeasible_notes(exact) != []
