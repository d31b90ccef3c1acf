"""``dse explain``, ``dse catalog --details``, ``dse --version``, catalog names as specs, the tu note."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import dse
from dse import cli
from tests.cli.test_cli import run

ROOT = Path(__file__).resolve().parents[2]
DOT_SPEC = str(ROOT / "docs" / "examples" / "dot_spec.yaml")


def test_explain_genome_matches_hand_schedule(capsys) -> None:
    # docs/examples/diamond.dot on two processors, a, c, d on p0 and b on p1, priorities a, b, c, d.
    # By hand (docs/family-dag.md): a 0-10 on p0; b waits for a's 4 bytes at 1 byte/tu: 14-26 on p1;
    # c 10-25 on p0; d waits for b's 3 bytes: 29, runs 29-41. Makespan 41 tu.
    code, out, err = run(capsys, "explain", DOT_SPEC, "--genome", "0 1 0 0 0 1 2 3")
    assert code == 0, err
    assert "makespan 41 tu" in out
    assert "mapping: p0: a,c,d | p1: b" in out
    assert "tu = the workload's own abstract time unit" in out


def test_explain_point_of_a_solved_front(tmp_path, capsys) -> None:
    out_dir = tmp_path / "front"
    assert cli.main(["solve", DOT_SPEC, "--solver", "exhaustive", "--out", str(out_dir), "--quiet"]) == 0
    capsys.readouterr()
    frame = pd.read_csv(out_dir / "front.csv")
    code, out, err = run(capsys, "explain", DOT_SPEC, "--point", "0", "--from", str(out_dir))
    assert code == 0, err
    assert f"makespan {frame['makespan_tu'].iloc[0]:g} tu" in out


@pytest.mark.parametrize(("argv", "field"), [
    (["--genome", "0 1 0"], "--genome"),                      # too short
    (["--genome", "0 1 0 0 0 1 2 9"], "--genome"),            # priority past its bound (3)
    (["--genome", "0 x"], "--genome"),                        # not integers
    (["--point", "0"], "--from"),                             # --point without --from
])
def test_explain_bad_input_is_one_line(capsys, argv, field) -> None:
    code, out, err = run(capsys, "explain", DOT_SPEC, *argv)
    assert code == 2
    assert err.count("\n") == 1 and f"'{field}'" in err


def test_explain_point_out_of_range_and_missing_front(tmp_path, capsys) -> None:
    code, _, err = run(capsys, "explain", DOT_SPEC, "--point", "0", "--from", str(tmp_path))
    assert code == 2 and "front.csv" in err
    (tmp_path / "front.csv").write_text("solver,proven,genome\ncpsat,True,0 1 0 0 0 1 2 3\n")
    code, _, err = run(capsys, "explain", DOT_SPEC, "--point", "5", "--from", str(tmp_path))
    assert code == 2 and "has 1 rows" in err


def test_catalog_details_platform_builder_and_unknown(capsys) -> None:
    code, out, _ = run(capsys, "catalog", "--details", "server_cpu_gpu_fpga")
    assert code == 0
    assert "gpu (gpu): peak" in out and "GB/s" in out and "NVIDIA A100 datasheet" in out
    code, out, _ = run(capsys, "catalog", "--details", "gcn")
    assert code == 0
    assert "layers (int, default 2)" in out and "precision (str, default 'fp32')" in out
    code, _, err = run(capsys, "catalog", "--details", "no_such_thing")
    assert code == 2 and "'--details'" in err and "server_cpu_gpu_fpga" in err


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"dse {dse.__version__}"


def test_load_problem_and_cli_accept_catalog_name(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)  # not the checkout: the name is found in the catalog
    problem = dse.load_problem("quickstart")
    assert problem.name == "quickstart" and problem.family == "pipeline"
    code, out, _ = run(capsys, "validate", "quickstart")
    assert code == 0 and "ok: family pipeline" in out


def test_missing_catalog_name_is_file_error(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "validate", "no_such_problem")
    assert code == 2 and "file not found" in err


def test_hypervolume_ratio_only_against_a_complete_front() -> None:
    from dse.cli.app import compare_line
    from tests.viz.test_plot import _front

    approx = _front("nsga2", [(10, 5), (25, 10)], proven=False)
    complete = _front("cpsat", [(10, 5), (20, 8), (30, 12)])
    assert "reaches" in compare_line(complete, approx) and "hypervolume" in compare_line(complete, approx)
    # cut short: no ratio; the combined front is cpsat's (10, 5), nsga2's (25, 10) and cpsat's (30, 12)
    # ((20, 8) is kept too: nothing has more throughput at energy <= 8)
    partial = _front("cpsat", [(10, 5), (20, 8), (30, 12)], complete=False)
    line = compare_line(partial, approx)
    assert "no hypervolume ratio" in line and "reaches" not in line
    assert "cpsat gives 3 of its points, throughput 10 to 30" in line
    assert "nsga2 gives 1 of its points, throughput 25 to 25" in line


def test_solve_report_explains_tu(capsys) -> None:
    code = cli.main(["solve", DOT_SPEC, "--solver", "exhaustive", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "makespan_tu" in out and "(tu = the workload's own abstract time unit" in out


def test_infeasible_line_in_tu_explains_tu(tmp_path, capsys) -> None:
    # Topcuoglu's example at each task's fastest cost, transfers free: n1 9 -> n2 13 -> n9 12 -> n10 7
    # = 41 tu is the longest path, so a 30 tu deadline is infeasible (exit 3)
    spec = tmp_path / "deadline.yaml"
    spec.write_text("name: dl\nfamily: dag\nplatform: three_processors\nworkload: topcuoglu2002\n"
                    "objectives: [makespan]\nconstraints: {deadline: 30}\n")
    code, _, err = run(capsys, "solve", str(spec), "--quiet")
    assert code == 3 and err.count("\n") == 1
    assert "deadline 30 tu cannot be met" in err and "(tu: the workload's own time unit)" in err


def test_explain_prints_a_dag_schedule_with_start_and_finish_and_units(capsys) -> None:
    """docs/family-dag.md works this schedule by hand: a on p0 from 0 to 10, c after it to 25, b on p1
    from 14 (a's result after its transfer) to 26, d on p1 from 28 to 37."""
    from dse import cli

    assert cli.main(["explain", "docs/examples/dot_spec.yaml", "--genome", "0 1 0 1 0 1 2 3"]) == 0
    out = capsys.readouterr().out
    for line in ("a on p0: 0 - 10", "c on p0: 10 - 25", "b on p1: 14 - 26", "d on p1: 28 - 37"):
        assert line in out
    assert "schedule (start - finish, tu)" in out
    assert "of the limit to spare" in out


def test_explain_gives_memory_and_slack_units(capsys) -> None:
    from dse import cli

    assert cli.main(["explain", "quickstart", "--genome", "0 1 1 1 1 1 1 0 0"]) == 0  # 7 ops, cpu and gpu clocks
    out = capsys.readouterr().out
    assert "/40 GiB" not in out and "MiB of 40 GiB" in out  # was "memory 0.00102/40 GiB"
    assert "memory 0 B of 8 GiB" in out  # the unused FPGA
    assert all("of the limit" in line for line in out.splitlines() if line.strip().startswith("constraint"))
