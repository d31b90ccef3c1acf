"""Every family's decoded breakdown (:meth:`DecodedMapping.breakdown`) adds up to what its front reports.

For each family, on platforms with and without DVFS operating points, and for many genomes (the
baselines, a solved front, random valid genomes): the breakdown's totals are ``evaluate``'s
objectives; the devices' dynamic and idle energy plus the links' energy is the energy the evaluator
computes (internal units, and the energy objective in user units); the ops' energies add up to their
devices' dynamic energy and the transfers' to their links'; a device that runs nothing shows no clock.
The views that read the breakdown (the trace's spans, the report's rows) are checked the same way in
``tests/store/test_breakdown_views.py``. The quickstart's all-GPU point at 765 MHz is worked out by hand.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import yaml

import dse
from dse.mapping.base import Breakdown, MappingProblem
from dse.mapping.registry import families
from dse.runs.spec import build_problem, spec_from_dict

ROOT = Path(__file__).resolve().parents[2]
#: The quickstart's all-GPU point: every op on the gpu (device 1), the cpu's level gene 0 (it runs
#: nothing), the gpu at level 2 (765 MHz).
ALL_GPU_765 = (1, 1, 1, 1, 1, 1, 1, 0, 2)


def spec_problem(name: str, **changes: object) -> MappingProblem:
    """The catalog problem ``name`` with top-level spec fields replaced by ``changes``."""
    data = yaml.safe_load((ROOT / "problems" / f"{name}.yaml").read_text())
    data.update(changes)
    return build_problem(spec_from_dict(data, f"{name}.yaml", ROOT / "problems"))


def random_genomes(problem: MappingProblem, count: int, seed: int = 0) -> np.ndarray:
    """``count`` valid genomes: uniform genes, repaired."""
    rng = np.random.default_rng(seed)
    return problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(count, problem.n_genes)))


def check_breakdowns(problem: MappingProblem, genomes: np.ndarray) -> list[Breakdown]:
    """Assert that each genome's breakdown adds up (see the module docstring); returns the breakdowns."""
    X = np.asarray(genomes, dtype=np.int64)
    ev = problem.evaluate(X, metrics=True)
    user = problem.user_objectives(ev.F)
    out = []
    for k, x in enumerate(X):
        costs = problem.decode(x).breakdown()
        assert isinstance(costs, Breakdown), f"{problem.family}: no breakdown"
        for j, o in enumerate(problem.objectives):
            assert costs.totals[o.internal_name] == ev.F[k, j], (problem.name, x.tolist(), o.name)
        # the parts make the evaluator's energy: devices' dynamic + idle, plus the links'
        parts = sum(d.dynamic_energy + d.idle_energy for d in costs.devices) + sum(e.energy for e in costs.links)
        assert parts == costs.energy == ev.metrics["energy"][k] == costs.totals["energy"], (problem.name, x.tolist())
        for j, o in enumerate(problem.objectives):
            if o.name == "energy":  # in the user's unit too (mJ/item, mJ or J)
                assert o.to_user(np.array([parts]))[0] == user[k, j]
        assert [d.name for d in costs.devices] == list(problem.tables.device_names)
        for d in costs.devices:
            assert min(d.busy, d.dynamic_energy, d.idle_energy, d.ops) >= 0
            if d.ops == 0:
                assert d.level is None and d.dynamic_energy == 0
        if costs.ops:  # one item's, one schedule's or one split's activities
            by_device: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for a in costs.ops:
                by_device[a.where][0] += a.energy
                by_device[a.where][1] += a.finish - a.start
            for d in costs.devices:
                assert by_device[d.name][0] == d.dynamic_energy
                assert by_device[d.name][1] <= d.busy  # equal but for a dag's sends
        by_link: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for a in costs.transfers:
            by_link[a.where][0] += a.energy
            by_link[a.where][1] += a.finish - a.start
        assert {name: tuple(v) for name, v in by_link.items()} == {e.name: (e.energy, e.busy) for e in costs.links}
        out.append(costs)
    return out


def solved_front(problem: MappingProblem) -> np.ndarray:
    """The exhaustive front's genomes (small examples only)."""
    front = dse.solve(problem, "exhaustive", time_limit=60, seed=0, progress=False)
    return np.array([p.genome for p in front.points], dtype=np.int64).reshape(-1, problem.n_genes)


def genomes_of(problem: MappingProblem, front: bool = True) -> np.ndarray:
    parts = [np.array(list(problem.baselines().values()), dtype=np.int64).reshape(-1, problem.n_genes),
             random_genomes(problem, 24)]
    if front:
        parts.append(solved_front(problem))
    return np.concatenate(parts)


@pytest.mark.parametrize("seed", range(9))
@pytest.mark.parametrize("name", ["pipeline", "dag", "split"])
def test_breakdown_adds_up_on_every_example(name: str, seed: int) -> None:
    """The family's seeded examples (every third pipeline example has DVFS levels): baselines, random
    genomes and the exhaustive front."""
    problem = families()[name].examples(seed)
    check_breakdowns(problem, genomes_of(problem))


@pytest.mark.parametrize("seed", range(3))
def test_multimodel_breakdown_is_the_simulated_run(seed: int) -> None:
    """Per accelerator what the simulation booked: its executed blocks' energy and its idle energy add up to
    the run's energy (baselines and random genomes; every genome is a simulation)."""
    problem = families()["multimodel"].examples(seed)
    X = genomes_of(problem, front=False)[:10]
    for x, costs in zip(X, check_breakdowns(problem, X), strict=True):
        result = problem.run(x)
        assert [d.busy for d in costs.devices] == result.busy_ns.tolist()
        assert [d.energy for d in costs.devices] == result.acc_energy_pj.tolist()
        assert sum(d.ops for d in costs.devices) == problem.tables.n_ops


def test_pipeline_dvfs_examples_show_the_chosen_clock_of_each_used_device() -> None:
    for seed in (2, 5, 8):
        problem = families()["pipeline"].examples(seed)
        assert problem.levels is not None
        t, n = problem.tables, problem.tables.n_ops
        for x in genomes_of(problem):
            costs = problem.decode(x).breakdown()
            used = set(x[:n].tolist())
            for k, d in enumerate(problem.dvfs_devices.tolist()):
                label = problem.levels.label(d, int(x[n + k]))
                assert costs.devices[d].level == (label if d in used else None)
            # the period is the largest load, every op at its device's chosen level
            busy = [c.busy for c in costs.devices] + [e.busy for e in costs.links]
            assert costs.totals["period"] == max(busy)
            assert all(c.level is None for d, c in enumerate(costs.devices) if d not in problem.dvfs_devices)
            assert len(costs.devices) == t.n_dev


@pytest.mark.parametrize("platform", ["server_cpu_gpu_fpga_dvfs", "server_cpu_gpu_fpga"])
def test_quickstart_breakdown_adds_up_with_and_without_dvfs(platform: str) -> None:
    """The quickstart on its DVFS platform and on the same server without operating points: baselines, random
    genomes."""
    problem = spec_problem("quickstart", platform=platform)
    assert (problem.levels is not None) == platform.endswith("dvfs")
    check_breakdowns(problem, genomes_of(problem, front=False))


@pytest.mark.slow
def test_quickstart_cpsat_front_breakdowns_add_up() -> None:
    """Every point of a CP-SAT front of the quickstart (a few seconds of search)."""
    problem = dse.load_problem("quickstart")
    front = dse.solve(problem, "cpsat", time_limit=5, seed=0, progress=False)
    assert len(front.points) >= 3
    check_breakdowns(problem, np.array([p.genome for p in front.points]))


def test_dag_breakdown_on_a_dvfs_platform_and_the_tf_rules() -> None:
    """A dag problem on the DVFS server (the dag family runs at the tables' nominal clock: no level genes)
    and the Topcuoglu example, then the TF paper's send rule (one send per producer and remote device)."""
    dag = spec_problem("quickstart", family="dag", objectives=["makespan", "energy"], constraints={},
                       cost_model="roofline")
    assert dag.family == "dag" and dag.tables.levels is not None
    check_breakdowns(dag, genomes_of(dag, front=False))
    check_breakdowns(dse.load_problem("topcuoglu2002"), genomes_of(dse.load_problem("topcuoglu2002"), front=False))
    tf = [families()["dag"].examples(seed) for seed in range(30)]
    tf = [p for p in tf if p.tensor_per_device and p.tables.has_transfer_energy]
    assert len(tf) >= 3
    for problem in tf:
        check_breakdowns(problem, genomes_of(problem, front=False))


def test_split_breakdown_of_the_catalog_gemm() -> None:
    """split_gemm's baselines and random splits: every device idles over the makespan, used or not; the
    GPU pool's host link carries one copy of B."""
    problem = dse.load_problem("split_gemm")
    for costs in check_breakdowns(problem, genomes_of(problem, front=False)):
        assert all(d.idle_energy > 0 for d in costs.devices if problem.tables.idle_power_mw[
            problem.tables.device_names.index(d.name)] > 0)


def test_quickstart_all_gpu_point_at_765_mhz_by_hand() -> None:
    """The quickstart's all-GPU point ``1 1 1 1 1 1 1 0 2``, worked out by hand.

    From ``models/platforms/server_cpu_gpu_fpga_dvfs.yaml``: the gpu (an A100 PCIe 40GB) peaks at 19.5
    TFLOP/s fp32 and 1,555 GB/s, has 108 SMs, draws idle_w = 35 W and active_w = 250 W; its third operating
    point is 765 MHz with time_scale 1.843 and power_scale 0.231, so its dynamic power there is
    (250 - 35) W x 0.231 = 49.665 W = 49,665 mW (the cost model's rule: dynamic energy =
    (active_w - idle_w) x power_scale x time). It declares its data sheet only, so it takes the gpu class
    defaults of ``models/defaults/device_classes.yaml``: GEMM efficiency 0.82, GEMM tile 256, launch 1 us
    (its runtime, TensorRT, which also fuses element-wise ops into their producer), sparse bandwidth
    efficiency 0.50, skew sensitivity 0.05; dense bandwidth is the kind's 0.85 (1,321.75 GB/s).

    The workload (``gcn``, Cora: 2,708 nodes, 1,433 features, 7 classes, 13,264 nonzeros with the self
    loops, degree skew 1.3; hidden width 512; fp32), each op's gpu time (``max(compute, memory) + serial``,
    DVFS scaling only the compute part; rounded up to ns). A GEMM with fewer output tiles than SMs is split
    into the slice count ``s`` with the least ``FLOPs / peak / busy + reduction`` (the library's fastest
    split; ``dse.cost.mechanisms.tiling``):

    * l0.combine, GEMM 2708 x 1433 x 512: 3,973,697,536 FLOP, 24,003,024 B. Output 2708 x 512 =
      1,386,496 elements = ceil(21.16) = 22 tiles of 256 x 256 < 108 SMs: at most
      min(ceil(108 / 22), 1433 // 256) = 5 slices. At peak the GEMM is 203,779.4 ns over all SMs; each
      slice adds 2 x 1,386,496 x 4 B of reduction, 8,391.9 ns at 1,321.75 GB/s. Estimates: 1 slice
      (22/108 busy) 1,000,371.4 ns; 2 (44/108) 500,185.7 + 16,783.8; 3 (66/108) 333,457.1 + 25,175.6;
      4 (88/108) 250,092.9 + 33,567.5 = 283,660.4, the least; 5 start a second wave (110/216):
      400,148.6 + 41,959.4. So 4. Compute 3,973,697,536 / (19.5e12 x 0.82 x 88/108) = 304,991.3 ns;
      memory 24,003,024 / 1,321.75e9 = 18,160 ns; reduction 33,567.5 ns. At 765 MHz:
      304,991.3 x 1.843 + 33,567.5 + 1,000 = 596,667 ns (339,559 at 1410 MHz).
    * l1.combine, GEMM 2708 x 512 x 512: 1,419,771,904 FLOP; 22 tiles, slices at most min(5, 512 // 256)
      = 2: unsplit 357,425.3 ns against 178,712.6 + 16,783.8, so 2 (44 of 108 SMs). Compute
      1,419,771,904 / (19.5e12 x 0.82 x 44/108) = 217,942.1 ns; reduction 16,783.8 ns. At 765 MHz:
      217,942.1 x 1.843 + 16,783.8 + 1,000 = 419,452 ns.
    * l2.combine, GEMM 2708 x 512 x 7: 19,410,944 FLOP; 18,956 outputs = 1 tile, at most 2 slices:
      unsplit 107,506.9 ns against 53,753.4 + 229.5, so 2 (2 of 108 SMs). Compute 19,410,944 /
      (19.5e12 x 0.82 x 2/108) = 65,552.9 ns; reduction 2 x 2 x 18,956 x 4 / 1,321.75e9 = 229.5 ns. At
      765 MHz: 65,552.9 x 1.843 + 229.5 + 1,000 = 122,044 ns.
    * l0.aggregate and l1.aggregate, SpMM of width 512: 32,827,604 B at 1,555e9 x 0.50 / (1 + 0.05 x 1.3)
      (a 2,048-byte row fills whole 32-byte sectors: no density penalty) = 44,966.4 ns, above the compute
      (13,582,336 / (19.5e12 x 0.06 / 1.065) = 12,363 ns even x 1.843): memory-bound, 45,967 ns at every
      clock.
    * l2.aggregate, SpMM of width 7: 28-byte rows use 28/32 of a sector: 564,164 B at 1,555e9 x 0.50 x
      0.875 / 1.065 = 883.2 ns + 1,000 = 1,884 ns at every clock.
    * log_softmax, element-wise, fused into l2.aggregate: its arithmetic alone, 75,824 / (19.5e12 x 0.30)
      = 12.96 ns, x 1.843 = 23.9: 24 ns.

    * period = 596,667 + 45,967 + 45,967 + 419,452 + 122,044 + 1,884 + 24 = 1,232,005 ns (every op on one
      device, no transfer): throughput 1 / 1,232.005 us = 811.7 items/s;
    * dynamic energy = 49,665 mW x 1,232,005 ns = 61,187,528,325 pJ = 61.188 mJ
      (l0.combine alone: 49,665 x 596,667 = 29,633,466,555 pJ);
    * idle energy = 35,000 mW x 1,232,005 ns = 43,120,175,000 pJ = 43.120 mJ (the cpu and the fpga run
      nothing: no idle charge, no clock);
    * energy per item = 61,187,528,325 + 43,120,175,000 = 104,307,703,325 pJ = 104.307703 mJ (the
      quickstart's slowest, least-energy front point: 812 items/s at 104.3 mJ/item).

    At full clock (1410 MHz, the tables' nominal energy) the same ops take 735,899 ns and would spend
    215,000 mW x 735,899 ns = 158.22 mJ of dynamic energy: the figure the report and trace.json showed
    before the breakdown.
    """
    problem = dse.load_problem("quickstart")
    x = np.array(ALL_GPU_765)
    gpu = problem.tables.device_names.index("gpu")
    times = [596_667, 45_967, 45_967, 419_452, 122_044, 1_884, 24]
    assert problem.levels is not None and problem.levels.time[2, :, gpu].tolist() == times  # the tables' input
    assert problem.tables.time[:, gpu].tolist() == [339_559, 45_967, 45_967, 235_726, 66_783, 1_884, 13]
    costs = check_breakdowns(problem, x[None, :])[0]
    assert costs.totals == {"period": 1_232_005, "energy": 104_307_703_325, "latency": 1_232_005}
    by_name = {d.name: d for d in costs.devices}
    assert (by_name["gpu"].busy, by_name["gpu"].dynamic_energy, by_name["gpu"].idle_energy) == (
        1_232_005, 61_187_528_325, 43_120_175_000)
    assert by_name["gpu"].level == "765 MHz" and by_name["gpu"].ops == 7
    for idle in ("cpu", "fpga"):
        assert (by_name[idle].ops, by_name[idle].energy, by_name[idle].level) == (0, 0, None)
    assert [a.energy for a in costs.ops] == [49_665 * t for t in times]  # topological order = table order here
    assert costs.links == () and costs.transfers == ()
    assert costs.millijoules(costs.energy) == pytest.approx(104.307703325)
    assert problem.user_objectives(np.array([[costs.totals["period"], costs.totals["energy"]]]))[0].tolist() == \
        pytest.approx([1e9 / 1_232_005, 104.307703325])
    text = problem.decode(x).explain()
    assert "energy 104.3 mJ/item (ops 61.2 mJ, transfers 0 mJ, idle 43.1 mJ)" in text
    assert "gpu at 765 MHz: 7 ops" in text and "energy 61.2 mJ + idle 43.1 mJ" in text
    assert "cpu at" not in text and "fpga at" not in text
    assert problem.describe(x).endswith("@ gpu 765 MHz")
