"""The CLI contract: exit codes, one-line errors naming file/field/value, outputs written, interrupts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dse import cli
from tests.conftest import TINY_PLATFORM, TINY_WORKLOAD

PLATFORM, WORKLOAD = TINY_PLATFORM, TINY_WORKLOAD


def write_spec(tmp_path: Path, **overrides) -> Path:
    spec = {
        "name": "tiny",
        "family": "pipeline",
        "platform": PLATFORM,
        "workload": WORKLOAD,
        "objectives": ["throughput", "energy"],
        "constraints": {"memory": True},
        "solver": {"name": "all", "time_limit_s": 10, "seed": 0},
    }
    spec.update(overrides)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_writes_front_files(tmp_path, capsys) -> None:
    spec = write_spec(tmp_path)
    code, out, err = run(capsys, "solve", str(spec), "--out", str(tmp_path / "out"), "--quiet")
    assert code == 0, err
    frame = pd.read_csv(tmp_path / "out" / "front.csv")
    for column in ("solver", "proven", "throughput_items_per_s", "energy_mj_per_item", "latency_ms", "genome"):
        assert column in frame.columns
    assert set(frame["solver"]) == {"cpsat", "nsga2"}
    assert frame.loc[frame.solver == "cpsat", "proven"].all()
    doc = json.loads((tmp_path / "out" / "front.json").read_text())
    assert [f["solver"] for f in doc["fronts"]] == ["cpsat", "nsga2"]
    assert (tmp_path / "out" / "pareto.png").stat().st_size > 1000
    assert "cpsat" in out and "baselines" in out


@pytest.mark.parametrize(
    ("overrides", "field", "value"),
    [
        ({"platform": "no_such_platform"}, "platform", "no_such_platform"),
        ({"colour": "blue"}, "colour", "blue"),
        ({"family": "teleport"}, "family", "teleport"),
        ({"platform": {**PLATFORM, "links": [{**PLATFORM["links"][0], "bandwidth_gbps": -3}]}},
         "links[0].bandwidth_gbps", "-3"),
        ({"workload": {**WORKLOAD, "ops": [{**WORKLOAD["ops"][0], "inputs": ["act"]}, *WORKLOAD["ops"][1:]]}},
         "edges", "cycle"),
        ({"constraints": {"deadline_ms": -1}}, "constraints.deadline_ms", "-1"),
    ],
)
def test_invalid_spec_exits_2_with_one_line(tmp_path, capsys, overrides, field, value) -> None:
    spec = write_spec(tmp_path, **overrides)
    code, _, err = run(capsys, "validate", str(spec))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(spec) in lines[0] and field in lines[0] and value in lines[0]
    assert "Traceback" not in err


def test_yaml_syntax_error_names_line(tmp_path, capsys) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nfamily: [pipeline\n")
    code, _, err = run(capsys, "solve", str(path))
    assert code == 2
    assert str(path) in err and "line" in err and "YAML syntax" in err


def test_missing_file_exits_2(tmp_path, capsys) -> None:
    code, _, err = run(capsys, "validate", str(tmp_path / "nope.yaml"))
    assert code == 2 and "file not found" in err


def test_infeasible_deadline_exits_3_and_names_best_latency(tmp_path, capsys) -> None:
    spec = write_spec(tmp_path, constraints={"deadline_ms": 0.0001})
    code, _, err = run(capsys, "solve", str(spec), "--solver", "cpsat", "--quiet")
    assert code == 3
    assert "deadline" in err and "cannot be met: the fastest mapping takes" in err


def test_infeasible_memory_exits_3(tmp_path, capsys) -> None:
    ops = [{**WORKLOAD["ops"][0]}, {**WORKLOAD["ops"][1], "resident_bytes": 100 * 2**30}, WORKLOAD["ops"][2]]
    spec = write_spec(tmp_path, workload={**WORKLOAD, "ops": ops})
    code, _, err = run(capsys, "solve", str(spec), "--quiet")
    assert code == 3
    assert "memory" in err and "mm" in err and "GiB" in err


def test_interrupt_keeps_what_was_found(tmp_path, capsys, monkeypatch) -> None:
    import dse.solvers

    real = dse.solvers.solve

    def flaky(problem, solver, **kw):
        if solver == "nsga2":
            raise KeyboardInterrupt
        return real(problem, solver, **kw)

    monkeypatch.setattr(dse.solvers, "solve", flaky)
    spec = write_spec(tmp_path)
    code, _, err = run(capsys, "solve", str(spec), "--out", str(tmp_path / "out"), "--quiet")
    assert code == 130 and "interrupted" in err
    frame = pd.read_csv(tmp_path / "out" / "front.csv")
    assert set(frame["solver"]) == {"cpsat"} and len(frame) >= 1


def test_catalog_lists_entries(capsys) -> None:
    code, out, _ = run(capsys, "catalog")
    assert code == 0 and "platforms:" in out and "builders:" in out


def test_a_shortened_front_table_keeps_the_knee(capsys) -> None:
    """A front longer than the printed table is sampled evenly; the knee point is always among the rows."""
    import dse
    from dse.cli.app import MAX_TABLE_ROWS, _print_report
    from dse.mapping.split import SplitProblem

    problem = dse.load_problem("split_gemm")
    assert isinstance(problem, SplitProblem)
    front = dse.solve(problem, "cpsat", time_limit=60, seed=0, progress=False)
    assert len(front) > MAX_TABLE_ROWS
    capsys.readouterr()
    _print_report(problem, [front])
    out = capsys.readouterr().out
    column = front.columns[0]
    assert f"{front.knee().objectives[column]:.5g}" in out
    assert "the knee among them" in out
