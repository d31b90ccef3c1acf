"""The LLM rows' mechanisms: GEMM efficiency per precision class, the runtime file the measurement devices
take their fitted fields from, and the fit per runtime (fit part only, the declared values)."""

from __future__ import annotations

import dataclasses

import pytest

from dse.cost import RooflineCostModel
from dse.errors import SpecError
from dse.inputs.builders.gemm import gemm_op
from dse.inputs.llm_runtime import RUNTIME_FIELDS, runtime_fields
from dse.model.platform import Device, platform_from_dict
from dse.runs import accuracy as acc
from dse.runs.llm_fit import _neutral_parts, fit_llm_runtime, llm_fit_rows, recombined

LLM_DEVICES = ("a100-sxm4-80gb-trtllm", "h100-sxm5-80gb-trtllm", "l40s-48gb-trtllm")


def _gpu(**declared) -> Device:
    return Device("g", "gpu", {"fp16": 100.0, "bf16": 100.0, "fp8": 200.0}, 1000.0, 16.0, 10.0, 110.0, **declared)


def test_gemm_efficiency_by_precision_class_by_hand() -> None:
    """A 1024^3 GEMM is 2,147,483,648 FLOP. Declared gemm 0.5 for the class, 0.8 for fp16-class GEMMs and
    0.25 for fp8: fp16 at 100 TFLOP/s x 0.8 = 80e12: 26,843.5 ns; bf16 is of the fp16 class: the same;
    fp8 at 200 TFLOP/s x 0.25 = 50e12: 42,949.7 ns. Without an fp8 entry an fp8 GEMM keeps the class's
    0.5: 200e12 x 0.5 = 100e12: 21,474.8 ns."""
    model = RooflineCostModel()
    device = _gpu(compute_efficiency={"gemm": 0.5}, precision_efficiency={"gemm": {"fp16": 0.8, "fp8": 0.25}})
    compute = {p: model.op_time_parts(gemm_op("g", 1024, 1024, 1024, p), device)[0] for p in ("fp16", "bf16", "fp8")}
    assert compute == pytest.approx({"fp16": 26_843.5e-9, "bf16": 26_843.5e-9, "fp8": 42_949.7e-9}, rel=1e-5)
    only_fp16 = _gpu(compute_efficiency={"gemm": 0.5}, precision_efficiency={"gemm": {"fp16": 0.8}})
    assert model.op_time_parts(gemm_op("g", 1024, 1024, 1024, "fp8"), only_fp16)[0] == pytest.approx(21_474.8e-9,
                                                                                                    rel=1e-5)


def test_a_platform_refuses_an_unknown_precision_class() -> None:
    device = {"name": "g", "kind": "gpu", "peak_tflops": {"fp16": 100}, "mem_bw_gbps": 1000, "mem_gib": 16,
              "idle_w": 10, "active_w": 110, "precision_efficiency": {"gemm": {"fp4": 0.5}}}
    with pytest.raises(SpecError, match="fp4"):
        platform_from_dict({"name": "p", "devices": [device]})


RUNTIME_FILE = """
family: tensorrt_llm
devices:
  - id: toy-gpu
    class: gpu
    llm_runtime: %s
    platform: {kind: gpu, peak_tflops: {fp16: 100}, mem_bw_gbps: 1000, mem_gib: 16, idle_w: 10, active_w: 110%s}
    sources: {all: "a made-up device"}
measurements:
  - id: hand-gemm
    source: "hand calculation"
    device: toy-gpu
    workload: {builder: gemm, params: {m: 1024, n: 1024, k: 1024, precision: fp16}}
    metric: latency_s
    value: 1.0
    split: %s
"""


def _device_of(tmp_path, runtime: str, declared: str = "") -> Device:
    path = tmp_path / "toy.yaml"
    path.write_text(RUNTIME_FILE % (runtime, declared, acc.split_of("hand-gemm")))
    device = acc.load_file(path)[0].device.device
    assert device is not None
    return device


def test_a_measurement_device_takes_its_runtime_fields_and_its_own_declaration_wins(tmp_path) -> None:
    runtime = runtime_fields("tensorrt_llm")
    device = _device_of(tmp_path, "tensorrt_llm")
    assert {k: getattr(device, k) for k in RUNTIME_FIELDS} == runtime
    assert _device_of(tmp_path, "tensorrt_llm", ", launch_overhead_us: 3").launch_overhead_us == 3.0
    with pytest.raises(SpecError, match=r"devices\[0\]\.llm_runtime"):
        _device_of(tmp_path, "no_such_runtime")


def test_every_llm_measurement_device_has_its_runtime_values_and_no_per_device_value() -> None:
    """The fitted fields come from the runtime file, the same on every GPU: none is declared per device."""
    runtime = runtime_fields("tensorrt_llm")
    devices = {m.device.id: m.device for m in acc.load_measurements() if m.builder == "llm"}
    assert sorted(devices) == sorted(LLM_DEVICES)
    for measured in devices.values():
        assert measured.device is not None
        assert {k: getattr(measured.device, k) for k in RUNTIME_FIELDS} == runtime
        assert not any(k.split(".")[0] in RUNTIME_FIELDS for k in measured.sources)


def test_recombined_parts_are_the_cost_path_prediction() -> None:
    """The fit's shortcut (ops costed once, fields recombined) gives what dse accuracy predicts."""
    rows = [m for m in acc.load_measurements() if m.builder == "llm"]
    runtime = runtime_fields("tensorrt_llm")
    for m in (rows[0], rows[-1]):  # a throughput row (fp8 GEMMs, H100) and a first-token row (fp16, A100)
        parts = _neutral_parts(m)
        value = recombined(parts, runtime["precision_efficiency"]["gemm"][parts.precision_class],
                           runtime["bandwidth_efficiency"]["attention"], runtime["launch_overhead_us"],
                           runtime["call_overhead_us"])
        assert value == pytest.approx(acc.predict(m), rel=1e-4)
    assert {_neutral_parts(m).precision_class for m in (rows[0], rows[-1])} == {"fp8", "fp16"}


@pytest.mark.slow
def test_llm_fit_reads_only_the_fit_part_and_matches_the_runtime_values() -> None:
    """One fit over the fit rows of all three GPUs; scrambling the held-out values changes nothing."""
    rows = acc.load_measurements()
    chosen = llm_fit_rows(rows)
    assert chosen and all(m.split == "fit" and m.builder == "llm" for m in chosen)
    assert {m.device.id for m in chosen} == set(LLM_DEVICES)
    scrambled = [dataclasses.replace(m, value=m.value * 7) if m.split == "holdout" else m for m in rows]
    fit = fit_llm_runtime(scrambled)
    assert fit is not None and fit.rows == len(chosen)
    runtime = runtime_fields("tensorrt_llm")
    assert dict(fit.gemm) == runtime["precision_efficiency"]["gemm"]
    assert fit.attention_bandwidth == runtime["bandwidth_efficiency"]["attention"]
    assert fit.launch_overhead_us == runtime["launch_overhead_us"]
    assert fit.call_overhead_us == runtime["call_overhead_us"]


@pytest.mark.slow
def test_llm_rows_meet_the_held_out_targets() -> None:
    """Issue 41's targets on the held-out LLM rows: median error at most 15%, at least 75% within 30%;
    the rows span several models, devices, TP degrees and both metrics."""
    rows = acc.load_file(acc.measurements_dir() / "llm_tensorrt.yaml")
    assert len(rows) >= 30
    assert len({m.params["model"] for m in rows}) >= 4 and len({m.device.id for m in rows}) == 3
    assert {m.params["tp"] for m in rows} == {1, 2, 4, 8} and {m.metric for m in rows} == {"latency_s", "throughput_per_s"}
    held_out = acc.group_errors([acc.Prediction(m, acc.predict(m)) for m in rows if m.split == "holdout"])
    overall = next(g for g in held_out if (g.part, g.by) == ("holdout", "all"))
    assert overall.median <= 0.15 and overall.within >= 0.75
