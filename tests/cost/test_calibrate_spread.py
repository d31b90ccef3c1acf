"""``dse calibrate`` on a busy machine: a spread between rounds above 20% gets one line saying the fit is
unreliable and, for CPU groups timed by the wall clock, the ``--clock thread`` command to run instead; the
table fits the terminal's width, coefficients wrapped, figures whole.

The report frames are written by hand (spreads and coefficients chosen here); the command runs with a
stand-in ``run_calibration`` that returns them, so nothing is measured.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dse.cli import main
from dse.cli.commands.calibrate import spread_note
from dse.cost.calibration import measure
from dse.cost.calibration.measure import KERNEL_TERMS, Calibration, KernelFit, MachineInfo

GPU = ("cuda", "tensorcore")
COEFFICIENTS = ("rows=7.53e-09, nnz=1.91e-09, out_bytes=8.44e-11, flops=4.75e-11, "
                "gather_inner_miss_bytes=1.1e-11, gather_miss_rows=9e-09, flops_x_row_cv=9.38e-13")


def _report(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    """A report frame with one row per (kernel, device, spread), the other columns fixed."""
    return pd.DataFrame([{"kernel": k, "device": d, "dtype": "fp32", "samples": 24, "heldout": 16,
                          "mape_heldout": 0.168, "spread": s, "coefficients": COEFFICIENTS} for k, d, s in rows])


def test_a_busy_wall_clock_run_is_told_the_thread_clock_command() -> None:
    report = _report([("gemm", "cpu", 0.05), ("gemm", "cpu:t1", 1.047), ("spmv", "cpu", 0.30),
                      ("spmm", "cpu", 0.20)])
    # the worst is gemm on cpu:t1 (104.7%); gemm and spmv are over 20%, spmm at exactly 20% is not
    assert spread_note(report, "wall", GPU) == (
        "note: gemm on cpu:t1: timings spread 104.7% between rounds (over 20% makes a fit unreliable): the "
        "machine was busy; the thread clock does not count other programs' time: "
        "dse calibrate --kernels gemm,spmv --devices cpu:t1 --clock thread")


def test_no_note_within_the_limit_or_without_a_spread() -> None:
    assert spread_note(_report([("gemm", "cpu", 0.2), ("spmv", "cpu:t1", 0.031)]), "wall", GPU) is None
    assert spread_note(_report([("gemm", "cuda", math.nan)]), "wall", GPU) is None


@pytest.mark.parametrize(("rows", "clock"), [
    ([("spmv", "cpu:t1", 0.45)], "thread"),  # already the thread clock
    ([("gemm", "tensorcore", 0.45), ("gemm", "cpu", 0.1)], "wall"),  # only a GPU is noisy: no thread clock there
])
def test_where_the_thread_clock_cannot_help_an_idle_machine_is_advised(rows, clock: str) -> None:
    note = spread_note(_report(rows), clock, GPU)
    assert note is not None and note.endswith("; calibrate again on an idle machine") and "45.0%" in note
    assert "--clock" not in note


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch):
    """``run_calibration`` returning a hand-made calibration and the report frame the test sets."""
    fit = KernelFit("spmm", "cpu", "fp32", KERNEL_TERMS["spmm"], tuple(1e-9 for _ in KERNEL_TERMS["spmm"]),
                    0.168, 24, 16)
    calibration = Calibration(MachineInfo.current(), (fit,), "test", "made by hand")
    frames: dict[str, pd.DataFrame] = {}
    monkeypatch.setattr(measure, "run_calibration", lambda *args, **kwargs: (calibration, frames["report"]))
    return frames


def test_the_command_prints_the_note_once_on_stderr(stand_in, capsys) -> None:
    stand_in["report"] = _report([("spmm", "cpu", 2.56)])
    assert main(["calibrate", "--kernels", "spmm", "--devices", "cpu", "--quick", "--quiet"]) == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if "spread" in line]
    assert notes == ["note: spmm on cpu: timings spread 256.0% between rounds (over 20% makes a fit "
                     "unreliable): the machine was busy; the thread clock does not count other programs' "
                     "time: dse calibrate --kernels spmm --devices cpu:t1 --clock thread"]
    stand_in["report"] = _report([("spmm", "cpu", 0.087)])
    assert main(["calibrate", "--kernels", "spmm", "--devices", "cpu", "--quick", "--quiet"]) == 0
    assert "spread" not in capsys.readouterr().err


def test_the_table_fits_the_terminal_with_every_coefficient(stand_in, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    stand_in["report"] = _report([("spmm", "cpu", 0.087), ("spmm", "cpu:t1", 0.5)])
    assert main(["calibrate", "--kernels", "spmm", "--devices", "cpu,cpu:t1", "--quick", "--quiet"]) == 0
    out = capsys.readouterr().out
    table = out.split("\nmachine:")[0].splitlines()
    assert max(len(line) for line in table) <= 80, out
    # every coefficient whole, twice (one row each), and the percentages right-aligned under their names
    words = " ".join(table).split()
    assert all(words.count(term) == 2 for term in COEFFICIENTS.split()), out
    header, row = table[0], next(line for line in table if line.startswith("spmm"))
    assert row[:header.index("spread") + len("spread")].endswith(" 8.7%"), out
    assert row[:header.index("mape_heldout") + len("mape_heldout")].endswith(" 16.8%"), out
