"""CP-SAT's regions farmed out to Dask (:mod:`dse.solvers.cpsat_distributed`).

Golden fronts are the serial solver's complete fronts (themselves checked against exhaustive search in
``tests/mapping/pipeline/test_three_objectives.py`` and ``tests/mapping/dag/test_dag_cpsat.py``); the
dominance rule and a beaten copy's late results are worked by hand; the racing run's front is exhaustive
search's. The fast tier runs an in-process cluster (threads), the slow one
real worker processes.
"""

from __future__ import annotations

import gc
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dse
from dse.cli.app import _write_trace
from dse.cost.synthetic import random_tables
from dse.mapping.base import MappingProblem
from dse.mapping.dag import DagProblem
from dse.mapping.pipeline import PipelineProblem
from dse.pareto import NO_RESULT, OPTIMAL, RESUME, SEED, FoundBy
from dse.solvers.checkpoint import Checkpoint
from dse.solvers.context import solve_context
from dse.solvers.cpsat_distributed import (
    BEATEN,
    CANCELLED,
    CUT_OFF,
    EMPTY,
    KNOWN_POINT,
    LOST,
    NEW_POINT,
    OUT_OF_BUDGET,
    DriverHooks,
    RegionResult,
    _choose,
    _Regions,
    _Settings,
    region_task,
    solve_cpsat_distributed,
)
from dse.solvers.cpsat_single import CpsatOptions
from dse.solvers.dask_tasks import load_kernels_on_workers
from dse.store.trace import chrome_trace, mapping_timeline, run_timeline, write_trace
from tests.conftest import run_cli

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def pipeline(seed: int, three: bool) -> PipelineProblem:
    rng = np.random.default_rng(700 + seed)
    tables = random_tables(seed, n_ops=int(rng.integers(4, 7)), n_dev=int(rng.integers(2, 4)))
    objectives = ("throughput", "energy", "latency") if three else ("throughput", "energy")
    return PipelineProblem(tables, objectives, memory=bool(seed % 2))


def dag(seed: int) -> DagProblem:
    rng = np.random.default_rng(seed)
    tables = random_tables(seed, n_ops=int(rng.integers(4, 6)), n_dev=int(rng.integers(2, 4)), disallow=0.15)
    return DagProblem(tables, ("makespan", "energy"))


def values(front: Any) -> list[tuple[float, ...]]:
    return sorted(map(tuple, front.internal().tolist()))


def assert_same_front(problem: MappingProblem, client: Any, seed: int) -> list[tuple[float, ...]]:
    """Solve ``problem`` serially and on ``client``: the same complete front, gap 0, timed; returns its values."""
    serial = dse.solve(problem, "cpsat", time_limit=60, seed=seed, workers=1)
    spread = dse.solve(problem, "cpsat", time_limit=60, seed=seed, client=client)
    assert serial.status == OPTIMAL and spread.status == OPTIMAL
    assert values(spread) == values(serial)
    assert spread.certified is not None and spread.certified.gap == 0.0
    assert all(p.proven for p in spread.points)
    ev = problem.evaluate(np.array([p.genome for p in spread.points]))
    np.testing.assert_array_equal(ev.F, spread.internal())
    assert_timed(spread)
    return values(serial)


def assert_timed(front: Any) -> None:
    """The driver timed every result it took: a compute time within its round trip, a share of the driver's
    work, the open boxes after it (none after the last, the front being complete); and traced every task."""
    timings = front.stats.timings
    assert timings is not None and len(timings.task_s) >= 1
    assert len(timings.round_trip_s) == len(timings.driver_s) == len(timings.open_regions) == len(timings.task_s)
    assert all(0 < t <= r for t, r in zip(timings.task_s, timings.round_trip_s, strict=True))
    assert timings.open_regions[-1][1] == 0 and 0 < timings.span_s <= front.stats.wall_s
    assert_traced(front, int(re.search(r"(\d+) region tasks", front.stats.message).group(1)))


def assert_traced(front: Any, submitted: int) -> None:
    """Every task submitted has one span, numbered 1 to ``submitted``; those whose result came back (one per
    timed result) are on their worker's track, one track per worker and the driver's; every point was found
    by a task whose span says it returned a new point, on the worker the point names (or was a seed or
    resumed)."""
    timings = front.stats.timings
    assert [t.task for t in timings.tasks] == list(range(1, submitted + 1))
    ran = [t for t in timings.tasks if t.worker != NO_RESULT]
    assert len(ran) == len(timings.task_s) and all(0 <= t.start_s <= t.end_s for t in ran)
    assert all(t.outcome in (CANCELLED, CUT_OFF, LOST) for t in timings.tasks if t.worker == NO_RESULT)
    workers = {t.worker for t in ran}
    doc = chrome_trace(run_timeline("run", timings))
    threads = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    # tasks without a result that overlap in time share the no-result track's sub-tracks ("no result #2", ...)
    assert {name for name in threads.values() if name.split(" #")[0] != NO_RESULT} == {"driver", *workers}
    on_workers = [e for e in doc["traceEvents"] if e["ph"] == "X" and threads[e["tid"]] in workers]
    assert len(on_workers) == len(ran)
    by_task = {t.task: t for t in ran}
    for p in front.points:
        assert p.found_by is not None
        if p.found_by.task is None:
            assert p.found_by.worker in (SEED, RESUME)
        else:
            span = by_task[p.found_by.task]
            assert span.worker == p.found_by.worker and span.outcome == NEW_POINT


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 50), three=st.booleans(), run_seed=st.integers(0, 1000))
def test_pipeline_front_equals_serial(client: Any, seed: int, three: bool, run_seed: int) -> None:
    assert_same_front(pipeline(seed, three), client, run_seed)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(100, 150), run_seed=st.integers(0, 1000))
def test_dag_front_equals_serial(client: Any, seed: int, run_seed: int) -> None:
    assert_same_front(dag(seed), client, run_seed)


def test_dominated_by_hand() -> None:
    """Top box (10, 10), lower corner (0, 0). The point z = (3, 4) splits it into (3, 10) and (10, 4); a
    task on (10, 10) minimizing f1 first proves f1 >= 3 there, which the children inherit, so (3, 10)
    (f1 < 3 and f1 >= 3) is empty and closed. What is open is (10, 4) with lower corner (3, 0):
    a task on (3, 10) meets it in (3, 4), empty (f1 < 3): dominated; one on (5, 10) meets it in
    (5, 4), which holds f1 = 3..4, f2 = 0..3: not dominated."""
    state = _Regions([(10, 10)], {(10, 10): (0, 0)}, budget=1.0)
    assert state.add(np.zeros(1, dtype=np.int64), (3, 4), FoundBy("worker 1", 1))
    assert state.apply((10, 10), 0, RegionResult(4, None, None, 3, 1, "w"), FoundBy("worker 1", 2)) == OUT_OF_BUDGET
    state.drop_empty()
    assert state.boxes == [(10, 4)] and state.lowers[(10, 4)] == (3, 0)
    assert state.dominated((3, 10))
    assert not state.dominated((5, 10))
    assert not state.add(np.zeros(1, dtype=np.int64), (3, 4), FoundBy(SEED))  # found already
    assert not state.add(np.zeros(1, dtype=np.int64), (6, 5), FoundBy(SEED))  # dominated by (3, 4): outside
    assert state.found == [FoundBy("worker 1", 1)]  # the first finder keeps the point


def test_a_beaten_copy_s_late_results_change_only_what_they_prove() -> None:
    """Worked by hand. Top box (10, 10), lower corner (0, 0), budget 1 s. Its search with f1 first comes back
    out of budget with f1 >= 2 proven: the budget doubles (2 s), the corner becomes (2, 0). The point (5, 5),
    found by another task, splits the box into (5, 10) and (10, 5), both with corner (2, 0). Then the late
    results of beaten copies (told to stop once another copy's result came first):

    * on (10, 5), f2 first, stopped with nothing: beaten, no budget doubled, nothing changes;
    * on (10, 5), empty: (10, 5) closes; (5, 10), which only overlaps it, stays open, but none of its points
      has f2 < 5 (with f1 < 5 it would lie in the closed box): its corner becomes (2, 5);
    * on the top box, split since, f2 >= 3 proven: below that corner, nothing changes;
    * on the top box, f1 first, the known point (5, 5) and f1 >= 2: nothing changes;
    * on the top box, f1 first, a new point (3, 7), not dominated (cut short, it is no lexicographic optimum, but a point is a point):
      kept, it splits (5, 10) into (3, 10) and (5, 7), which inherit (2, 5);
    * on (10, 5) again, empty: closed already, nothing changes."""
    top, right, left = (10, 10), (10, 5), (5, 10)
    state = _Regions([top], {top: (0, 0)}, budget=1.0)
    by = FoundBy("worker 1", 1)
    assert state.apply(top, 0, RegionResult(0, None, None, 2, 1, "w"), by) == OUT_OF_BUDGET
    assert state.budgets == {(top, 0): 2.0}
    assert state.add(np.zeros(1, dtype=np.int64), (5, 5), by)
    state.drop_empty()
    assert sorted(state.boxes) == [left, right] and state.lowers == {left: (2, 0), right: (2, 0)}
    assert state.apply(right, 1, RegionResult(0, None, None, 0, 1, "w"), by, beaten=True) == BEATEN
    assert state.budgets == {(top, 0): 2.0} and state.lowers == {left: (2, 0), right: (2, 0)}
    assert state.apply(right, 1, RegionResult(3, None, None, None, 1, "w"), by, beaten=True) == EMPTY
    assert state.boxes == [left] and state.lowers == {left: (2, 5)}
    assert state.apply(top, 1, RegionResult(0, None, None, 3, 1, "w"), by, beaten=True) == BEATEN
    assert state.boxes == [left] and state.lowers == {left: (2, 5)}
    known = RegionResult(2, np.zeros(1, dtype=np.int64), (5, 5), 2, 1, "w")
    assert state.apply(top, 0, known, by, beaten=True) == KNOWN_POINT
    assert state.boxes == [left] and state.lowers == {left: (2, 5)}
    new = RegionResult(2, np.ones(1, dtype=np.int64), (3, 7), 2, 1, "w")
    assert state.apply(top, 0, new, FoundBy("worker 2", 3), beaten=True) == NEW_POINT
    state.drop_empty()
    assert sorted(state.boxes) == [(3, 10), (5, 7)] and state.lowers == {(3, 10): (2, 5), (5, 7): (2, 5)}
    assert state.apply(right, 0, RegionResult(3, None, None, None, 1, "w"), by, beaten=True) == EMPTY
    assert sorted(state.boxes) == [(3, 10), (5, 7)] and state.lowers == {(3, 10): (2, 5), (5, 7): (2, 5)}
    assert state.values == [(5, 5), (3, 7)] and state.budgets == {(top, 0): 2.0}


def test_new_tasks_go_to_boxes_no_task_holds_before_second_ends() -> None:
    """Worked by hand, two objectives. One open box and two free threads: it is searched from both ends.
    Boxes (10, 5) and (5, 10), equal shares: the first goes to (10, 5) (furthest in f1) with f1 first; it
    holds (10, 5) only ((5, 10) is not inside it), so the second goes to (5, 10), with f2 first (no task
    minimizes f2 first yet), not to (10, 5)'s other end. A running task on (20, 20), f2 first, holds both:
    the one free thread takes (10, 5) with f1 first. Shares 0.2 and 0.8: (5, 10) comes first."""
    assert _choose([(10, 10)], 2, [], 2) == [((10, 10), 0), ((10, 10), 1)]
    assert _choose([(10, 5), (5, 10)], 2, [], 2) == [((10, 5), 0), ((5, 10), 1)]
    assert _choose([(10, 5), (5, 10)], 2, [((20, 20), 1)], 1) == [((10, 5), 0)]
    assert _choose([(10, 5), (5, 10)], 2, [], 1, [0.2, 0.8]) == [((5, 10), 0)]


def test_racing_duplicates_give_the_exhaustive_front() -> None:
    """Four workers of a thread each and two objectives: the first round searches the one box from each end and, racing,
    duplicates both searches with another seed (tasks 3 and 4, copy 1); the front is exhaustive search's
    (every mapping evaluated) with gap 0. Racing off, no copy is submitted and the front is the same."""
    problem = pipeline(3, three=False)
    exhaustive = dse.solve(problem, "exhaustive")
    with distributed.LocalCluster(processes=False, n_workers=4, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as four:
        raced = dse.solve(problem, "cpsat", time_limit=60, seed=0, client=four)
        plain = dse.solve(problem, "cpsat", time_limit=60, seed=0, client=four, race=False)
    for front in (raced, plain):
        assert front.status == OPTIMAL and values(front) == values(exhaustive)
        assert front.certified is not None and front.certified.gap == 0.0
        assert_timed(front)
    first = [t.name for t in sorted(raced.stats.timings.tasks, key=lambda t: t.task)[:4]]
    assert [name.endswith(", copy 1") for name in first] == [False, False, True, True]
    assert int(re.search(r"(\d+) duplicates raced", raced.stats.message).group(1)) >= 2
    assert "racing off" in plain.stats.message
    assert not any("copy" in t.name for t in plain.stats.timings.tasks)


RELEASE = threading.Event()


def held_back(*args: Any, **kwargs: Any) -> RegionResult:
    """:func:`region_task`, except that a task minimizing objective 2 first waits until it is cancelled
    (the hook sets :data:`RELEASE`; the 120 s are only a safety net, nothing is timed)."""
    if args[3] >= 1:
        RELEASE.wait(120)
    return region_task(*args, **kwargs)


def test_a_running_task_whose_event_is_set_stops_its_search(client: Any) -> None:
    """Dask cannot cancel a task already running: before, a dominated region's search ran on to its budget.
    Its own stop event, set by the driver, now ends it at the next look: here set before it starts, the
    task ends after its first solve, where the same task without the event goes on to its lexicographic
    tie-break solves (nothing is timed)."""
    problem = pipeline(3, three=True)
    top = (2**40,) * len(problem.objectives)  # the whole region: f below values past every mapping's

    def run(event: str | None) -> RegionResult:
        return client.submit(region_task, problem, "held", top, 0, None, _Settings(0, 1, True, False), 600.0,
                             task_event=event, pure=False).result(timeout=120)

    full = run(None)
    distributed.Event("dse-stop-held-task0", client=client).set()
    stopped = run("dse-stop-held-task0")
    assert full.calls > 1 and stopped.calls == 1


def test_a_task_goes_on_with_the_boxes_its_points_split_off(client: Any) -> None:
    """With ``chain_s`` long enough, one task given the whole region goes on, box after box, until its own
    boxes are all closed: its head point and the points of the boxes it went on with are the serial solver's
    complete front (the serial run, an independent solve, is the oracle), and every box it went on with lies
    inside the region it was given. With ``chain_s`` 0 it searches its one box."""
    problem = pipeline(5, three=True)
    top = (2**40,) * len(problem.objectives)

    def run(chain_s: float) -> RegionResult:
        return client.submit(region_task, problem, f"chain-{chain_s}", top, 0, None, _Settings(0, 1, True, False),
                             600.0, chain_s=chain_s, pure=False).result(timeout=120)

    alone, chained = run(0.0), run(600.0)
    assert alone.more == () and alone.values is not None
    found = {tuple(alone.values)} | {tuple(s.values) for s in chained.more if s.values is not None}
    assert tuple(chained.values) == tuple(alone.values)
    assert found == set(values(dse.solve(problem, "cpsat", time_limit=60, seed=0, workers=1)))
    assert all(all(a <= b for a, b in zip(s.box, top, strict=True)) for s in chained.more)
    assert chained.calls > alone.calls


RETURNED: list[tuple[int, ...]] = []
STOPPING: dict[str, Any] = {}
LOCK = threading.Lock()


def stopping(*args: Any, **kwargs: Any) -> RegionResult:
    """:func:`region_task`, recording the distinct points it returns; the third one requests a stop and returns only
    once the driver has left its loop and told the running tasks to stop (its stop event), so its point
    comes back after the stop (the 60 s are only a safety net, nothing is timed)."""
    res = region_task(*args, **kwargs)
    with LOCK:
        third = res.values is not None and "stopped" not in STOPPING and tuple(res.values) not in RETURNED
        if third:
            RETURNED.append(tuple(res.values))
            third = len(RETURNED) == 3
            if third:
                STOPPING["stopped"] = True
                STOPPING["ctx"].token.request()
    if third:
        distributed.Event(f"dse-stop-{args[1]}").wait(60)
    return res


def test_interrupt_keeps_the_points_found(client: Any) -> None:
    """A stop requested by the third task that returns a point, whose point comes back after the stop:
    the run ends ``interrupted``, every point the tasks returned is in the front or dominated by one of its points, its points are all in
    the complete front, and the certificate does not say the front is complete (boxes are left open; whether
    they hold hypervolume up to the reference point depends on which boxes the three tasks searched)."""
    problem = pipeline(5, three=True)
    RETURNED.clear()
    STOPPING.clear()
    with solve_context(seed=0, time_limit=120) as ctx:
        STOPPING["ctx"] = ctx
        # no heuristic points added to the front; one box per task (a task going on would find this small front alone)
        front = solve_cpsat_distributed(problem, ctx, CpsatOptions(hints=False, chain_s=0), client,
                                        DriverHooks(task=stopping))
    complete = dse.solve(problem, "cpsat", time_limit=60, seed=0, workers=1)
    assert len(complete) > 3 and len(RETURNED) == 3  # the stop came midway
    assert front.status == "interrupted"
    F = front.internal()
    for z in RETURNED:
        assert np.any(np.all(F <= np.array(z), axis=1)), z
    assert set(map(tuple, F.tolist())) <= set(values(complete))
    assert front.certified is not None and not front.certified.proven
    assert_traced(front, int(re.search(r"(\d+) region tasks", front.stats.message).group(1)))


class DriverKilled(Exception):
    """A task result that ends the driver where it was (a crash, a SIGKILL: no final checkpoint write)."""


KILL_AFTER: dict[str, int] = {}


def dying(*args: Any, **kwargs: Any) -> RegionResult:
    """:func:`region_task` whose results from the 6th on raise: the first of them the driver takes (one it
    did not cancel as dominated meanwhile) ends the driver on the spot."""
    with LOCK:
        KILL_AFTER["n"] = KILL_AFTER.get("n", 0) + 1
        if KILL_AFTER["n"] >= 6:
            raise DriverKilled
    return region_task(*args, **kwargs)


def test_a_killed_driver_goes_on_from_its_checkpoint(client: Any, tmp_path: Any) -> None:
    """The driver killed by a task's result from the 6th on, with a state written after every batch of results: a new
    driver going on from that state ends on the serial solver's complete front with gap 0 and says it went
    on from the checkpoint."""
    problem = pipeline(5, three=True)
    KILL_AFTER.clear()
    first = Checkpoint(tmp_path / "first.json", "key", every_s=0.0)
    with solve_context(seed=0, time_limit=120, checkpoint=first) as ctx, pytest.raises(DriverKilled):
        solve_cpsat_distributed(problem, ctx, CpsatOptions(chain_s=0), client, DriverHooks(task=dying))
    assert first.write_to.is_file()
    second = Checkpoint(tmp_path / "second.json", "key", read_from=first.write_to)
    resumed = dse.solve(problem, "cpsat", time_limit=120, seed=0, client=client, checkpoint=second)
    serial = dse.solve(problem, "cpsat", time_limit=60, seed=0, workers=1)
    assert resumed.status == OPTIMAL and values(resumed) == values(serial)
    assert resumed.certified is not None and resumed.certified.gap == 0.0
    assert "went on from a checkpoint" in resumed.stats.message
    assert any(p.found_by is not None and p.found_by.worker == RESUME for p in resumed.points)
    assert_trace_files(problem, serial, resumed, tmp_path)


def assert_trace_files(problem: MappingProblem, serial: Any, spread: Any, folder: Any) -> None:
    """``dse solve``'s trace.json: a serial front's is its knee's timeline alone, as it always was (the same
    bytes); a distributed front's holds the same timeline and, in a process of its own, the driver's track
    and one per worker, with a span per task."""
    for name, front in (("serial", serial), ("spread", spread)):
        (folder / name).mkdir()
        _write_trace(folder / name, problem, [front], None)
    write_trace(chrome_trace(mapping_timeline(problem, np.asarray(serial.knee().genome))), folder / "knee.json")
    assert (folder / "serial" / "trace.json").read_bytes() == (folder / "knee.json").read_bytes()
    doc = json.loads((folder / "spread" / "trace.json").read_text())
    processes = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    run = next(pid for pid, name in processes.items() if name == "cpsat on the cluster")
    threads = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"
               and e["pid"] == run}
    tasks = spread.stats.timings.tasks
    assert set(threads.values()) == {"driver", *(t.worker for t in tasks)}
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == run and threads[e["tid"]] != "driver"]
    assert sorted(e["args"]["task"] for e in spans) == [t.task for t in tasks]
    assert len(processes) > 1  # the knee's timeline is there too


def loaded_kernels() -> dict[str, int]:
    """The compiled kernels loaded into this process (numba's dispatchers with a signature), with how many
    signatures each has."""
    if "numba" not in sys.modules:
        return {}
    from numba.core.registry import CPUDispatcher

    return {d.py_func.__qualname__: len(d.signatures) for d in gc.get_objects()
            if isinstance(d, CPUDispatcher) and d.signatures}


def kernel_plugins(dask_worker: Any) -> dict[str, tuple[int, float | None]]:
    """The kernel plugins set up on a worker: their identity and the seconds each took to load its kernels."""
    return {name: (id(plugin), plugin.loaded_s) for name, plugin in dask_worker.plugins.items()
            if name.startswith("dse-kernels-")}


#: The Dask event set by the task that killed its worker (:func:`dies_with_its_worker`).
KILLED = "dse-test-worker-killed"


def dies_with_its_worker(*args: Any, **kwargs: Any) -> RegionResult:
    """:func:`region_task`, except that the first task to start SIGKILLs its worker process, mid-task (the first
    task of a run always starts; a later one may be cancelled first, its box closed by the others); Dask runs
    it again on a live worker, where the event :data:`KILLED` is set and it runs."""
    killed = distributed.Event(KILLED)
    if not killed.is_set():
        killed.set()
        os.kill(os.getpid(), signal.SIGKILL)
    return region_task(*args, **kwargs)


@pytest.mark.slow
def test_worker_processes_give_the_serial_front() -> None:
    """Real worker processes (with nannies: a killed worker is replaced): the problem is pickled to them once
    (scattered), and the front is the serial one. A pipeline run loads no compiled kernel into them and
    registers no plugin; the dag family's plugin, registered by a dag run, loads its kernels into every worker
    before any task, once per client (a second run registers nothing again), and the tasks load no new
    signature of them. A worker SIGKILLed in a task loses that task alone (Dask runs it again elsewhere; or,
    when the worker held the scattered problem's last copy, the driver scatters it again and searches the
    task's box again): the run ends on the serial front with gap 0, every task traced once, and the worker
    that replaces it has the kernels loaded as it starts."""
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        assert_same_front(pipeline(1, three=True), c, 1)
        assert list(c.run(loaded_kernels).values()) == [{}, {}]
        assert list(c.run(kernel_plugins).values()) == [{}, {}]
        assert load_kernels_on_workers(c, dag(120)) == "dse-kernels-dag"
        plugins, kernels = c.run(kernel_plugins), c.run(loaded_kernels)
        assert all(set(p) == {"dse-kernels-dag"} and p["dse-kernels-dag"][1] is not None for p in plugins.values())
        assert all(k and k == next(iter(kernels.values())) for k in kernels.values())
        complete = assert_same_front(dag(120), c, 0)
        assert c.run(kernel_plugins) == plugins  # registered once: the run's registration changed nothing
        for worker, after in c.run(loaded_kernels).items():
            assert {name: after[name] for name in kernels[worker]} == kernels[worker]
        problem = dag(120)
        with solve_context(seed=0, time_limit=120) as ctx:
            killed = solve_cpsat_distributed(problem, ctx, CpsatOptions(), c, DriverHooks(task=dies_with_its_worker))
        assert distributed.Event(KILLED, client=c).is_set()
        assert killed.status == OPTIMAL and values(killed) == complete
        assert killed.certified is not None and killed.certified.gap == 0.0
        assert_timed(killed)  # every task traced once; a task lost with the problem's last copy said so
        lost = sum(t.outcome == LOST for t in killed.stats.timings.tasks)
        assert (f"{lost} lost with a worker" in killed.stats.message) == (lost > 0)
        # the scheduler may still list the killed worker when the run ends: wait for the one in its place (60 s
        # are only a safety net, nothing is timed)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            workers = set(c.scheduler_info()["workers"])
            if len(workers) == 2 and workers != set(plugins):
                break
            time.sleep(0.1)
        replaced = c.run(kernel_plugins)
        assert set(replaced) != set(plugins)  # a new worker (address) in place of the killed one
        assert all(p["dse-kernels-dag"][1] is not None for p in replaced.values())


@pytest.mark.parametrize(("argv", "words"), [
    (("--workers", "0"), "--workers"),
    (("--workers", "2", "--scheduler", "tcp://127.0.0.1:1"), "not both"),
])
def test_cluster_flags_are_checked_first(argv: tuple[str, ...], words: str, tmp_path: Any, capsys: Any) -> None:
    """Bad cluster flags exit 2 with one line naming the flag, before any cluster starts."""
    code, _, err = run_cli(capsys, "solve", "quickstart", "--solver", "cpsat", "--out", str(tmp_path / "o"), *argv)
    assert code == 2 and words in err and "--workers" in err


@pytest.mark.slow
def test_solve_command_on_two_local_workers(tmp_path: Any, capsys: Any) -> None:
    """``dse solve --workers 2``: a LocalCluster of two processes, the cpsat front complete with gap 0, the
    stats naming the distributed run."""
    code, _, err = run_cli(capsys, "solve", "quickstart", "--solver", "cpsat", "--workers", "2", "--quiet",
                           "--time-limit", "300", "--out", str(tmp_path / "o"))
    assert code == 0, err
    front = json.loads((tmp_path / "o" / "front.json").read_text())["fronts"][0]
    assert front["status"] == "optimal" and front["certificate"]["gap"] == 0.0
    assert front["stats"]["message"].startswith("distributed over 2 worker threads")
