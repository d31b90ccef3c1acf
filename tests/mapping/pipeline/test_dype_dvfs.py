"""DVFS operating points as genes of the pipeline genome, and the calibrated cost path."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

import dse
from dse.cost import RooflineCostModel
from dse.cost.dvfs import levels_of
from dse.errors import SpecError
from dse.inputs.builders import build
from dse.mapping.pipeline import PipelineProblem
from dse.model.platform import load_platform, platform_from_dict
from dse.model.workload import workload_from_dict
from tests.conftest import TINY_PLATFORM, TINY_WORKLOAD

ROOT = Path(__file__).resolve().parents[3]


def tiny(dvfs: bool = True):
    """The tiny platform on the plain analytic model (``mechanisms: none``: the hand calculations below
    are the roofline's arithmetic, without the cpu runtime's element-wise fusion or the class defaults)."""
    platform = {**copy.deepcopy(TINY_PLATFORM), "mechanisms": "none"}
    if dvfs:
        platform["devices"][0]["dvfs"] = [{"freq_mhz": 1000}, {"freq_mhz": 500, "time_scale": 2.0, "power_scale": 0.3}]
    return platform_from_dict(platform, "tiny"), workload_from_dict(TINY_WORKLOAD, "three")


def test_levels_scale_only_the_compute_bound_part() -> None:
    platform, workload = tiny()
    tables = RooflineCostModel().tables(workload, platform)
    levels = levels_of(tables)
    assert levels is not None and levels.count.tolist() == [2, 1]
    mm, act = 1, 2
    # mm on the cpu: 2e10 FLOP / (1 TFLOP/s x 0.70) = 28.5714 ms, compute-bound (2e7 B / 75 GB/s = 0.27 ms),
    # + 1 us launch: 28,572,429 ns at 1000 MHz; at 500 MHz the compute part doubles: 57,143,858 ns
    assert tables.time[mm, 0] == levels.time[0, mm, 0] == 28_572_429
    assert levels.time[1, mm, 0] == 57_143_858
    # dynamic energy at 500 MHz: (100 - 20) W x 0.3 = 24,000 mW x 57,143,858 ns
    assert levels.energy[1, mm, 0] == 24_000 * 57_143_858
    # act is memory-bound (2e6 B / 75 GB/s = 26.67 us > 1e6 FLOP / 0.3 TFLOP/s = 3.33 us, 6.67 us at half
    # the clock): 26,667 + 1,000 ns at both levels
    assert levels.time[0, act, 0] == levels.time[1, act, 0] == 27_667
    assert (levels.time[:, :, 1] == tables.time[:, 1]).all()  # the gpu has no operating points


def test_frequency_genes_exist_only_with_levels_and_the_front_widens() -> None:
    plain = PipelineProblem(RooflineCostModel().tables(*reversed(tiny(dvfs=False))))
    platform, workload = tiny()
    leveled = PipelineProblem(RooflineCostModel().tables(workload, platform))
    assert plain.gene_names == ("device[load]", "device[mm]", "device[act]")
    assert leveled.gene_names == plain.gene_names + ("level[cpu]",)
    assert leveled.upper.tolist() == [1, 1, 1, 1]
    before, after = dse.solve(plain, "exhaustive"), dse.solve(leveled, "exhaustive")
    for point in before.internal():  # every old point is still reachable (nominal level): weakly dominated
        assert (after.internal() <= point).all(axis=1).any()
    # and the levels reach points no nominal mapping reaches: some old point is strictly dominated
    assert any(((after.internal() <= p).all(axis=1) & (after.internal() < p).any(axis=1)).any()
               for p in before.internal())
    ref = before.reference_point([after])
    assert after.hypervolume(ref) > before.hypervolume(ref)


@pytest.mark.parametrize(("power_w", "clocked"), [(None, True), (120.0, False)])
def test_cpsat_equals_exhaustive_with_levels_on_the_catalog_platform(power_w, clocked) -> None:
    """CP-SAT's front is the brute-force front with the cpu's and the gpu's levels as genes, with and without
    a power cap, and a decoded point names the clock of the DVFS devices that run an op, and only theirs.

    Under the gpu class defaults the 1-layer GCN's GEMM (2708 x 1433 x 7: one 256 x 256 output tile,
    split-K into 5 slices, 5 of 108 SMs busy) is no faster on the gpu than on the fpga, so the uncapped
    front's fastest point runs l0.combine on the fpga and the rest on the gpu at 765 MHz (14,304 items/s
    at 9.59 mJ/item: 137 W). 120 W binds: it removes that point and leaves the all-FPGA point (12,890
    items/s at 7.758 mJ/item: 100 W), which runs no DVFS device and shows no clock."""
    platform = load_platform(ROOT / "models" / "platforms" / "server_cpu_gpu_fpga_dvfs.yaml")
    tables = RooflineCostModel().tables(build("gcn", dataset="cora", layers=1), platform)
    problem = PipelineProblem(tables, power_cap_mw=None if power_w is None else int(power_w * 1e3))
    assert problem.n_genes == 3 + 2  # 3 ops, levels of the cpu and the gpu
    brute = dse.solve(problem, "exhaustive")
    exact = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    assert exact.status == brute.status == "optimal"
    assert sorted(map(tuple, exact.internal().tolist())) == sorted(map(tuple, brute.internal().tolist()))
    ev = problem.evaluate(np.array([p.genome for p in exact.points]))
    np.testing.assert_array_equal(ev.F, exact.internal())
    if power_w is not None:  # the cap binds: the uncapped front's fastest point draws more and is gone
        fastest = dse.solve(PipelineProblem(tables), "exhaustive").points[0]
        watts = fastest.objectives["throughput_items_per_s"] * fastest.objectives["energy_mj_per_item"] * 1e-3
        assert watts > power_w and fastest.genome not in [p.genome for p in exact.points]
    decoded = problem.decode(np.array(exact.points[0].genome))
    used = set(decoded.assignment().values())  # a clock is shown for the DVFS devices that run an op only
    assert set(decoded.device_level) == {"cpu", "gpu"} & used and bool(decoded.device_level) == clocked
    assert ("MHz" in decoded.explain()) == clocked


def test_dvfs_fields_are_checked() -> None:
    platform = copy.deepcopy(TINY_PLATFORM)
    platform["devices"][0]["dvfs"] = [{"freq_mhz": 1000}, {"freq_mhz": 1000, "time_scale": 2.0}]
    with pytest.raises(SpecError) as info:
        platform_from_dict(platform, "p.yaml")
    assert info.value.field == "devices[0].dvfs"
    platform["devices"][0]["dvfs"] = [{"freq_mhz": 1000, "time_scale": -1}]
    with pytest.raises(SpecError) as info:
        platform_from_dict(platform, "p.yaml")
    assert info.value.field == "devices[0].dvfs[0].time_scale"
    platform["devices"][0].pop("dvfs")
    platform["calibration"] = "missing.yaml"
    with pytest.raises(SpecError) as info:
        platform_from_dict(platform, "p.yaml")
    assert info.value.field == "calibration"


def test_calibrated_path_replaces_the_analytic_time_where_it_covers() -> None:
    from dse.cost.calibration.measure import Calibration, KernelFit, MachineInfo

    # seconds = 1e-6 + 2e-12 x flops for fp32 GEMMs on "cpu"; a 512 x 256 x 1024 GEMM has 2.68e8 FLOPs:
    # 1e-6 + 2e-12 x 268,435,456 = 537.871 us -> 537,871 ns (rounded up)
    fit = KernelFit("gemm", "cpu", "fp32", ("const", "flops"), (1e-6, 2e-12), 0.05, 10)
    cal = Calibration(MachineInfo.current(), (fit,), "by hand")
    platform, _ = tiny(dvfs=False)
    workload = build("gemm", m=512, n=256, k=1024, precision="fp32")
    measured = RooflineCostModel(calibration=cal).tables(workload, platform)
    analytic = RooflineCostModel().tables(workload, platform)
    assert measured.time[0, 0] == 537_871
    assert measured.time[0, 1] == analytic.time[0, 1]  # no "cuda" fit: the gpu stays analytic


def test_calibrated_spmv_fit_costs_an_spmv_op() -> None:
    from dse.cost.calibration.measure import Calibration, KernelFit, MachineInfo

    # seconds = 2e-6 + 1e-9 x nnz; the PageRank SpMV has 5,000 nonzeros: 2 us + 5 us = 7,000 ns
    fit = KernelFit("spmv", "cpu", "fp32", ("const", "nnz"), (2e-6, 1e-9), 0.05, 10)
    cal = Calibration(MachineInfo.current(), (fit,), "by hand")
    platform, _ = tiny(dvfs=False)
    workload = build("pagerank", dataset="custom", rows=1000, nnz=5000, iterations=1)
    tables = RooflineCostModel(calibration=cal).tables(workload, platform)
    analytic = RooflineCostModel().tables(workload, platform)
    assert tables.time[0, 0] == 7_000
    assert tables.time[1, 0] == analytic.time[1, 0]  # the damping op is not a calibrated kernel
