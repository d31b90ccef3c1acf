"""Transfer costs held as per-edge sizes and per-pair rates, computed where used.

Golden values come from brute force (a Python loop over every edge and device pair with
``math.ceil`` on the platform's own route figures) or from hand calculation in the comments.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dse.cost import CostTables, RooflineCostModel, TableCostModel, pair_maximum, route_arrays
from dse.errors import SpecError
from dse.inputs import catalog
from dse.inputs.builders import build
from dse.mapping.dag import DagProblem
from dse.model.platform import Device, Link, Platform, load_platform
from dse.model.workload import Op, Workload


def _platform(m: int, seed: int, *, speed: bool = True) -> Platform:
    rng = np.random.default_rng(seed)
    devices = tuple(Device(f"d{j}", "cpu" if j % 2 else "gpu", {"fp32": float(rng.uniform(1, 20))}, 100.0, 16.0,
                           float(rng.uniform(0, 5)), float(rng.uniform(10, 50)),
                           speed=float(rng.integers(5, 100)) if speed else 0.0) for j in range(m))
    links = tuple(Link(f"d{a}", f"d{b}", float(rng.uniform(0.5, 50)), float(rng.uniform(0, 3)),
                       float(rng.uniform(0, 20))) for a in range(m) for b in range(a + 1, m))
    return Platform(f"p{seed}", devices, links)


def _workload(n: int, seed: int, *, fractional: bool = False) -> Workload:
    rng = np.random.default_rng(seed)
    ops = tuple(Op(f"o{i}", flops=float(rng.uniform(1e6, 1e9)), bytes_moved=float(rng.uniform(1e3, 1e6)),
                   work=float(rng.integers(1, 1000)), output_bytes=float(rng.integers(0, 5000))) for i in range(n))
    edges = tuple((int(s), i) for i in range(1, n) for s in rng.choice(i, size=min(i, 2), replace=False))
    sizes = tuple(float(rng.uniform(0, 5000)) if fractional else float(rng.integers(0, 5000)) for _ in edges)
    return Workload(f"w{seed}", ops, edges, sizes)


def _brute(workload: Workload, platform: Platform, scale_latency: float, scale_rate: float):
    """Per edge and device pair: ceil(latency + size * per_byte) and ceil(size * energy per byte), by loops."""
    m, E = len(platform.devices), len(workload.edges)
    tt = np.zeros((E, m, m), dtype=np.int64)
    te = np.zeros((E, m, m), dtype=np.int64)
    for e, size in enumerate(workload.edge_bytes):
        for a, da in enumerate(platform.devices):
            for b, db in enumerate(platform.devices):
                if a == b:
                    continue
                bw, lat, epb = platform.route(da.name, db.name)
                tt[e, a, b] = max(0, math.ceil(lat * scale_latency + size * (scale_rate / bw) - 1e-9))
                te[e, a, b] = max(0, math.ceil(size * epb - 1e-9))
    return tt, te


@pytest.mark.parametrize("seed", range(4))
def test_table_model_accessors_equal_brute_force(seed: int) -> None:
    workload, platform = _workload(12, seed, fractional=seed % 2 == 1), _platform(4, seed)
    model = TableCostModel(scale=1000.0)
    t = model.tables(workload, platform)
    tt, te = _brute(workload, platform, 1000.0, 1000.0)  # TableCostModel: latency x scale, scale / bandwidth
    e, a, b = np.meshgrid(np.arange(t.n_edges), np.arange(4), np.arange(4), indexing="ij")
    assert np.array_equal(t.edge_transfer_time(e, a, b), tt)
    assert np.array_equal(t.edge_transfer_energy(e, a, b), te)
    assert np.array_equal(t.transfer_time, tt) and np.array_equal(t.transfer_energy, te)  # lazy full tables
    total, top = t.transfer_over_pairs("transfer_time", chunk_cells=40)  # chunks of 2 edges
    assert np.array_equal(total, tt.sum(axis=(1, 2))) and np.array_equal(top, tt.reshape(len(tt), -1).max(axis=1))


def test_roofline_accessors_equal_brute_force() -> None:
    workload, platform = _workload(10, 7), _platform(3, 7, speed=False)
    t = RooflineCostModel().tables(workload, platform)
    tt, te = _brute(workload, platform, 1e3, 1.0)  # ns: latency us x 1e3, 1 / (GB/s) ns per byte
    assert np.array_equal(t.transfer_time, tt) and np.array_equal(t.transfer_energy, te)


def test_fractional_sizes_are_rounded_once_after_the_division() -> None:
    # one edge of 0.5 size units over a link of rate 3 (units per time unit), times in thousandths:
    # 0.5 * 1000 / 3 = 166.67 -> 167. Rounding the size first (to 1) would give ceil(333.3) = 334.
    ops = (Op("a", work=10.0, output_bytes=0.5), Op("b", work=10.0))
    workload = Workload("w", ops, ((0, 1),), (0.5,))
    platform = Platform("p", (Device("x", "cpu", {}, 1.0, 1.0, 0.0, 1.0, speed=10.0),
                              Device("y", "cpu", {}, 1.0, 1.0, 0.0, 1.0, speed=10.0)), (Link("x", "y", 3.0, 0.0),))
    t = TableCostModel(scale=1000.0).tables(workload, platform)
    assert int(t.edge_transfer_time(0, 0, 1)) == 167
    assert int(t.edge_bytes[0]) == 1  # the integer byte count is still rounded up


def test_tables_stay_linear_in_edges_and_devices() -> None:
    # 4,000 edges x 80 devices: a full (edges, devices, devices) int64 table would take 205 MB; the
    # tables hold O(edges + devices^2) numbers and decode a genome without building it.
    n, m = 2000, 80
    ops = tuple(Op(f"o{i}", work=float(1 + i % 7), output_bytes=float(i % 13)) for i in range(n))
    edges = tuple((i - k, i) for i in range(2, n) for k in (1, 2))
    devices = tuple(Device(f"d{j}", "cpu", {}, 1.0, 1.0, 0.0, 1.0, speed=float(1 + j % 5)) for j in range(m))
    links = tuple(Link(f"d{a}", f"d{b}", 2.0 + (a + b) % 3, 0.0) for a in range(m) for b in range(a + 1, m))
    t = TableCostModel().tables(Workload("chain", ops, edges), Platform("line", devices, links))
    held = sum(v.nbytes for v in vars(t).values() if isinstance(v, np.ndarray))
    assert held < 16 * 2**20  # time/energy/mem (n, m) dominate: 3 x 1.3 MB, plus 3 x (m, m) rates
    problem = DagProblem(t, ("makespan", "energy"), memory=False)
    x = problem.repair(np.random.default_rng(0).integers(problem.lower, problem.upper + 1, size=(3, problem.n_genes)))
    assert problem.evaluate(x).F.shape == (3, 2)
    assert t.__dict__["_transfer_time_array"] is None  # nothing built the full table


def test_explicit_and_compact_tables_evaluate_alike() -> None:
    workload, platform = _workload(9, 3), _platform(3, 3)
    compact = TableCostModel(scale=10.0).tables(workload, platform)
    explicit = dataclasses.replace(compact, transfer_time=np.array(compact.transfer_time),
                                   transfer_energy=np.array(compact.transfer_energy))
    assert explicit.__dict__["_transfer_time_explicit"] and not compact.__dict__["_transfer_time_explicit"]
    for tf in (False, True):
        for insertion in (False, True):
            kw = dict(memory=False, insertion=insertion, tensor_per_device=tf)
            p1, p2 = DagProblem(compact, **kw), DagProblem(explicit, **kw)
            X = p1.repair(np.random.default_rng(1).integers(p1.lower, p1.upper + 1, size=(20, p1.n_genes)))
            assert np.array_equal(p1.evaluate(X).F, p2.evaluate(X).F)


def test_pair_maximum_equals_the_full_table_maximum() -> None:
    rng = np.random.default_rng(5)
    for m in (1, 2, 5, 9):
        latency = rng.choice([0.0, 1.0, 2.5], size=(m, m))  # repeated and dominated pairs
        rate = rng.choice([0.1, 0.3, 1.0], size=(m, m))
        sizes = rng.uniform(0, 1e4, size=50)
        off = ~np.eye(m, dtype=bool)
        full = latency[None] + sizes[:, None, None] * rate[None]
        expected = np.where(off[None], full, -np.inf).reshape(50, -1).max(axis=1) if m > 1 else np.zeros(50)
        assert np.array_equal(pair_maximum(latency, rate, sizes, chunk_cells=7), expected)


def test_route_arrays_fill_routed_pairs_and_name_an_unconnected_one() -> None:
    devices = tuple(Device(f"d{j}", "cpu", {}, 1.0, 1.0, 0.0, 1.0, speed=1.0) for j in range(4))
    chain = (Link("d0", "d1", 2.0, 1.0, 3.0), Link("d1", "d2", 4.0, 0.5, 5.0))
    bw, lat, epb = route_arrays(Platform("chain", devices[:3], chain))
    # by hand: d0 -> d2 over both links: bottleneck min(2, 4) = 2 GB/s, 1 + 0.5 us, 3 + 5 pJ/B; both ways
    assert (bw[0, 2], lat[0, 2], epb[0, 2]) == (bw[2, 0], lat[2, 0], epb[2, 0]) == (2.0, 1.5, 8.0)
    assert (bw[1, 2], lat[1, 2], epb[1, 2]) == (4.0, 0.5, 5.0) and bw[0, 0] == math.inf
    with pytest.raises(ValueError, match="no link path from 'd0' to 'd3'"):  # d3 has no link
        route_arrays(Platform("island", devices, chain))


def test_a_transfer_past_int64_names_the_edge_and_the_pair() -> None:
    ops = (Op("a", work=1.0, output_bytes=1e17), Op("b", work=1.0))
    platform = Platform("p", (Device("x", "cpu", {}, 1.0, 1.0, 0.0, 1.0, speed=1.0),
                              Device("y", "cpu", {}, 1.0, 1.0, 0.0, 1.0, speed=1.0)), (Link("x", "y", 1e-3, 0.0),))
    with pytest.raises(SpecError) as info:  # 1e17 / 1e-3 = 1e20 time units, past 9.2e18
        TableCostModel().tables(Workload("w", ops, ((0, 1),)), platform)
    assert info.value.field == "transfer_time[a -> b, x -> y]"


def test_explicit_tables_are_checked_for_dtype() -> None:
    t = TableCostModel().tables(_workload(4, 1), _platform(2, 1))
    with pytest.raises(TypeError, match="transfer_time must be int64"):
        dataclasses.replace(t, transfer_time=np.zeros((t.n_edges, 2, 2)))
    assert isinstance(t, CostTables)


@pytest.mark.parametrize("platform_name", ["edge_soc", "node_cpu_2gpu", "server_cpu_gpu_fpga"])
@pytest.mark.parametrize("what", ["transfer_time", "transfer_energy"])
def test_transfer_over_pairs_is_the_sum_and_maximum_over_every_pair(platform_name: str, what: str) -> None:
    # brute force: every edge's (m, m) block of transfer_block, its diagonal zeroed, summed and maxed
    platform = load_platform(catalog.models_dir() / "platforms" / f"{platform_name}.yaml")
    tables = RooflineCostModel().tables(build("random_pipeline", n_ops=40, seed=5), platform)
    total, top = tables.transfer_over_pairs(what, chunk_cells=64)
    for e in range(tables.n_edges):
        block = tables.transfer_block(np.array([e]), what)[0]
        block[np.arange(tables.n_dev), np.arange(tables.n_dev)] = 0
        assert total[e] == block.sum() and top[e] == block.max(initial=0)
