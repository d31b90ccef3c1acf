"""CLI tables fit the terminal's width (100 columns when not a terminal): the mapping column is wrapped
beside the figures or under each row, a table of figures too wide is cut into blocks of whole columns
opening with the job id; the figures are never cut. ``dse results`` on an empty store says so.

Golden texts are written by hand from the frames below (values chosen to print exactly under ``{:.5g}``).
"""

from __future__ import annotations

import pandas as pd
import pytest

import dse
from dse.cli.app import MAX_TABLE_ROWS, _print_report
from dse.cli.tables import fit_table, wrap_text
from dse.runs.sweep import expand_jobs
from dse.store.batch import run_job
from dse.store.database import JobResult, Store
from tests.conftest import TINY_SPEC, run_cli

MAPPING = "gpu: l0.combine | cpu: l0.aggregate,log_softmax | fpga: l1.aggregate,l1.combine @ cpu 1500 MHz"
FRONT = pd.DataFrame({"proven": [True, False], "throughput_items_per_s": [14794.0, 7800.25],
                      "latency_ms": [0.29281, 0.1282], "mapping": [MAPPING, "gpu: all"]})


@pytest.mark.parametrize("table", [FRONT, FRONT.to_dict("list")], ids=["frame", "mapping"])
def test_the_mapping_wraps_beside_the_figures(table) -> None:
    # the figures take 6 + 2 + 22 + 2 + 10 = 42 columns; the mapping gets 80 - 42 - 2 = 36, broken after
    # spaces and commas; a mapping of columns (dse solve's report, without pandas) lays out as the frame
    assert fit_table(table, 80, wrap="mapping").splitlines() == [
        "proven  throughput_items_per_s  latency_ms  mapping",
        "  True                   14794     0.29281  gpu: l0.combine | cpu: l0.aggregate,",
        "                                            log_softmax | fpga: l1.aggregate,",
        "                                            l1.combine @ cpu 1500 MHz",
        " False                  7800.2      0.1282  gpu: all",
    ]


def test_the_mapping_goes_under_each_row_when_the_figures_leave_too_little_room() -> None:
    # 60 - 42 - 2 = 16 columns beside the figures, fewer than 30: under each row, in 60 - 4 = 56
    assert fit_table(FRONT, 60, wrap="mapping").splitlines() == [
        "proven  throughput_items_per_s  latency_ms",
        "    mapping",
        "  True                   14794     0.29281",
        "    gpu: l0.combine | cpu: l0.aggregate,log_softmax | fpga:",
        "    l1.aggregate,l1.combine @ cpu 1500 MHz",
        " False                  7800.2      0.1282",
        "    gpu: all",
    ]


def test_a_wide_table_is_cut_into_blocks_of_whole_columns_each_with_the_job() -> None:
    frame = pd.DataFrame({"job": ["a1b2c3", "d4e5f6"], "status": ["done", "infeasible"],
                          "constraints.power_w": [300, 400], "best_throughput_items_per_s": [14794.0, 13838.0],
                          "best_energy_mj_per_item": [21.4, 10.854], "wall_s": [6.2709, 2.381]})
    text = fit_table(frame, 60, key="job")
    assert text.split("\n\n") == [
        "job     status      constraints.power_w\n"
        "a1b2c3  done                        300\n"
        "d4e5f6  infeasible                  400",
        "job     best_throughput_items_per_s  best_energy_mj_per_item\n"
        "a1b2c3                        14794                     21.4\n"
        "d4e5f6                        13838                   10.854",
        "job     wall_s\n"
        "a1b2c3  6.2709\n"
        "d4e5f6   2.381",
    ]
    assert "\n\n" not in fit_table(frame, 200, key="job")  # one block when it fits


def test_a_figure_wider_than_the_terminal_is_never_cut() -> None:
    frame = pd.DataFrame({"job": ["a"], "x": [123456789.0]})
    # "job" is 3 wide, then 2 spaces, then the 9 digits: 14 columns in a terminal of 5
    assert fit_table(frame, 5, key="job", float_format="{:.9g}").splitlines() == ["job          x", "a    123456789"]


def test_wrap_text_breaks_after_spaces_and_commas_and_cuts_only_longer_runs() -> None:
    assert wrap_text("a b, c", 3) == ["a", "b,", "c"]
    assert wrap_text("l0.aggregate,l1.aggregate", 8) == ["l0.aggre", "gate,", "l1.aggre", "gate"]
    assert wrap_text("gpu: all", 40) == ["gpu: all"]


def _table_lines(out: str) -> list[str]:
    """The lines of the first front table in ``dse solve``'s report: its header to the next blank line."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("proven"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


@pytest.mark.parametrize("columns", [100, 72, 64])
def test_the_front_table_fits_the_terminal_and_keeps_every_figure(capsys, monkeypatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    problem = dse.load_problem("quickstart")
    front = dse.solve(problem, "cpsat", time_limit=20, seed=0, progress=False)
    capsys.readouterr()
    _print_report(problem, [front])
    out = capsys.readouterr().out
    table = _table_lines(out)
    assert max(len(line) for line in table) <= columns, "\n".join(table)
    # The quickstart's front has 28 points, more than the table's rows: the table shows an evenly spread
    # sample of MAX_TABLE_ROWS - 1 points and the knee (MAX_TABLE_ROWS - 1 rows when the knee is one of
    # the sample), its ends among them, and says how many it shows.
    n = len(front.points)
    rows = [line.split() for line in table[1:] if line.split()[:1] in (["True"], ["False"])]
    assert n > MAX_TABLE_ROWS and MAX_TABLE_ROWS - 1 <= len(rows) <= MAX_TABLE_ROWS
    assert f"({len(rows)} of {n} points shown, the knee among them" in out
    # every figure whole: a row's objective values are a front point's, each as {:.5g} writes it
    by_figures = {tuple(f"{abs(v):.5g}" for v in p.objectives.values()): p for p in front.points}
    k = len(front.points[0].objectives)
    assert all(tuple(r[1:1 + k]) in by_figures for r in rows), rows
    shown = [by_figures[tuple(r[1:1 + k])] for r in rows]
    assert len({id(p) for p in shown}) == len(rows)
    assert front.points[0] in shown and front.points[-1] in shown and front.knee() in shown
    mappings = "".join(" ".join(table).split())
    assert all("".join(problem.describe(p.genome).split()) in mappings for p in shown)


def test_the_jobs_table_fits_the_terminal(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    grid = {"constraints.power_w": [300, 400], "solver.seed": [0], "solver.name": "cpsat",
            "solver.time_limit_s": 5}
    with Store(tmp_path / "s.sqlite") as store:
        for job in expand_jobs(TINY_SPEC, grid):
            store.record(job, JobResult.from_dict(run_job(job.spec, job.source, job.base)))
    code, out, _ = run_cli(capsys, "results", str(tmp_path / "s.sqlite"))
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 100, out
    blocks = out.split("\n\n")[:-1]  # the table's blocks, then the count
    assert len(blocks) >= 2 and all(b.startswith("job ") for b in blocks), out
    assert all(name in out for name in ("constraints.power_w", "solver.time_limit_s", "front_size",
                                        "best_throughput_items_per_s", "best_energy_mj_per_item", "wall_s"))
    assert out.rstrip().endswith("2 jobs: 2 done"), out


def test_results_on_an_empty_store_says_it_is_empty(tmp_path, capsys) -> None:
    path = tmp_path / "empty.sqlite"
    with Store(path):
        pass
    code, out, err = run_cli(capsys, "results", str(path))
    assert code == 0 and err == ""
    assert out.splitlines() == [f"0 jobs: the store {path} is empty (dse batch SPEC --store {path} fills it)"]


def test_results_whose_filter_keeps_no_job_says_so(tmp_path, capsys) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        job = expand_jobs(TINY_SPEC)[0]
        store.record(job, JobResult("infeasible", "infeasible: power cap 1 W cannot be met"))
    code, out, _ = run_cli(capsys, "results", str(tmp_path / "s.sqlite"), "--where", "status == 'done'")
    assert code == 0
    assert out.splitlines() == ["0 jobs: none of the store's 1 job meets --where status == 'done'"]
