"""The real-time multi-model simulator and its schedulers: a hand-worked scenario, invariants, metrics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dse.cost.accelerator import AcceleratorCostModel, block_tables
from dse.mapping.multimodel import example_scenario
from dse.model.accelerators import Accelerator, Layer, Model, Scenario, System
from dse.sim import xr_metrics
from dse.sim.realtime import TRACE_COLUMNS, setup, simulate
from dse.sim.schedulers import SCHEDULERS, Dream, Mapped, Planaria, make_scheduler

MS = 1_000_000  # ns
LAYER = (Layer("l", "CONV", 1, 1, 1, 1, 1, 1, 1),)


def hand_setup():
    """One accelerator (active 1 W, idle 0.1 W). M1 at 100 fps: one 5 ms block (5 mJ);
    M2 at 50 fps: two 8 ms blocks (8 mJ each). 20 ms of arrivals: M1 frames at 0 and 10 ms
    (due 10, 20), M2 frame at 0 (due 20)."""
    scenario = Scenario("hand", (Model("M1", 100.0, LAYER), Model("M2", 50.0, LAYER)))
    system = System("one", (Accelerator("A", 1024, idle_w=0.1, active_w=1.0),), 128.0)
    tables = block_tables(scenario, system, [1, 2], [[5 * MS], [8 * MS], [8 * MS]],
                          [[5 * 10**9], [8 * 10**9], [8 * 10**9]])
    return setup(tables)


def run(sim, name: str, duration_s: float, seed: int = 0):
    result = simulate(sim, make_scheduler(name), duration_s=duration_s, seed=seed, trace=True)
    return result, pd.DataFrame(result.rows, columns=list(TRACE_COLUMNS))


def test_hand_worked_two_model_scenario() -> None:
    sim = hand_setup()
    # FCFS: 0-5 M1f0; 5-13 M2 block 0 (M1f1 arrives at 10); at 13 M2 (arrived 0) goes first: 13-21, past
    # its deadline 20 -> M2 completes late; M1f1 still waits at its deadline 20 -> dropped at 20.
    # Busy 5 + 8 + 8 = 21 ms = horizon (max(last deadline 20, last end 21)) -> no idle: 21 mJ.
    fcfs, trace = run(sim, "fcfs", 0.020)
    assert fcfs.dropped.tolist() == [1, 0] and fcfs.late.tolist() == [0, 1] and fcfs.missed == 2
    assert fcfs.energy_pj == 21 * 10**9
    drop = trace[trace["accelerator"] == ""]
    assert drop[["model", "frame", "end_ms"]].values.tolist() == [["M1", 1, 20.0]]
    # EDF: at 13 both due at 20, tie broken by arrival -> the same schedule as FCFS.
    assert run(sim, "edf", 0.020)[0].energy_pj == 21 * 10**9
    # DREAM-style (weights 1, 0.5, 0.5; one accelerator, so preference is 1 for both): at 0, urgency
    # M1 = 1 - slack/period = 1 - (10 - 5)/10 = 0.5, M2 = 1 - (20 - 16)/20 = 0.8 -> M2 block 0 runs 0-8.
    # At 8 M1f0 needs 5 ms but has 2 -> dropped early at 8; M2 block 1 runs 8-16 (on time).
    # M1f1 arrives at 10 (due 20): the only accelerator is busy until 16, so it cannot end before 16 + 5 = 21
    # -> dropped at once, at 10. Busy 16 ms, horizon 20 ms:
    # 16 mJ + 4 ms x 0.1 W = 16.4 mJ; two misses.
    dream, dtrace = run(sim, "dream", 0.020)
    assert dream.dropped.tolist() == [2, 0] and dream.late.sum() == 0
    assert dream.energy_pj == 16_400_000_000
    assert dtrace[dtrace["accelerator"] == ""]["end_ms"].tolist() == [8.0, 10.0]
    # UXCost against FCFS = (16.4 / 21) x (2 + 1) / (2 + 1) = 0.78095
    assert xr_metrics.uxcost(dream.energy_j, dream.missed, fcfs.energy_j, fcfs.missed) == pytest.approx(16.4 / 21)
    # Least slack: at 0, M1f0 slack 10 - 5 = 5 ms, M2 20 - 16 = 4 ms -> M2 block 0 runs 0-8; at 8, M1f0
    # slack 10 - 8 - 5 = -3 < M2's 20 - 8 - 8 = 4 -> M1f0 runs 8-13 (late); M2 block 1 13-21 (late);
    # M1f1 waits past its deadline 20 -> dropped. Three misses, busy 21 ms = horizon: 21 mJ.
    slack = run(sim, "least_slack", 0.020)[0]
    assert slack.late.tolist() == [1, 1] and slack.dropped.tolist() == [1, 0] and slack.energy_pj == 21 * 10**9


def check_invariants(trace: pd.DataFrame, scenario: Scenario) -> None:
    eps = 1e-9
    key = ["scheduler", "model", "frame"]
    executed = trace[trace["accelerator"] != ""].sort_values(key + ["start_ms"])
    drops = trace[trace["accelerator"] == ""]
    assert (executed["start_ms"] >= executed["arrival_ms"] - eps).all(), "a block ran before its frame arrived"
    # a spatial scheduler's rows name sub-arrays "ACC[0,2]": one row per sub-array it occupies, a whole
    # accelerator ("ACC") counts as its sub-array "*"
    units = executed.assign(unit=executed["accelerator"].map(
        lambda a: [a.split("[")[0] + "/" + p for p in a[:-1].split("[")[1].split(",")] if "[" in a else [a + "/*"]))
    units = units.explode("unit")
    assert not (units["unit"].str.endswith("/*").groupby(units["scheduler"]).nunique() > 1).any(), \
        "a scheduler mixed whole accelerators and sub-arrays"
    by_acc = units.sort_values(["scheduler", "unit", "start_ms"])
    prev_end = by_acc.groupby(["scheduler", "unit"])["end_ms"].shift()
    assert (by_acc["start_ms"] >= prev_end.fillna(-1.0) - eps).all(), "an accelerator ran two blocks at once"
    groups = executed.groupby(key)
    assert (executed["block"] == groups.cumcount()).all(), "blocks of a frame out of order"
    assert (executed["start_ms"] >= groups["end_ms"].shift().fillna(-1.0) - eps).all()
    last = groups.agg(last_end=("end_ms", "max"), blocks=("block", "size")).reset_index()
    joined = drops.merge(last, on=key, how="left")
    assert (joined["last_end"].fillna(-1.0) <= joined["end_ms"] + eps).all(), "a block ran after its frame's drop"
    assert (joined["blocks"].fillna(0) == joined["block"]).all()
    # a triggered frame starts only after the parent's latest frame arrived at or before it completed
    completion = groups.agg(arrival=("arrival_ms", "first"), end=("end_ms", "max"),
                            start=("start_ms", "min")).reset_index()
    for m in scenario.models:
        if m.depends_on is None:
            continue
        for sched, mine in completion.groupby("scheduler"):
            child = mine[mine["model"] == m.name].sort_values("arrival")
            parent = mine[mine["model"] == m.depends_on].sort_values("arrival")
            paired = pd.merge_asof(child, parent, on="arrival", suffixes=("", "_parent"))
            assert paired["end_parent"].notna().all(), f"{sched}: {m.name} ran without a completed parent"
            assert (paired["start"] >= paired["end_parent"] - eps).all(), f"{sched}: {m.name} ran before its parent"


@pytest.mark.parametrize("seed", range(4))
def test_invariants_on_random_scenarios(seed: int) -> None:
    scenario, system = example_scenario(seed)
    sim = setup(AcceleratorCostModel(blocks_per_model=2).tables(scenario, system))
    trace = pd.concat([run(sim, name, 0.3, seed)[1] for name in SCHEDULERS])
    assert set(trace["scheduler"]) == set(SCHEDULERS)
    check_invariants(trace, scenario)


def test_invariants_under_a_genome_mapping_and_overload() -> None:
    # a: 2 blocks of 3 ms, b (triggered by a, p = 0.7): 2 blocks of 4 ms, both at 100 fps, every block on
    # accelerator 0: up to 14 ms of work per 10 ms -> overloaded
    scenario = Scenario("heavy", (Model("a", 100.0, LAYER), Model("b", 100.0, LAYER, "a", 0.7)))
    system = System("pair", (Accelerator("x", 64, idle_w=0.01, active_w=0.1),
                             Accelerator("y", 64, idle_w=0.01, active_w=0.1)), 8.0)
    sim = setup(block_tables(scenario, system, [2, 2], [[3 * MS] * 2] * 2 + [[4 * MS] * 2] * 2, [[1000] * 2] * 4))
    result = simulate(sim, Mapped([0, 0, 0, 0], [1, 0]), duration_s=0.5, seed=1, trace=True)
    trace = pd.DataFrame(result.rows, columns=list(TRACE_COLUMNS))
    assert result.dropped.sum() > 0 and set(trace["accelerator"]) == {"x", ""}
    check_invariants(trace, scenario)


def test_under_capacity_scenario_drops_nothing_under_every_scheduler() -> None:
    # 2 models at 10 fps of 2 ms per frame on the slower accelerator: at most 4% of one accelerator's time
    scenario = Scenario("light", (Model("a", 10.0, LAYER), Model("b", 10.0, LAYER, "a", 0.5)))
    system = System("pair", (Accelerator("big", 1024, idle_w=0.01, active_w=0.5),
                             Accelerator("little", 256, idle_w=0.002, active_w=0.1)), 64.0)
    tables = block_tables(scenario, system, [2, 2], [[MS, 2 * MS], [MS // 2, MS]] * 2, [[10**8, 2 * 10**8]] * 4)
    sim = setup(tables)
    for name in SCHEDULERS:
        result = simulate(sim, make_scheduler(name), duration_s=2.0, seed=5)
        assert result.missed == 0, name
        assert result.frames[0] == 20 and 0 < result.frames[1] < 20


def test_same_seed_same_trace_and_probability_is_honoured() -> None:
    scenario = Scenario("p", (Model("a", 100.0, LAYER), Model("b", 100.0, LAYER, "a", 0.3)))
    system = System("one", (Accelerator("A", 64, idle_w=0.0, active_w=0.1),), 8.0)
    sim = setup(block_tables(scenario, system, [1, 1], [[10_000], [10_000]], [[1000], [1000]]))
    first = simulate(sim, make_scheduler("dream"), duration_s=10.0, seed=7, trace=True)
    again = simulate(sim, make_scheduler("dream"), duration_s=10.0, seed=7, trace=True)
    other = simulate(sim, make_scheduler("dream"), duration_s=10.0, seed=8, trace=True)
    assert first.rows == again.rows and first.rows != other.rows
    # 1000 parent frames, each triggering b with p = 0.3: binomial sd = 14.5, so 300 +- 73 is a 5-sigma band
    assert abs(int(first.frames[1]) - 300) < 73


def test_join_and_leave_bound_the_frames() -> None:
    scenario = Scenario("t", (Model("a", 10.0, LAYER, join_s=0.25, leave_s=0.75),))
    system = System("one", (Accelerator("A", 64, idle_w=0.0, active_w=0.1),), 8.0)
    sim = setup(block_tables(scenario, system, [1], [[1000]], [[10]]))
    _, trace = run(sim, "fcfs", 1.0)
    # frames i with 0.25 <= i / 10 < 0.75: i = 3 ... 7 (arrivals 300 ... 700 ms)
    assert trace["frame"].tolist() == [3, 4, 5, 6, 7]
    assert trace["arrival_ms"].tolist() == [300.0, 400.0, 500.0, 600.0, 700.0]


def test_xrbench_score_of_a_hand_made_trace() -> None:
    rows = [
        # model A frame 0: one block, completes exactly at its deadline (timeliness 1/(1+e^0) = 0.5),
        # 150 mJ (energy score (1500 - 150) / 1500 = 0.9) -> 0.45
        ("s", "A", 0, 0, "acc", 0.0, 10.0, 0.0, 10.0, 150.0),
        # model A frame 1: dropped at its deadline -> A's drop rate 1/2
        ("s", "A", 1, 0, "", 20.0, 20.0, 10.0, 20.0, 0.0),
        # model B frame 0: two blocks, done 10 ms early (timeliness 1/(1+e^-150) = 1 - 7e-66), 0 mJ -> 1.0
        ("s", "B", 0, 0, "acc", 0.0, 5.0, 0.0, 20.0, 0.0),
        ("s", "B", 0, 1, "acc", 5.0, 10.0, 0.0, 20.0, 0.0),
    ]
    frames = xr_metrics.frame_table(pd.DataFrame(rows, columns=list(TRACE_COLUMNS)))
    # A: mean(0.45) x (1 - 1/2) = 0.225; B: 1.0 x 1 = 1.0; score = 100 x (0.225 + 1.0) / 2 = 61.25
    assert xr_metrics.xrbench_score(frames) == pytest.approx(61.25)
    assert xr_metrics.drop_rates(frames).to_dict() == {"A": 0.5, "B": 0.0}
    assert xr_metrics.missed_frames(frames) == 1
    # EDP with 2 J: mean latency of completed frames (10 + 10) / 2 ms = 10 ms -> 2 x 0.01 = 0.02 J s
    assert xr_metrics.edp(2.0, frames) == pytest.approx(0.02)
    assert math.isclose(xr_metrics.timeliness(np.array([11.0]), np.array([10.0]))[0], 1 / (1 + math.exp(15)))


def test_planaria_hand_worked_two_pods() -> None:
    # One accelerator (active 1 W, idle 0.1 W) cut into 2 sub-arrays; explicit tables, so a block on 1 of 2
    # sub-arrays takes twice its whole-array time at the same energy. M1 (100 fps): one 4 ms block (4 mJ);
    # M2 (50 fps): one 6 ms block (6 mJ). At 0, EDF order: M1f0 (due 10) fits its deadline on 1 sub-array
    # (8 ms) -> sub-array 0, 0-8; M2f0 (due 20) on the other (12 ms) -> sub-array 1, 0-12. At 10 M1f1 (due 20)
    # takes the free sub-array 0: 10-18. No misses. Busy 8 + 12 + 8 = 28 sub-array ms of 2 x 20 ms (horizon
    # = last deadline 20): 12 idle sub-array ms x 0.05 W = 0.6 mJ; total 4 + 6 + 4 + 0.6 = 14.6 mJ.
    scenario = Scenario("hand", (Model("M1", 100.0, LAYER), Model("M2", 50.0, LAYER)))
    system = System("one", (Accelerator("A", 1024, idle_w=0.1, active_w=1.0),), 128.0)
    sim = setup(block_tables(scenario, system, [1, 1], [[4 * MS], [6 * MS]], [[4 * 10**9], [6 * 10**9]]))
    result = simulate(sim, Planaria(pods=2), duration_s=0.020, seed=0, trace=True)
    trace = pd.DataFrame(result.rows, columns=list(TRACE_COLUMNS))
    assert trace[["model", "frame", "accelerator", "start_ms", "end_ms"]].values.tolist() == [
        ["M1", 0, "A[0]", 0.0, 8.0], ["M2", 0, "A[1]", 0.0, 12.0], ["M1", 1, "A[0]", 10.0, 18.0]]
    assert result.missed == 0 and result.energy_pj == 14_600_000_000
    check_invariants(trace.assign(scheduler="planaria"), scenario)


def test_invariant_check_catches_overlapping_sub_arrays() -> None:
    # the check itself: A[0,1] 0-5 overlaps A[1] 3-6 on sub-array 1 (A[0] 3-6 would not)
    base = ("s", "m", 0, 0, "A[0,1]", 0.0, 5.0, 0.0, 50.0, 0.0)
    scenario = Scenario("t", (Model("m", 20.0, LAYER),))
    ok = [base, ("s", "m", 1, 0, "A[2]", 3.0, 6.0, 0.0, 50.0, 0.0)]
    check_invariants(pd.DataFrame(ok, columns=list(TRACE_COLUMNS)), scenario)
    bad = [base, ("s", "m", 1, 0, "A[1]", 3.0, 6.0, 0.0, 50.0, 0.0)]
    with pytest.raises(AssertionError, match="two blocks at once"):
        check_invariants(pd.DataFrame(bad, columns=list(TRACE_COLUMNS)), scenario)


def test_dream_leaves_an_accelerator_idle_rather_than_make_a_frame_late() -> None:
    # Fast F and slow S (same energy, no idle power). A and B at 100 fps, one block each: 4 ms on F, 30 ms on S;
    # both frames arrive at 0, due at 10. Urgency 1 - (10 - 4)/10 = 0.4 for both, preference 1 on F and
    # (4/30 + 1)/2 on S. F takes A (first in the ready list on a tie) 0-4. On S, B would end at 30 > 10: the
    # DREAM-style scheduler leaves S idle, B waits and runs on F 4-8, on time. Without that rule B runs on S
    # 0-30 and completes late.
    scenario = Scenario("pair", (Model("A", 100.0, LAYER), Model("B", 100.0, LAYER)))
    system = System("fs", (Accelerator("F", 1024), Accelerator("S", 64)), 64.0)
    sim = setup(block_tables(scenario, system, [1, 1], [[4 * MS, 30 * MS]] * 2, [[10**9, 10**9]] * 2))
    result = simulate(sim, make_scheduler("dream"), duration_s=0.010, seed=0, trace=True)
    trace = pd.DataFrame(result.rows, columns=list(TRACE_COLUMNS))
    assert trace[["model", "accelerator", "start_ms", "end_ms"]].values.tolist() == [
        ["A", "F", 0.0, 4.0], ["B", "F", 4.0, 8.0]]
    assert result.missed == 0
    naive = simulate(sim, Dream(feasible_only=False), duration_s=0.010, seed=0)
    assert naive.late.tolist() == [0, 1]
