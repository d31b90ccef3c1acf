"""The co-execution executor and ``dse coexec``: assembled results, splits (explicit, grid, auto), bad input.

On a machine without CUDA the devices are groups of CPU worker threads; GPU paths run where CUDA exists.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dse import cli
from dse.errors import SpecError
from dse.mapping.split.model import SplitDevice, SplitPlatform, cpu_group_platform, gemm_workload
from dse.runtime import coexec
from dse.runtime.coexec import (
    CoExecutor,
    auto_split,
    coexecute,
    compositions,
    cuda_available,
    explicit_split,
    grid_splits,
    parse_devices,
    profile_predictor,
)

REPORT_KEYS = {"devices", "check", "measured_s", "predicted_s", "best_single_s", "speedup_vs_best_single"}


def test_parts_on_three_groups_assemble_the_product() -> None:
    w = gemm_workload(101, 37, 23, "fp64")
    executor = CoExecutor(w, cpu_group_platform([1, 2, 1]), seed=3)
    timing = executor.run([(0, 50), (50, 50), (50, 101)])  # the middle group idles; uneven rows
    np.testing.assert_allclose(executor.C, executor.A @ executor.B, rtol=1e-12, atol=1e-12)
    assert timing.device_s[1] == 0 and timing.device_s[0] > 0 and timing.device_s[2] > 0
    executor.C[:] = 0
    executor.run([(0, 30), (30, 101), (101, 101)])  # a two-thread group cuts its rows in two
    ok, err = executor.check(executor.A @ executor.B, 1e-12)
    assert ok and err < 1e-12
    executor.C[5, 5] += 1.0  # the check sees a wrong entry
    assert not executor.check(executor.A @ executor.B, 1e-9)[0]


def test_same_seed_same_operands() -> None:
    w = gemm_workload(8, 4, 4, "fp32")
    a, b = CoExecutor(w, cpu_group_platform([1]), seed=5), CoExecutor(w, cpu_group_platform([1]), seed=5)
    np.testing.assert_array_equal(a.A, b.A)
    assert not np.array_equal(a.A, CoExecutor(w, cpu_group_platform([1]), seed=6).A)


def test_auto_split_balances_a_three_times_faster_device_by_hand() -> None:
    # m = 80 in 4 chunks of 20 rows; device 0 takes 1 ns per row, device 1 3 ns (host memory, no copies):
    # max(r0 x 1, r1 x 3) with r0 + r1 = 80 in steps of 20 is least at (60, 20): 60 ns
    w = gemm_workload(80, 8, 8, "fp32", chunks=4)
    platform = cpu_group_platform([1, 1])
    bounds, genome = auto_split(w, platform, lambda d, w, r: (1e-9 if d.name.endswith("/0") else 3e-9) * r)
    assert genome.tolist() == [3, 1] and bounds == [(0, 60), (60, 80)]


def test_grid_has_every_five_percent_split() -> None:
    w = gemm_workload(100, 8, 8, "fp32")
    assert len(grid_splits(w, cpu_group_platform([1, 1]))) == 21           # 0%, 5%, ..., 100%
    assert len(grid_splits(w, cpu_group_platform([1, 1, 1]))) == 231       # C(22, 2) compositions of 20 in 3
    assert compositions(2, 2).tolist() == [[2, 0], [1, 1], [0, 2]]
    assert all(sum(b - a for a, b in split) == 100 for split in grid_splits(w, cpu_group_platform([1, 1])))


def test_explicit_split_errors() -> None:
    w = gemm_workload(64, 8, 8, "fp32")
    platform = cpu_group_platform([1, 1])
    assert explicit_split(w, platform, [24, 40]) == [(0, 24), (24, 64)]
    for rows in ([10, 20], [70, -6], [64]):
        with pytest.raises(SpecError):
            explicit_split(w, platform, rows)
    tc = SplitDevice(name="tc", kind="tensorcore", fit_device="tensorcore", mem_bytes=10**9, pool="g", active_w=1,
                     idle_w=0, granularity=8)
    mixed = SplitPlatform("p", (tc, platform.devices[0]))
    with pytest.raises(SpecError, match="multiples of 8"):
        explicit_split(w, mixed, [20, 44])
    assert explicit_split(w, mixed, [24, 40]) == [(0, 24), (24, 64)]


def test_coexecute_report_and_prediction_error() -> None:
    w = gemm_workload(384, 256, 256, "fp32")
    platform = cpu_group_platform([1, 1])
    report = coexecute(w, platform, [192, 192], repeat=3, seed=0)
    data = report.to_dict()
    assert REPORT_KEYS <= set(data) and data["check"] == "pass"
    assert [d["rows"] for d in data["devices"]] == [192, 192]
    assert data["speedup_vs_best_single"] == pytest.approx(data["best_single_s"] / data["measured_s"])
    # the profiled prediction of each device alone on the whole GEMM, against its measured time: a band that
    # catches a wrong scale or unit (ms for s, rows for chunks), not an accuracy target (the machine is shared
    # and its load moves timings severalfold; benchmarks/poas_gemm.py prints the error figures)
    for _, predicted, measured in report.single_s:
        assert 0.1 < predicted / measured < 10
    assert "speed-up" in report.summary()


def test_profile_predictor_fits_each_fit_device_once() -> None:
    w = gemm_workload(64, 32, 32, "fp64")
    executor = CoExecutor(w, cpu_group_platform([1, 1]), seed=0)
    predict = profile_predictor(executor, repeat=1)
    a, b = executor.platform.devices
    rows = np.array([8, 16, 32])
    np.testing.assert_array_equal(predict(a, w, rows), predict(b, w, rows))  # both are cpu:t1
    assert (np.diff(predict(a, w, rows)) >= 0).all()


def test_cli_coexec_writes_report_json(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert cli.main(["coexec", "--m", "96", "--n", "64", "--k", "32", "--split", "grid", "--repeat", "1",
                     "--devices", "cpu:t1,cpu:t1", "--quiet", "--out", str(out)]) == 0
    data = json.loads((out / "report.json").read_text())
    assert REPORT_KEYS <= set(data) and data["check"] == "pass" and len(data["grid"]) == 21
    assert {"name", "rows", "predicted_s", "measured_s"} <= set(data["devices"][0])
    assert sum(d["rows"] for d in data["devices"]) == 96
    # the reported split is one of the grid's three fastest first-pass splits (re-timed to choose among them)
    finalists = sorted(data["grid"], key=lambda g: g["measured_s"])[:3]
    assert [d["rows"] for d in data["devices"]] in [g["rows"] for g in finalists]
    # the speed-up over the best single device, or (a grid's 96/0 or 0/96 kept) that it ran alone
    assert "best single device" in capsys.readouterr().out


@pytest.mark.parametrize("argv, field", [
    (["--m", "0", "--n", "4", "--k", "4"], "--m"),
    (["--m", "4", "--n", "x", "--k", "4"], "--n"),
    (["--m", "4", "--n", "4", "--k", "4", "--dtype", "fp8"], "--dtype"),
    (["--m", "4", "--n", "4", "--k", "4", "--dtype", "fp16"], "--dtype"),
    (["--m", "4", "--n", "4", "--k", "4", "--devices", "tpu"], "--devices"),
    (["--m", "4", "--n", "4", "--k", "4", "--split", "1,2"], "--split"),
    (["--m", "4", "--n", "4", "--k", "4", "--split", "half"], "--split"),
    (["--m", "4", "--n", "4", "--k", "4", "--seed", "-1"], "--seed"),
])
def test_cli_coexec_bad_input_is_exit_2(argv: list[str], field: str, capsys) -> None:
    assert cli.main(["coexec", *argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"'{field}'" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_coexec_size_beyond_memory_is_exit_3(capsys) -> None:
    assert cli.main(["coexec", "--m", "16000000", "--n", "16000000", "--k", "16000000", "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "bytes" in err and "cpu:t" in err


def test_gpu_devices_need_cuda(capsys, monkeypatch) -> None:
    monkeypatch.setattr("dse.runtime.coexec.cuda_available", lambda: False)  # as on a machine without a GPU
    with pytest.raises(SpecError, match="CUDA is not available"):
        parse_devices("cpu:t1,cuda")


@pytest.mark.skipif(not cuda_available(), reason="no CUDA device here: the GPU co-execution path runs only where "
                    "PyTorch sees a GPU (pip install '.[gpu]' on a machine with one); the CPU groups and the "
                    "no-CUDA error are tested above")
def test_gpu_coexecution() -> None:  # pragma: no cover - needs CUDA
    w = gemm_workload(512, 256, 256, "fp32")
    report = coexecute(w, parse_devices("cpu:t1,cuda,tensorcore"), "auto", repeat=1)
    assert report.check == "pass"


def test_cli_coexec_predicts_from_a_calibration_file(tmp_path, monkeypatch) -> None:
    from dse.cost.calibration.measure import Calibration, KernelFit, MachineInfo, save_calibration

    monkeypatch.setattr("dse.runtime.coexec.probe_background",
                        lambda *a, **k: coexec.Probe(1.0, 0.0, 2.0))  # an idle machine

    fit = KernelFit("gemm", "cpu:t1", "fp32", ("const", "flops"), (1e-5, 1e-10), 0.05, 10)
    save_calibration(Calibration(MachineInfo.current(), (fit,), "hand"), tmp_path / "cal.yaml")
    assert cli.main(["coexec", "--m", "96", "--n", "64", "--k", "32", "--split", "48,48", "--repeat", "1",
                     "--devices", "cpu:t1,cpu:t1", "--calibration", str(tmp_path / "cal.yaml"), "--quiet",
                     "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "report.json").read_text())
    # 48 rows: 10 us + 1e-10 s/flop x 2 x 48 x 64 x 32 flops = 10 us + 19.6608 us (host memory: no copies)
    assert [d["predicted_s"] for d in data["devices"]] == pytest.approx([2.96608e-5, 2.96608e-5])
    assert data["predicted_s"] == pytest.approx(2.96608e-5)
