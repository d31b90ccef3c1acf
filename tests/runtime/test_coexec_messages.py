"""What ``dse coexec`` says when one device ran alone: never a speed-up of a configuration over itself.

A run of one device alone in the best single device's configuration (that device, or a group of as many
threads) and the best single device's own re-timed run are two timings of one configuration: their ratio
is the machine's load between them, not a speed-up. The runs here are scripted (a stand-in executor whose
n-th timing is ``factors[n]`` times 1 ms per row), so every figure below is worked out by hand.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from dse import cli
from dse.mapping.split.contention import ContentionModel
from dse.mapping.split.model import SplitDevice, cpu_group_platform, gemm_workload
from dse.runtime import coexec
from dse.runtime.coexec import RunTiming

#: Two groups 3x slower beside each other: the plan keeps the first alone (180 ms split, 120 ms alone).
APART = ContentionModel(2, 0.0, ((("cpu:t1", "cpu:t1"), 3.0),))


class ScriptedExecutor:
    """Stands in for the co-executor: 1 ms per row on every device, the n-th timing ``factors[n]`` times that
    (the machine's load moving between timings); no threads, no BLAS."""

    def __init__(self, groups: list[int], factors: list[float], m: int = 120) -> None:
        self.workload = gemm_workload(m, 8, 8, "fp32", chunks=12)
        self.platform = cpu_group_platform(groups)
        self.factors = factors
        self.runs: list[list[int]] = []

    def timed(self, rows: list[tuple[int, int]], repeat: int = 3) -> RunTiming:
        counts = [b - a for a, b in rows]
        factor = self.factors[len(self.runs)]
        self.runs.append(counts)
        device = tuple(c * 1e-3 * factor for c in counts)
        return RunTiming(device, max(device))

    def reference(self) -> None:
        return None

    def check(self, expected: Any, tol: float) -> tuple[bool, float]:
        return True, 0.0

    def all_cores_s(self, repeat: int = 3) -> float:
        return 0.1


def _per_row(dev: SplitDevice, workload: Any, rows: np.ndarray) -> np.ndarray:
    return 1e-3 * np.asarray(rows, dtype=float)


def _run(executor: ScriptedExecutor, split: str | list[int], monkeypatch: pytest.MonkeyPatch) -> coexec.CoexecReport:
    monkeypatch.setattr(coexec, "probe_background", lambda *a, **k: coexec.Probe(1.0, 0.0, 2.0))  # idle
    return coexec._measure(executor, executor.workload, executor.platform, split, _per_row, "hand", 1, 0,  # type: ignore[arg-type]
                           coexec.silent(), [], APART, 0.1)


def test_a_planned_fall_back_timed_twice_is_no_speed_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # the plan keeps cpu:t1/0 alone (predicted 120 ms, as measured: factor 1, no adapt); the single-device
    # re-timings give cpu:t1/0 60 ms (factor 0.5) and cpu:t1/1 120 ms: the best single device is cpu:t1/0
    # itself, 120 / 60 = 2.00 between two runs of one configuration
    executor = ScriptedExecutor([1, 1], [1.0, 0.5, 1.0])
    report = _run(executor, "auto", monkeypatch)
    assert executor.runs == [[120, 0], [120, 0], [0, 120]]
    assert report.same_as_best_single and math.isnan(report.speedup_vs_best_single)
    text = report.summary()
    assert "speed-up" not in text, text
    assert ("ran cpu:t1/0 alone (the best single device): 120 ms; the re-timed single-device run 60 ms, a 2.00x "
            "difference between two runs of the same configuration: the machine was busy") in text, text
    assert "cpu:t1/0 alone: predicted 120 ms, measured 120 ms" in text and "co-executed" not in text, text
    data = report.to_dict()
    assert data["speedup_vs_best_single"] is None and data["same_as_best_single"] is True
    json.dumps(data, allow_nan=False)  # no NaN in report.json


def test_a_group_of_the_same_threads_is_the_same_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    # as above, but cpu:t1/1 re-times fastest (60 ms): another group of one thread, the same configuration;
    # 120 / 114 = 1.05, within the noise band
    executor = ScriptedExecutor([1, 1], [1.0, 1.0, 0.95])
    report = _run(executor, "auto", monkeypatch)
    assert report.best_single_device == "cpu:t1/1" and report.same_as_best_single
    assert ("the re-timed single-device run (cpu:t1/1) 114 ms, a 1.05x difference between two runs of the "
            "same configuration: run-to-run noise") in report.summary(), report.summary()


def test_a_measured_fall_back_is_the_single_run_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    # no pair slowdown known: the plan is 60/60 (60 ms), measured 3x (180 ms) twice, so it adapts with 3 ms
    # per row on both devices: 60/60 again, 180 ms; each alone then 120 ms: the report falls back to the
    # run of cpu:t1/0 alone, which is the best single device's own timing
    monkeypatch.setattr(coexec, "probe_background", lambda *a, **k: coexec.Probe(1.0, 0.0, 2.0))
    executor = ScriptedExecutor([1, 1], [3.0, 3.0, 3.0, 1.0, 1.0])
    report = coexec._measure(executor, executor.workload, executor.platform, "auto", _per_row, "hand", 1, 0,  # type: ignore[arg-type]
                             coexec.silent(), [], ContentionModel(2), 0.1)
    assert executor.runs == [[60, 60], [60, 60], [60, 60], [120, 0], [0, 120]]
    assert report.adapt is not None and "alone 120 ms" in report.adapt.fallback
    assert report.same_as_best_single and math.isnan(report.speedup_vs_best_single)
    assert "ran cpu:t1/0 alone (the best single device): 120 ms; no speed-up: no split beat one device" \
        in report.summary(), report.summary()


def test_another_configuration_alone_keeps_its_speed_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # an explicit split giving every row to cpu:t2/1 (120 ms) against cpu:t1/0 re-timed at 60 ms: two
    # configurations, a real (if poor) ratio: 60 / 120 = 0.5
    executor = ScriptedExecutor([1, 2], [1.0, 0.5, 1.0])
    report = _run(executor, [0, 120], monkeypatch)
    assert report.best_single_device == "cpu:t1/0" and not report.same_as_best_single
    assert report.speedup_vs_best_single == pytest.approx(0.5)
    assert "best single device cpu:t1/0: 60 ms; speed-up 0.500x" in report.summary(), report.summary()


def test_a_split_over_two_devices_reports_its_speed_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # 60/60 at 1 ms per row: 60 ms; each alone 120 ms: 2.000x
    executor = ScriptedExecutor([1, 1], [1.0, 1.0, 1.0])
    report = _run(executor, [60, 60], monkeypatch)
    assert not report.same_as_best_single and report.speedup_vs_best_single == pytest.approx(2.0)
    assert "co-executed: predicted" in report.summary() and "speed-up 2.000x" in report.summary()


def test_cli_one_device_alone_claims_no_speed_up(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert cli.main(["coexec", "--m", "64", "--n", "32", "--k", "32", "--split", "64,0", "--repeat", "1",
                     "--devices", "cpu:t1,cpu:t1", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ran cpu:t1/0 alone (the best single device)" in printed and "speed-up" not in printed, printed
    data = json.loads((out / "report.json").read_text())
    assert data["speedup_vs_best_single"] is None and data["same_as_best_single"] is True
