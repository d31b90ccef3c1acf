"""Output hygiene: dse solve writes to out/<problem name>/ without --out and says so; one unit per quantity.

Golden values: the folder the CLI help and README promise, and 1 J = 1000 mJ (docs/units.md: outputs
show millijoules per item).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import TINY_SPEC, run_cli, write_yaml

ROOT = Path(__file__).resolve().parents[2]
TINY = TINY_SPEC



def test_solve_without_out_writes_to_out_problem_name_and_says_so(tmp_path, capsys, monkeypatch) -> None:
    spec = write_yaml(tmp_path / "spec.yaml", TINY)
    monkeypatch.chdir(tmp_path)  # the working folder the default is relative to
    code, out, err = run_cli(capsys, "solve", str(spec), "--quiet")
    assert code == 0, err
    folder = tmp_path / "out" / "tiny"
    assert {"front.csv", "front.json", "pareto.png"} <= {p.name for p in folder.iterdir()}
    said = [line for line in out.splitlines() if "out/tiny" in line]
    assert len(said) == 1 and "--out" in said[0], out


def test_the_default_folder_is_one_safe_folder_name(tmp_path, monkeypatch) -> None:
    from dse.cli.app import DEFAULT_OUT_ROOT, default_out

    monkeypatch.chdir(tmp_path)  # outside the repository, where the tests' guard leaves the folder as it is
    assert DEFAULT_OUT_ROOT == Path("out")
    assert default_out("quickstart") == Path("out/quickstart")
    assert default_out("a/../b c") == Path("out/a_.._b_c") and default_out("..") == Path("out/problem")


def test_simulate_prints_energy_per_item_in_the_unit_solve_uses(tmp_path, capsys) -> None:
    # docs/units.md: outputs show millijoules per item; dse solve's pipeline column is energy_mj_per_item
    data = yaml.safe_load((ROOT / "problems" / "dype_phases.yaml").read_text())
    data["platform"] = "server_cpu_gpu_fpga"
    data["scenario"]["stream"] = {"kind": "phases", "repeat": 1,
                                  "phases": [{"input": "sparse", "length": 2}, {"input": "dense", "length": 2}]}
    data["scenario"]["library"] = {"regimes": 2, "exact": "exhaustive", "nsga2": False}
    path = write_yaml(tmp_path / "scenario.yaml", data)
    code, out, err = run_cli(capsys, "simulate", str(path), "--out", str(tmp_path / "sim"), "--quiet")
    assert code == 0, err
    table_header = out.splitlines()[0]
    assert "energy_mj_per_item" in table_header and "energy_j_per_item" not in table_header, out
    # the file keeps SI units (joules per item): the console says both
    assert "summary.csv has energy_j_per_item in J/item; shown here as energy_mj_per_item in mJ/item" in out, out
    summary = pd.read_csv(tmp_path / "sim" / "summary.csv")
    joules = summary.set_index("policy")[[c for c in summary.columns if c.startswith("energy_")][0]]
    unit = 1e3 if "energy_j_per_item" in summary.columns else 1.0
    lines = {line.split()[0]: line.split() for line in out.splitlines()[1:len(summary) + 1]}
    header = out.splitlines()[0].split()
    column = header.index("energy_mj_per_item")
    for policy, value in joules.items():
        assert float(lines[str(policy)][column]) == pytest.approx(value * unit, rel=1e-4)


def test_the_report_of_a_simulate_folder_shows_energy_per_item_in_mj(tmp_path) -> None:
    from dse.store.report.collect import simulate_data

    folder = tmp_path / "sim"
    folder.mkdir()
    pd.DataFrame({"policy": ["dynamic"], "throughput_items_per_s": [100.0], "energy_j_per_item": [0.025],
                  "optimal_share": [1.0], "switches": [0]}).to_csv(folder / "summary.csv", index=False)
    summary = simulate_data(folder)["summary"]
    assert summary["columns"] == ["policy", "throughput_items_per_s", "energy_mj_per_item", "optimal_share",
                                  "switches"]
    assert summary["rows"][0][2] == pytest.approx(25.0)  # 0.025 J = 25 mJ
