"""The quickstart path a user follows from Python, end to end, on the bundled problem."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

import dse  # noqa: E402
from dse.inputs import catalog  # noqa: E402

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
    ax = dse.plot_fronts([exact, approx])
    assert ax.get_xlabel().startswith("throughput")
    text = problem.decode(exact.points[0].genome).explain()
    assert "period" in text and "bottleneck" in text
    # the front beats the static partition on both objectives at its knee (the engine's raison d'etre)
    static = exact.baselines["static"]
    knee = exact.knee()
    assert knee.objectives["throughput_items_per_s"] > static.objectives["throughput_items_per_s"]


def _brute_force_front(problem) -> np.ndarray:
    """The feasible nondominated internal objective values of ``problem`` (two, both minimised), found here
    by evaluating every genome (the quickstart has 3^9 = 19,683) and keeping those no other feasible
    genome dominates: among the distinct values sorted by the first objective, then the second, a value is
    dominated exactly when an earlier one (no larger first objective) has no larger second objective."""
    axes = [np.arange(lo, hi + 1) for lo, hi in zip(problem.lower, problem.upper, strict=True)]
    X = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=1)
    evaluation = problem.evaluate(X)
    F = np.unique(evaluation.F[evaluation.feasible], axis=0)  # distinct rows, sorted lexicographically
    assert F.shape[1] == 2
    best_earlier = np.minimum.accumulate(np.concatenate([[np.inf], F[:-1, 1]]))
    return F[F[:, 1] < best_earlier]


def test_quickstart_front_shows_a_trade_off() -> None:
    """The quickstart's exact front has at least six proven points spread over both axes of pareto.png
    (the front had two points, 3% apart in throughput, before): CP-SAT's front is the brute-force front."""
    problem = dse.load_problem(QUICKSTART)
    truth = _brute_force_front(problem)
    exact = dse.solve(problem, solver="cpsat", time_limit=30, seed=0)
    assert exact.complete and all(p.proven for p in exact.points)
    np.testing.assert_array_equal(np.unique(exact.internal(), axis=0), truth)
    assert len(truth) >= 6
    values = exact.to_frame()
    for column in ("throughput_items_per_s", "energy_mj_per_item"):  # a range a reader sees on a linear axis
        assert values[column].max() >= 1.5 * values[column].min(), column


def test_power_cap_binds_on_quickstart() -> None:
    """Without the spec's power cap the fastest Pareto-optimal mapping draws more than the cap (brute
    force); with it, no point does."""
    from dataclasses import replace

    from dse.runs.spec import ConstraintsSpec

    spec = dse.load_spec(QUICKSTART)
    cap = spec.constraints.power_w
    assert cap is not None
    capped = dse.solve(dse.load_problem(QUICKSTART), solver="cpsat", time_limit=30)
    for p in capped.points:
        watts = p.objectives["energy_mj_per_item"] * 1e-3 * p.objectives["throughput_items_per_s"]
        assert watts <= cap + 1e-6
    free = dse.build_problem(replace(spec, constraints=ConstraintsSpec(deadline_ms=spec.constraints.deadline_ms,
                                                                       memory=True)))
    uncapped = free.user_objectives(_brute_force_front(free))
    columns = [o.column for o in free.objectives]
    fastest = uncapped[np.argmax(uncapped[:, columns.index("throughput_items_per_s")])]
    watts = fastest[columns.index("energy_mj_per_item")] * 1e-3 * fastest[columns.index("throughput_items_per_s")]
    assert watts > cap


def test_catalog_platforms_load_and_cost_every_builder() -> None:
    from dse.cost import RooflineCostModel
    from dse.inputs.builders import build
    from dse.model.platform import load_platform

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
