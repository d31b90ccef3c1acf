"""The catalog's GPUs (``models/gpus``) and LLM platforms: every figure sourced, the platforms' devices
the GPUs' own figures, and LLM workloads costed on them with collectives on their links."""

from __future__ import annotations

import pytest

from dse.cost import RooflineCostModel
from dse.inputs import catalog
from dse.inputs.builders import build
from dse.model.platform import load_platform, platform_from_dict
from dse.util.yamlio import read_yaml

GPUS = catalog.other_kinds()["gpus"]
LLM_PLATFORMS = {"h100_8gpu_nvlink": "h100_sxm", "a100_8gpu_nvlink": "a100_sxm_80gb",
                 "h100_2node_infiniband": "h100_sxm", "mixed_gpu_fleet": None}


def _gpu(name: str) -> dict:
    return read_yaml(catalog.models_dir() / "gpus" / f"{name}.yaml")


@pytest.mark.parametrize("name", GPUS)
def test_every_gpu_figure_has_a_source(name: str) -> None:
    data = _gpu(name)
    platform_from_dict({"name": name, "devices": [{"name": name, **data["device"]}]}, name)  # a valid device
    figures = (set(data["device"]) - {"kind"}) | set(data["figures"])
    assert figures <= set(data["sources"]), figures - set(data["sources"])


def test_the_catalog_has_the_issue_gpus() -> None:
    assert {"a100_sxm_40gb", "a100_sxm_80gb", "a100_pcie_40gb", "a100_pcie_80gb", "h100_sxm", "h100_pcie",
            "h200_sxm", "l40s", "l4", "mi300x"} <= set(GPUS)


@pytest.mark.parametrize("name", sorted(LLM_PLATFORMS))
def test_platform_devices_are_the_gpus_figures(name: str) -> None:
    platform = load_platform(catalog.models_dir() / "platforms" / f"{name}.yaml")
    for device in platform.devices:
        gpu = LLM_PLATFORMS[name] or {"l4": "l4", "a100": "a100_sxm_80gb", "h100": "h100_sxm"}[device.name.split("_")[0]]
        spec = _gpu(gpu)["device"]
        assert dict(device.peak_tflops) == spec["peak_tflops"]
        assert (device.mem_bw_gbps, device.mem_gib, device.active_w, device.intra_node_gbps) == (
            spec["mem_bw_gbps"], spec["mem_gib"], spec["active_w"], spec["intra_node_gbps"])
        assert device.compute_units == spec["compute_units"]  # the data sheet's SM count, not the class's
    for a in platform.device_names:
        assert all(platform.route(a, b)[0] > 0 for b in platform.device_names)


def test_tp8_decode_costs_on_the_h100_node_and_tp16_crosses_infiniband() -> None:
    """A TP-16 group over two 8-GPU nodes runs its all-reduces at the 50 GB/s InfiniBand port, not the
    450 GB/s NVLink: ring over 16 ranks of 64 x 8192 x 2 = 1,048,576 bytes is 2 x 15/16 x 1,048,576 /
    50e9 = 39.32 us plus 30 x 6.6 us = 198 us."""
    node = load_platform(catalog.models_dir() / "platforms" / "h100_8gpu_nvlink.yaml")
    step = build("llm", model="llama2_70b", phase="decode", batch=64, seq_len=2048, tp=8, weights="fp8",
                 activations="fp8", kv_cache="fp8")
    tables = RooflineCostModel().tables(step, node)
    assert tables.allowed.all()
    cluster = load_platform(catalog.models_dir() / "platforms" / "h100_2node_infiniband.yaml")
    wide = build("llm", model="llama2_70b", phase="decode", batch=64, seq_len=2048, tp=16)
    op = next(o for o in wide.ops if o.name == "decode.layer0.attn_allreduce")
    assert op.features["nodes"] == 2
    seconds = RooflineCostModel(launch_overhead=False).op_time_s(op, cluster.devices[0])
    assert seconds == pytest.approx(2 * 15 / 16 * 1_048_576 / 50e9 + 30 * 6.6e-6, rel=1e-9)
