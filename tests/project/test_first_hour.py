"""What a new user meets in the first hour: a mistyped name or field, a YAML syntax error.

Every typo gets one line naming the file, the field and the value, and the nearest known names (one
rule: dse.util.suggest). The expected names are the spec's own fields and the catalog's names as written in
docs/specs.md and `dse catalog`, not taken from the code under test.
"""

from __future__ import annotations

import pytest

from dse import cli
from tests.conftest import TINY_PLATFORM, TINY_SPEC, run_cli, write_yaml

TINY = TINY_SPEC



@pytest.mark.parametrize(("section", "typed", "suggested"), [
    ("constraints", {"deadline_ms": 5.0, "power": 400}, "power_w"),
    ("top", {"objectivs": ["throughput", "energy"]}, "objectives"),
])
def test_an_unknown_spec_field_names_the_nearest_fields(tmp_path, capsys, section, typed, suggested) -> None:
    data = {**TINY, **typed} if section == "top" else {**TINY, section: typed}
    path = write_yaml(tmp_path / "spec.yaml", data)
    code, _, err = run_cli(capsys, "validate", str(path))
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    wrong = next(iter(typed)) if section == "top" else "power"
    assert str(path) in err and wrong in err and f"did you mean '{suggested}'" in err, err


def test_an_unknown_platform_field_names_the_nearest_fields(tmp_path, capsys) -> None:
    platform = {**TINY_PLATFORM, "devices": [{**TINY_PLATFORM["devices"][0], "idle": 20},
                                             TINY_PLATFORM["devices"][1]]}
    platform["devices"][0].pop("idle_w")
    path = write_yaml(tmp_path / "spec.yaml", {**TINY, "platform": platform})
    code, _, err = run_cli(capsys, "validate", str(path))
    assert code == 2 and "devices[0].idle" in err and "did you mean 'idle_w'" in err, err


def test_a_yaml_syntax_error_gives_the_line_column_and_problem_in_plain_words(tmp_path, capsys) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: q\nfamily: pipeline\nplatform: server_cpu_gpu_fpga\n"
                    "workload: {builder: gcn, dataset: cora\nobjectives: [throughput, energy]\n")
    code, _, err = run_cli(capsys, "validate", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{path}, line 5, column 11: YAML syntax error" in err, err
    assert "expected ',' or '}'" in err and "line 4" in err, err  # the unclosed '{' opened on line 4
    assert "field 'line" not in err and "= None" not in err, err


@pytest.mark.parametrize(("field", "typed", "suggested"), [
    ("family", "pipline", "pipeline"),
    ("workload", {"builder": "gnc", "dataset": "cora"}, "gcn"),
    ("workload", {"builder": "gcn", "dataset": "coraa"}, "cora"),
    ("platform", "server_cpu_gpu_fpg", "server_cpu_gpu_fpga"),
    ("objectives", ["througput", "energy"], "throughput"),
    ("cost_model", "rooflin", "roofline"),
    ("solver", {"name": "cpsta"}, "cpsat"),
    ("solver", {"name": "cpsat", "options": {"cpsta": {}}}, "cpsat"),
])
def test_every_mistyped_name_in_a_spec_gets_the_nearest_names(tmp_path, capsys, field, typed, suggested) -> None:
    path = write_yaml(tmp_path / "spec.yaml", {**TINY, field: typed})
    code, _, err = run_cli(capsys, "validate", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"did you mean '{suggested}'" in err, err


def test_a_heuristic_of_another_family_is_refused_when_the_spec_is_checked(tmp_path, capsys) -> None:
    path = write_yaml(tmp_path / "spec.yaml", {**TINY, "solver": {"name": "heuristic:heft"}})
    code, _, err = run_cli(capsys, "validate", str(path))
    assert code == 2 and "exists for the dag family, not for pipeline" in err, err


def test_a_mistyped_command_gets_the_nearest_command(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(["slove", "quickstart"])
    assert stop.value.code == 2
    assert "did you mean 'solve'" in capsys.readouterr().err




def test_edit_distance_by_hand() -> None:
    from dse.util.suggest import distance, nearest

    assert distance("kitten", "sitting") == 3  # the textbook example: k->s, e->i, +g
    assert distance("ca", "abc") == 3  # optimal string alignment: no edit of a swapped pair (Wikipedia's example)
    assert distance("gnc", "gcn") == 1 and distance("power", "power_w") == 2
    assert nearest("gnc", ["gin", "gcn", "gemm"]) == ["gcn"]  # gin is two edits away, gcn one swap
    assert nearest("idle", ["idle_w", "active_w"]) == ["idle_w"] and nearest("pt", ["cg"]) == []


def test_a_mistyped_catalog_name_or_choice_gets_the_nearest_names(capsys) -> None:
    code, _, err = run_cli(capsys, "catalog", "--details", "quickstrat")
    assert code == 2 and "did you mean 'quickstart'" in err, err
    with pytest.raises(SystemExit):
        cli.main(["results", "s.sqlite", "--export", "csvv"])
    assert "did you mean 'csv'" in capsys.readouterr().err


@pytest.mark.parametrize("typed", ["problems/quickstart.yml", "quickstart.yml", "Quickstart"])
def test_a_spec_named_like_a_catalog_problem_from_another_folder_suggests_it(typed, tmp_path, capsys,
                                                                             monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no problems/ folder here: the catalog's name is the nearest
    code, _, err = run_cli(capsys, "validate", typed)
    assert code == 2 and "file not found (did you mean 'quickstart'?)" in err, err


def test_a_mistyped_input_format_or_swept_field_gets_the_nearest_name(tmp_path, capsys) -> None:
    from dse.runs.sweep import expand_jobs
    from dse.store.database import JobResult, Store

    (tmp_path / "g.stg").write_text("1\n0 0 0\n")
    spec = write_yaml(tmp_path / "spec.yaml", {"name": "g", "family": "dag", "platform": "three_processors",
                                           "workload": {"format": "stgg", "path": "g.stg"}})
    code, _, err = run_cli(capsys, "validate", str(spec))
    assert code == 2 and "workload.format" in err and "did you mean 'stg'" in err, err
    with Store(tmp_path / "s.sqlite") as store:
        store.record(expand_jobs(TINY, {"constraints.power_w": [300]})[0], JobResult("done", ""))
    code, _, err = run_cli(capsys, "results", str(tmp_path / "s.sqlite"), "--plot", "--color", "constraints.power",
                        "--out", str(tmp_path / "f.png"))
    assert code == 2 and "did you mean 'constraints.power_w'" in err, err
