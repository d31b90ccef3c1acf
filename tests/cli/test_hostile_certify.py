"""Hostile fronts handed to ``dse certify``: it believes nothing it is given. Every case is one line
naming the file, the point (or CSV row) and the field, exit 2, or a run that says what it merged,
left out or did not carry over; never a certificate of mappings the file only claims.

The fronts are the quickstart's (a copy of its spec, so that a case may edit it), solved once by
NSGA-II, each case editing its own copy of ``front.json`` or ``front.csv``.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dse
import dse.cli.commands.certify as certify_command
from dse import cli
from tests.cli.test_cli import run
from tests.cli.test_signals import _stop_at_call

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``spec.yaml`` (the quickstart's) and ``run/`` (its NSGA-II front)."""
    folder = tmp_path_factory.mktemp("solved")
    shutil.copy(ROOT / "problems" / "quickstart.yaml", folder / "spec.yaml")
    code = cli.main(["solve", str(folder / "spec.yaml"), "--solver", "nsga2", "--time-limit", "2",
                     "--out", str(folder / "run"), "--quiet"])
    assert code == 0
    return folder


@pytest.fixture
def run_copy(solved: Path, tmp_path: Path) -> Path:
    """A copy of the solved folder (spec and run) for one case to edit; the run folder is returned."""
    shutil.copytree(solved, tmp_path / "case")
    run_folder = tmp_path / "case" / "run"
    doc = json.loads((run_folder / "front.json").read_text())
    doc["spec"] = str(tmp_path / "case" / "spec.yaml")  # the copy's own spec
    (run_folder / "front.json").write_text(json.dumps(doc))
    return run_folder


def _edit(run_folder: Path, change: Any) -> None:
    doc = json.loads((run_folder / "front.json").read_text())
    change(doc["fronts"][0]["points"])
    (run_folder / "front.json").write_text(json.dumps(doc))


def _refused(capsys: pytest.CaptureFixture[str], run_folder: Path, *parts: str, extra: tuple[str, ...] = ()) -> str:
    code, out, err = run(capsys, "certify", str(run_folder), "--time-limit", "5", *extra)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (out, err)
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for part in parts:
        assert part in lines[0], lines[0]
    assert not (run_folder / "certified").exists()  # nothing certified
    return lines[0]


def test_a_float_gene_is_refused_naming_the_point_and_the_field(run_copy, capsys) -> None:
    def fractional(points: list[dict]) -> None:
        points[1]["genome"][2] = points[1]["genome"][2] + 0.5  # was truncated to the integer below it

    _edit(run_copy, fractional)
    _refused(capsys, run_copy, str(run_copy / "front.json"), "fronts[0].points[1].genome[2]", "valid integer")


def test_a_boolean_gene_is_refused(run_copy, capsys) -> None:
    def boolean(points: list[dict]) -> None:
        points[0]["genome"][0] = True  # was taken as device 1

    _edit(run_copy, boolean)
    _refused(capsys, run_copy, "fronts[0].points[0].genome[0]", "valid integer")


def test_a_gene_out_of_bounds_is_refused_naming_the_gene(run_copy, capsys) -> None:
    problem = dse.load_problem(run_copy.parent / "spec.yaml")

    def outside(points: list[dict]) -> None:
        points[2]["genome"][3] = int(problem.upper[3]) + 1

    _edit(run_copy, outside)
    _refused(capsys, run_copy, "fronts[0].points[2] genome", f"gene 3 '{problem.gene_names[3]}'", "is outside")


def test_a_point_forged_as_feasible_that_violates_the_constraints_is_refused(run_copy, capsys) -> None:
    problem = dse.load_problem(run_copy.parent / "spec.yaml")
    violating = np.asarray(problem.baselines()["only fpga"])  # the quickstart's all-on-the-FPGA mapping
    evaluation = problem.evaluate(violating)
    broken = [name for name, slack in problem.slack(evaluation.G[0]).items() if slack < 0]
    assert not evaluation.feasible[0] and broken

    def forged(points: list[dict]) -> None:
        points[0]["genome"] = violating.tolist()  # still "feasible": true
        del points[0]["internal"]

    _edit(run_copy, forged)
    _refused(capsys, run_copy, "fronts[0].points[0] feasible", f"violates the {broken[0]} constraint")


def test_a_point_whose_recorded_values_were_edited_is_refused(run_copy, capsys) -> None:
    def better(points: list[dict]) -> None:
        points[0]["internal"] = [v // 2 for v in points[0]["internal"]]  # twice as good as its genome

    _edit(run_copy, better)
    _refused(capsys, run_copy, "fronts[0].points[0] internal", "differs from the evaluation of its genome")


def test_duplicates_are_merged_infeasible_points_left_out_and_proofs_not_carried_over(run_copy, capsys) -> None:
    problem = dse.load_problem(run_copy.parent / "spec.yaml")
    violating = problem.baselines()["only fpga"]

    def hostile(points: list[dict]) -> None:
        points.append(dict(points[0]))  # a duplicate of point 0
        worst = max(points, key=lambda p: p["internal"][1])
        points.append({**worst, "genome": [int(g) for g in violating], "feasible": False, "internal": None})
        for p in points:
            p["proven"] = True  # NSGA-II proves nothing

    _edit(run_copy, hostile)
    n_points = len(json.loads((run_copy / "front.json").read_text())["fronts"][0]["points"])
    code, out, err = run(capsys, "certify", str(run_copy), "--time-limit", "10")
    assert code == 0, err
    assert f"1 duplicated point merged: fronts[0].points[{n_points - 2}] (= fronts[0].points[0])" in out
    assert f"1 point violating the constraints left out: fronts[0].points[{n_points - 1}]" in out
    assert f"{n_points} points marked proven in the file: proofs are not carried over" in out
    frame = pd.read_csv(run_copy / "certified" / "front.csv")
    evaluated = problem.evaluate(np.array([[int(g) for g in s.split()] for s in frame["genome"]]))
    assert evaluated.feasible.all()


def test_a_csv_row_out_of_bounds_is_named_by_its_row(run_copy, capsys) -> None:
    frame = pd.read_csv(run_copy / "front.csv", dtype={"genome": str})
    frame.loc[1, "genome"] = frame.loc[0, "genome"]  # rows 0 and 1 the same: row 2 is the third
    genes = frame.loc[2, "genome"].split()
    genes[0] = "7"
    frame.loc[2, "genome"] = " ".join(genes)
    frame.to_csv(run_copy / "front.csv", index=False)
    _refused(capsys, run_copy / "front.csv", str(run_copy / "front.csv"), "row 2 genome", "gene 0")


def test_a_spec_edited_since_the_solve_is_refused_unless_allowed(run_copy, capsys) -> None:
    spec = run_copy.parent / "spec.yaml"
    original = spec.read_text()
    edited = original.replace("power_w: 450", "power_w: 200")
    assert edited != original  # the quickstart's cap is 450 W: the edit must change the spec
    spec.write_text(edited)
    _refused(capsys, run_copy, str(run_copy / "front.json"), "spec_sha256",
             f"the spec {spec} has changed since the solve", "--allow-changed-spec")
    code, out, err = run(capsys, "certify", str(run_copy), "--time-limit", "5", "--allow-changed-spec")
    assert code == 0, err
    assert err.startswith(f"warning: the spec {spec} has changed since the solve")


def test_front_json_records_the_spec_digest_at_solve_time(solved) -> None:
    import hashlib

    doc = json.loads((solved / "run" / "front.json").read_text())
    assert doc["spec_sha256"] == hashlib.sha256((solved / "spec.yaml").read_bytes()).hexdigest()


def test_a_certify_stopped_by_sigint_says_its_front_is_cut_short(run_copy, capsys, monkeypatch) -> None:
    _stop_at_call(monkeypatch, certify_command, "certify", call=1, sig=signal.SIGINT)
    code, out, err = run(capsys, "certify", str(run_copy), "--time-limit", "30")
    assert code == 130
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "had finished its work" not in lines[0], lines
    assert lines[0].startswith(f"interrupted: the certified front in {run_copy / 'certified'} is cut short "
                               "(status interrupted")
    assert set(pd.read_csv(run_copy / "certified" / "front.csv")["status"]) == {"interrupted"}
