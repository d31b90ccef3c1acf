"""A pipeline mapping evaluated by hand, arithmetic written out."""

from __future__ import annotations

import numpy as np

from dse.cost import CostTables
from dse.mapping.pipeline import PipelineProblem


def hand_tables() -> CostTables:
    # 3 ops a -> b -> c, a -> c; 2 devices (cpu=0, gpu=1)
    time = np.array([[10, 4], [20, 5], [8, 6]], dtype=np.int64)       # ns
    energy = np.array([[100, 80], [300, 90], [50, 60]], dtype=np.int64)  # pJ
    mem = np.array([[5, 5], [10, 10], [3, 3]], dtype=np.int64)
    edges = np.array([[0, 1], [1, 2], [0, 2]], dtype=np.int64)
    tt = np.zeros((3, 2, 2), dtype=np.int64)
    te = np.zeros((3, 2, 2), dtype=np.int64)
    tt[0] = [[0, 3], [3, 0]]   # a->b: 3 ns across
    tt[1] = [[0, 7], [7, 0]]   # b->c: 7 ns across
    tt[2] = [[0, 2], [2, 0]]   # a->c: 2 ns across
    te[0] = [[0, 30], [30, 0]]
    te[1] = [[0, 70], [70, 0]]
    te[2] = [[0, 20], [20, 0]]
    return CostTables(
        op_names=("a", "b", "c"), device_names=("cpu", "gpu"), time=time, energy=energy, mem=mem,
        allowed=np.ones((3, 2), dtype=bool), edges=edges, edge_bytes=np.array([1, 1, 1], dtype=np.int64),
        transfer_time=tt, transfer_energy=te, idle_power_mw=np.array([2, 3], dtype=np.int64),
        mem_capacity=np.array([100, 12], dtype=np.int64),
    )


def test_hand_computed_mapping() -> None:
    # genome: a on gpu, b on gpu, c on cpu
    problem = PipelineProblem(hand_tables(), ("throughput", "energy"), deadline=30, power_cap_mw=100)
    ev = problem.evaluate(np.array([[1, 1, 0]]), metrics=True)
    # device loads: cpu = t(c,cpu) = 8; gpu = t(a,gpu) + t(b,gpu) = 4 + 5 = 9
    # link gpu->cpu carries b->c (7) and a->c (2) = 9; a->b stays on gpu (0)
    # period = max(8, 9, 9) = 9
    assert ev.metrics["period"][0] == 9
    # energy = ops 80 + 90 + 50 = 220; transfers 70 + 20 = 90; idle (2 + 3) mW * 9 ns = 45 -> 355 pJ
    assert ev.F[0].tolist() == [9, 355]
    # latency: a finishes 4; b starts 4 (same device), finishes 9; c waits for b: 9 + 7 = 16 and a: 4 + 2 = 6
    #          -> c starts 16, finishes 16 + 8 = 24
    assert ev.metrics["latency"][0] == 24
    # memory: gpu holds a + b = 15 > 12 -> violated by (15 - 12) / 12 = 0.25
    g = dict(zip([c.name for c in problem.constraints], ev.G[0], strict=True))
    assert g["memory"] == 0.25
    # power: 355 <= 100 mW * 9 ns = 900 -> slack; deadline 24 <= 30 -> slack
    assert g["power"] < 0 and g["deadline"] < 0
    assert not ev.feasible[0]


def test_all_on_one_device_has_no_transfers() -> None:
    problem = PipelineProblem(hand_tables(), memory=False)
    ev = problem.evaluate(np.array([[0, 0, 0]]), metrics=True)
    # cpu only: period = 10 + 20 + 8 = 38; energy = 100 + 300 + 50 + 2 mW * 38 ns = 526
    assert ev.F[0].tolist() == [38, 526]
    assert ev.metrics["latency"][0] == 38
