"""Memetic search for the ``dag`` family: critical-path local search around the best seeds, then NSGA-II.

The local search improves the makespan of one schedule at a time. Each step decodes the
incumbent, walks its critical path back from the task that finishes last (at each task: the
input whose arrival set its start, or else the task that held its device), and builds a batch
of neighbours from the tasks on that path:

* *join*: put a task on the device of its critical producer (the transfer and the sends vanish),
  or the producer on the task's device;
* *move*: put a task on one of the devices that run it fastest;
* *promote*: a task that waited for its device runs before the task that held it (their
  priorities swap);
* *evict*: the task that held the device moves to one of its fastest other devices, alone or with
  up to 3 or 15 neighbours on the same device off the critical path (its branch);
* *segment*: a run of 4 to 64 consecutive critical-path tasks goes to one device (the one most of
  them use, the fastest for one of them, or that of the task feeding the run): a chain split over
  devices pays a transfer and a send at each change, which single-task moves cannot remove.

A move of a task in a colocation group moves the group (its leader's gene), since the repair would
put a member alone back with its group.

The batch is evaluated at once by the family's vectorized evaluator; the best neighbour that
shortens the makespan (or, after a run of failures, the best one that does not lengthen it)
becomes the incumbent, and the improving moves of a batch are also tried together. The
schedules found seed NSGA-II, which spends the rest of the time on the whole front (with one
objective only the local search runs). Same seed, same result, unless the time limit cuts it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from dse.interrupt import interruptible
from dse.mapping.base import MappingProblem
from dse.pareto import ParetoSet, SolveStats, nondominated
from dse.progress import Progress, silent
from dse.solvers.common import result
from dse.solvers.nsga2 import Nsga2Options
from dse.solvers.registry import Solver, collect_seeds, register_solver

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def critical_path(problem: DagProblem, x: np.ndarray) -> list[tuple[int, int, bool, int]]:
    """The critical path of genome ``x``'s schedule, last task first: ``(task, cause, by_data, gap)`` where
    ``cause`` is the producer whose input arrived last (``by_data``) or the task that held the device
    (-1 at the path's start), and ``gap`` the time from the cause's compute finish to the task's start
    (transfer and sends, or the device's other work)."""
    t = problem.tables
    st = problem.structure
    n = problem.n_tasks
    s = problem.schedule(x, insertion=False)
    dev = s.device
    delay, _ = st.send_delays(dev, t, problem.tensor_per_device)
    previous = np.full(n, -1, dtype=np.int64)  # the task before each one on its device, in scheduling order
    last = np.full(t.n_dev, -1, dtype=np.int64)
    for v in s.order.tolist():
        previous[v] = last[dev[v]]
        last[dev[v]] = v
    v = int(np.argmax(s.finish))
    path: list[tuple[int, int, bool, int]] = []
    seen = set()
    while v >= 0 and v not in seen:
        seen.add(v)
        cause, by_data = -1, False
        preds, edges = st.pred_task[v], st.pred_edge[v]
        real = preds < n
        hit = np.flatnonzero(s.finish[preds[real]] + delay[edges[real]] == s.start[v])
        if len(hit):
            cause, by_data = int(preds[real][hit[0]]), True
        if cause < 0 and previous[v] >= 0 and s.release[previous[v]] == s.start[v]:
            cause = int(previous[v])
        path.append((v, cause, by_data, int(s.start[v] - s.finish[cause]) if cause >= 0 else 0))
        v = cause
    return path


def group_leaders(problem: DagProblem) -> np.ndarray:
    """Per task, the task whose device gene places its colocation group (itself when it has no group): a
    move of a group member must move the leader, or the repair puts the member back."""
    leader = np.arange(problem.n_tasks, dtype=np.int64)
    if problem.colocation is not None:
        leader[problem.colocation.members] = problem.colocation.leaders
    return leader


def neighbours(problem: DagProblem, x: np.ndarray, path: list[tuple[int, int, bool, int]], rng: np.random.Generator,
               limit: int, fastest: np.ndarray, leader: np.ndarray | None = None, segments: int = 16) -> np.ndarray:
    """Up to ``limit`` distinct repaired genomes one move away from ``x`` (see the module docstring); the
    moves are listed first and ``limit`` of them drawn, the moves at long gaps (costly transfers, long
    waits for a device) more often; then ``segments`` segment moves (:func:`_segment_moves`)."""
    n = problem.n_tasks
    critical = {v for v, _, _, _ in path}
    moves: list[tuple[str, int, int, int]] = []  # (kind, task, other task or device, branch size)
    weight: list[int] = []
    for v, cause, by_data, gap in path:
        before = len(moves)
        if cause >= 0 and by_data:
            moves += [("device", v, int(x[cause]), 1), ("device", cause, int(x[v]), 1)]
        elif cause >= 0:
            moves.append(("promote", v, cause, 0))
            moves += [("device", cause, int(d), size) for size in (1, 4, 16) for d in fastest[cause]]
        moves += [("device", v, int(d), 1) for d in fastest[v]]
        weight += [gap + 1] * (len(moves) - before)
    useful = [k for k, mv in enumerate(moves) if mv[0] == "promote" or x[mv[1]] != mv[2]]
    if not useful:
        return np.zeros((0, len(x)), dtype=np.int64)
    moves = [moves[k] for k in useful]
    w = np.array([weight[k] for k in useful], dtype=np.float64)
    picked = rng.choice(len(moves), size=min(limit, len(moves)), replace=False, p=w / w.sum())
    out = np.repeat(x[None, :], len(picked), axis=0)
    for row, k in enumerate(np.sort(picked)):
        kind, v, other, size = moves[k]
        if kind == "promote":
            out[row, n + v], out[row, n + other] = x[n + other], x[n + v]
        else:
            tasks = np.asarray(_branch(problem, x, v, critical, size) if size > 1 else [v], dtype=np.int64)
            out[row, tasks] = other
            if leader is not None:
                out[row, leader[tasks]] = other  # the whole colocation group moves
    out = np.vstack([out, _segment_moves(x, path, rng, fastest, leader, segments)])
    Y = problem.repair(out)
    first = list({row.tobytes(): k for k, row in reversed(list(enumerate(Y)))}.values())[::-1]  # distinct rows
    Y = Y[np.sort(np.asarray(first, dtype=np.int64))]
    return Y[(Y != x).any(axis=1)]


def _segment_moves(x: np.ndarray, path: list[tuple[int, int, bool, int]], rng: np.random.Generator,
                   fastest: np.ndarray, leader: np.ndarray | None, count: int) -> np.ndarray:
    """``count`` genomes that each put a run of 4 to 64 consecutive critical-path tasks on one device: the
    device most of them already use, the fastest for one of them, or the device of the path's task that
    feeds the run. A chain split over devices
    pays a transfer and a send at every change, which no single-task move can remove without first
    adding two."""
    out = np.repeat(x[None, :], count, axis=0)
    if len(path) < 2 or count <= 0:
        return out[:0]
    tasks_on_path = np.array([v for v, _, _, _ in path], dtype=np.int64)
    for row in range(count):
        length = int(min(len(tasks_on_path), 4 ** int(rng.integers(1, 4))))
        first = int(rng.integers(0, len(tasks_on_path) - length + 1))
        run = tasks_on_path[first: first + length]
        kind = row % 3
        if kind == 0:
            target = int(np.bincount(x[run]).argmax())
        elif kind == 1 or first + length >= len(tasks_on_path):
            target = int(fastest[run[int(rng.integers(len(run)))], 0])
        else:
            target = int(x[tasks_on_path[first + length]])  # the path runs last task first: this one feeds the run
        out[row, run] = target
        if leader is not None:
            out[row, leader[run]] = target
    return out


def _branch(problem: DagProblem, x: np.ndarray, root: int, critical: set[int], size: int) -> list[int]:
    """Up to ``size`` tasks reached from ``root`` over edges between tasks on ``root``'s device, off the
    critical path (breadth first): a piece of work that can move without new transfers inside it."""
    st = problem.structure
    d = x[root]
    branch, queue = [root], [root]
    seen = {root}
    while queue and len(branch) < size:
        v = queue.pop(0)
        for w, _ in st.successors(v) + st.predecessors(v):
            if w not in seen and x[w] == d and w not in critical and len(branch) < size:
                seen.add(w)
                branch.append(w)
                queue.append(w)
    return branch


def scores(problem: DagProblem, Y: np.ndarray) -> np.ndarray:
    """A lexicographic key per genome: the makespan plus a fraction in [0, 1) that grows with the summed
    task finish times (it lets the search cross plateaus of equal makespan); ``inf`` when infeasible."""
    n = problem.n_tasks
    makespan, _, finish, _, _ = problem.schedule_population(Y[:, :n], Y[:, n:], problem.insertion)
    spread = finish.astype(np.float64).sum(axis=1) / (n * np.maximum(makespan, 1).astype(np.float64) + 1.0)
    score = makespan.astype(np.float64) + spread
    if problem.constraints:  # the makespans just decoded: no second decode
        score = np.where(problem.evaluate_scheduled(Y, makespan).feasible, score, np.inf)
    return score


def local_search(problem: DagProblem, start: np.ndarray, deadline: float, rng: np.random.Generator,
                 batch: int = 48, stop=lambda: False, progress: Progress | None = None) -> tuple[np.ndarray, int, int]:
    """Improve ``start``'s makespan until ``deadline`` (``time.monotonic()``); returns the best genome,
    the evaluations spent and the steps taken."""
    t = problem.tables
    masked = np.where(t.allowed, t.time, np.iinfo(np.int64).max)
    fastest = np.argsort(masked, axis=1, kind="stable")[:, :3]
    leader = group_leaders(problem)
    current = problem.repair(np.asarray(start, dtype=np.int64)[None, :])[0]
    current_s = float(scores(problem, current[None, :])[0])
    best, best_s = current.copy(), current_s
    evaluations, steps, stale = 1, 0, 0
    while time.monotonic() < deadline and not stop():
        steps += 1
        path = critical_path(problem, current)
        Y = neighbours(problem, current, path, rng, batch, fastest, leader)
        if not len(Y):
            break
        S = scores(problem, Y)
        evaluations += len(Y)
        better = np.flatnonzero(S < current_s)
        if len(better) > 1:  # the improving moves together
            combined = current.copy()
            for k in better[np.argsort(S[better], kind="stable")][::-1]:
                changed = Y[k] != current
                combined[changed] = Y[k][changed]
            combined = problem.repair(combined[None, :])
            Y, S = np.vstack([Y, combined]), np.append(S, scores(problem, combined))
            evaluations += 1
        k = int(np.argmin(S))
        if S[k] < current_s:
            current, current_s, stale = Y[k], float(S[k]), 0
        else:
            stale += 1
            if stale >= 5:  # a kick: a random critical task to a random allowed device
                v = path[int(rng.integers(len(path)))][0]
                current = current.copy()
                current[[v, leader[v]]] = int(rng.choice(np.flatnonzero(t.allowed[v])))
                current = problem.repair(current[None, :])[0]
                current_s = float(scores(problem, current[None, :])[0])
                evaluations += 1
                stale = 0
        if current_s < best_s:
            best, best_s = current.copy(), current_s
        if progress is not None:
            found = f"makespan {int(best_s):,}" if np.isfinite(best_s) else "no feasible schedule yet"
            progress.update(f"local search step {steps}, {found}, {evaluations:,} evaluations")
    return best, evaluations, steps


def solve_memetic(
    problem: MappingProblem,
    time_limit: float = 60.0,
    seed: int = 0,
    local_share: float | None = None,
    starts: int = 1,
    batch: int = 48,
    resume: Sequence[np.ndarray] = (),
    progress: Progress | None = None,
    **nsga2_options: object,
) -> ParetoSet:
    """Critical-path local search from the ``starts`` best seeds (heuristics, baselines, ``resume``), then
    NSGA-II seeded with everything found; returns the nondominated union (nothing proven).

    ``local_share``: fraction of ``time_limit`` for the local search (default: all of it with one
    objective, half with more). Extra options go to :func:`dse.solvers.nsga2.solve_nsga2`.
    """
    from dse.solvers.nsga2 import solve_nsga2

    dag: DagProblem = problem  # type: ignore[assignment]
    progress = progress or silent()
    start = time.monotonic()
    rng = np.random.default_rng(seed)
    single = len(problem.objectives) == 1
    share = (1.0 if single else 0.5) if local_share is None else float(local_share)
    pool = [np.asarray(g, dtype=np.int64) for g in resume] + collect_seeds(problem)
    found: list[np.ndarray] = list(pool)
    evaluations, steps = 0, 0
    status = "feasible"
    with interruptible() as token:
        if pool:
            X = np.array(pool, dtype=np.int64)
            ev = problem.evaluate(X)
            ranked = np.lexsort((ev.F[:, 0], ~ev.feasible))[: max(starts, 1)]
            budget = time_limit * share
            for j, k in enumerate(ranked):
                end = start + budget * (j + 1) / len(ranked)
                best, spent, taken = local_search(dag, X[k], end, rng, batch, lambda: token.stopped, progress)
                found.append(best)
                evaluations += spent
                steps += taken
        if token.stopped:
            status = "interrupted"
    left = time_limit - (time.monotonic() - start)
    generations = 0
    if not single and left > 0 and status != "interrupted":
        front = solve_nsga2(problem, time_limit=left, seed=seed, resume=found, progress=progress,
                            **nsga2_options)  # type: ignore[arg-type]
        found += [np.array(p.genome) for p in front.points]
        evaluations += front.stats.evaluations
        generations = front.stats.generations
        status = front.status if front.status in ("interrupted", "time_limit") else status
    elif time.monotonic() - start >= time_limit and status != "interrupted":
        status = "time_limit"
    X = np.array(found, dtype=np.int64).reshape(-1, problem.n_genes)
    genomes = np.zeros((0, problem.n_genes), dtype=np.int64)
    if len(X):
        ev = problem.evaluate(X)
        X, F = X[ev.feasible], ev.F[ev.feasible]
        genomes = X[nondominated(F)]
    stats = SolveStats(wall_s=time.monotonic() - start, evaluations=evaluations, generations=generations,
                       message=f"{steps} local-search steps")
    return result(problem, genomes, "memetic", status, stats, proven=False)


def _supports(problem: MappingProblem) -> str | None:
    if not all(callable(getattr(problem, name, None)) for name in ("schedule_population", "evaluate_scheduled")):
        return ("the memetic search's moves need list-scheduled finish times (a family with device and "
                "priority genes that provides schedule_population and evaluate_scheduled)")
    return None


class MemeticOptions(Nsga2Options):
    """The memetic search's settings, NSGA-II's included (it runs after the local search)."""

    local_share: float | None = Field(default=None, ge=0, le=1, description="share of the time limit for the local "
                                      "search (null: all of it with one objective, else half)")
    starts: int = Field(default=1, ge=1, description="best seeds improved one after another")
    batch: int = Field(default=48, ge=1, description="neighbours evaluated a step")


register_solver(Solver(
    "memetic", solve_memetic, supports=_supports, in_all=False, options=MemeticOptions,
    description="dag: critical-path local search from the heuristics' schedules, then NSGA-II; nothing proven",
))
