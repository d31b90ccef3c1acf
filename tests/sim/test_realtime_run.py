"""The real-time simulator as a run object: every scheduler on hand-worked scenarios, integer time at a long
horizon, its results re-derived from its own trace, the stop rule and an interrupted run."""

from __future__ import annotations

import math
import signal
from collections.abc import Sequence

import pandas as pd
import pytest

import dse.sim.realtime as realtime
from dse.cost.accelerator import AcceleratorCostModel, block_tables
from dse.mapping.multimodel import example_scenario
from dse.model.accelerators import Accelerator, Layer, Model, Scenario, System
from dse.sim.realtime import STOP_EVERY, TRACE_COLUMNS, Frame, RealTimeRun, setup, simulate
from dse.sim.schedulers import FCFS, SCHEDULERS, make_scheduler
from dse.util.interrupt import Interrupted, active_token, interruptible

MS = 1_000_000  # ns
MJ = 10**9  # pJ
LAYER = (Layer("l", "CONV", 1, 1, 1, 1, 1, 1, 1),)


def one_model_setup():
    """One accelerator A (idle 0.1 W). M at 100 fps: two blocks, 1 ms (1 mJ) and 2 ms (2 mJ)."""
    scenario = Scenario("one", (Model("M", 100.0, LAYER),))
    system = System("one", (Accelerator("A", 1024, idle_w=0.1, active_w=1.0),), 128.0)
    return setup(block_tables(scenario, system, [2], [[1 * MS], [2 * MS]], [[1 * MJ], [2 * MJ]]))


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_every_scheduler_on_one_model_on_one_accelerator(name: str) -> None:
    # 50 ms of arrivals: frames 0-4 arrive at 0, 10, ..., 40 ms, due 10 ms later. Nothing competes, so every
    # scheduler runs frame i as soon as it arrives. On the whole accelerator: blocks 10i to 10i + 1 and 10i + 1
    # to 10i + 3, latency 3 ms. Planaria (4 sub-arrays, a block on k of them takes 4/k times as long at the
    # same energy) gives a frame the fewest sub-arrays that meet its deadline: 1 takes 4 + 8 = 12 ms > 10,
    # 2 take 2 + 4 = 6 ms -> sub-arrays 0 and 1, blocks 10i to 10i + 2 and 10i + 2 to 10i + 6, latency 6 ms.
    # Either way the accelerator works 15 ms of the 50 ms horizon (the last deadline): energy 5 x 3 mJ plus
    # 35 ms x 0.1 W idle = 18.5 mJ; no miss.
    result = simulate(one_model_setup(), make_scheduler(name), duration_s=0.050, seed=0, trace=True)
    spatial = name == "planaria"
    block0_end, frame_end = (2, 6) if spatial else (1, 3)  # ms after the arrival
    label = "A[0,1]" if spatial else "A"
    assert (result.scheduler, result.frames.tolist(), result.dropped.tolist(), result.late.tolist()) == (
        name, [5], [0], [0])
    assert result.completed == 5 and result.latency_ns_sum == 5 * frame_end * MS
    assert result.busy_ns.tolist() == [15 * MS] and result.horizon_ns == 50 * MS
    assert result.energy_pj == 18_500_000_000 and result.acc_energy_pj.tolist() == [18_500_000_000]
    trace = pd.DataFrame(result.rows, columns=list(TRACE_COLUMNS))
    expected = [[i, b, label, 10 * i + start, 10 * i + end, 10 * i, 10 * i + 10, mj]
                for i in range(5) for b, start, end, mj in ((0, 0, block0_end, 1.0), (1, block0_end, frame_end, 2.0))]
    got = trace[["frame", "block", "accelerator", "start_ms", "end_ms", "arrival_ms", "deadline_ms",
                 "energy_mj"]].values.tolist()
    assert len(got) == len(expected)
    for row, want in zip(got, expected, strict=True):
        assert row[:3] == want[:3] and row[3:] == pytest.approx(want[3:])


def test_one_ns_apart_at_a_horizon_of_ten_million_seconds() -> None:
    # M at 1e-7 fps (a period of 10**16 ns, 10**7 s), one block: 10**16 + 1 ns on A (3 pJ), 5 x 10**15 ns on B
    # (5 pJ); idle 1 mW on both. Frame 0 arrives at 0 (due 10**16), frame 1 at 10**16 (due 2 x 10**16).
    # FCFS and EDF put frame 0 on A (the first free accelerator): it ends 1 ns after its deadline, late. Frame 1
    # arrives 1 ns before that end, with B free: it runs on B from 10**16 to 1.5 x 10**16, on time.
    # (A clock of float seconds sees the arrival and the end at the same instant, 1e7 s, and dispatches once,
    # after the end: frame 1 then takes A and is late too.)
    # Latency 10**16 + 1 + 5 x 10**15; horizon 2 x 10**16 (the last deadline); energy: A 3 + (10**16 - 1) idle,
    # B 5 + 1.5 x 10**16 idle.
    scenario = Scenario("long", (Model("M", 1e-7, LAYER),))
    system = System("ab", (Accelerator("A", 64, idle_w=0.001), Accelerator("B", 64, idle_w=0.001)), 8.0)
    sim = setup(block_tables(scenario, system, [1], [[10**16 + 1, 5 * 10**15]], [[3, 5]]))
    for name in ("fcfs", "edf"):
        result = simulate(sim, make_scheduler(name), duration_s=1.5e7, seed=0, trace=True)
        assert result.frames.tolist() == [2] and result.late.tolist() == [1] and result.dropped.tolist() == [0]
        assert result.latency_ns_sum == 15_000_000_000_000_001 and result.horizon_ns == 2 * 10**16
        assert result.busy_ns.tolist() == [10**16 + 1, 5 * 10**15]
        assert result.acc_energy_pj.tolist() == [10_000_000_000_000_002, 15_000_000_000_000_005]
        assert result.energy_pj == 25_000_000_000_000_007
        assert [row[4] for row in result.rows] == ["A", "B"]


@pytest.mark.parametrize("seed", range(3))
def test_results_agree_with_their_own_trace_under_every_scheduler(seed: int) -> None:
    # Counts, latency and energy re-derived from the trace rows alone: a frame with a drop row is dropped, one
    # whose rows reach its last block completed (late when it ends after its deadline); the horizon is the
    # last deadline of the scenario's frames (from fps and duration) or the last end; busy time counts every
    # sub-array a row names; energy is the rows' energy plus idle power over the rest of the horizon.
    scenario, system = example_scenario(seed)
    tables = AcceleratorCostModel(blocks_per_model=2).tables(scenario, system)
    sim = setup(tables)
    duration = 0.5
    last_deadline = max(round(math.ceil(duration * m.fps) * 1e9 / m.fps) for m in scenario.models)
    for name in SCHEDULERS:
        scheduler = make_scheduler(name)
        result = simulate(sim, scheduler, duration_s=duration, seed=seed, trace=True)
        trace = pd.DataFrame(result.rows, columns=list(TRACE_COLUMNS))
        runs = trace[trace["accelerator"] != ""]
        drops = trace[trace["accelerator"] == ""]
        triggered = trace.drop_duplicates(["model", "frame"])["model"]
        ends = runs.groupby(["model", "frame"]).agg(end=("end_ms", "max"), deadline=("deadline_ms", "first"),
                                                    arrival=("arrival_ms", "first"), blocks=("block", "size"))
        dropped_keys = set(zip(drops["model"], drops["frame"], strict=True))
        done = ends[[key not in dropped_keys for key in ends.index]]
        names = [m.name for m in scenario.models]
        assert result.frames.tolist() == [int((triggered == n).sum()) for n in names]
        assert result.dropped.tolist() == [int((drops["model"] == n).sum()) for n in names]
        assert (done["blocks"] == 2).all() and result.completed == len(done)
        late = done[done["end"] > done["deadline"]]
        assert result.late.tolist() == [int((late.index.get_level_values(0) == n).sum()) for n in names]
        assert result.latency_ns_sum == pytest.approx((done["end"] - done["arrival"]).sum() * MS, abs=len(done))
        horizon = max(last_deadline, round(runs["end_ms"].max() * MS) if len(runs) else 0,
                      round(drops["end_ms"].max() * MS) if len(drops) else 0)
        assert result.horizon_ns == horizon
        pods = scheduler.pods
        named = runs["accelerator"].str.contains("[", regex=False)  # "A[0,2]": sub-arrays 0 and 2 of A
        width = (runs["accelerator"].str.count(",") + 1).where(named, pods)
        acc = runs["accelerator"].str.split("[").str[0]
        busy = ((runs["end_ms"] - runs["start_ms"]) * MS * width).groupby(acc).sum()
        for a, acc_name in enumerate(tables.device_names):
            busy_ns = busy.get(acc_name, 0.0) / pods
            assert result.busy_ns[a] == pytest.approx(busy_ns, abs=len(runs))
            dynamic = runs.loc[acc == acc_name, "energy_mj"].sum() * MJ
            idle = tables.idle_power_mw[a] * (horizon - busy_ns)
            assert result.acc_energy_pj[a] == pytest.approx(dynamic + idle, rel=1e-9, abs=len(runs) * 1e3)
        assert result.energy_pj == int(result.acc_energy_pj.sum())


def stream_setup():
    """One accelerator, no idle power. M at 1000 fps: one 0.1 ms block of 0.1 mJ."""
    scenario = Scenario("stream", (Model("M", 1000.0, LAYER),))
    system = System("one", (Accelerator("A", 64, idle_w=0.0),), 8.0)
    return setup(block_tables(scenario, system, [1], [[MS // 10]], [[MJ // 10]]))


def test_a_stoppable_run_checks_for_a_stop_at_the_first_event_and_every_stop_every_plus_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 5 s of M: 5000 frames, each an arrival and a block end: 10000 events -> checks at events 1, 4097 and 8193
    calls: list[int] = []
    monkeypatch.setattr(realtime, "stop_point", lambda: calls.append(1))
    simulate(stream_setup(), FCFS(), duration_s=5.0, stoppable=True)
    assert len(calls) == 3 == len(range(1, 10_001, STOP_EVERY + 1))
    calls.clear()
    simulate(stream_setup(), FCFS(), duration_s=5.0)
    assert calls == []


class CountingFCFS(FCFS):
    """FCFS that counts its picks and, at pick ``at``, asks for a stop (or raises ``KeyboardInterrupt``)."""

    def __init__(self, at: int, stop: signal.Signals | None) -> None:
        self.at, self.stop, self.picks = at, stop, 0

    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        self.picks += 1
        if self.picks == self.at:
            if self.stop is None:
                raise KeyboardInterrupt
            token = active_token()
            assert token is not None
            token.request(self.stop)
        return super().pick(now, acc, ready)


def test_a_stop_request_ends_the_run_at_the_next_check() -> None:
    # A stop asked for at the 100th pick (the arrival of frame 99, event 199) is honoured at the next check,
    # before event 4097 (the arrival of frame 2048): frames 0-2047 were picked, no more.
    scheduler = CountingFCFS(100, signal.SIGTERM)
    with interruptible(), pytest.raises(Interrupted) as caught:
        simulate(stream_setup(), scheduler, duration_s=5.0, stoppable=True)
    assert caught.value.exit_code == 143 and scheduler.picks == 2048


def test_an_interrupted_run_refuses_to_go_on_and_leaves_the_setup_and_scheduler_reusable() -> None:
    # 5000 frames of 0.1 ms (0.1 mJ) each, run as they arrive: 500 mJ, latency 5000 x 0.1 ms, nothing missed
    sim = stream_setup()
    scheduler = CountingFCFS(1000, None)
    with interruptible():
        broken = RealTimeRun(sim, scheduler, duration_s=5.0, seed=0)
        with pytest.raises(KeyboardInterrupt):
            broken.run()
    assert scheduler.picks == 1000
    with pytest.raises(RuntimeError, match="plays once"):
        broken.run()
    scheduler.at = -1  # never again
    again = simulate(sim, scheduler, duration_s=5.0, seed=0)
    assert again.completed == 5000 and again.missed == 0 and again.energy_pj == 500 * MJ
    assert again.latency_ns_sum == 5000 * MS // 10 and again.busy_ns.tolist() == [500 * MS]
