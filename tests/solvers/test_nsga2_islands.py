"""NSGA-II as islands on Dask (:mod:`dse.solvers.nsga2_islands`).

The fast tier runs in-process clusters (threads); the slow one real worker processes. No front here is a
golden value: the synchronous front is compared with itself on another number of workers and after a
failed task, and a stopped run's front with the nondominated union, worked out here, of the seeds and the
archives its tasks returned.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import dse
import dse.cli.app
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.mapping.pipeline import PipelineProblem
from dse.pareto import FEASIBLE, INTERRUPTED, NO_RESULT, SEED, TIME_LIMIT, ParetoSet, nondominated
from dse.solvers.context import solve_context
from dse.solvers.nsga2_islands import EpochResult, IslandOptions, island_task, solve_nsga2_islands
from dse.solvers.registry import collect_seeds
from dse.store.trace import chrome_trace, run_timeline
from tests.conftest import TINY_SPEC, run_cli, write_yaml

distributed = pytest.importorskip("distributed")

PROBLEM = PipelineProblem(random_tables(3, n_ops=8, n_dev=3), ("throughput", "energy", "latency"))
#: Two islands of 16, 12 generations each in epochs of 4 with 3 migrants, waiting for each other.
SYNCHRONOUS = {"islands": 2, "pop_size": 16, "generations": 12, "island_generations": 4, "migrants": 3,
               "synchronous": True, "patience": None}


#: The tiny spec with a few generations of two small islands (two-generation epochs).
TINY_NSGA2 = {**TINY_SPEC, "solver": {"name": "nsga2", "time_limit_s": 60, "seed": 0, "options": {
    "nsga2": {"pop_size": 8, "generations": 4, "island_generations": 2}}}}


def cluster(workers: int) -> Any:
    return distributed.LocalCluster(processes=False, n_workers=workers, threads_per_worker=1,
                                    dashboard_address=":0")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with cluster(2) as running, distributed.Client(running) as c:
        yield c


def rows(front: ParetoSet) -> list[tuple[tuple[int, ...], tuple[float, ...]]]:
    return sorted((tuple(int(g) for g in p.genome), tuple(p.internal)) for p in front.points)


@pytest.fixture(scope="module")
def synchronous_front(client: Any) -> ParetoSet:
    return dse.solve(PROBLEM, "nsga2", time_limit=120, seed=4, client=client, **SYNCHRONOUS)


def test_synchronous_front_is_the_same_on_one_worker(synchronous_front: ParetoSet) -> None:
    """The same seed gives the same genomes on one worker as on two; the front is the global archive: its
    values are its genomes' (evaluated again here), feasible and mutually nondominated, and it took every
    island's 12 generations and migration (3 epochs per island)."""
    with cluster(1) as one, distributed.Client(one) as c:
        alone = dse.solve(PROBLEM, "nsga2", time_limit=120, seed=4, client=c, **SYNCHRONOUS)
    assert rows(alone) == rows(synchronous_front)
    ev = PROBLEM.evaluate(np.array([p.genome for p in synchronous_front.points]))
    assert ev.feasible.all()
    np.testing.assert_array_equal(ev.F, synchronous_front.internal())
    assert len(nondominated(ev.F)) == len(ev.F)
    assert synchronous_front.stats.generations == 24
    assert "6 epochs merged" in synchronous_front.stats.message
    timings = synchronous_front.stats.timings  # every epoch timed: compute within its round trip
    assert timings is not None and len(timings.task_s) == len(timings.driver_s) == 6
    assert all(0 < t <= r for t, r in zip(timings.task_s, timings.round_trip_s, strict=True))
    assert_traced(synchronous_front, ran=6, lost=[])
    assert {(t.task, t.name) for t in timings.tasks} == {(1 + 2 * e + i, f"island {i} epoch {e}")
                                                         for i in range(2) for e in range(3)}


def assert_traced(front: ParetoSet, ran: int, lost: list[str]) -> None:
    """``ran`` tasks on their workers' tracks, one track per worker and the driver's, and the tasks without a
    result (their outcomes ``lost``) on a track of their own; every point found by one of the tasks that
    ran, on the worker the point names, or one of the seeds."""
    timings = front.stats.timings
    assert timings is not None
    assert [t.task for t in timings.tasks] == list(range(1, ran + len(lost) + 1))
    assert sorted(t.outcome for t in timings.tasks if t.worker == NO_RESULT) == sorted(lost)
    workers = {t.worker for t in timings.tasks} - {NO_RESULT}
    doc = chrome_trace(run_timeline("islands", timings))
    threads = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert set(threads.values()) == {"driver", *workers, *([NO_RESULT] if lost else [])}
    assert len([e for e in doc["traceEvents"] if e["ph"] == "X" and threads[e["tid"]] in workers]) == ran
    tasks = {t.task: t.worker for t in timings.tasks}
    for p in front.points:
        assert p.found_by is not None
        assert p.found_by.worker == SEED if p.found_by.task is None else tasks[p.found_by.task] == p.found_by.worker


FAILED: dict[str, int] = {}
LOCK = threading.Lock()


def fails_once(problem: Any, epoch: Any, *args: Any) -> EpochResult:
    """:func:`island_task`, except that island 1's second epoch raises the first time (a worker lost midway)."""
    with LOCK:
        first = (epoch.island, epoch.number) == (1, 1) and not FAILED
        if first:
            FAILED["n"] = 1
    if first:
        raise ConnectionError("worker lost")
    return island_task(problem, epoch, *args)


def test_a_failed_task_is_submitted_again(client: Any, synchronous_front: ParetoSet) -> None:
    """A task that fails once is submitted again with the same epoch: the run completes with the front of the
    run without failure, and says so."""
    FAILED.clear()
    with solve_context(seed=4, time_limit=120) as ctx:
        front = solve_nsga2_islands(PROBLEM, ctx, IslandOptions(**SYNCHRONOUS), client, task=fails_once)
    assert FAILED == {"n": 1}
    assert rows(front) == rows(synchronous_front)
    assert "1 failed tasks submitted again" in front.stats.message
    assert_traced(front, ran=6, lost=["failed: ConnectionError"])


RETURNED: list[EpochResult] = []
STOP: dict[str, Any] = {}


def stops_the_run(problem: Any, epoch: Any, options: Any, budget: float, stop_event: str) -> EpochResult:
    """:func:`island_task`, recording what it returns; island 1's second epoch requests a stop (Ctrl-C) once it
    has run, and returns only after the driver has told the tasks to stop, so its result comes back after the
    stop (the 60 s are a safety net, nothing is timed)."""
    res = island_task(problem, epoch, options, budget, stop_event)
    with LOCK:
        RETURNED.append(res)
    if (epoch.island, epoch.number) == (1, 1):
        STOP["ctx"].token.request()
        distributed.Event(stop_event).wait(60)
    return res


def seed_values() -> np.ndarray:
    """The internal values of the problem's feasible heuristic seeds."""
    ev = PROBLEM.evaluate(PROBLEM.repair(np.array(collect_seeds(PROBLEM), dtype=np.int64)))
    assert ev.feasible.any()
    return ev.F[ev.feasible]


def test_a_stop_returns_the_global_archive_so_far(client: Any) -> None:
    """Ctrl-C during the second epochs: the run ends ``interrupted`` with the nondominated union of the seeds
    and every archive its tasks returned, the one that came back after the stop included, and nothing else."""
    RETURNED.clear()
    options = IslandOptions(islands=2, pop_size=16, island_generations=3, patience=None)
    with solve_context(seed=1, time_limit=120) as ctx:
        STOP["ctx"] = ctx
        front = solve_nsga2_islands(PROBLEM, ctx, options, client, task=stops_the_run)
    assert front.status == INTERRUPTED
    assert any((r.island, r.number) == (1, 1) for r in RETURNED)
    assert f"{len(RETURNED)} epochs merged" in front.stats.message
    timings = front.stats.timings
    assert timings is not None
    assert_traced(front, ran=len(RETURNED), lost=[t.outcome for t in timings.tasks if t.worker == NO_RESULT])
    names = {t.task: t.name for t in timings.tasks}
    archives = {f"island {r.island} epoch {r.number}": {tuple(g) for g in r.front_X.tolist()} for r in RETURNED}
    seeds = {tuple(g) for g in PROBLEM.repair(np.array(collect_seeds(PROBLEM), dtype=np.int64)).tolist()}
    for p in front.points:  # found by an epoch whose archive held it, or one of the seeds
        assert p.found_by is not None
        genome = tuple(int(g) for g in p.genome)
        assert genome in (seeds if p.found_by.task is None else archives[names[p.found_by.task]])
    F = np.vstack([seed_values(), *(r.front_F for r in RETURNED)])
    assert sorted(map(tuple, F[nondominated(F)].tolist())) == sorted(map(tuple, front.internal().tolist()))


def test_a_stop_before_the_first_epoch_returns_the_seeds(client: Any) -> None:
    """Stopped before it starts: no task runs, and the front is the nondominated feasible seeds."""
    with solve_context(seed=0, time_limit=120) as ctx:
        ctx.token.request()
        front = solve_nsga2_islands(PROBLEM, ctx, IslandOptions(islands=2), client)
    assert front.status == INTERRUPTED and "0 epochs merged" in front.stats.message
    F = seed_values()
    assert sorted(map(tuple, F[nondominated(F)].tolist())) == sorted(map(tuple, front.internal().tolist()))


def test_a_time_limit_keeps_the_seeds(client: Any) -> None:
    """A time limit that ends the run before or within its first epochs: status ``time_limit``, and no seed
    is better than the front (each is matched or dominated by a front point)."""
    front = dse.solve(PROBLEM, "nsga2", time_limit=0.05, seed=0, client=client, islands=2, pop_size=16)
    assert front.status == TIME_LIMIT
    F = front.internal()
    for z in seed_values():
        assert np.any(np.all(F <= z, axis=1)), z


def test_solve_command_runs_islands(client: Any, tmp_path: Any, capsys: Any, monkeypatch: Any) -> None:
    """``dse solve --solver nsga2 --workers 2`` hands the command's cluster to NSGA-II, which runs as islands
    (here on the in-process cluster in place of the worker processes the command would start; the fronts
    are caught on their way to the output files, which other tests draw)."""
    written: list[ParetoSet] = []
    monkeypatch.setattr(dse.cli.app, "cluster_client", lambda *args: contextlib.nullcontext(client))
    monkeypatch.setattr(dse.cli.app, "write_fronts", lambda out, problem, fronts, **kw: written.extend(fronts))
    code, out, err = run_cli(capsys, "solve", str(write_yaml(tmp_path / "tiny.yaml", TINY_NSGA2)), "--solver",
                           "nsga2", "--workers", "2", "--quiet", "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert len(written) == 1 and written[0].stats.message.startswith("2 islands on 2 worker threads")
    assert "nsga2's tasks per worker" in out  # trace.json shows them
    doc = json.loads((tmp_path / "o" / "trace.json").read_text())
    processes = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    run = next(pid for pid, name in processes.items() if name == "nsga2 on the cluster")
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == run and e["name"].startswith("task ")]
    assert sorted(e["args"]["task"] for e in spans) == [t.task for t in written[0].stats.timings.tasks]


@pytest.mark.slow
def test_a_killed_worker_loses_at_most_its_epoch() -> None:
    """Two single-threaded worker processes, with nannies (as ``dse solve --workers`` and ``dask worker`` start
    them: a killed worker is replaced); the callback SIGKILLs a worker that the scheduler lists as running an
    epoch, at the first epoch merged that finds one. Dask runs the lost epoch again on a live worker (or, when
    the killed worker held the scattered problem's last copy, the epochs given it fail, and the driver scatters
    it again and submits them again, as its message counts), so the run completes: status feasible, every
    island's every epoch merged once, the epochs per worker adding up to them, the front feasible,
    nondominated and its values the evaluator's, and no seed better than it."""
    killed: dict[str, int] = {}

    def kill_a_busy_worker(epochs: int, elapsed: float, X: np.ndarray, F: np.ndarray) -> bool:
        busy = [address for address, keys in client.processing().items() if keys]
        if busy and not killed:
            killed["pid"], killed["at"] = pids[busy[0]], epochs
            os.kill(killed["pid"], signal.SIGKILL)
        return False

    options = {"islands": 2, "pop_size": 24, "generations": 20, "island_generations": 10, "migrants": 3,
               "patience": None}
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        front = dse.solve(PROBLEM, "nsga2", time_limit=120, seed=3, client=client, callback=kill_a_busy_worker,
                          **options)
        alive = client.run(os.getpid)
    assert killed and killed["pid"] not in alive.values()
    assert front.status == FEASIBLE
    timings = front.stats.timings
    assert timings is not None
    failed = [t.outcome for t in timings.tasks if t.worker == NO_RESULT]  # cancelled: the problem's last copy died
    assert f"4 epochs merged, {len(failed)} failed tasks submitted again" in front.stats.message
    runs = re.search(r"epochs run by (.*)$", front.stats.message).group(1)
    assert sum(int(n) for n in re.findall(r"worker \d+: (\d+)", runs)) == 4
    assert sorted(t.name for t in timings.tasks if t.worker != NO_RESULT) == sorted(
        f"island {i} epoch {e}" for i in range(2) for e in range(2))
    assert_traced(front, ran=4, lost=failed)
    ev = PROBLEM.evaluate(np.array([p.genome for p in front.points]))
    assert ev.feasible.all() and len(nondominated(ev.F)) == len(ev.F)
    np.testing.assert_array_equal(ev.F, front.internal())
    for z in seed_values():
        assert np.any(np.all(ev.F <= z, axis=1)), z


def test_a_dag_run_registers_the_kernel_plugin_once(client: Any) -> None:
    """The dag family's kernel plugin: registered by a dag run (the pipeline runs above registered none), set up
    on each worker (its kernels loaded there, the cache being warm), and a second run registers nothing again
    (the workers keep the plugin objects set up first)."""
    problem = DagProblem(random_tables(5, n_ops=4, n_dev=2), ("makespan", "energy"))
    options = {"islands": 2, "pop_size": 8, "generations": 1, "island_generations": 1}

    def plugins(dask_worker: Any) -> dict[str, tuple[int, float | None]]:
        return {name: (id(p), p.loaded_s) for name, p in dask_worker.plugins.items() if name.startswith("dse-")}

    dse.solve(problem, "nsga2", time_limit=60, seed=0, client=client, **options)
    first = client.run(plugins)
    assert len(first) == 2 and all(set(p) == {"dse-kernels-dag"} and p["dse-kernels-dag"][1] is not None
                                   for p in first.values())
    dse.solve(problem, "nsga2", time_limit=60, seed=1, client=client, **options)
    assert client.run(plugins) == first
