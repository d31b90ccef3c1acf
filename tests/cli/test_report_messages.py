"""``dse report`` given something other than a run folder or a store: one line saying what the path is and
what to give instead (exit 2), never "not a dse result store ... give a new file name for a new store"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "result store" not in err and "new file name" not in err, err
    return lines[0]


def test_a_problem_spec_says_to_solve_it_first(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "problems" / "quickstart.yaml", tmp_path / "quickstart.yaml")
    code, out, err = run_cli(capsys, "report", "quickstart.yaml")
    line = _one_error_line(err)
    assert code == 2 and out == ""
    assert ("'quickstart.yaml': is a problem spec, not a run: solve it first (dse solve quickstart.yaml --out DIR), "
            "then dse report DIR") in line, line
    assert not (tmp_path / "quickstart.html").exists()


def test_a_spec_with_a_scenario_says_to_simulate_it(tmp_path, capsys) -> None:
    spec = ROOT / "problems" / "xr_vr_gaming.yaml"
    code, _, err = run_cli(capsys, "report", str(spec))
    line = _one_error_line(err)
    assert code == 2 and f"simulate its scenario first (dse simulate {spec} --out DIR" in line, line


def test_a_catalog_problem_name_says_to_solve_it_first(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no file of that name here: the name is the catalog's problem
    code, _, err = run_cli(capsys, "report", "quickstart")
    line = _one_error_line(err)
    assert code == 2 and "is a catalog problem, not a run: solve it first (dse solve quickstart --out DIR)" in line


@pytest.mark.parametrize("name", ["front.json", "front.csv"])
def test_a_file_of_a_run_folder_says_to_give_the_folder(tmp_path, capsys, name: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "front.json").write_text(json.dumps({"fronts": []}))
    (run / "front.csv").write_text("solver,status\n")
    code, _, err = run_cli(capsys, "report", str(run / name))
    line = _one_error_line(err)
    assert code == 2 and f"is a file of the run folder {run}: give the folder (dse report {run})" in line, line


def test_a_missing_path_still_says_it_does_not_exist(tmp_path, capsys) -> None:
    code, _, err = run_cli(capsys, "report", str(tmp_path / "nothing.yaml"))
    assert code == 2 and "does not exist" in _one_error_line(err)
