"""Units in the output files: every column of every ``summary.csv`` and ``trace.csv`` names its unit (or is
a count, a ratio, a score, a flag or a label, as docs/units.md's table says), the report reads it from the
name, and the console says both units where it shows another than the file.

The yardstick is docs/units.md's table of files (what a user reads); the UXCost floor's scope line is the
wording the issue asked for.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dse.errors import SpecError
from dse.runtime import stream, xr_scenario
from dse.sim import realtime
from dse.sim.ux_bound import scope
from dse.store.report.collect import simulate_data
from dse.util.units import column_unit, shown_units_note

ROOT = Path(__file__).resolve().parents[2]
#: What the docs table says of a column whose name carries no unit.
UNITLESS = ("label", "flag", "count", "ratio", "score", "index", "indices")
#: The files ``dse simulate`` writes, by (file, family) as the docs table names them, and their columns.
WRITTEN = {("summary.csv", "pipeline"): stream.SUMMARY_COLUMNS, ("trace.csv", "pipeline"): stream.TRACE_COLUMNS,
           ("summary.csv", "multimodel"): xr_scenario.SUMMARY_COLUMNS,
           ("trace.csv", "multimodel"): realtime.TRACE_COLUMNS}


def documented_units() -> dict[tuple[str, str], dict[str, str]]:
    """docs/units.md's table of files: per (file, family) each column named in it and its unit cell."""
    text = (ROOT / "docs" / "units.md").read_text()
    table = text.split("## The columns of the output files", 1)[1]
    out: dict[tuple[str, str], dict[str, str]] = {}
    current: tuple[str, str] | None = None
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("file", "---"):
            continue
        if cells[0]:
            file = re.match(r"`([^`]+)`", cells[0])
            family = "multimodel" if "multimodel" in cells[0] else "pipeline" if "pipeline" in cells[0] else ""
            current = (file.group(1), family) if file else None
        if current is not None:
            for name in re.findall(r"`([^`]+)`", cells[1]):
                out.setdefault(current, {})[name] = cells[2]
    return out


@pytest.mark.parametrize("where", list(WRITTEN))
def test_every_written_column_has_its_unit_in_the_docs(where) -> None:
    documented = documented_units()[where]
    for column in WRITTEN[where]:
        assert column in documented, f"docs/units.md does not list {column} of {where}"
        unit = column_unit(column)
        if unit:
            assert documented[column] == unit, (column, documented[column], unit)
        else:
            assert documented[column].startswith(UNITLESS), (column, documented[column])


def test_column_units_are_read_from_the_names() -> None:
    assert [column_unit(c) for c in ("throughput_items_per_s", "energy_j_per_item", "energy_mj_per_item",
                                     "edp_j_s", "duration_s", "energy_j", "start_ms", "energy_mj", "makespan_tu",
                                     "switches", "uxcost")] == [
        "items/s", "J/item", "mJ/item", "J s", "s", "J", "ms", "mJ", "tu", "", ""]


def test_the_console_says_both_units() -> None:
    summary = pd.DataFrame({"policy": ["dynamic"], "energy_j_per_item": [0.025]})
    assert shown_units_note(summary, "summary.csv") == (
        "summary.csv has energy_j_per_item in J/item; shown here as energy_mj_per_item in mJ/item")
    assert shown_units_note(pd.DataFrame({"scheduler": ["fcfs"], "energy_j": [1.0]}), "summary.csv") is None


def test_the_floor_scope_line() -> None:
    assert scope(["planaria"]) == ("for schedules on whole accelerators; Planaria-style sub-array schedules "
                                   "(planaria) are not covered")
    assert scope([]) == "for schedules on whole accelerators (every scheduler of this run)"


def test_the_report_of_a_simulate_folder_has_units_and_the_floor_with_its_scope(tmp_path) -> None:
    folder = tmp_path / "sim"
    folder.mkdir()
    pd.DataFrame({"scheduler": ["fcfs", "planaria", "dream"], "uxcost": [1.0, 0.90763, 0.91255],
                  "edp_j_s": [0.07, 0.12, 0.05], "energy_j": [10.8, 9.8, 9.9], "duration_s": [10.0, 10.0, 10.0],
                  "drop_rate": [0.0, 0.0, 0.0], "xrbench_score": [99.6, 99.7, 99.7],
                  "whole_accelerators": [True, False, True], "uxcost_floor": [0.5, 0.5, 0.5],
                  "uxcost_floor_kept": [0.91255, 0.91255, 0.91255]}).to_csv(folder / "summary.csv", index=False)
    data = simulate_data(folder)
    assert data["summary"]["units"] == ["", "", "J s", "J", "s", "", "", "", "", ""]
    assert data["floor"] == {"uxcost": 0.5, "uxcost_kept": 0.91255, "uncovered": ["planaria"],
                             "scope": scope(["planaria"])}
    assert data["notes"][0] == ("UXCost floor 0.5 (0.91255 for schedules that miss only the frames that cannot make "
                                "their deadlines alone), for schedules on whole accelerators; Planaria-style "
                                "sub-array schedules (planaria) are not covered")


def test_the_report_of_a_stream_folder_has_units_and_no_floor(tmp_path) -> None:
    folder = tmp_path / "sim"
    folder.mkdir()
    pd.DataFrame({"policy": ["dynamic"], "throughput_items_per_s": [100.0], "energy_j_per_item": [0.025],
                  "optimal_share": [1.0], "switches": [0], "duration_s": [2.0]}).to_csv(folder / "summary.csv",
                                                                                      index=False)
    data = simulate_data(folder)
    assert data["summary"]["columns"][2] == "energy_mj_per_item" and data["summary"]["rows"][0][2] == pytest.approx(25.0)
    assert data["summary"]["units"] == ["", "items/s", "mJ/item", "", "", "s"]
    assert data["floor"] is None


def test_a_damaged_floor_is_one_spec_error(tmp_path) -> None:
    folder = tmp_path / "sim"
    folder.mkdir()
    pd.DataFrame({"scheduler": ["fcfs"], "uxcost": [1.0], "whole_accelerators": [True], "uxcost_floor": ["abc"],
                  "uxcost_floor_kept": [0.9]}).to_csv(folder / "summary.csv", index=False)
    with pytest.raises(SpecError, match=r"summary\.csv: field 'uxcost_floor' = 'abc': is not a number"):
        simulate_data(folder)
