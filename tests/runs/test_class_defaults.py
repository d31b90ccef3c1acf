"""Class defaults: a data-sheet-only device gets the values fitted per class on the fit part; the fit
never sees a held-out row; the committed values are a fresh fit; the coverage list of catalog devices."""

from __future__ import annotations

import pytest

from dse.cost import RooflineCostModel
from dse.errors import SpecError
from dse.inputs.builders.gemm import gemm_op
from dse.inputs.catalog import platforms
from dse.model.device_defaults import catalog_defaults, defaults_path
from dse.model.platform import load_platform, platform_from_dict
from dse.model.workload import Op
from dse.runs import accuracy as acc
from dse.runs import accuracy_fit
from dse.util.home import models_dir

#: A user's GPU as its data sheet gives it: rates, bandwidth, memory, power and its unit count; nothing else.
DATASHEET_GPU = {"name": "g", "kind": "gpu", "peak_tflops": {"fp16": 100}, "mem_bw_gbps": 1000, "mem_gib": 16,
                 "idle_w": 10, "active_w": 110, "compute_units": 4}


def _device(**declared):
    return platform_from_dict({"name": "p", "devices": [{**DATASHEET_GPU, **declared}]}).devices[0]


def test_committed_gpu_defaults_are_the_figures_the_hand_calculations_use() -> None:
    """The hand calculations below read these committed values; a refit that moves them must redo them."""
    gpu = catalog_defaults().classes["gpu"]
    assert gpu.runtime == "tensorrt"
    assert gpu.values["compute_efficiency"] == {"gemm": 0.82, "conv": 1.0}
    assert gpu.values["gemm_tile"] == 256
    assert gpu.values["launch_overhead_us"]["tensorrt"] == 1


def test_a_datasheet_only_gpu_gets_the_class_defaults_on_a_gemm() -> None:
    """1024 x 1024 x 1024 FP16 GEMM on the data-sheet GPU (100 TFLOP/s, 1000 GB/s, 4 SMs), class gpu,
    runtime tensorrt (the class's): efficiency 0.82, tile 256, launch 1 us (tensorrt), by hand:
    output 1024^2 = 1,048,576 elements / 256^2 = 65,536 per tile = 16 tiles, at least the 4 SMs (no
    split-K); 4 full waves -> all busy. Rate 100e12 x 0.82 = 82e12 FLOP/s; 2 x 1024^3 = 2,147,483,648 FLOP
    -> 26,188.8 ns. Memory 3 x 1024^2 x 2 B = 6,291,456 B at 0.85 x 1000 GB/s -> 7,401.7 ns. Time
    max(26,188.8, 7,401.7) + 1,000 = 27,188.8 ns."""
    device = _device()
    compute, memory, launch = RooflineCostModel().op_time_parts(gemm_op("x", 1024, 1024, 1024, "fp16"), device)
    assert compute == pytest.approx(26_188.8e-9, rel=1e-5)
    assert memory == pytest.approx(7_401.7e-9, rel=1e-5)
    assert launch == pytest.approx(1e-6)
    assert device.provenance["gemm_tile"].startswith("class default: fitted on")
    assert device.provenance["compute_units"] == "declared"


def test_a_datasheet_only_gpu_gets_the_class_defaults_on_a_convolution() -> None:
    """A convolution of 1e9 FLOP, 1e6 bytes moved and 100,000 FP16 output elements (200,000 B) on the same
    GPU: efficiency 1.0 (conv), 100,000 / 65,536 = 1.5 -> 2 tiles on 4 SMs, one wave, 2 / 4 busy (split-K
    is for GEMMs only). Rate 100e12 x 1.0 x 0.5 = 50e12 -> 20,000 ns; memory 1e6 / 850e9 = 1,176.47 ns;
    launch 1 us (tensorrt)."""
    conv = Op("c", "conv", flops=1e9, bytes_moved=1e6, output_bytes=200_000.0, precision="fp16")
    compute, memory, launch = RooflineCostModel().op_time_parts(conv, _device())
    assert compute == pytest.approx(20_000e-9, rel=1e-5)
    assert memory == pytest.approx(1_176.47e-9, rel=1e-5)
    assert launch == pytest.approx(1e-6)


def test_a_declared_field_wins_and_mechanisms_none_is_the_plain_roofline() -> None:
    """Declared gemm efficiency 0.5 with the class's tile (16 tiles, all 4 SMs busy): 100e12 x 0.5 -> 42,949.7 ns. With
    ``mechanisms: none`` the plain roofline of tests/runs/test_accuracy.py: 28,633.1 ns at 0.75, no tiles
    (no tile edge), 5 us launch (the gpu kind's)."""
    op = gemm_op("x", 1024, 1024, 1024, "fp16")
    declared = _device(compute_efficiency={"gemm": 0.5})
    assert RooflineCostModel().op_time_parts(op, declared)[0] == pytest.approx(42_949.7e-9, rel=1e-5)
    assert declared.provenance["compute_efficiency.gemm"] == "declared"
    plain = _device(mechanisms="none")
    assert RooflineCostModel().op_time_parts(op, plain) == pytest.approx((28_633.1e-9, 7_401.7e-9, 5e-6), rel=1e-5)
    assert plain.runtime == "" and plain.provenance["gemm_tile"] == "kind default"


def test_an_unknown_runtime_is_one_clear_error() -> None:
    with pytest.raises(SpecError, match=r"devices\[0\]\.runtime"):
        _device(runtime="no_such_runtime")


def test_every_catalog_platform_device_gets_its_class_defaults() -> None:
    for name in platforms():
        for d in load_platform(models_dir() / "platforms" / f"{name}.yaml").devices:
            if d.device_class:
                assert d.runtime and any(s.startswith("class default") for s in d.provenance.values()), (name, d.name)


def _spy(monkeypatch) -> list[str]:
    seen: list[str] = []
    original = accuracy_fit.predict

    def recording(m, cost_model=None):
        seen.append(m.id)
        return original(m, cost_model)

    monkeypatch.setattr(accuracy_fit, "predict", recording)
    return seen


def test_held_out_rows_never_reach_the_fit(monkeypatch) -> None:
    """Every row the class fits cost (on a smaller set: the cpu and edge rows, the sparse products and the
    TensorRT rows, every held-out row among them) is a fit row."""
    rows = [m for m in acc.load_measurements()
            if m.device.device_class in ("cpu", "edge") or m.builder == "spmm" or "tensorrt" in m.id]
    held = {m.id for m in rows if m.split == "holdout"}
    assert held
    seen = _spy(monkeypatch)
    accuracy_fit.fit_class_defaults(rows)
    assert seen and not held & set(seen)


@pytest.mark.slow
def test_committed_class_defaults_are_a_fresh_fit_that_never_reads_a_held_out_row(monkeypatch) -> None:
    """Re-runs the whole fit (fit part of models/measurements, devices cut back to their data sheets)
    and compares every committed value, its fit and its rows; a spy on the fit's predictions sees no
    held-out row. Counterpart in the fast tier: test_held_out_rows_never_reach_the_fit."""
    rows = acc.load_measurements()
    seen = _spy(monkeypatch)
    fitted = accuracy_fit.fit_class_defaults(rows)
    assert seen and not {m.id for m in rows if m.split == "holdout"} & set(seen)
    committed = catalog_defaults()
    for name, fit in fitted.items():
        cls = committed.classes[name]
        assert dict(cls.values) == dict(fit.values), name
        assert dict(cls.provenance) == fit.provenance(), name
        assert dict(cls.rows) == dict(fit.rows), name
    header = "".join(line for line in defaults_path().read_text().splitlines(keepends=True) if line.startswith("#"))
    assert accuracy_fit.class_defaults_yaml(committed, fitted, header) == defaults_path().read_text()


def test_coverage_names_every_catalog_device_with_rows_or_none() -> None:
    rows = acc.load_measurements()
    listed = acc.coverage(rows)
    expected = {(name, d.name) for name in platforms()
                for d in load_platform(models_dir() / "platforms" / f"{name}.yaml").devices}
    assert {(c.platform, c.device) for c in listed} == expected
    for c in listed:
        assert c.line().endswith(": none") == (not c.rows)
        assert all((m.device.device_class, m.device.device.runtime) == (c.device_class, c.runtime) for m in c.rows)
    by_name = {(c.platform, c.device): c for c in listed}
    assert by_name[("edge_soc", "gpu")].rows and by_name[("edge_soc", "dla0")].line().endswith("none")
    text = acc.coverage_text(rows)
    assert all(f"{p}/{d} " in text for p, d in expected)


def test_cross_validation_reads_fit_rows_only_and_leaves_each_out(monkeypatch) -> None:
    """Leave-one-out over the fit rows of the cpu and edge classes and the sparse products: every row the
    fits and the left-out predictions cost is a fit row (a spy on the predictions; held-out rows are in the
    input), every fit row of a class with defaults gets its own error, and no held-out row does."""
    rows = [m for m in acc.load_measurements() if m.device.device_class in ("cpu", "edge") or m.builder == "spmm"]
    held = {m.id for m in rows if m.split == "holdout"}
    assert held
    seen = _spy(monkeypatch)
    cv = accuracy_fit.cross_validate(rows, accuracy_fit.FitStructure())
    assert seen and not held & set(seen)
    assert set(cv.errors) == {m.id for m in accuracy_fit.cv_rows(rows)}
    assert set(cv.errors) == {m.id for m in rows if m.split == "fit"}
    assert all(e >= 0 for e in cv.errors.values()) and 0 <= cv.within <= 1 and cv.median <= cv.p90


def test_cv_folds_leave_one_out_or_a_fixed_rule() -> None:
    rows = [m for m in acc.load_measurements() if m.split == "fit"][:20]
    assert accuracy_fit.cv_folds(rows, None) == [[m] for m in rows]
    folds = accuracy_fit.cv_folds(rows, 3)
    assert sorted(m.id for f in folds for m in f) == sorted(m.id for m in rows)
    # a row's fold does not depend on the order of the rows (the rule reads its id only)
    again = accuracy_fit.cv_folds(list(reversed(rows)), 3)
    assert [{m.id for m in f} for f in folds] == [{m.id for m in f} for f in again]
