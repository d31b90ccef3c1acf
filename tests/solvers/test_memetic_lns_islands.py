"""The memetic search and the large-neighbourhood search as islands on Dask (:mod:`dse.solvers.memetic_islands`,
:mod:`dse.solvers.lns_islands`), on in-process clusters (threads), as the NSGA-II islands' tests run.

The instance is the TF-rules tiny graph of seed 5 (5 tasks, 3 devices): its optimal makespan, 195, comes from
brute force over every assignment and order (:func:`tests.mapping.dag.test_dag_cpsat.brute_force`), and its
best heuristic seed's is 202. No result here is a golden value copied from the code: makespans are checked
against the brute force and the family's evaluator, the synchronous results against themselves on another
number of workers and after a failed task.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import dse
from dse.pareto import INTERRUPTED, RESUME, SEED, FoundBy, ParetoSet, nondominated
from dse.solvers.context import solve_context
from dse.solvers.lns_islands import LnsEpochResult, LnsOptions, lns_island_task, solve_lns_islands
from dse.solvers.local_search import scores
from dse.solvers.memetic_islands import (
    LocalEpochResult,
    MemeticOptions,
    local_search_task,
    solve_memetic_islands,
)
from dse.solvers.registry import collect_seeds
from tests.heuristics.test_tf_rules_exact import tf_tiny
from tests.mapping.dag.test_dag_cpsat import brute_force
from tests.solvers.test_lns import best_seed
from tests.solvers.test_nsga2_islands import cluster

distributed = pytest.importorskip("distributed")

PROBLEM = tf_tiny(5)
#: Two window islands, one epoch of one window each, waiting for each other; no local search first.
LNS = {"islands": 2, "warm_share": 0.0, "island_windows": 1, "epochs": 1, "synchronous": True}
#: Two local-search islands, two epochs of 30 steps each, waiting for each other (with seed 5, island 1's
#: first epoch finds the optimum, island 0's does not: the second epochs start from island 1's schedule).
MEMETIC = {"islands": 2, "island_steps": 30, "epochs": 2, "synchronous": True}
#: The runs' seeds.
LNS_SEED, MEMETIC_SEED = 3, 5


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with cluster(2) as running, distributed.Client(running) as c:
        yield c


def makespan(front: ParetoSet) -> int:
    """The front's one point's makespan, as the family's evaluator gives it for the point's genome."""
    assert len(front) == 1
    ev = PROBLEM.evaluate(np.array([front.points[0].genome]))
    assert ev.feasible[0] and ev.F[0, 0] == front.points[0].internal[0]
    return int(ev.F[0, 0])


@pytest.fixture(scope="module")
def optimum() -> int:
    _, F = brute_force(PROBLEM)
    optimum = int(F[:, 0].min())
    assert optimum < best_seed(PROBLEM)  # the searches have something to find
    return optimum


@pytest.fixture(scope="module")
def lns_front(client: Any) -> ParetoSet:
    return dse.solve(PROBLEM, "lns", time_limit=120, seed=LNS_SEED, client=client, **LNS)


@pytest.fixture(scope="module")
def memetic_front(client: Any) -> ParetoSet:
    return dse.solve(PROBLEM, "memetic", time_limit=120, seed=MEMETIC_SEED, client=client, **MEMETIC)


def test_islands_reach_the_brute_force_optimum_and_the_same_schedule_on_one_worker(
        lns_front: ParetoSet, memetic_front: ParetoSet, optimum: int) -> None:
    """With 2 workers both searches end on a schedule the evaluator confirms, at the brute-force optimum (below
    the best seed's makespan), found by one of the epochs; synchronous, the same seed gives the same genome,
    the same epochs and the same evaluations on one worker."""
    assert makespan(lns_front) == makespan(memetic_front) == optimum
    assert lns_front.points[0].found_by.worker.startswith("worker")
    assert memetic_front.points[0].found_by.worker.startswith("worker")
    assert "windows: 2 islands on 2 worker threads, synchronous" in lns_front.stats.message
    assert "2 islands on 2 worker threads, synchronous epochs of 30 local-search steps: 4 epochs merged" \
        in memetic_front.stats.message
    with cluster(1) as one, distributed.Client(one) as c:
        lns_alone = dse.solve(PROBLEM, "lns", time_limit=120, seed=LNS_SEED, client=c, **LNS)
        memetic_alone = dse.solve(PROBLEM, "memetic", time_limit=120, seed=MEMETIC_SEED, client=c, **MEMETIC)
    assert "on 1 worker threads" in lns_alone.stats.message
    assert lns_alone.points[0].genome == lns_front.points[0].genome
    assert lns_alone.status == lns_front.status
    assert memetic_alone.points[0].genome == memetic_front.points[0].genome
    assert outcomes(lns_alone) == outcomes(lns_front) and outcomes(memetic_alone) == outcomes(memetic_front)
    assert memetic_alone.stats.evaluations == memetic_front.stats.evaluations


def outcomes(front: ParetoSet) -> list[tuple[str, str]]:
    """Each task's epoch and what it returned (its steps and evaluations, or windows), in submission order."""
    assert front.stats.timings is not None
    return [(t.name, t.outcome) for t in front.stats.timings.tasks]


FAILED: dict[str, int] = {}
LOCK = threading.Lock()
#: What the wrapped tasks below were given and returned: (the epoch, the genome it started from, its result).
RAN: list[tuple[Any, np.ndarray, Any]] = []


def failing_now(epoch: Any) -> bool:
    """Whether island 1's second epoch runs for the first time (then its task raises: a worker lost midway)."""
    with LOCK:
        first = (epoch.island, epoch.number) == (1, 1) and not FAILED
        if first:
            FAILED["n"] = 1
    return first


def lns_fails_once(problem: Any, epoch: Any, *args: Any) -> LnsEpochResult:
    if failing_now(epoch):
        raise ConnectionError("worker lost")
    res = lns_island_task(problem, epoch, *args)
    with LOCK:
        RAN.append((epoch, epoch.incumbent, res.incumbent))
    return res


def local_search_fails_once(problem: Any, epoch: Any, *args: Any) -> LocalEpochResult:
    if failing_now(epoch):
        raise ConnectionError("worker lost")
    res = local_search_task(problem, epoch, *args)
    with LOCK:
        RAN.append((epoch, epoch.start, res.best))
    return res


def makespans(X: np.ndarray) -> np.ndarray:
    """The makespan of each genome of ``X``, inf when infeasible (the LNS driver's order)."""
    ev = PROBLEM.evaluate(X)
    return np.where(ev.feasible, ev.F[:, 0], np.inf)


def assert_migrated(front: ParetoSet, value: Any) -> None:
    """Every epoch after an island's first started from the best schedule by ``value`` (the driver's order) of
    the epochs before it (synchronous: of the previous epoch of every island), and the run ended on the best
    makespan of the best seed and every schedule an epoch returned."""
    by_number: dict[int, list[np.ndarray]] = {}
    for epoch, _, returned in RAN:
        by_number.setdefault(epoch.number, []).append(returned)
    for epoch, start, _ in RAN:
        if epoch.number:
            assert value(start[None, :])[0] == value(np.array([g for n in range(epoch.number) for g in by_number[n]])).min()
    assert makespan(front) == min(makespans(np.array([returned for _, _, returned in RAN])).min(), best_seed(PROBLEM))


def test_a_failed_task_is_submitted_again_and_islands_start_from_the_best(client: Any,
                                                                         memetic_front: ParetoSet) -> None:
    """An epoch whose task fails once is submitted again: each run completes (the memetic one on the schedule
    of the run without failure) and says so; every epoch after the first starts from the best schedule so far."""
    FAILED.clear()
    RAN.clear()
    with solve_context(seed=LNS_SEED, time_limit=120) as ctx:
        lns = solve_lns_islands(PROBLEM, ctx, LnsOptions(**{**LNS, "epochs": 2}), client, task=lns_fails_once)
    assert FAILED == {"n": 1} and "4 epochs merged" in lns.stats.message
    assert "1 failed tasks submitted again" in lns.stats.message
    assert_migrated(lns, makespans)
    FAILED.clear()
    RAN.clear()
    with solve_context(seed=MEMETIC_SEED, time_limit=120) as ctx:
        memetic = solve_memetic_islands(PROBLEM, ctx, MemeticOptions(**MEMETIC), client,
                                        task=local_search_fails_once)
    assert FAILED == {"n": 1} and "1 failed tasks submitted again" in memetic.stats.message
    assert memetic.points[0].genome == memetic_front.points[0].genome
    assert_migrated(memetic, lambda X: scores(PROBLEM, X))


def test_a_stop_before_the_first_epoch_returns_the_best_seed(client: Any) -> None:
    """Stopped before they start: no task runs, and each search returns the best of its starting archive,
    here the best seed handed over as ``resume`` (credited to ``seed`` or ``resume``: the stop may cut the
    heuristics that the search runs for its own seeds, depending on what this process computed before)."""
    seeds = collect_seeds(PROBLEM)
    best = seeds[int(np.argmin(PROBLEM.evaluate(np.array(seeds)).F[:, 0]))]
    fronts = []
    with solve_context(seed=0, time_limit=120, resume=[best]) as ctx:
        ctx.token.request()
        fronts.append(solve_lns_islands(PROBLEM, ctx, LnsOptions(islands=2), client))
    with solve_context(seed=0, time_limit=120, resume=[best]) as ctx:
        ctx.token.request()
        fronts.append(solve_memetic_islands(PROBLEM, ctx, MemeticOptions(islands=2), client))
    for front in fronts:
        assert front.status == INTERRUPTED and "0 epochs merged" in front.stats.message
        assert makespan(front) == best_seed(PROBLEM)
        assert front.points[0].found_by in (FoundBy(SEED), FoundBy(RESUME))


STOP: dict[str, Any] = {}
RETURNED: list[LnsEpochResult] = []


def stops_the_run(problem: Any, epoch: Any, settings: Any, budget: float, stop_event: str) -> LnsEpochResult:
    """:func:`lns_island_task`, recording what it returns; island 0's first epoch requests a stop (Ctrl-C) once it
    has run, and returns only after the driver has told the tasks to stop, so its result comes back after the
    stop (the 60 s are a safety net, nothing is timed)."""
    res = lns_island_task(problem, epoch, settings, budget, stop_event)
    with LOCK:
        RETURNED.append(res)
    if (epoch.island, epoch.number) == (0, 0):
        STOP["ctx"].token.request()
        distributed.Event(stop_event).wait(60)
    return res


def test_a_stop_keeps_the_best_incumbent_returned(client: Any, optimum: int) -> None:
    """Ctrl-C during the first epochs: the run ends ``interrupted`` on the best of the best seed and every
    incumbent the tasks returned, the optimum that island 0 found and returned after the stop included."""
    RETURNED.clear()
    with solve_context(seed=LNS_SEED, time_limit=120) as ctx:
        STOP["ctx"] = ctx
        front = solve_lns_islands(PROBLEM, ctx, LnsOptions(**{**LNS, "synchronous": False}), client,
                                  task=stops_the_run)
    assert front.status == INTERRUPTED
    late = next(r for r in RETURNED if (r.island, r.number) == (0, 0))
    assert PROBLEM.evaluate(late.incumbent[None, :]).F[0, 0] == optimum == makespan(front)


def test_memetic_islands_go_on_with_nsga2_islands_for_two_objectives(client: Any) -> None:
    """With makespan and energy, the local-search epochs come first, then NSGA-II islands resumed from what
    they found: the front is feasible and nondominated, its values are its genomes', every point names who
    found it, and no feasible seed is better than the front (each is matched or dominated by a point)."""
    problem = tf_tiny(5, ("makespan", "energy"))
    front = dse.solve(problem, "memetic", time_limit=120, seed=0, client=client, islands=2, island_steps=20,
                      epochs=1, local_share=0.5, synchronous=True, pop_size=10, generations=4, island_generations=2)
    assert "then NSGA-II islands: 2 islands" in front.stats.message and front.stats.generations == 8
    ev = problem.evaluate(np.array([p.genome for p in front.points]))
    assert ev.feasible.all() and len(nondominated(ev.F)) == len(front)
    np.testing.assert_array_equal(ev.F, front.internal())
    assert all(p.found_by is not None for p in front.points)
    seeds = problem.evaluate(problem.repair(np.array(collect_seeds(problem))))
    for z in seeds.F[seeds.feasible]:
        assert np.any(np.all(front.internal() <= z, axis=1)), z
