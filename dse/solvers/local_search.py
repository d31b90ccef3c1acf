"""Critical-path local search for the ``dag`` family (the memetic and LNS solvers' first phase).

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
  them use, one of the three fastest for one of them, or that of the task feeding the run): a
  chain split over devices pays a transfer and a send at each change, which single-task moves
  cannot remove.

A move of a task in a colocation group moves the group (its leader's gene), since the repair would
put a member alone back with its group.

The batch is evaluated at once by the family's vectorized evaluator; the best neighbour that
shortens the makespan (or keeps it and lowers the summed finish times, :func:`scores`) becomes the
incumbent, and the improving moves of a batch are also tried together. After 5 steps without a
better neighbour a *kick* sends ``kick_tasks`` random critical-path tasks to random allowed
devices; after ``restart_steps`` steps without a new best the kick starts from the best schedule
instead (an iterated local search). The walk and the moves run in compiled kernels. Same seed,
same result, unless the time limit cuts it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.mapping.base import MappingProblem
from dse.mapping.constraints import AllowedDevices, Colocation
from dse.mapping.dag.structure import (
    _edge_delay,
    _send_rule,
    compiled_kernels,
    sends_occupy,
    transfer_arguments,
)
from dse.solvers.context import SolveContext
from dse.util.jit import compile_functions, may_compile, plain

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


@dataclass(frozen=True)
class CriticalPath:
    """A schedule's critical path, last task first, as columns: ``task``, its ``cause`` (the producer whose
    input arrived last when ``by_data``, else the task that held the device; -1 at the path's start) and
    ``gap``, the time from the cause's compute finish to the task's start (transfer and sends, or the
    device's other work). ``path[i]`` is the tuple ``(task, cause, by_data, gap)`` of step ``i``."""

    task: np.ndarray
    cause: np.ndarray
    by_data: np.ndarray
    gap: np.ndarray

    def __len__(self) -> int:
        return len(self.task)

    def __getitem__(self, i: int) -> tuple[int, int, bool, int]:
        return int(self.task[i]), int(self.cause[i]), bool(self.by_data[i]), int(self.gap[i])


def critical_path(problem: DagProblem, x: np.ndarray) -> CriticalPath:
    """The critical path of genome ``x``'s non-insertion schedule (walked back from the task that finishes
    last, at each task the first producer, in predecessor order, whose input arrived exactly at its start,
    else the task before it on its device when that held the device until then)."""
    t = problem.tables
    st = problem.structure
    n = problem.n_tasks
    dev = np.ascontiguousarray(x[:n], dtype=np.int64)
    _, start, finish, release, order = problem.schedule_population(dev[None, :], x[None, n:], False)
    task, cause, by_data, gap = _kernels()["walk"](
        dev, start[0], finish[0], release[0], order[0], st.pred_ptr, st.pred_task, st.pred_edge, st.succ_ptr,
        st.succ_task, st.succ_edge, st.n_edges, t.n_dev, *transfer_arguments(t),
        sends_occupy(st, t, problem.tensor_per_device), t.send_time)
    return CriticalPath(task, cause, by_data, gap)


def _walk(dev, start, finish, release, order, pred_ptr, pred_task, pred_edge, succ_ptr, succ_task, succ_edge, n_edges,
          n_dev, table, latency, per_byte, size, sends, send):  # pragma: no cover - compiled
    """:func:`critical_path`'s walk: ``(task, cause, by_data, gap)`` arrays, last task first."""
    n = len(dev)
    delay = np.zeros(n_edges, dtype=np.int64)  # the sends' share of each edge's delay (TF rules)
    if sends:
        extra = np.zeros(n, dtype=np.int64)
        _send_rule(0, dev.reshape(1, n), succ_ptr, succ_task, succ_edge, send, np.zeros(n_dev, dtype=np.int64), delay,
                   extra)
    previous = np.full(n, -1, dtype=np.int64)  # the task before each on its device, in scheduling order
    last = np.full(n_dev, -1, dtype=np.int64)
    for v in order:
        previous[v] = last[dev[v]]
        last[dev[v]] = v
    task = np.empty(n, dtype=np.int64)
    cause = np.empty(n, dtype=np.int64)
    by_data = np.empty(n, dtype=np.bool_)
    gap = np.empty(n, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    v = np.argmax(finish) if n else -1
    m = 0
    while v >= 0 and not seen[v]:
        seen[v] = True
        c, data = -1, False
        for j in range(pred_ptr[v], pred_ptr[v + 1]):
            u = pred_task[j]
            e = pred_edge[j]
            if finish[u] + _edge_delay(e, dev[u], dev[v], n_dev, table, latency, per_byte, size) + delay[e] == start[v]:
                c, data = u, True
                break
        if c < 0 and previous[v] >= 0 and release[previous[v]] == start[v]:
            c = previous[v]
        task[m], cause[m], by_data[m] = v, c, data
        gap[m] = start[v] - finish[c] if c >= 0 else 0
        m += 1
        v = c
    return task[:m], cause[:m], by_data[:m], gap[:m]


def group_leaders(problem: DagProblem) -> np.ndarray:
    """Per task, the task whose device gene places its colocation group (itself when it has no group): a
    move of a group member must move the leader, or the repair puts the member back."""
    leader = np.arange(problem.n_tasks, dtype=np.int64)
    if problem.colocation is not None:
        leader[problem.colocation.members] = problem.colocation.leaders
    return leader


def neighbours(problem: DagProblem, x: np.ndarray, path: CriticalPath, rng: np.random.Generator,
               limit: int, fastest: np.ndarray, leader: np.ndarray | None = None, segments: int = 16) -> np.ndarray:
    """Up to ``limit`` distinct repaired genomes one move away from ``x`` (see the module docstring); the
    moves are listed first and ``limit`` of them drawn, the moves at long gaps (costly transfers, long
    waits for a device) more often; then ``segments`` segment moves (:func:`_segment_moves`)."""
    n = problem.n_tasks
    x = np.ascontiguousarray(x, dtype=np.int64)
    kernels = _kernels()
    columns = [path.task, path.cause, path.by_data, path.gap]
    kind, task, other, size, weight = kernels["list"](*columns, x, np.ascontiguousarray(fastest, dtype=np.int64))
    if not len(kind):
        return np.zeros((0, len(x)), dtype=np.int64)
    w = weight.astype(np.float64)
    picked = np.sort(rng.choice(len(kind), size=min(limit, len(kind)), replace=False, p=w / w.sum()))
    critical = np.zeros(n, dtype=np.bool_)
    critical[columns[0]] = True
    st = problem.structure
    out = kernels["apply"](x, n, kind, task, other, size, picked,
                           np.arange(n, dtype=np.int64) if leader is None else leader, st.succ_ptr, st.succ_task,
                           st.pred_ptr, st.pred_task, critical)
    Y = np.vstack([out, _segment_moves(x, path, rng, fastest, leader, segments)])
    colocation = problem.colocation
    members, leaders = ((colocation.members, colocation.leaders) if colocation is not None
                        else (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)))
    keep = kernels["settle"](Y, x, problem.tables.allowed, problem.repair_device, members, leaders)
    return Y[keep]


_DEVICE, _PROMOTE = 0, 1
_KERNELS: dict[str, Callable[..., Any]] = {}


def _kernels() -> dict[str, Callable[..., Any]]:
    """The compiled :func:`_walk`, :func:`_list_moves`, :func:`_apply_moves` (with :func:`_reach`),
    :func:`_segment_rows` and :func:`_settle` (compiled, or loaded from numba's cache, on first use)."""
    names = {"walk": "_walk", "list": "_list_moves", "reach": "_reach", "apply": "_apply_moves",
             "segment": "_segment_rows", "settle": "_settle"}
    if not _KERNELS:
        compiled = compiled_kernels()
        scope = globals()
        if not may_compile():  # plain Python while compiling would break a time limit (dse.util.jit)
            return {key: plain(scope[name]) for key, name in names.items()}
        scope["_edge_delay"] = compiled["_edge_delay"]
        scope["_send_rule"] = compiled["_send_rule"]
        done = compile_functions(scope, tuple(names.values()))
        _KERNELS.update({key: done[name] for key, name in names.items()})
    return _KERNELS


def _list_moves(v, cause, by_data, gap, x, fastest):  # pragma: no cover - compiled
    """Every useful move of the module docstring at each task of the path (``v``, ``cause``, ``by_data``,
    ``gap``: its columns), in path order: ``(kind, task, other, size, weight)``, ``other`` a device
    (``_DEVICE``: ``size`` tasks of the task's branch go there) or the task to run before (``_PROMOTE``),
    the weight the gap plus one. Per path task: by data, the task to its producer's device and the
    producer to the task's; by device, the promotion and the holder to each of its fastest devices with
    1, 4 and 16 tasks of its branch; then the task to each of its fastest devices. A device move that
    leaves the task where it is is dropped."""
    k = fastest.shape[1]
    count = 0
    for i in range(len(v)):
        if cause[i] >= 0:
            count += 2 if by_data[i] else 1 + 3 * k
        count += k
    kind = np.empty(count, dtype=np.int64)
    task = np.empty(count, dtype=np.int64)
    other = np.empty(count, dtype=np.int64)
    size = np.empty(count, dtype=np.int64)
    weight = np.empty(count, dtype=np.int64)
    q = 0
    for i in range(len(v)):
        c = cause[i]
        moves = np.empty((2 + 3 * k + k + 1, 3), dtype=np.int64)  # (task, other, size); size 0: a promotion
        m = 0
        if c >= 0 and by_data[i]:
            moves[0, 0], moves[0, 1], moves[0, 2] = v[i], x[c], 1
            moves[1, 0], moves[1, 1], moves[1, 2] = c, x[v[i]], 1
            m = 2
        elif c >= 0:
            moves[0, 0], moves[0, 1], moves[0, 2] = v[i], c, 0
            m = 1
            for branch in (1, 4, 16):
                for d in range(k):
                    moves[m, 0], moves[m, 1], moves[m, 2] = c, fastest[c, d], branch
                    m += 1
        for d in range(k):
            moves[m, 0], moves[m, 1], moves[m, 2] = v[i], fastest[v[i], d], 1
            m += 1
        for j in range(m):
            promote = moves[j, 2] == 0
            if promote or x[moves[j, 0]] != moves[j, 1]:
                kind[q] = _PROMOTE if promote else _DEVICE
                task[q], other[q], size[q], weight[q] = moves[j, 0], moves[j, 1], moves[j, 2], gap[i] + 1
                q += 1
    return kind[:q], task[:q], other[:q], size[:q], weight[:q]


def _apply_moves(x, n, kind, task, other, size, picked, leader, succ_ptr, succ_task, pred_ptr, pred_task,
                 critical):  # pragma: no cover - compiled
    """One copy of ``x`` per picked move with the move made: a promotion swaps two priority genes; a device
    move puts the task and up to ``size - 1`` more of its branch (breadth first over its successors then
    predecessors, tasks on its device off the critical path) on the device, each with its colocation
    group's leader."""
    out = np.empty((len(picked), len(x)), dtype=np.int64)
    seen = np.zeros(n, dtype=np.int64)  # the row (plus one) that last reached each task
    queue = np.empty(n, dtype=np.int64)
    for row in range(len(picked)):
        out[row] = x
        k = picked[row]
        v = task[k]
        if kind[k] == _PROMOTE:
            out[row, n + v], out[row, n + other[k]] = x[n + other[k]], x[n + v]
            continue
        device = x[v]
        seen[v] = row + 1
        queue[0] = v
        head, tail = 0, 1
        while head < tail and tail < size[k]:
            u = queue[head]
            head += 1
            tail = _reach(succ_ptr, succ_task, u, x, device, critical, seen, row + 1, queue, tail, size[k])
            tail = _reach(pred_ptr, pred_task, u, x, device, critical, seen, row + 1, queue, tail, size[k])
        for j in range(tail):
            out[row, queue[j]] = other[k]
            out[row, leader[queue[j]]] = other[k]  # the whole colocation group moves
    return out


def _reach(ptr, neighbour, u, x, device, critical, seen, mark, queue, tail, size):  # pragma: no cover - compiled
    """:func:`_apply_moves`' breadth-first step: ``u``'s neighbours (row ``u`` of the compressed rows ``ptr,
    neighbour``) on ``device`` off the critical path and not yet ``seen`` this ``mark`` join ``queue`` after
    its first ``tail`` entries, until it holds ``size``; returns the new ``tail``."""
    for j in range(ptr[u], ptr[u + 1]):
        w = neighbour[j]
        if seen[w] != mark and x[w] == device and not critical[w] and tail < size:
            seen[w] = mark
            queue[tail] = w
            tail += 1
    return tail


def _segment_moves(x: np.ndarray, path: CriticalPath, rng: np.random.Generator,
                   fastest: np.ndarray, leader: np.ndarray | None, count: int) -> np.ndarray:
    """``count`` genomes that each put a run of 4 to 64 consecutive critical-path tasks on one device: the
    device most of them already use, one of the ``fastest`` devices of one of them (drawn: equally fast
    devices are common, and the fastest one may be full), or the device of the path's task that feeds
    the run (rows in turn). A chain split over devices pays a transfer and a send at every change,
    which no single-task move can remove without first adding two."""
    if len(path) < 2 or count <= 0:
        return np.zeros((0, len(x)), dtype=np.int64)
    n = len(fastest)
    draws = rng.random((count, 4))  # per row: the run's length (4, 16 or 64), its first task, a task, a fast device
    return _kernels()["segment"](np.ascontiguousarray(x, dtype=np.int64), path.task, draws,
                                 np.ascontiguousarray(fastest, dtype=np.int64),
                                 np.arange(n, dtype=np.int64) if leader is None else leader)


def _segment_rows(x, tasks, draws, fastest, leader):  # pragma: no cover - compiled
    """:func:`_segment_moves`' rows from its uniform ``draws``."""
    count, length_of_path = len(draws), len(tasks)
    out = np.empty((count, len(x)), dtype=np.int64)
    votes = np.zeros(int(x[: len(fastest)].max()) + 1, dtype=np.int64)
    for row in range(count):
        out[row] = x
        length = min(length_of_path, 4 ** (1 + int(draws[row, 0] * 3)))
        first = int(draws[row, 1] * (length_of_path - length + 1))
        kind = row % 3
        if kind == 0:  # the device most of the run uses (the lowest index among ties)
            votes[:] = 0
            for i in range(first, first + length):
                votes[x[tasks[i]]] += 1
            target = np.argmax(votes)
        elif kind == 1 or first + length >= length_of_path:
            target = fastest[tasks[first + int(draws[row, 2] * length)], int(draws[row, 3] * fastest.shape[1])]
        else:
            target = x[tasks[first + length]]  # the path runs last task first: this one feeds the run
        for i in range(first, first + length):
            out[row, tasks[i]] = target
            out[row, leader[tasks[i]]] = target
    return out


def _settle(Y, x, allowed, fallback, members, leaders):  # pragma: no cover - compiled
    """Repair the device genes of the rows ``Y`` in place as :meth:`DagProblem.repair` does (a task on a
    device it may not use goes to ``fallback``, then every colocation member to its leader's device) and
    return which rows to keep: each distinct row once (its first occurrence), none equal to ``x``.
    The rule is repeated here rather than calling :meth:`DagProblem.repair` because that costs about
    0.27 ms on a batch of 64 rows of the conv graph (fancy indexing and a clip), a sixth of a search step;
    ``tests/solvers/test_memetic_moves.py`` checks the rows against :meth:`DagProblem.repair`."""
    rows, n = Y.shape[0], allowed.shape[0]
    for r in range(rows):
        for v in range(n):
            if not allowed[v, Y[r, v]]:
                Y[r, v] = fallback[v]
        for k in range(len(members)):
            Y[r, members[k]] = Y[r, leaders[k]]
    keep = np.ones(rows, dtype=np.bool_)
    digest = np.zeros(rows, dtype=np.uint64)
    for r in range(rows):
        h = np.uint64(1469598103934665603)
        for j in range(Y.shape[1]):
            h = (h ^ np.uint64(Y[r, j])) * np.uint64(1099511628211)
        digest[r] = h
    for r in range(rows):
        same = True
        for j in range(Y.shape[1]):
            if Y[r, j] != x[j]:
                same = False
                break
        if same:
            keep[r] = False
            continue
        for q in range(r):
            if keep[q] and digest[q] == digest[r]:
                equal = True
                for j in range(Y.shape[1]):
                    if Y[r, j] != Y[q, j]:
                        equal = False
                        break
                if equal:
                    keep[r] = False
                    break
    return keep


def scores(problem: DagProblem, Y: np.ndarray) -> np.ndarray:
    """A lexicographic key per genome: the makespan plus a fraction in [0, 1) that grows with the summed
    task finish times (it lets the search cross plateaus of equal makespan); ``inf`` when infeasible."""
    n = problem.n_tasks
    makespan, _, finish, _, _ = problem.schedule_population(Y[:, :n], Y[:, n:], problem.insertion)
    spread = finish.astype(np.float64).sum(axis=1) / (n * np.maximum(makespan, 1).astype(np.float64) + 1.0)
    score = makespan.astype(np.float64) + spread
    if problem.constraints:
        score = np.where(_feasible(problem, Y, makespan), score, np.inf)
    return score


def _feasible(problem: DagProblem, Y: np.ndarray, makespan: np.ndarray) -> np.ndarray:
    """Whether each genome of ``Y`` (with its decoded ``makespan``) meets the constraints. The allowed
    devices and colocation groups are read off the device genes; any other constraint goes through
    :meth:`DagProblem.evaluate_scheduled` (energy and the constraints' inputs, no second decode)."""
    n = problem.n_tasks
    dev = Y[:, :n]
    ok = problem.tables.allowed[np.arange(n), dev].all(axis=1)
    if problem.colocation is not None:
        ok &= (dev[:, problem.colocation.members] == dev[:, problem.colocation.leaders]).all(axis=1)
    if any(not isinstance(c, (AllowedDevices, Colocation)) for c in problem.constraints):
        ok &= problem.evaluate_scheduled(Y, makespan).feasible
    return ok


def local_search(problem: DagProblem, start: np.ndarray, ctx: SolveContext, rng: np.random.Generator,
                 batch: int = 48, kick_tasks: int = 8, restart_steps: int = 100,
                 max_steps: int | None = None) -> tuple[np.ndarray, int, int]:
    """Improve ``start``'s makespan until ``ctx``'s stopping rule says stop (its deadline: the share of a
    solver's time given to the local search, see :meth:`SolveContext.derived`) or ``max_steps`` steps were
    taken (None: no such limit); returns the best genome, the evaluations spent and the steps taken.
    Progress goes to ``ctx.progress``.

    After 5 steps without a better neighbour the incumbent is kicked: ``kick_tasks`` random tasks of
    its critical path (with their colocation groups) go to random allowed devices; when the best
    genome has not improved for ``restart_steps`` steps, the kick starts from the best genome
    instead of the incumbent (an iterated local search)."""
    t = problem.tables
    masked = np.where(t.allowed, t.time, np.iinfo(np.int64).max)
    fastest = np.argsort(masked, axis=1, kind="stable")[:, :3]
    leader = group_leaders(problem)
    current = problem.repair(np.asarray(start, dtype=np.int64)[None, :])[0]
    current_s = float(scores(problem, current[None, :])[0])
    best, best_s = current.copy(), current_s
    evaluations, steps, stale, since_best = 1, 0, 0, 0
    while ctx.stop_status() is None and (max_steps is None or steps < max_steps):
        steps += 1
        since_best += 1
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
            if stale >= 5:
                if since_best > restart_steps:  # back to the best before kicking
                    current, since_best = best, 0
                    path = critical_path(problem, current)
                current = _kick(problem, current, path, rng, kick_tasks, leader)
                current_s = float(scores(problem, current[None, :])[0])
                evaluations += 1
                stale = 0
        if current_s < best_s:
            best, best_s, since_best = current.copy(), current_s, 0
        if ctx.progress.due():
            found = f"makespan {int(best_s):,}" if np.isfinite(best_s) else "no feasible schedule yet"
            ctx.progress.update(f"local search step {steps}, {found}, {evaluations:,} evaluations")
    return best, evaluations, steps


def _kick(problem: DagProblem, x: np.ndarray, path: CriticalPath, rng: np.random.Generator,
          count: int, leader: np.ndarray) -> np.ndarray:
    """A repaired copy of ``x`` with ``count`` random critical-path tasks (drawn with replacement), each with
    its colocation group's leader, on random allowed devices."""
    allowed = problem.tables.allowed
    x = x.copy()
    for _ in range(count if path else 0):
        v = path.task[int(rng.integers(len(path)))]
        x[[v, leader[v]]] = int(rng.choice(np.flatnonzero(allowed[v])))
    return problem.repair(x[None, :])[0]


def local_search_unsupported(problem: MappingProblem) -> str | None:
    """None when the local search can take ``problem``, else the reason."""
    if not all(callable(getattr(problem, name, None)) for name in ("schedule_population", "evaluate_scheduled")):
        return ("the memetic search's moves need list-scheduled finish times (a family with device and "
                "priority genes that provides schedule_population and evaluate_scheduled)")
    return None
