"""The LLM rows' device mechanisms: the fit reads only the fit part, and its values are the declared ones."""

from __future__ import annotations

import dataclasses

import pytest

from dse.runs import accuracy as acc
from dse.runs.llm_fit import _neutral_parts, fit_llm_device, llm_fit_rows, recombined

LLM_DEVICES = ("a100-sxm4-80gb-trtllm", "h100-sxm5-80gb-trtllm", "l40s-48gb-trtllm")


def test_recombined_parts_are_the_cost_path_prediction() -> None:
    """The fit's shortcut (ops costed once, fields recombined) gives what dse accuracy predicts."""
    rows = [m for m in acc.load_measurements() if m.builder == "llm"]
    for m in (rows[0], rows[-1]):  # a throughput row and a first-token row
        d = m.device.device
        parts = _neutral_parts(m)
        value = recombined(parts, d.compute_efficiency.get("gemm", 0.75), d.bandwidth_efficiency.get("attention", 0.85),
                           d.launch_overhead_us or 5.0, d.call_overhead_us)
        assert value == pytest.approx(acc.predict(m), rel=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("device", LLM_DEVICES)
def test_llm_fit_reads_only_the_fit_part_and_matches_the_declared_values(device: str) -> None:
    rows = acc.load_measurements()
    assert llm_fit_rows(rows, device) and all(m.split == "fit" for m in llm_fit_rows(rows, device))
    scrambled = [dataclasses.replace(m, value=m.value * 7) if m.split == "holdout" else m for m in rows]
    fit = fit_llm_device(scrambled, device)
    assert fit is not None
    d = next(m.device.device for m in rows if m.device.id == device)
    assert d.compute_efficiency["gemm"] == fit.gemm
    assert d.bandwidth_efficiency.get("attention", 0.85) == fit.attention_bandwidth
    assert d.launch_overhead_us == fit.launch_overhead_us
    assert d.call_overhead_us == fit.call_overhead_us


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
