"""The DREAM-style scheduler's mechanisms and its baselines on hand-built scenarios with hand-computed outcomes;
the five XRBench problems of the DREAM comparison load and simulate."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dse.cost.accelerator import block_tables
from dse.mapping.multimodel import apply_timeline
from dse.model.accelerators import Accelerator, Layer, Model, Scenario, System
from dse.runs.spec import load_spec
from dse.sim.realtime import TRACE_COLUMNS, setup, simulate
from dse.sim.schedulers import herald_assignment, make_scheduler

MS = 1_000_000  # ns
MJ = 10**9  # pJ
LAYER = (Layer("l", "CONV", 1, 1, 1, 1, 1, 1, 1),)
PROBLEMS = Path(__file__).resolve().parents[2] / "problems"


def run(sim, name: str, duration_s: float):
    result = simulate(sim, make_scheduler(name), duration_s=duration_s, seed=0, trace=True)
    return result, pd.DataFrame(result.rows, columns=list(TRACE_COLUMNS))


def executed(trace: pd.DataFrame) -> list[list[object]]:
    rows = trace[trace["accelerator"] != ""].sort_values(["start_ms", "accelerator"])
    return rows[["model", "block", "accelerator", "start_ms", "end_ms"]].values.tolist()


def test_frame_dropped_when_no_accelerator_can_meet_its_deadline() -> None:
    # One accelerator (active 1 W, idle 0.1 W). P at 100 fps: one 12 ms block, longer than its 10 ms period;
    # C (1 ms) is triggered by every P frame. 20 ms of arrivals: P frames at 0 and 10 (due 10, 20).
    # DREAM-style: each P frame is dropped on arrival (0 + 12 > 10, 10 + 12 > 20), so no C frame is triggered;
    # nothing runs: energy = idle 0.1 W x 20 ms = 2 mJ, 2 misses (2 P frames triggered, 0 C frames).
    # FCFS: P0 runs 0-12 (late), P1 12-24 (late); C0 and C1 wait for their parent and are dropped at their
    # deadlines 10 and 20 (before their parents end): 4 misses, busy 24 ms = horizon -> 24 mJ.
    scenario = Scenario("drop", (Model("P", 100.0, LAYER), Model("C", 100.0, LAYER, "P", 1.0)))
    system = System("one", (Accelerator("A", 1024, idle_w=0.1, active_w=1.0),), 128.0)
    sim = setup(block_tables(scenario, system, [1, 1], [[12 * MS], [1 * MS]], [[12 * MJ], [1 * MJ]]))
    dream, trace = run(sim, "dream", 0.020)
    assert dream.frames.tolist() == [2, 0] and dream.dropped.tolist() == [2, 0] and dream.late.sum() == 0
    assert dream.energy_pj == 2 * MJ
    assert trace[["model", "frame", "end_ms"]].values.tolist() == [["P", 0, 0.0], ["P", 1, 10.0]]
    fcfs = run(sim, "fcfs", 0.020)[0]
    assert fcfs.frames.tolist() == [2, 2] and fcfs.late.tolist() == [2, 0] and fcfs.dropped.tolist() == [0, 2]
    assert fcfs.energy_pj == 24 * MJ


def preemption_setup():
    """One accelerator, no idle power. L at 25 fps: three 6 ms blocks (due 40 ms); H at 100 fps from 5 ms:
    one 3 ms block, its first frame arriving at 10 ms (due 20 ms)."""
    scenario = Scenario("preempt", (Model("L", 25.0, LAYER), Model("H", 100.0, LAYER, join_s=0.005)))
    system = System("one", (Accelerator("A", 1024, idle_w=0.0, active_w=1.0),), 128.0)
    return setup(block_tables(scenario, system, [3, 1], [[6 * MS]] * 3 + [[3 * MS]], [[6 * MJ]] * 3 + [[3 * MJ]]))


def test_higher_score_frame_preempts_a_model_at_a_layer_block_boundary() -> None:
    # L's blocks 0 and 1 run 0-6 and 6-12; H arrives at 10 during block 1. At the boundary (12), with one
    # accelerator (affinity 1 for both) and no misses yet (fairness 0): urgency H = 1 - (20 - 12 - 3)/10 = 0.5,
    # L = 1 - (40 - 12 - 6)/40 = 0.45, so H's score 1 x 0.5 + 0.5 x 1 = 1.0 beats L's 0.95: H runs 12-15 and
    # L's last block 15-21; both on time. FCFS keeps L (arrived first): L 12-18, H 18-21, late.
    sim = preemption_setup()
    dream, trace = run(sim, "dream", 0.020)
    assert executed(trace) == [["L", 0, "A", 0.0, 6.0], ["L", 1, "A", 6.0, 12.0], ["H", 0, "A", 12.0, 15.0],
                               ["L", 2, "A", 15.0, 21.0]]
    assert dream.missed == 0
    fcfs, trace = run(sim, "fcfs", 0.020)
    assert executed(trace)[2:] == [["L", 2, "A", 12.0, 18.0], ["H", 0, "A", 18.0, 21.0]]
    assert fcfs.late.tolist() == [0, 1]


def test_planaria_on_whole_accelerators_holds_one_for_the_whole_frame() -> None:
    # The same scenario under Planaria's policy on whole accelerators: L is placed at 0 and keeps the accelerator
    # for all three blocks (0-18); H, placed at 18, ends at 21 > 20: late. Trace rows name the accelerator alone.
    result, trace = run(preemption_setup(), "planaria_acc", 0.020)
    assert executed(trace) == [["L", 0, "A", 0.0, 6.0], ["L", 1, "A", 6.0, 12.0], ["L", 2, "A", 12.0, 18.0],
                               ["H", 0, "A", 18.0, 21.0]]
    assert result.late.tolist() == [0, 1]


def test_affinity_waits_for_the_cheaper_accelerator_only_while_the_deadline_allows() -> None:
    # Fast accelerator F (2 ms, 3 mJ a block) and cheap accelerator E (4 ms, 1 mJ); no idle power. M1 and M2 at
    # 100 fps, one block each, both frames arriving at 0 (due 10). At 0, on F: urgency 1 - (10 - 2)/10 = 0.2
    # < patience 0.8 and E is cheaper and free, 0 + 4 + guard 0.25 x 10 = 6.5 <= 10: both wait. On E: equal
    # scores, M1 (first) runs 0-4. At 4, on F: M2's urgency 1 - (10 - 4 - 2)/10 = 0.6, but waiting for E
    # (free at 4) would end at 4 + 4 + 2.5 = 10.5 > 10, so M2 runs on F 4-6. Energy 1 + 3 = 4 mJ, no miss.
    # (Both on E, M2 4-8, would also be on time at 2 mJ: the guard of a quarter period gives that up for safety.)
    scenario = Scenario("affinity", (Model("M1", 100.0, LAYER), Model("M2", 100.0, LAYER)))
    system = System("fe", (Accelerator("F", 1024, idle_w=0.0), Accelerator("E", 256, idle_w=0.0)), 128.0)
    sim = setup(block_tables(scenario, system, [1, 1], [[2 * MS, 4 * MS]] * 2, [[3 * MJ, 1 * MJ]] * 2))
    dream, trace = run(sim, "dream", 0.010)
    assert executed(trace) == [["M1", 0, "E", 0.0, 4.0], ["M2", 0, "F", 4.0, 6.0]]
    assert dream.missed == 0 and dream.energy_pj == 4 * MJ
    # a single frame with nothing else waiting: it goes to the cheaper E (1 mJ), FCFS takes the first free F (3 mJ)
    alone = setup(block_tables(Scenario("one", (Model("M1", 100.0, LAYER),)), system, [1], [[2 * MS, 4 * MS]],
                               [[3 * MJ, 1 * MJ]]))
    dream, trace = run(alone, "dream", 0.010)
    assert executed(trace) == [["M1", 0, "E", 0.0, 4.0]] and dream.energy_pj == 1 * MJ
    fcfs, trace = run(alone, "fcfs", 0.010)
    assert executed(trace) == [["M1", 0, "F", 0.0, 2.0]] and fcfs.energy_pj == 3 * MJ


def test_herald_assignment_prefers_the_lowest_edp_then_balances_load() -> None:
    # Accelerators X and Y, one model at 10 fps with two blocks: b0 1 ms on X, 2 ms on Y; b1 1 ms on X, 1.5 ms
    # on Y; equal energy. Lowest EDP: both on X (utilization 10 x 2 ms = 0.02, Y 0). Moving b0 to Y gives
    # max(0.01, 0.02) = 0.02, no better; moving b1 gives max(0.01, 0.015) = 0.015: b1 moves. Then Y (0.015) is
    # the most loaded; moving b1 back gives 0.02: stop. Assignment [X, Y].
    scenario = Scenario("h", (Model("M", 10.0, LAYER),))
    system = System("xy", (Accelerator("X", 1024), Accelerator("Y", 1024)), 128.0)
    sim = setup(block_tables(scenario, system, [2], [[1 * MS, 2 * MS], [1 * MS, 3 * MS // 2]], [[MJ, MJ]] * 2))
    assert herald_assignment(sim) == [0, 1]
    result, trace = run(sim, "herald", 0.1)
    assert set(trace.loc[trace["block"] == 0, "accelerator"]) == {"X"}
    assert set(trace.loc[trace["block"] == 1, "accelerator"]) == {"Y"}
    assert result.missed == 0


@pytest.mark.parametrize("path", sorted(PROBLEMS.glob("xr_*.yaml")), ids=lambda p: p.stem)
def test_xr_problem_validates_and_simulates(path: Path) -> None:
    spec = load_spec(str(path))
    scenario = apply_timeline(spec.workload, spec.scenario, spec.source)
    sim = setup(spec.cost_model.tables(scenario, spec.platform), scenario)
    for name in ("dream", "herald", "planaria_acc"):
        result = simulate(sim, make_scheduler(name), duration_s=0.3, seed=0)
        assert result.frames.sum() > 0 and result.completed > 0 and result.energy_pj > 0


def test_the_five_usage_scenarios_of_the_dream_comparison_are_problems() -> None:
    workloads = {load_spec(str(p)).workload.name for p in PROBLEMS.glob("xr_*.yaml")}
    assert workloads == {"VR_gaming", "AR_gaming", "AR_Assistant", "outdoor_activity_A", "social_interactionA"}
