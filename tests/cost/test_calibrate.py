"""Calibration: fitting, held-out error, files, and the ``dse calibrate`` command.

The fitting tests use synthetic timings only: seconds are generated from coefficients chosen
here (plus seeded noise where said), so the expected coefficients are the chosen ones, not
values read back from the code under test. One real ``--quick`` run (SpMV on one thread)
checks that the command profiles, writes a file and loads it back.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dse.cli import main
from dse.cost.calibration.measure import (
    CACHE_CANDIDATES_BYTES,
    KERNEL_TERMS,
    Calibration,
    KernelFit,
    MachineInfo,
    calibration_to_dict,
    fit_kernel,
    kernel_terms,
    load_calibration,
    mape,
    run_calibration,
    save_calibration,
)
from dse.errors import SpecError

# Chosen GEMM rates (seconds per unit): 15 us per call, 1/(66.7 GFLOP/s), and per-byte costs of
# packing A and B and of writing C.
GEMM_TRUE = {"const": 1.5e-5, "flops": 1.5e-11, "a_bytes": 1e-10, "b_bytes": 2e-10, "c_bytes": 3e-10}


def _gemm_samples(rng: np.random.Generator, count: int, noise: float) -> pd.DataFrame:
    """Random GEMM shapes (64..4096 per dim) with seconds = sum(GEMM_TRUE x terms) x (1 + noise)."""
    dims = rng.integers(64, 4097, size=(count, 3))
    m, n, k = dims.T.astype(float)
    # Written out here (not from kernel_terms): fp32 is 4 bytes, a GEMM does 2mnk flops.
    truth = (GEMM_TRUE["const"] + GEMM_TRUE["flops"] * 2 * m * n * k + GEMM_TRUE["a_bytes"] * 4 * m * k
             + GEMM_TRUE["b_bytes"] * 4 * k * n + GEMM_TRUE["c_bytes"] * 4 * m * n)
    seconds = truth * (1 + noise * rng.standard_normal(count))
    return pd.DataFrame({"m": m, "n": n, "k": k, "seconds": seconds, "truth": truth})


def test_fit_recovers_gemm_rates_without_noise() -> None:
    frame = _gemm_samples(np.random.default_rng(1), 40, noise=0.0)
    fit = fit_kernel(frame, "gemm", "cpu", "fp32")
    assert fit.terms == KERNEL_TERMS["gemm"]
    np.testing.assert_allclose(fit.coefficients, [GEMM_TRUE[t] for t in fit.terms], rtol=1e-6)
    assert fit.mape_heldout < 1e-6
    # Every other distinct shape (sorted) is held out when no heldout column is given.
    assert fit.n_samples == 20 and fit.n_heldout == 20


def test_fit_with_noise_predicts_heldout_sizes() -> None:
    rng = np.random.default_rng(2)
    frame = _gemm_samples(rng, 60, noise=0.03)
    frame["heldout"] = np.arange(60) % 3 == 0
    fit = fit_kernel(frame, "gemm", "cpu", "fp32")
    # The dominant rate (flops) comes back within a few percent under 3% noise.
    assert fit.coefficients[fit.terms.index("flops")] == pytest.approx(GEMM_TRUE["flops"], rel=0.05)
    held = frame[frame["heldout"]]
    predicted = fit.predict_s(m=held["m"].to_numpy(), n=held["n"].to_numpy(), k=held["k"].to_numpy())
    # Against the noise-free truth, predictions are within 3%; against the noisy measurement the
    # held-out MAPE is about the noise's mean absolute value (0.03 x sqrt(2/pi) = 0.024).
    assert np.max(np.abs(predicted / held["truth"] - 1)) < 0.03
    assert 0.01 < fit.mape_heldout < 0.04


def test_fit_recovers_sparse_rates_and_cache_size() -> None:
    # SpMV with caches of 2**18 and 2**20 bytes: x (cols x 8 bytes) starts missing the inner one
    # past 32768 columns and the outer one past 131072.
    inner, cache = 2**18, 2**20
    assert inner in CACHE_CANDIDATES_BYTES and cache in CACHE_CANDIDATES_BYTES
    true = {"const": 3e-6, "rows": 4e-9, "nnz": 1e-9, "gather_inner_miss_nnz": 2e-9, "gather_miss_nnz": 6e-9,
            "nnz_x_row_cv": 2e-10}
    rng = np.random.default_rng(3)
    # Sizes on both sides of the cache, three of them past it (the fit can tell 2**19 from 2**20
    # only from sizes where both miss); 2**13 and 2**15 rows are held out.
    rows = rng.choice([2**p for p in range(12, 20)], size=48).astype(float)
    nnz = rows * rng.choice([4, 16, 48], size=48)
    cv = rng.choice([0.2, 1.5, 4.0], size=48)
    # Written out here (not from kernel_terms): x holds cols x 8 bytes; a gather misses a cache of
    # c bytes with probability max(0, 1 - c / footprint).
    footprint = rows * 8
    seconds = (true["const"] + true["rows"] * rows + true["nnz"] * nnz
               + true["gather_inner_miss_nnz"] * nnz * np.maximum(0, 1 - inner / footprint)
               + true["gather_miss_nnz"] * nnz * np.maximum(0, 1 - cache / footprint)
               + true["nnz_x_row_cv"] * nnz * cv)
    frame = pd.DataFrame({"kernel": "spmv", "device": "cpu", "dtype": "fp64", "rows": rows, "cols": rows,
                          "nnz": nnz, "row_cv": cv, "seconds": seconds, "heldout": np.isin(rows, [2**13, 2**15])})
    # Rows of another device are ignored.
    frame = pd.concat([frame, frame.assign(device="cpu:t1", seconds=1.0)])
    fit = fit_kernel(frame, "spmv", "cpu", "fp64")
    assert fit.param("cache_bytes", 0) == cache and fit.param("inner_cache_bytes", 0) == inner
    np.testing.assert_allclose(fit.coefficients, [true[t] for t in fit.terms], rtol=1e-5)
    assert fit.mape_heldout < 1e-5


def test_heldout_mape_by_hand() -> None:
    # Training: 6 shapes in general position timed at exactly 1e-11 s per flop; the fit is exact.
    train = [(100, 200, 300), (400, 100, 100), (150, 150, 600), (512, 64, 256), (64, 700, 90), (300, 300, 300)]
    # Held out: 1000^3 (2e9 flops -> 0.02 s true) measured 1.1 x true, 200x500x800 (1.6e8 flops ->
    # 0.0016 s true) measured 0.8 x true. By hand: MAPE = (|0.02 - 0.022| / 0.022
    # + |0.0016 - 0.00128| / 0.00128) / 2 = (0.1/1.1 + 0.2/0.8) / 2 = (0.090909 + 0.25) / 2 = 0.170455.
    rows = [{"m": m, "n": n, "k": k, "seconds": 1e-11 * 2 * m * n * k, "heldout": False} for m, n, k in train]
    rows += [{"m": 1000, "n": 1000, "k": 1000, "seconds": 0.022, "heldout": True},
             {"m": 200, "n": 500, "k": 800, "seconds": 0.00128, "heldout": True}]
    fit = fit_kernel(pd.DataFrame(rows), "gemm", "cpu", "fp64")
    assert fit.mape_heldout == pytest.approx((0.1 / 1.1 + 0.2 / 0.8) / 2, rel=1e-6)
    assert fit.n_samples == 6 and fit.n_heldout == 2
    assert mape([1.1, 0.8], [1.0, 1.0]) == pytest.approx(0.15)


def test_kernel_terms_by_hand() -> None:
    # gemm 2x3x4 fp32: flops 2*2*3*4 = 48; A 2x4 x 4 B = 32; B 4x3 x 4 B = 48; C 2x3 x 4 B = 24.
    assert kernel_terms("gemm", "fp32", m=2, n=3, k=4) == {
        "const": 1.0, "flops": 48.0, "a_bytes": 32.0, "b_bytes": 48.0, "c_bytes": 24.0}
    # spmv fp64, cols 1000: x is 8000 B; a 2000 B cache misses 1 - 2000/8000 = 0.75 of gathers.
    spmv = kernel_terms("spmv", "fp64", cache_bytes=2000, rows=10, cols=1000, nnz=40, row_cv=0.5)
    assert spmv["gather_miss_nnz"] == pytest.approx(30.0) and spmv["nnz_x_row_cv"] == pytest.approx(20.0)
    # spmm fp32, width 8: B is 1000 x 8 x 4 = 32000 B; cache 8000 B -> miss 0.75;
    # gathered bytes 40 nnz x 8 x 4 B x 0.75 = 960; output 10 x 8 x 4 = 320 B.
    spmm = kernel_terms("spmm", "fp32", cache_bytes=8000, rows=10, cols=1000, nnz=40, width=8)
    assert spmm["gather_miss_bytes"] == pytest.approx(960.0) and spmm["out_bytes"] == 320.0
    assert spmm["flops_x_row_cv"] == 0.0  # row_cv left out counts as uniform rows
    with pytest.raises(SpecError) as info:
        kernel_terms("gemm", "fp32", m=2, n=3)
    assert info.value.field == "k"
    with pytest.raises(SpecError):
        kernel_terms("gemm", "fp32", m=-1, n=3, k=4)


def test_fit_kernel_rejects_bad_samples() -> None:
    good = pd.DataFrame({"m": [64, 128, 256], "n": [64, 128, 256], "k": [64, 128, 256],
                         "seconds": [1e-4, 1e-3, 1e-2]})
    with pytest.raises(SpecError) as info:
        fit_kernel(good.drop(columns="k"), "gemm", "cpu", "fp32")
    assert info.value.field == "k"
    with pytest.raises(SpecError) as info:
        fit_kernel(good.assign(seconds=[1e-4, 0.0, 1e-2]), "gemm", "cpu", "fp32")
    assert info.value.field == "seconds"
    with pytest.raises(SpecError) as info:
        fit_kernel(good.assign(heldout=False), "gemm", "cpu", "fp32")
    assert info.value.field == "heldout"


def _calibration(machine: MachineInfo | None = None) -> Calibration:
    machine = machine or MachineInfo.current()
    gemm = KernelFit("gemm", "cpu", "fp32", KERNEL_TERMS["gemm"], (1e-5, 1e-11, 0.0, 2e-10, 3e-10), 0.08, 20, 10)
    spmv = KernelFit("spmv", "cpu:t1", "fp64", KERNEL_TERMS["spmv"], (2e-6, 5e-9, 1e-9, 0.0, 3e-9, 0.0), 0.12, 30, 12,
                     (("cache_bytes", 2.0**21),))
    return Calibration(machine, (gemm, spmv), "test", "made by hand")


def test_predict_devices_and_missing_fit() -> None:
    cal = _calibration()
    # gemm 1000^3 on cpu: 1e-5 + 1e-11 * 2e9 + 2e-10 * 4e6 + 3e-10 * 4e6 = 1e-5 + 0.02 + 0.0008 + 0.0012.
    assert cal.predict_s("gemm", "cpu", m=1000, n=1000, k=1000) == pytest.approx(0.02201)
    both = cal.predict_s("gemm", "cpu", "fp32", m=np.array([1000, 1000]), n=1000, k=1000)
    assert both.shape == (2,) and both[1] == pytest.approx(0.02201)
    assert cal.devices() == ("cpu", "cpu:t1") and cal.devices("spmv") == ("cpu:t1",)
    assert cal.has("spmv", "cpu:t1", "fp64") and not cal.has("spmv", "cpu:t1")
    with pytest.raises(KeyError, match=r"\(spmm, cpu, fp32\)"):
        cal.predict_s("spmm", "cpu", rows=10, cols=10, nnz=10, width=4)


def test_save_load_round_trip(tmp_path: Path) -> None:
    cal = _calibration()
    path = tmp_path / "here.yaml"
    save_calibration(cal, path)
    loaded = load_calibration(path)
    assert loaded.machine == cal.machine and loaded.fits == cal.fits and loaded.note == cal.note
    assert loaded.source == str(path)
    dims = {"rows": 1e5, "cols": 1e5, "nnz": 1e6, "row_cv": 2.0}
    assert loaded.predict_s("spmv", "cpu:t1", "fp64", **dims) == cal.predict_s("spmv", "cpu:t1", "fp64", **dims)


def test_other_machine_kind_is_refused(tmp_path: Path) -> None:
    other = MachineInfo("riscv64 | Imaginary CPU 9000 | 999 cores", "Imaginary CPU 9000", 999, None)
    path = tmp_path / "other.yaml"
    save_calibration(_calibration(other), path)
    with pytest.raises(SpecError) as info:
        load_calibration(path)
    assert info.value.field == "machine.kind" and info.value.value == other.kind
    assert info.value.source == str(path)
    assert load_calibration(path, check_machine=False).machine == other
    # Through the CLI's error path this is one line and exit 2.
    assert "machine.kind" in str(info.value) and "\n" not in str(info.value)


def _file(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load(yaml.safe_dump(calibration_to_dict(_calibration())))
    edit(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data) if data is not None else "", encoding="utf-8")
    return path


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d.pop("fits"), "fits"),
    (lambda d: d.update(format="dse-calibration/0"), "format"),
    (lambda d: d["fits"][0]["coefficients_s"].pop(), "fits[0].coefficients_s"),
    (lambda d: d["fits"][0]["coefficients_s"].__setitem__(1, -1e-9), "fits[0].coefficients_s[1]"),
    (lambda d: d["fits"][1]["terms"].__setitem__(2, "warp_divergence"), "fits[1].terms[2]"),
    (lambda d: d["fits"][0].update(kernel="conv2d"), "fits[0].kernel"),
    (lambda d: d["fits"][0].update(device="npu"), "fits[0].device"),
    (lambda d: d["fits"][0].update(dtype="fp8"), "fits[0].dtype"),
    (lambda d: d["fits"][1]["params"].update(cache_bytes=0), "fits[1].params.cache_bytes"),
    (lambda d: d["fits"][0].update(mape_heldout=math.inf), "fits[0].mape_heldout"),  # .inf in the file
    (lambda d: d["fits"].append(dict(d["fits"][0])), "fits[2]"),
    (lambda d: d["machine"].update(logical_cores="two"), "machine.logical_cores"),
    (lambda d: d.update(extra=1), "extra"),
])
def test_malformed_files(tmp_path: Path, edit, field: str) -> None:
    with pytest.raises(SpecError) as info:
        load_calibration(_file(tmp_path, edit))
    assert info.value.field == field


def test_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n", encoding="utf-8")
    (tmp_path / "syntax.yaml").write_text("fits: [\n", encoding="utf-8")
    for name, field in (("list.yaml", "<root>"), ("syntax.yaml", "line 2, column 1"), ("missing.yaml", "<file>")):
        with pytest.raises(SpecError) as info:
            load_calibration(tmp_path / name)
        assert info.value.field == field


def test_gpu_devices_without_cuda_say_so_once(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SpecError) as info:
        run_calibration(["gemm", "spmv"], ["cuda", "tensorcore"], gpu=False)
    assert info.value.field == "devices"
    assert capsys.readouterr().err.count("no CUDA: GPU kernels not profiled") == 1


@pytest.mark.parametrize(("argv", "field"), [
    (["--kernels", "gemm,conv"], "--kernels"),
    (["--devices", "cpu,gpu"], "--devices"),
    (["--devices", "cpu:t999"], "--devices"),
    (["--devices", "cpu:t0"], "--devices"),
    (["--dtypes", "fp8"], "--dtypes"),
    (["--seed", "-1"], "--seed"),
    (["--out", "out/calibration.txt"], "--out"),
    (["--clock", "sundial"], "--clock"),
    (["--clock", "thread", "--devices", "cpu:t1,cpu"], "--clock"),
    (["--samples", "out/samples.yaml"], "--samples"),
    (["--devices", "cpu:t1", "--dtypes", "bf16"], "--dtypes"),
])
def test_cli_bad_input_exit_2(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--quick", "--quiet", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"'{field}'" in err


def test_cli_out_folder_or_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "folder.yaml").mkdir()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    for out in (tmp_path / "folder.yaml", tmp_path / "file" / "cal.yaml"):
        assert main(["calibrate", "--quick", "--quiet", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "'--out'" in err


def test_cli_quick_spmv_run_writes_a_loadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "box.yaml"
    assert main(["calibrate", "--kernels", "spmv", "--devices", "cpu:t1", "--quick", "--quiet",
                 "--seed", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "spmv" in printed and "cpu:t1" in printed and f"wrote {out}" in printed
    cal = load_calibration(out)
    assert cal.machine.kind == MachineInfo.current().kind
    assert cal.devices() == ("cpu:t1",) and cal.has("spmv", "cpu:t1", "fp32")
    fit = cal.fit("spmv", "cpu:t1", "fp32")
    assert fit.n_samples > 0 and fit.n_heldout > 0 and math.isfinite(fit.mape_heldout)
    # A prediction is positive and does not shrink with more work.
    small = cal.predict_s("spmv", "cpu:t1", rows=4096, cols=4096, nnz=16384)
    large = cal.predict_s("spmv", "cpu:t1", rows=4096, cols=4096, nnz=163840)
    assert 0 < small <= large


def test_machine_info_current() -> None:
    here = MachineInfo.current()
    assert here.logical_cores >= 1 and here.cpu_model and f"{here.logical_cores} cores" in here.kind
    assert here.cpu_model in here.kind


def test_gpu_path_with_a_stand_in_torch(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # No GPU here: a stand-in module with torch's names runs the GPU plumbing on numpy (tiny
    # shapes), to check which fits come out, that every timed call is synchronized and that the
    # TF32 switch is put back. It says nothing of real GPU timings.
    import sys
    from types import SimpleNamespace

    from dse.cost.calibration import measure as calibrate

    synced: list[int] = []
    switch = SimpleNamespace(allow_tf32="as before")
    generator = SimpleNamespace(manual_seed=lambda seed: generator)
    fake = SimpleNamespace(
        float32="f32", float16="f16", bfloat16="bf16",
        Generator=lambda device: generator,
        randn=lambda shape, device, dtype, generator: np.ones(shape, dtype=np.float32),
        empty=lambda shape, device, dtype: np.empty(shape, dtype=np.float32),
        matmul=lambda a, b, out: np.matmul(a, b, out=out),
        cuda=SimpleNamespace(synchronize=lambda: synced.append(1), is_available=lambda: True),
        backends=SimpleNamespace(cuda=SimpleNamespace(matmul=switch)),
    )
    monkeypatch.setitem(sys.modules, "torch", fake)
    shapes = [(8, 8, 8, False), (16, 32, 8, False), (32, 16, 64, False), (24, 24, 24, True)]
    monkeypatch.setattr(calibrate, "gemm_shapes", lambda quick: shapes)
    cal, report = run_calibration(["gemm", "spmv"], ["cuda", "tensorcore"], quick=True, gpu=True, rounds=1)
    assert {(f.kernel, f.device, f.dtype) for f in cal.fits} == {
        ("gemm", "cuda", "fp32"), ("gemm", "tensorcore", "fp16"), ("gemm", "tensorcore", "bf16"),
        ("gemm", "tensorcore", "tf32")}
    assert list(report["heldout"]) == [1, 1, 1, 1] and list(report["samples"]) == [3, 3, 3, 3]
    assert len(synced) >= 2 * 4 * len(shapes) and switch.allow_tf32 == "as before"
    assert "no CUDA" not in capsys.readouterr().err


def test_time_call_protocol_with_a_stand_in_clock() -> None:
    from dse.cost.calibration.measure import time_call

    # Each call advances the stand-in clock by 1e-4 s, and a descheduling adds 1 ms to the second
    # call of the run (inside the first timed window). By hand: warm-up 1e-4 s -> batches of
    # ceil(0.002 / 1e-4) = 20 calls, windows = min(5, 0.02 / (20 x 1e-4)) = 5; the first window
    # reads (20 x 1e-4 + 1e-3) / 20 = 1.5e-4, the others 1e-4; the fastest counts: 1e-4.
    state = {"now": 0.0, "calls": 0}

    def call() -> None:
        state["calls"] += 1
        state["now"] += 1e-4 + (1e-3 if state["calls"] == 2 else 0.0)

    assert time_call(call, clock=lambda: state["now"]) == pytest.approx(1e-4)
    assert state["calls"] == 1 + 5 * 20
    # A call of 0.2 s or more is its own sample: exactly one call.
    state.update(now=0.0, calls=0)

    def long_call() -> None:
        state["calls"] += 1
        state["now"] += 0.5

    assert time_call(long_call, clock=lambda: state["now"]) == pytest.approx(0.5) and state["calls"] == 1
