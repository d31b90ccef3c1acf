"""The catalog's platform files: they load, their figures are sourced and consistent, and the
roofline model can cost the bundled builders' workloads on them."""

from __future__ import annotations

import re

import pytest

from dse.cost import RooflineCostModel
from dse.inputs import catalog
from dse.inputs.builders import build
from dse.model.platform import load_platform, platform_from_dict
from dse.util.yamlio import read_yaml

PLATFORMS = ("server_cpu_gpu_fpga", "edge_soc", "node_cpu_2gpu")
FIGURE = re.compile(r"^\s+(fp64|fp32|tf32|fp16|bf16|int8|mem_bw_gbps|mem_gib|idle_w|active_w|bandwidth_gbps"
                    r"|latency_us|energy_pj_per_byte):\s*[0-9.]+")


def path(name: str):
    return catalog.models_dir() / "platforms" / f"{name}.yaml"


@pytest.fixture(scope="module")
def workloads():
    return {"gcn-cora": build("gcn", dataset="cora"), "resnet50": build("resnet50"),
            "resnet50-block": build("resnet50", granularity="block"), "bert": build("bert_base", layers=2),
            "random": build("random_pipeline", n_ops=24, seed=3)}


@pytest.mark.parametrize("name", PLATFORMS)
def test_platform_loads_with_consistent_power(name: str) -> None:
    platform = load_platform(path(name))
    assert platform.name == name and platform.description
    assert name in catalog.platforms()
    for device in platform.devices:
        assert device.active_w >= device.idle_w > 0
        assert device.peak_tflops and all(v > 0 for v in device.peak_tflops.values())
        assert device.mem_bw_gbps > 0 and device.mem_gib > 0
    for a in platform.device_names:  # every pair is reachable
        for b in platform.device_names:
            bandwidth, latency, _ = platform.route(a, b)
            assert bandwidth > 0 and latency >= 0


@pytest.mark.parametrize("name", PLATFORMS)
def test_every_figure_carries_a_source_comment(name: str) -> None:
    figures = [line for line in path(name).read_text().splitlines() if FIGURE.match(line)]
    assert figures
    assert all("#" in line for line in figures), [line for line in figures if "#" not in line]


@pytest.mark.parametrize("name", PLATFORMS)
@pytest.mark.parametrize("workload", ["gcn-cora", "resnet50", "resnet50-block", "bert", "random"])
def test_roofline_costs_every_op(name: str, workload: str, workloads) -> None:
    platform = load_platform(path(name))
    tables = RooflineCostModel().tables(workloads[workload], platform)
    assert tables.allowed.any(axis=1).all()
    assert (tables.time[tables.allowed] > 0).all()
    assert (tables.energy[tables.allowed] >= 0).all()


def test_server_routes_gpu_fpga_traffic_through_the_host() -> None:
    server = load_platform(path("server_cpu_gpu_fpga"))
    assert sorted(d.kind for d in server.devices) == ["cpu", "fpga", "gpu"]
    assert not any({link.a, link.b} == {"gpu", "fpga"} for link in server.links)
    assert server.route("gpu", "fpga") == (12, 10, 96)  # narrowest hop, summed latency and energy


def test_server_gpu_beats_cpu_on_dense_layers(workloads) -> None:
    """The catalog's peak rates (312 against 5 TFLOP/s) on the plain analytic model (mechanisms: none):
    what this checks is the data-sheet figures, not the class defaults' tile quantization at batch 1."""
    server = platform_from_dict({**read_yaml(path("server_cpu_gpu_fpga")), "mechanisms": "none"})
    tables = RooflineCostModel().tables(workloads["resnet50"], server)
    cpu, gpu = server.index("cpu"), server.index("gpu")
    assert tables.time[:, gpu].sum() < tables.time[:, cpu].sum() / 5


def test_edge_soc_has_two_dlas_without_sparse_support(workloads) -> None:
    edge = load_platform(path("edge_soc"))
    assert [d.name for d in edge.devices if d.kind == "dla"] == ["dla0", "dla1"]
    assert {d.mem_gib for d in edge.devices} == {64}  # unified memory: each sees the full capacity
    tables = RooflineCostModel().tables(workloads["gcn-cora"], edge)
    dla = edge.index("dla0")
    for i, cls in enumerate(tables.op_classes):
        if cls == "spmm":
            assert not tables.allowed[i, dla]


def test_node_nvlink_is_faster_than_pcie() -> None:
    node = load_platform(path("node_cpu_2gpu"))
    assert node.device_names == ("cpu", "gpu0", "gpu1")
    nvlink, pcie = node.route("gpu0", "gpu1"), node.route("cpu", "gpu0")
    assert nvlink[0] > pcie[0] and nvlink[1] < pcie[1]


def test_every_catalog_device_of_a_class_declares_its_data_sheet_unit_count_and_part() -> None:
    """No catalog CPU or GPU falls back to a class-typical unit count: each declares its SM or core count
    with a source and says which real part it stands for."""
    checked = 0
    for name in catalog.platforms():
        for d in load_platform(path(name)).devices:
            if not d.device_class:
                continue
            checked += 1
            assert d.compute_units > 0 and d.provenance["compute_units"] == "declared", (name, d.name)
            assert d.sources.get("compute_units") and d.sources.get("part"), (name, d.name)
    assert checked >= 8
