"""The quickstart path a user follows from Python, end to end, on the bundled problem."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

import dse  # noqa: E402
from dse import catalog  # noqa: E402

QUICKSTART = catalog.problems_dir() / "quickstart.yaml"


def test_quickstart_api_end_to_end() -> None:
    problem = dse.load_problem(QUICKSTART)
    exact = dse.solve(problem, solver="cpsat", time_limit=30, seed=0)
    brute = dse.solve(problem, solver="exhaustive", time_limit=30, seed=0)
    approx = dse.solve(problem, solver="nsga2", time_limit=20, seed=0)
    assert exact.complete and exact.status == "optimal"
    np.testing.assert_array_equal(exact.internal(), brute.internal())
    frame = exact.to_frame()
    assert {"throughput_items_per_s", "energy_mj_per_item", "latency_ms", "proven", "genome"} <= set(frame.columns)
    assert exact.hypervolume() > 0
    assert exact.compare(approx)["hypervolume_ratio"] <= 1.0 + 1e-9
    ax = exact.plot(others=[approx])
    assert ax.get_xlabel().startswith("throughput")
    text = problem.decode(exact.points[0].genome).explain()
    assert "period" in text and "bottleneck" in text
    # the front beats the static partition on both objectives at its knee (the engine's raison d'etre)
    static = exact.baselines["static"]
    knee = exact.knee()
    assert knee.objectives["throughput_items_per_s"] > static.objectives["throughput_items_per_s"]


def test_power_cap_binds_on_quickstart() -> None:
    """Without the 400 W cap the fastest mapping draws more than 400 W; with it, none does."""
    problem = dse.load_problem(QUICKSTART)
    capped = dse.solve(problem, solver="cpsat", time_limit=30)
    for p in capped.points:
        watts = p.objectives["energy_mj_per_item"] * 1e-3 * p.objectives["throughput_items_per_s"]
        assert watts <= 400 + 1e-6
    spec = dse.load_spec(QUICKSTART)
    from dataclasses import replace

    from dse.spec import ConstraintsSpec

    free = dse.build_problem(replace(spec, constraints=ConstraintsSpec(deadline_ms=5.0, memory=True)))
    uncapped = dse.solve(free, solver="cpsat", time_limit=30)
    fastest = max(uncapped.points, key=lambda p: p.objectives["throughput_items_per_s"])
    assert fastest.objectives["energy_mj_per_item"] * 1e-3 * fastest.objectives["throughput_items_per_s"] > 400


def test_catalog_platforms_load_and_cost_every_builder() -> None:
    from dse.builders import build
    from dse.cost import RooflineCostModel
    from dse.platform import load_platform

    assert {"server_cpu_gpu_fpga", "edge_soc", "node_cpu_2gpu"} <= set(catalog.platforms())
    workloads = [build("gcn", dataset=d) for d in ("cora", "citeseer", "pubmed")] + [build("gemm", tiles=4)]
    for name in catalog.platforms():
        platform = load_platform(catalog.models_dir() / "platforms" / f"{name}.yaml")
        if not all(d.peak_tflops for d in platform.devices):
            continue  # abstract speed-only processors: table costs, not roofline
        for device in platform.devices:
            assert device.active_w >= device.idle_w
        for workload in workloads:
            tables = RooflineCostModel().tables(workload, platform)
            assert tables.allowed.any(axis=1).all()
            assert (tables.time[tables.allowed] > 0).all()
