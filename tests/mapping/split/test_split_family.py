"""The ``split`` family (POAS): part costs, evaluation and exact solving checked against hand arithmetic
and brute force; workload, platform and cost-model inputs; the CLI on the bundled specs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dse
from dse import cli
from dse.errors import InfeasibleError, SpecError
from dse.mapping.split.model import (
    CalibratedSplitModel,
    GemmWorkload,
    SplitDevice,
    SplitPlatform,
    analytic_compute_s,
    cpu_group_platform,
    gemm_workload,
    part_costs,
    resolve_platform,
    resolve_workload,
    split_tables,
)
from dse.mapping.split.problem import SplitProblem, _round_to_total

# a device on a 1 GB/s host link (1 ns per byte), no latency, 10 pJ per byte, 3 W busy, 1 W idle
LINKED = SplitDevice(name="gpu", kind="gpu", fit_device="cuda", mem_bytes=10**9, pool="g", active_w=3.0, idle_w=1.0,
                     link_gbps=1.0, link_pj_per_byte=10.0)


def test_part_costs_by_hand() -> None:
    # m=8, n=2, k=3 fp32 (4 bytes): B = 3*2*4 = 24 bytes, one row of A and C = (3+2)*4 = 20 bytes
    w = GemmWorkload("w", 8, 2, 3, "fp32")
    pc = part_costs(LINKED, w, np.array([0, 4]), np.array([5e-9, 100e-9]))
    # 4 rows: copy in B + A rows = 24 + 48 = 72 ns, compute 100 ns, copy out C rows = 4*2*4 = 32 ns
    assert pc.time_s[1] == pytest.approx(204e-9)
    assert pc.link_s[1] == pytest.approx(80e-9)       # the rows' copies: 48 + 32; B's 24 ns is apart
    assert pc.b_link_s == pytest.approx(24e-9)
    assert pc.mem_bytes[1] == 24 + 4 * 20             # 104 bytes resident
    # dynamic energy: 100 ns x (3 - 1) W = 200 nJ, plus 80 bytes x 10 pJ = 0.8 nJ; B's 24 x 10 = 240 pJ apart
    assert pc.energy_j[1] == pytest.approx(200.8e-9)
    assert pc.b_energy_j == pytest.approx(240e-12)
    assert pc.time_s[0] == pc.link_s[0] == pc.mem_bytes[0] == pc.energy_j[0] == 0  # an empty part costs nothing


def test_a_part_too_large_streams_through_memory_by_hand() -> None:
    w = GemmWorkload("w", 8, 2, 3, "fp32")
    small = SplitDevice(**{**LINKED.__dict__, "mem_bytes": 64})
    pc = part_costs(small, w, np.array([4]), np.array([100e-9]))
    # 104 bytes do not fit in 64: pieces of (64 - 24) // (2 x 20) = 1 row, double-buffered, 4 pieces;
    # B in 24 ns, then per piece: in 12 ns, compute 25 ns, out 8 ns:
    # 24 + (12 + 25 + 8) + 3 x max(12, 25, 8) = 24 + 45 + 75 = 144 ns
    assert pc.pieces[0] == 4
    assert pc.time_s[0] == pytest.approx(144e-9)
    assert pc.link_s[0] == pytest.approx(80e-9)  # 4 x (12 + 8)
    assert pc.mem_bytes[0] == 24 + 2 * 20


def hand_problem(gpu_mem: int = 10**9) -> SplitProblem:
    # m=4, n=k=1, fp32, 4 chunks of one row; B = 4 bytes, a row of A and C = 8 bytes.
    # cpu in host memory, 100 ns per row, 2 W busy / 1 W idle; gpu and tensor cores share pool "g" and its
    # 1 GB/s link (10 pJ/byte), 1 ns per row each, 3 W busy, idle 1 W and 0 W: idle in all 2 W = 2000 mW
    w = gemm_workload(4, 1, 1, "fp32", chunks=4)
    cpu = SplitDevice(name="cpu", kind="cpu", fit_device="cpu", mem_bytes=10**9, pool="host", active_w=2, idle_w=1)
    gpu = SplitDevice(**{**LINKED.__dict__, "mem_bytes": gpu_mem})
    tc = SplitDevice(**{**LINKED.__dict__, "name": "tc", "kind": "tensorcore", "idle_w": 0.0, "mem_bytes": gpu_mem})
    per_row = {"cpu": 100e-9, "gpu": 1e-9, "tc": 1e-9}
    tables = split_tables(w, SplitPlatform("hand", (cpu, gpu, tc)), lambda d, w, rows: per_row[d.name] * rows)
    return SplitProblem(tables, ("time", "energy"))


def test_evaluation_by_hand() -> None:
    problem = hand_problem()
    ev = problem.evaluate(np.array([[0, 2, 2], [1, 1, 2]]), metrics=True)
    # (0, 2, 2): gpu: in 4 + 2x4 = 12 ns, compute 2, out 8 -> busy 22; tc the same. Link of pool g:
    # rows' copies (12 - 4 + 8) x 2 = 32, plus B once 4 -> 36 ns: the shared link binds, time 36 ns.
    # energy (W x ns = 1000 pJ, mW x ns = pJ): gpu 2 ns x 2 W = 4000 + 16 bytes x 10 = 4160; tc 2 ns x 3 W
    # = 6000 + 160 = 6160; B once 4 x 10 = 40; idle 2000 mW x 36 ns = 72000 -> 82360 pJ
    assert ev.F[0].tolist() == [36, 82360]
    # (1, 1, 2): cpu 100 ns binds (gpu 8 + 1 + 4 = 13, tc 22, link 8 + 16 + 4 = 28);
    # energy: cpu 100 ns x 1 W = 100000; gpu 1 ns x 2 W = 2000 + 8 x 10 = 2080; tc 6160; B 40;
    # idle 2000 x 100 = 200000 -> 308280 pJ
    assert ev.F[1].tolist() == [100, 308280]
    assert ev.metrics["pool_link"][0].tolist() == [0, 36]
    assert ev.feasible.all()
    decoded = problem.decode(np.array([0, 2, 2]))
    assert decoded.bottleneck == "host link of g"
    assert decoded.rows == {"cpu": (0, 0), "gpu": (0, 2), "tc": (2, 4)}
    assert decoded.assignment() == {"chunk[0]": "gpu", "chunk[1]": "gpu", "chunk[2]": "tc", "chunk[3]": "tc"}


def test_cpsat_front_equals_brute_force_over_every_split() -> None:
    problem = hand_problem()
    points = set()
    for counts in itertools.product(range(5), repeat=3):
        if sum(counts) == 4:
            points.add(tuple(problem.evaluate(np.array(counts)).F[0].tolist()))
    front = {p for p in points if not any(q != p and q[0] <= p[0] and q[1] <= p[1] for q in points)}
    exact = dse.solve(problem, "cpsat", time_limit=20, seed=0, workers=2)
    assert exact.status == "optimal"
    assert set(map(tuple, exact.internal().tolist())) == front


def test_nsga2_keeps_the_total_and_finds_no_point_beyond_the_exact_front() -> None:
    problem = hand_problem()
    exact = dse.solve(problem, "cpsat", time_limit=20, seed=0, workers=2).internal()
    approx = dse.solve(problem, "nsga2", time_limit=5, seed=1, pop_size=20, generations=30)
    genomes = np.array([p.genome for p in approx.points])
    assert (genomes.sum(axis=1) == 4).all()
    for f in approx.internal():  # no approximate point dominates an exact one
        assert not any((f <= e).all() and (f < e).any() for e in exact)


def test_repair_rescales_to_the_total_by_hand() -> None:
    problem = hand_problem()  # total 4
    X = np.array([[1, 1, 2], [2, 0, 0], [0, 0, 0], [1, 1, 1], [9, -3, 9]])
    # [1,1,2] already sums to 4; [2,0,0] doubles; zeros split evenly 4/3 -> 1.33 each: floors 1,1,1 and the
    # remaining chunk to the first; [1,1,1] the same; [9,-3,9] clips to [4,0,4] -> halves [2,0,2]
    assert problem.repair(X).tolist() == [[1, 1, 2], [4, 0, 0], [2, 1, 1], [2, 1, 1], [2, 0, 2]]
    assert _round_to_total(np.array([[0.6, 0.3, 0.1]]), 10).tolist() == [[6, 3, 1]]


def test_memory_that_fits_no_split_is_infeasible_naming_device_and_bytes() -> None:
    # pool g holds 11 bytes: even one 1-row piece with B needs 4 + 2 x 8 = 20 bytes; the cpu takes every chunk
    problem = hand_problem(gpu_mem=11)
    problem.check_feasible()  # the cpu alone can still hold all 4 chunks
    best = dse.solve(problem, "cpsat", time_limit=10, seed=0, workers=2)
    assert {tuple(p.genome) for p in best.points} == {(4, 0, 0)}
    w = gemm_workload(1 << 20, 1 << 20, 1 << 20, "fp32")
    plat = cpu_group_platform([1, 1], mem_bytes=2**30)
    with pytest.raises(InfeasibleError, match=r"cpu:t1/0 holds 0 of 20 chunks .*capacity 1 GiB"):
        SplitProblem(split_tables(w, plat, lambda d, w, r: r * 1e-9), ("time",)).check_feasible()


def test_analytic_compute_time_by_hand() -> None:
    dev = SplitDevice(name="c", kind="cpu", fit_device="cpu", mem_bytes=1, pool="h", active_w=1, idle_w=0,
                      peak_tflops=(("fp32", 1.0),), mem_bw_gbps=100)
    w = GemmWorkload("w", 100, 100, 100, "fp32")
    # 2e6 flops / (1e12 x 0.70 gemm efficiency) = 2.857 us; 120,000 bytes / (100e9 x 0.75) = 1.6 us;
    # max 2.857 us + 1 us launch overhead (cpu)
    assert analytic_compute_s(dev, w, np.array([100]))[0] == pytest.approx(2e6 / 0.7e12 + 1e-6)


def test_chunks_follow_the_tensor_core_granularity() -> None:
    tc = SplitDevice(name="tc", kind="tensorcore", fit_device="tensorcore", mem_bytes=10**9, pool="g",
                     active_w=1, idle_w=0, granularity=8)
    cpu = SplitDevice(name="cpu", kind="cpu", fit_device="cpu", mem_bytes=10**9, pool="host", active_w=1, idle_w=0)
    tables = split_tables(gemm_workload(100, 8, 8, chunks=20), SplitPlatform("p", (cpu, tc)), lambda d, w, r: r * 1e-9)
    # ceil(100 / 20) = 5 rows, rounded up to a multiple of 8 -> 8; ceil(100 / 8) = 13 chunks, the last holds 4 rows
    assert (tables.parts.chunk_rows, tables.parts.total) == (8, 13)
    assert tables.parts.boundaries(np.array([12, 1])) == [(0, 96), (96, 100)]


def test_workload_inputs_and_conv2d_as_implicit_gemm() -> None:
    conv = resolve_workload({"kernel": "conv2d", "batch": 2, "c_in": 3, "height": 8, "width": 8, "c_out": 4,
                             "kernel_h": 3, "kernel_w": 3, "padding": 1}, "s.yaml")
    # h_out = (8 + 2 - 3) / 1 + 1 = 8: m = 2 x 8 x 8 = 128, n = c_out = 4, k = 3 x 3 x 3 = 27
    assert (conv.m, conv.n, conv.k, conv.kernel) == (128, 4, 27, "conv2d")
    for ref, field in [({"m": 0, "n": 1, "k": 1}, "workload.m"), ({"m": 1, "n": 1, "k": 1, "dtype": "fp8"},
                                                                  "workload.dtype"),
                       ({"kernel": "fft", "m": 1}, "workload.kernel"), ({"m": 1, "n": 1, "k": 1, "x": 2}, "workload.x"),
                       ("gemm", "workload")]:
        with pytest.raises(SpecError) as err:
            resolve_workload(ref, "s.yaml")
        assert err.value.field == field and err.value.source == "s.yaml"
    with pytest.raises(SpecError, match="cpu_groups"):
        resolve_platform({"cpu_groups": [1, 0]}, "s.yaml")
    with pytest.raises(SpecError):
        resolve_platform({"cpu_groups": [1], "watts": 3}, "s.yaml")


def test_calibrated_cost_model_reads_a_calibration_file(tmp_path) -> None:
    from dse.cost.calibration.measure import Calibration, KernelFit, MachineInfo, save_calibration

    fit = KernelFit("gemm", "cpu:t1", "fp32", ("const", "flops"), (1e-5, 1e-10), 0.05, 10)
    save_calibration(Calibration(MachineInfo.current(), (fit,), "hand"), tmp_path / "cal.yaml")
    w = gemm_workload(64, 32, 16, "fp32", chunks=4)
    tables = CalibratedSplitModel(file=str(tmp_path / "cal.yaml")).tables(w, cpu_group_platform([1, 1]))
    # 16 rows: 10 us + 1e-10 s/flop x 2 x 16 x 32 x 16 flops = 10 us + 1.6384 us = 11638.4 ns -> 11639 ns
    assert tables.parts.time[0, 1] == 11639
    with pytest.raises(SpecError, match="no such fit"):
        CalibratedSplitModel(file=str(tmp_path / "cal.yaml")).tables(gemm_workload(64, 32, 16, "fp64"),
                                                                     cpu_group_platform([1]))


def test_cli_solves_the_bundled_spec_and_reports_bad_and_infeasible_specs(tmp_path, capsys) -> None:
    out = tmp_path / "front"
    assert cli.main(["solve", "problems/split_cpu_groups.yaml", "--solver", "cpsat", "--quiet",
                     "--out", str(out)]) == 0
    assert "speedup_x" in (out / "front.csv").read_text().splitlines()[0]
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: b\nfamily: split\nplatform: server_cpu_datacenter_gpu\n"
                   "workload: {kernel: gemm, m: -3, n: 4, k: 4}\n")
    assert cli.main(["validate", str(bad)]) == 2
    assert "workload.m" in capsys.readouterr().err
    graph_model = tmp_path / "roofline.yaml"
    graph_model.write_text("name: r\nfamily: split\nplatform: server_cpu_datacenter_gpu\n"
                           "workload: {kernel: gemm, m: 64, n: 4, k: 4}\ncost_model: roofline\n")
    assert cli.main(["validate", str(graph_model)]) == 2
    assert "analytic and calibrated" in capsys.readouterr().err
    huge = tmp_path / "huge.yaml"
    huge.write_text("name: h\nfamily: split\nplatform: server_cpu_datacenter_gpu\n"
                    "workload: {kernel: gemm, m: 1024, n: 262144, k: 262144, dtype: fp32}\n"
                    "solver: {name: cpsat, time_limit_s: 5}\n")
    assert cli.main(["solve", str(huge), "--quiet", "--out", str(tmp_path / "h")]) == 3
    err = capsys.readouterr().err
    assert "memory" in err and "tensorcore holds 0 of" in err and "GiB" in err
