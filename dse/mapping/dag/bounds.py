"""Makespan lower bounds of the ``dag`` family that count transfers, sends and shared devices.

The critical-path bound (:meth:`DagProblem.critical_path_bound`) takes every task at its fastest
and every transfer as free. :func:`earliest_finish` computes, task by task in topological order, a
lower bound ``f[v, d]`` on the finish of task ``v`` if it runs on device ``d``:

* an input from a producer ``u`` on another device ``d'`` arrives no earlier than
  ``f[u, d'] + transfer(d', d) + send(d')`` (under the TF rules the first send alone already
  occupies ``d'``; without them ``send`` is zero);
* the producers placed on ``d`` itself run there one after another: they finish no earlier than
  the earliest of their starts plus the sum of their times, nor than any one's ``f[u, d]``.

The inputs placed on ``d`` are best chosen as those whose remote arrival is latest, so the bound
tries every such prefix (producers sorted by remote arrival) and keeps the least ready time; then
``f[v, d] = ready + time[v, d]``. :func:`time_to_end` is the same reasoning run backwards from the
sinks: ``g[v, d]``, a lower bound on the time from ``v``'s start on ``d`` to the end of the schedule
(its consumers on other devices wait for the transfer and the send; those on ``d`` run one after
another). The **communication bound** is ``max_v min_d (f + g - time)[v, d]``: every task's
earliest start, its time and its shortest tail, on its best device.

:func:`destructive_bound` then tries makespans ``C`` above it and refutes them: a device on which a
task cannot start, run and finish its tail within ``C`` is struck from that task's choices (and from
its colocation group's); a producer and consumer that cannot afford the transfer between any two
devices must share one; each group of tasks bound together this way, and the tasks left with one
device, must fit one device's timeline (the one-machine bound with heads and tails: for every
subset of late-released, long-tailed tasks, the latest common release plus their times plus the
shortest common tail). The bounds are recomputed on the narrowed choices until nothing changes. A
``C`` is refuted when some task is left with no device; the least unrefuted ``C`` (bisection) is the
bound. Everything else (sends after the first, memory) is left out, so every refutation is sound.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.dag.structure import _edge_delay, _slot, compiled_kernels, transfer_arguments
from dse.util.jit import compile_functions, may_compile, plain

if TYPE_CHECKING:
    from dse.mapping.dag.problem import DagProblem

_INF = np.iinfo(np.int64).max // 4
#: Largest group whose one-machine bound tries every (release, tail) pair of thresholds; larger groups
#: try the thresholds one at a time (same soundness, fewer subsets).
_PAIRWISE_TASKS = 48


def _finish_bound(problem: DagProblem, backward: bool, time: np.ndarray) -> np.ndarray:
    """``f[v, d]`` forward (``g`` with ``backward``: successors as the "producers", the transfer from
    the task's own device and its send) over ``time`` (n, m; ``_INF`` where a device is not a choice):
    the module docstring's recurrence, ``_INF`` where ``d`` is not a choice. Runs a compiled kernel."""
    st = problem.structure
    order, ptr, tasks, edges = ((st.topo[::-1], st.succ_ptr, st.succ_task, st.succ_edge) if backward
                                else (st.topo, st.pred_ptr, st.pred_task, st.pred_edge))
    order = np.ascontiguousarray(order).view()
    order.flags.writeable = False  # one compiled version for both directions
    return _kernel()(order, ptr, tasks, edges, np.ascontiguousarray(time), _send(problem), backward, _INF,
                     *transfer_arguments(problem.tables))


_COMPILED: dict[str, Callable[..., np.ndarray]] = {}


def _kernel() -> Callable[..., np.ndarray]:
    """The compiled :func:`_finish_kernel` (compiled, or loaded from numba's cache, on first use)."""
    if not _COMPILED:
        compiled = compiled_kernels()
        if not may_compile():
            return plain(_finish_kernel)  # plain Python while compiling would break a time limit (dse.util.jit)
        globals()["_edge_delay"], globals()["_slot"] = compiled["_edge_delay"], compiled["_slot"]
        _COMPILED["finish"] = compile_functions(globals(), ("_finish_kernel",))["_finish_kernel"]
    return _COMPILED["finish"]


def _finish_kernel(order, pred_ptr, pred_task, pred_edge, time, send, backward, inf, table, latency, per_byte,
                   size):  # pragma: no cover - compiled
    n, m = time.shape
    width = 1  # the most in-edges of a task: the scratch rows below
    for v in range(n):
        width = max(width, pred_ptr[v + 1] - pred_ptr[v])
    finish = np.full((n, m), inf, dtype=np.int64)
    remote = np.zeros((width, m), dtype=np.int64)
    ranked = np.zeros(width, dtype=np.int64)
    producer = np.zeros(width, dtype=np.int64)
    for v in order:
        k = 0  # distinct producers: two edges from one producer are one producer whose inputs all must arrive
        for j in range(pred_ptr[v], pred_ptr[v + 1]):
            u, e = pred_task[j], pred_edge[j]
            slot = _slot(producer, k, u)
            if slot == k:
                producer[k] = u
                for d in range(m):
                    remote[k, d] = 0
                k += 1
            for d in range(m):  # the earliest arrival on d of this edge's input from another device
                best = inf
                for c in range(m):
                    if c == d or finish[u, c] >= inf:
                        continue
                    if backward:
                        arrive = finish[u, c] + _edge_delay(e, d, c, m, table, latency, per_byte, size) + send[d]
                    else:
                        arrive = finish[u, c] + _edge_delay(e, c, d, m, table, latency, per_byte, size) + send[c]
                    if arrive < best:
                        best = arrive
                if best > remote[slot, d]:
                    remote[slot, d] = best
        if k == 0:
            for d in range(m):
                finish[v, d] = time[v, d]
            continue
        for d in range(m):
            if time[v, d] >= inf:
                continue
            for j in range(k):  # producers by latest remote arrival first (stable insertion sort)
                ranked[j] = j
                i = j
                while i > 0 and remote[ranked[i - 1], d] < remote[ranked[i], d]:
                    ranked[i - 1], ranked[i] = ranked[i], ranked[i - 1]
                    i -= 1
            ready = remote[ranked[0], d]  # nothing local
            latest, earliest, total = 0, inf, 0
            for i in range(k):  # the first i + 1 producers local to d, one after another
                u = producer[ranked[i]]
                if finish[u, d] >= inf:
                    break
                latest = max(latest, finish[u, d])
                earliest = min(earliest, finish[u, d] - time[u, d])
                total += time[u, d]
                local = max(latest, earliest + total)
                rest = remote[ranked[i + 1], d] if i + 1 < k else 0
                if max(rest, local) < ready:
                    ready = max(rest, local)
            finish[v, d] = min(ready + time[v, d], inf)
    return finish


def _times(problem: DagProblem, allowed: np.ndarray | None) -> np.ndarray:
    t = problem.tables
    choice = t.allowed if allowed is None else allowed & t.allowed
    return np.where(choice, t.time, _INF).astype(np.int64)


def _send(problem: DagProblem) -> np.ndarray:
    t = problem.tables
    return t.send_time.astype(np.int64) if problem.tensor_per_device else np.zeros(t.n_dev, dtype=np.int64)


def earliest_finish(problem: DagProblem, allowed: np.ndarray | None = None) -> np.ndarray:
    """``f[v, d]``: a lower bound on task ``v``'s finish on device ``d`` (module docstring), every task
    restricted to the devices ``allowed`` (n, m) leaves it; a huge value where ``d`` may not run ``v``."""
    return _finish_bound(problem, False, _times(problem, allowed))


def time_to_end(problem: DagProblem, allowed: np.ndarray | None = None) -> np.ndarray:
    """``g[v, d]``: a lower bound on the time from task ``v``'s start on device ``d`` to the end of the
    schedule, its own time included (:func:`earliest_finish` run from the sinks, the transfer of
    ``v``'s output and its device's send counted); a huge value where ``d`` may not run ``v``."""
    return _finish_bound(problem, True, _times(problem, allowed))


def _span(problem: DagProblem, allowed: np.ndarray | None = None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(time, f, g, span)``: per task and device the time, the two bounds above and
    ``span = f + g - time``, the least makespan of any schedule that runs ``v`` on ``d``."""
    time = _times(problem, allowed)
    f = earliest_finish(problem, allowed)
    g = time_to_end(problem, allowed)
    span = np.where((f < _INF) & (g < _INF), f + g - time, _INF)
    return time, f, g, span


def communication_bound(problem: DagProblem) -> int:
    """A makespan lower bound counting transfers, the first send and producers or consumers sharing a
    device (module docstring); at least the critical-path bound, and 0 without tasks."""
    if not problem.n_tasks:
        return 0
    return int(_span(problem)[3].min(axis=1).max())


def _one_machine(release: np.ndarray, length: np.ndarray, tail: np.ndarray) -> int:
    """A lower bound on the makespan of tasks sharing one device, each with a release (earliest start),
    a length and a tail (time from its finish to the end): over subsets of tasks released no earlier
    than ``a`` and with tails of at least ``b``, the largest ``a + their lengths + b``."""
    if len(release) <= _PAIRWISE_TASKS:
        a, b = np.unique(release), np.unique(tail)
        inside = (release[None, None, :] >= a[:, None, None]) & (tail[None, None, :] >= b[None, :, None])
        total = (inside * length[None, None, :]).sum(axis=2)
        return int(np.where(inside.any(axis=2), a[:, None] + total + b[None, :], 0).max())
    best = 0
    for key, other in ((release, tail), (tail, release)):  # thresholds on one side, the least of the other
        order = np.argsort(-key, kind="stable")
        total = np.cumsum(length[order])
        least = np.minimum.accumulate(other[order])
        best = max(best, int((key[order] + total + least).max()))
    return best


def _must_share(problem: DagProblem, f: np.ndarray, g: np.ndarray, makespan: int,
                chunk_cells: int = 1 << 22) -> np.ndarray:
    """Per edge whether its producer and consumer must share a device in a schedule ending by
    ``makespan``: on every pair of distinct devices the producer's earliest finish, the transfer, the
    send and the consumer's time to the end exceed it (edges a chunk at a time: memory O(chunk_cells))."""
    t, st = problem.tables, problem.structure
    m = t.n_dev
    send = _send(problem)
    out = np.zeros(st.n_edges, dtype=bool)
    step = max(1, chunk_cells // max(m * m, 1))
    for lo in range(0, st.n_edges, step):
        edges = np.arange(lo, min(lo + step, st.n_edges))
        cross = (f[st.src[edges]][:, :, None] + t.transfer_block(edges) + send[None, :, None]
                 + g[st.dst[edges]][:, None, :])
        cross[:, np.arange(m), np.arange(m)] = _INF
        out[edges] = cross.reshape(len(edges), -1).min(axis=1) > makespan
    return out


def _refuted(problem: DagProblem, makespan: int, deadline: float) -> bool:
    """True when no schedule of ``problem`` ends by ``makespan`` (module docstring); False when the
    reasoning finds no contradiction or ``time.monotonic()`` passes ``deadline``."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    t, st = problem.tables, problem.structure
    n, m = problem.n_tasks, t.n_dev
    groups = problem.colocation
    allowed = t.allowed.copy()
    while _time.monotonic() < deadline:
        time, f, g, span = _span(problem, allowed)
        narrowed = allowed & (span <= makespan)
        # tasks that cannot afford the transfer between any two devices share one; so does a colocation group
        bound = _must_share(problem, np.where(narrowed, f, _INF), np.where(narrowed, g, _INF), makespan)
        a, b = st.src[bound], st.dst[bound]
        if groups is not None:
            a, b = np.concatenate([a, groups.members]), np.concatenate([b, groups.leaders])
        _, label = connected_components(coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n)), directed=False)
        shared = np.ones((label.max(initial=0) + 1, m), dtype=bool)
        np.logical_and.at(shared, label, narrowed)
        narrowed = shared[label]
        if not narrowed.any(axis=1).all():
            return True
        head, tail = f - time, g - time
        sizes = np.bincount(label)
        for group in np.flatnonzero(sizes > 1):
            if _time.monotonic() > deadline:
                return False
            members = np.flatnonzero(label == group)
            for d in np.flatnonzero(narrowed[members[0]]):
                if _one_machine(head[members, d], time[members, d], tail[members, d]) > makespan:
                    narrowed[members, d] = False
        single = narrowed.sum(axis=1) == 1
        for d in np.flatnonzero(narrowed[single].any(axis=0)):
            members = np.flatnonzero(single & narrowed[:, d])
            if len(members) > 1 and _one_machine(head[members, d], time[members, d], tail[members, d]) > makespan:
                return True
        if not narrowed.any(axis=1).all():
            return True
        if np.array_equal(narrowed, allowed):
            return False
        allowed = narrowed
    return False


def destructive_bound(problem: DagProblem, upper: int | None = None, time_limit: float = 30.0,
                      known: int | None = None) -> int:
    """The least makespan at or above :func:`communication_bound` (or ``known``, a bound already proven)
    that the module docstring's reasoning cannot refute, by bisection up to ``upper`` (a known
    schedule's makespan; each task at its fastest, one after another, when None). Always a lower
    bound, at most ``upper``: each refuted probe is a proof; when ``time_limit`` seconds run out the
    bound proven so far is returned."""
    deadline = _time.monotonic() + time_limit
    low = communication_bound(problem) if known is None else int(known)
    if upper is None:
        upper = int(np.where(problem.tables.allowed, problem.tables.time, _INF).min(axis=1).sum())
    high = max(low, int(upper))
    while low < high and _time.monotonic() < deadline:
        probe = (low + high) // 2
        if _refuted(problem, probe, deadline):
            low = probe + 1
        else:
            high = probe
    return low


def task_device_bounds(problem: DagProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(head, tail, span)`` per task and device: the earliest start, the least time from the finish to
    the end of the schedule, and the least makespan of a schedule that runs the task there (module
    docstring); a huge value where the device may not run the task."""
    time, f, g, span = _span(problem)
    return np.where(f < _INF, f - time, _INF), np.where(g < _INF, g - time, _INF), span
