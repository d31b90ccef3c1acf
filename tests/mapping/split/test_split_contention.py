"""Contention between co-running split devices: the processor-sharing model by hand, POAS's adapt step and the
fall-back to one device with a stand-in executor, and the calibration file's contention figures."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from dse import cli
from dse.cost.calibration.measure import (
    Calibration,
    KernelFit,
    MachineInfo,
    PairContention,
    calibration_to_dict,
    contention_estimate,
    contention_pairs,
    load_calibration,
    save_calibration,
)
from dse.errors import SpecError
from dse.mapping.split.contention import (
    ContentionModel,
    capacity_from_share,
    corun_factor,
    finish_times,
)
from dse.mapping.split.model import (
    CalibratedSplitModel,
    SplitDevice,
    SplitPlatform,
    cpu_group_platform,
    gemm_workload,
)
from dse.runtime import coexec
from dse.runtime.coexec import RunTiming, plan_split

PAIR = (("cpu:t1", "cpu:t1"), 1.2)


def test_finish_times_by_hand() -> None:
    # two one-thread groups on 2 cores beside 2 busy threads, 1.2x slower beside each other; works 0.1 s, 0.3 s.
    # both run: 4 threads on 2 cores -> 0.5 of a core each, / 1.2 -> rate 0.41667: group 0 done at 0.24 s,
    # group 1 has done 0.1 s of work; then 3 threads -> 2/3 of a core, no partner: 0.2 / (2/3) = 0.3 s more.
    model = ContentionModel(cores=2, background=2.0, slowdown=(PAIR,))
    done = finish_times([0.1, 0.3], cpu_group_platform([1, 1]).devices, model)
    np.testing.assert_allclose(done, [0.24, 0.54])
    # alone on an idle machine: the work itself; an empty part finishes at 0
    np.testing.assert_allclose(finish_times([0.1, 0.0], cpu_group_platform([1, 1]).devices,
                                            ContentionModel(cores=2, slowdown=(PAIR,))), [0.1, 0.0])


def test_an_accelerator_takes_a_core_but_keeps_its_rate() -> None:
    gpu = SplitDevice(name="cuda", kind="gpu", fit_device="cuda", mem_bytes=10**9, pool="gpu0", active_w=1, idle_w=0)
    devices = (cpu_group_platform([2]).devices[0], gpu)
    # 2 cores, 1 background thread: the group's 2 threads + the GPU's host thread + 1 = 4 -> 0.5 each
    done = finish_times([0.1, 0.1], devices, ContentionModel(cores=2, background=1.0))
    np.testing.assert_allclose(done, [0.175, 0.1])  # 0.05 s of work in the first 0.1 s, the other 0.05 at 2/3


def test_capacity_from_a_probe_by_hand() -> None:
    assert capacity_from_share(0.5, threads=2, background=2.0, cores=2) == pytest.approx(2.0)  # 0.5 x (2 + 2)
    assert capacity_from_share(0.3, threads=2, background=0.0, cores=2) == pytest.approx(0.6)  # other sessions
    assert capacity_from_share(0.9, threads=2, background=4.0, cores=2) == 2.0                 # at most the cores
    assert capacity_from_share(1.0, threads=2, background=0.0, cores=2) == 2.0


def test_other_sessions_cap_the_group_so_a_single_group_gets_the_same_cores() -> None:
    # our group gets 0.6 cores (other sessions take the rest): two groups get 0.3 each, one alone 0.6;
    # halves of 0.1 s each take 0.05 / 0.3 = 0.1667 s, the whole on one group 0.1 / 0.6 = 0.1667 s: no gain
    model = ContentionModel(cores=2, capacity=0.6)
    devices = cpu_group_platform([1, 1]).devices
    np.testing.assert_allclose(finish_times([0.05, 0.05], devices, model), [1 / 6, 1 / 6])
    np.testing.assert_allclose(finish_times([0.1, 0.0], devices, model), [1 / 6, 0.0])


def test_corun_factor_by_hand() -> None:
    platform = cpu_group_platform([1, 1])
    np.testing.assert_allclose(corun_factor(platform, ContentionModel(2, 2.0, (PAIR,))), [2.4, 2.4])  # 1.2 / 0.5
    np.testing.assert_allclose(corun_factor(platform, ContentionModel(2, 0.0, ())), [1.0, 1.0])


def test_plan_keeps_one_device_when_splitting_is_predicted_not_to_pay() -> None:
    w = gemm_workload(120, 8, 8, "fp32", chunks=12)
    platform = cpu_group_platform([1, 1])
    predict = _per_row([1e-3, 1e-3])
    # 3x slower beside each other: halves take 60 ms x 3 = 180 ms > 120 ms for one group alone
    bounds, why = plan_split(w, platform, predict, ContentionModel(2, 0.0, ((("cpu:t1", "cpu:t1"), 3.0),)))
    assert bounds == [(0, 120), (0, 0)] and "alone predicted 120 ms" in why
    bounds, why = plan_split(w, platform, predict, ContentionModel(2, 0.0, (PAIR,)))
    assert bounds == [(0, 60), (60, 120)] and why == ""


def _per_row(seconds: list[float]) -> Any:
    def predict(dev: SplitDevice, workload: Any, rows: np.ndarray) -> np.ndarray:
        return seconds[int(dev.name.rsplit("/", 1)[1])] * np.asarray(rows, dtype=float)
    return predict


class FakeExecutor:
    """Stands in for the co-executor: device ``d`` takes ``true_s[d]`` per row, ``corun`` times that while
    another device runs beside it (no threads, no BLAS)."""

    def __init__(self, m: int, true_s: list[float], corun: float = 1.0) -> None:
        self.workload = gemm_workload(m, 8, 8, "fp32", chunks=12)
        self.platform = cpu_group_platform([1] * len(true_s))
        self.true_s, self.corun = true_s, corun
        self.runs: list[list[int]] = []

    def timed(self, rows: list[tuple[int, int]], repeat: int = 3) -> RunTiming:
        counts = [b - a for a, b in rows]
        self.runs.append(counts)
        together = sum(1 for c in counts if c) > 1
        device = tuple(c * s * (self.corun if together else 1.0) for c, s in zip(counts, self.true_s, strict=True))
        return RunTiming(device, max(device))

    def reference(self) -> None:
        return None

    def check(self, expected: Any, tol: float) -> tuple[bool, float]:
        return True, 0.0

    def all_cores_s(self, repeat: int = 3) -> float:
        return 1.0


def _auto(executor: FakeExecutor, predict: Any, monkeypatch: pytest.MonkeyPatch) -> coexec.CoexecReport:
    monkeypatch.setattr(coexec, "probe_background", lambda *a, **k: coexec.Probe(1.0, 0.0, 2.0))  # idle
    return coexec._measure(executor, executor.workload, executor.platform, "auto", predict, "hand", 1, 0,  # type: ignore[arg-type]
                           coexec.silent(), [], ContentionModel(2), 0.1)


def test_adapt_keeps_a_split_measured_as_predicted(monkeypatch: pytest.MonkeyPatch) -> None:
    executor = FakeExecutor(120, [1e-3, 1e-3])
    report = _auto(executor, _per_row([1e-3, 1e-3]), monkeypatch)
    assert report.adapt is not None and not report.adapt.adapted and report.adapt.fallback == ""
    assert [d.rows for d in report.devices] == [60, 60] and report.predicted_s == pytest.approx(0.06)
    assert executor.runs[0] == [60, 60] and executor.runs[1:] == [[120, 0], [0, 120]]  # then each device alone


def test_adapt_resplits_with_the_measured_rates(monkeypatch: pytest.MonkeyPatch) -> None:
    # device 1 is really 2 ms per row, predicted 1 ms: 60/60 measures 60 and 120 ms (-50%, beyond 10%);
    # with the measured rates max(r0 x 1, r1 x 2) over 10-row steps is least at 80/40: 80 ms, as then measured
    executor = FakeExecutor(120, [1e-3, 2e-3])
    report = _auto(executor, _per_row([1e-3, 1e-3]), monkeypatch)
    assert report.adapt is not None and report.adapt.adapted
    assert [d.rows for d in report.adapt.first] == [60, 60]
    assert report.adapt.first[1].error == pytest.approx(-0.5)
    assert [d.rows for d in report.devices] == [80, 40]
    assert report.predicted_s == pytest.approx(0.08) and report.measured_s == pytest.approx(0.08)
    assert report.to_dict()["adapt"]["adapted"] is True


class NoisyOnceExecutor(FakeExecutor):
    """The first timing is ``burst`` times slower on every device (another program ran then), later ones are true."""

    def __init__(self, m: int, true_s: list[float], burst: float) -> None:
        super().__init__(m, true_s)
        self.burst = burst

    def timed(self, rows: list[tuple[int, int]], repeat: int = 3) -> RunTiming:
        run = super().timed(rows, repeat)
        if len(self.runs) == 1:
            return RunTiming(tuple(t * self.burst for t in run.device_s), run.total_s * self.burst)
        return run


def test_adapt_re_times_before_moving_the_split_for_a_noisy_first_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    # predicted as true (1 ms per row); the first timing is 1.15x slow (-13%, beyond 10%), the second true: their
    # mean, 1.075x, is 7% off, within 10%, so the split stays 60/60; its measured time is that mean, 64.5 ms
    executor = NoisyOnceExecutor(120, [1e-3, 1e-3], burst=1.15)
    report = _auto(executor, _per_row([1e-3, 1e-3]), monkeypatch)
    assert report.adapt is not None and not report.adapt.adapted
    assert executor.runs[:2] == [[60, 60], [60, 60]] and executor.runs[2:] == [[120, 0], [0, 120]]
    assert [d.rows for d in report.devices] == [60, 60] and report.measured_s == pytest.approx(0.0645)


def test_adapt_moves_the_split_when_the_second_timing_confirms_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # device 1 really takes 2 ms per row: both timings of 60/60 show it, so the split moves to 80/40 (as above)
    executor = FakeExecutor(120, [1e-3, 2e-3])
    report = _auto(executor, _per_row([1e-3, 1e-3]), monkeypatch)
    assert executor.runs[:3] == [[60, 60], [60, 60], [80, 40]]
    assert report.adapt is not None and report.adapt.adapted and [d.rows for d in report.devices] == [80, 40]


def test_falls_back_to_one_device_when_splitting_is_measured_not_to_pay(monkeypatch: pytest.MonkeyPatch) -> None:
    # side by side both take 3x as long (unknown to the model): 60/60 measures 180 ms, one alone 120 ms
    executor = FakeExecutor(120, [1e-3, 1e-3], corun=3.0)
    report = _auto(executor, _per_row([1e-3, 1e-3]), monkeypatch)
    assert report.adapt is not None and "alone 120 ms" in report.adapt.fallback
    assert [d.rows for d in report.devices] == [120, 0] and report.measured_s == pytest.approx(0.12)
    assert math.isnan(report.speedup_vs_best_single)  # the best single device's own run: no speed-up claimed


def _calibration(contention: tuple[PairContention, ...] = ()) -> Calibration:
    fit = KernelFit("gemm", "cpu:t1", "fp32", ("const", "flops"), (0.0, 1e-10), 0.05, 10)
    return Calibration(MachineInfo.current(), (fit,), "hand", "", contention)


def test_contention_round_trip_and_files_without_it(tmp_path: Path) -> None:
    pair = PairContention("cpu:t1", "cpu:t1", 1.25, 0.04, 5)
    save_calibration(_calibration((pair,)), tmp_path / "new.yaml")
    loaded = load_calibration(tmp_path / "new.yaml")
    assert loaded.contention == (pair,) and loaded.slowdown("cpu:t1", "cpu:t1") == 1.25
    data = calibration_to_dict(_calibration((pair,)))
    del data["contention"]  # a file written before contention was measured
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    old = load_calibration(tmp_path / "old.yaml")
    assert old.contention == () and old.slowdown("cpu:t1", "cpu:t1") is None


@pytest.mark.parametrize(("entry", "field"), [
    ({"device": "cpu:t1", "beside": "cpu:t1", "slowdown": 0.5}, "contention[0].slowdown"),
    ({"device": "npu", "beside": "cpu:t1", "slowdown": 1.1}, "contention[0].device"),
    ({"device": "cpu:t1", "slowdown": 1.1}, "contention[0].beside"),
])
def test_bad_contention_entries_name_the_field(tmp_path: Path, entry: dict[str, Any], field: str) -> None:
    data = calibration_to_dict(_calibration())
    data["contention"] = [entry]
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_calibration(tmp_path / "bad.yaml")
    assert info.value.field == field and info.value.source == str(tmp_path / "bad.yaml")


def test_calibrated_split_model_stretches_parts_by_the_pair_slowdown(tmp_path: Path) -> None:
    # 1e-10 s per flop; 2 one-thread groups on this machine's cores, beside each other 1.25x: a 20-row part of a
    # 200x100x50 GEMM (10 chunks) takes 2 x 20 x 100 x 50 x 1e-10 s = 20 us alone, 25 us side by side
    w = gemm_workload(200, 100, 50, "fp32", chunks=10)
    platform = cpu_group_platform([1, 1])
    for contention, expected_ns in (((), 20_000), ((PairContention("cpu:t1", "cpu:t1", 1.25),), 25_000)):
        save_calibration(_calibration(contention), tmp_path / "c.yaml")
        parts = CalibratedSplitModel(str(tmp_path / "c.yaml")).tables(w, platform).parts
        assert parts.time[0, 1] == expected_ns


def test_contention_pairs_fit_the_cores() -> None:
    assert contention_pairs(["cpu:t1"], cores=2) == [("cpu:t1", "cpu:t1")]
    assert contention_pairs(["cpu:t2"], cores=2) == []
    assert contention_pairs(["cpu:t1", "cpu:t2", "cuda"], cores=3) == [
        ("cpu:t1", "cpu:t1"), ("cpu:t1", "cpu:t2"), ("cpu:t2", "cpu:t1")]


def test_contention_keeps_the_least_ratio_over_the_least_time_alone() -> None:
    # Hand calculation. Alone 50, 40, 48 ms: the least, 40 ms, is the reference. Beside the other group:
    # 80 ms with it running the whole time (ratio 2.0), 44 ms (1.1), 60 ms while it got half a core
    # (1 + (1.5 - 1) / 0.5 = 2.0). Two disturbed rounds of three: the least ratio, 1.1, is the slowdown; a
    # median of each round over its own time alone would say 1.5. Spread (2.0 - 1.1) / 2.0 = 0.45.
    pair = contention_estimate("cpu:t1", "cpu:t1", [0.050, 0.040, 0.048], [(0.080, 1.0), (0.044, 1.0), (0.060, 0.5)])
    assert pair.slowdown == pytest.approx(1.1)
    assert pair.spread == pytest.approx(0.45) and pair.rounds == 3
    # beside faster than alone (noise on the rounds alone): never below 1
    assert contention_estimate("a", "b", [0.05], [(0.045, 1.0)]).slowdown == 1.0
    # a group that got a tenth of a core counts as a quarter: 1 + (1.2 - 1) / 0.25 = 1.8
    assert contention_estimate("a", "b", [0.05], [(0.060, 0.1)]).slowdown == pytest.approx(1.8)


def test_cli_adapt_threshold_must_be_a_positive_fraction(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["coexec", "--m", "8", "--n", "8", "--k", "8", "--adapt-threshold", "0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'--adapt-threshold'" in err and len(err.strip().splitlines()) == 1


def test_one_device_platform_is_never_split() -> None:
    w = gemm_workload(40, 8, 8, "fp32", chunks=4)
    platform = SplitPlatform("one", cpu_group_platform([1]).devices)
    bounds, why = plan_split(w, platform, _per_row([1e-3]), ContentionModel(2))
    assert bounds == [(0, 40)] and why == ""
