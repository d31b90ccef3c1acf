"""Partitioners of the TF paper: Mayer, Mayer, Laich, "The TensorFlow partitioning and
scheduling problem: it's the critical path!", DIDL 2017 (simulator: repository
``mayerrn/tensorflowPartitioningAndScheduling``, ``Code/PartSchedSimulation/src/Partitioning``).

Each partitioner is ``(problem) -> devices`` (int64, one device per task). All of them
place a colocation group as a whole (when its first member is placed, on a device every
member may use), never choose a device a task may not use, and, when the problem has a
memory constraint, skip devices that would overflow as long as some candidate still fits
(the repository's ``canAddComponent``). In the definitions below the *work* of a task is
its mean time over the devices it may use (``w̄``, device-independent, the analogue of the
paper's ``#operations``), a device's *load* is the summed time of the tasks already on
it, and its *speed* is ``sum_i w̄_i / sum_i time[i, d]`` over the tasks it may run.

* ``hash`` (repository: ``Hashing``): device = ``zlib.crc32(name) mod k`` over the task's
  ``k`` candidate devices in index order (a group hashes its name); with memory, linear
  probing to the next candidate that fits. (The repository uses Java's hash order and a
  round-robin counter; a stable name hash makes the result reproducible.
  :func:`round_robin_partition` is the repository's rule, which the paper-rules simulation
  :func:`dse.heuristics.paper_sim.run_paper` uses for ``hash``.)
* ``cp`` (``AssignLongestPath``), the simulator's rules: the critical path follows the
  simulator's upward rank (each task at the mean device speed, its output tensor at the mean
  transfer rate of device 0, see :func:`cp_critical_path`); each path task goes to the
  fastest device (least summed time) that can take it, scanning devices from the fastest
  and, as the simulator's loop does, skipping the device after each one that cannot; the
  other tasks, in topological order (the simulator's order is a hash-set order), go to the
  device whose load is smallest *before* the task is added, ``argmin load[d]`` (ties: lower
  index).
* ``icp`` (``DividePathPartitioning``, "ICP" in the paper): repeatedly extract the longest
  remaining path (by work, over the tasks not yet placed) and put it on the device where
  it finishes earliest, ``argmin load[d] + sum_path time[., d]``, among the devices every
  path task may use; a path without such a device is cut into maximal pieces that have
  one. (The repository's rule, :func:`divide_path_partition`, which
  :func:`dse.heuristics.paper_sim.run_paper` uses for ``icp``, differs: its path is the one to the
  sink with the most operations *before* it, over the edges not yet taken, so placed tasks stay
  on later paths; a task with a device constraint starts a new piece; and a piece goes to the
  device of least load in whole time units, whatever the piece adds.)
* ``mite`` (``WeightFunctionPartitioning``, "MITE"): tasks in topological order, each to
  the device minimizing the weighted sum (all weights 1)
  ``(load[d] + time[i, d]) / max_c(load[c] + time[i, c])`` (execution, normalized)
  ``+ comm(i, d) / max_c comm(i, c)`` (communication from already placed producers,
  normalized; a producer's tensor counted once per device with ``tensor_per_device``)
  ``+ importance(i) * time[i, d] / max_c time[i, c]`` (importance = longest work path
  through the task over the longest path: critical tasks are pulled to fast devices).
  The repository multiplies these factors together with a memory-fill factor; a sum
  keeps one zero factor from deciding alone. (:func:`weight_function_partition` is the
  repository's rule, which :func:`dse.heuristics.paper_sim.run_paper` uses for ``mite``: the
  product, colocation groups first, importance-speed ``1 - importance * speed / fastest``.)
* ``batchsplit`` (``RangeBasedImportancePartitioning``, "BatchSplit"): the topological
  order is cut into contiguous batches, one per device, fastest device first, each batch
  holding a share of the total work proportional to the device's speed (a task belongs
  to the batch holding the midpoint of its work). A task its batch's device may not run
  goes to the next device in speed order that may. (The repository orders tasks by
  importance instead of topologically and uses equal-count batches; contiguous
  topological batches keep communication low, as the brief asks.
  :func:`importance_batch_partition` is the repository's rule, which
  :func:`dse.heuristics.paper_sim.run_paper` uses for ``batchsplit``.)
* ``dfs`` (``DFSPartitioning``): depth-first preorder from the entries (entries by
  decreasing importance, children in index order), cut into contiguous speed-weighted
  chunks like ``batchsplit``. (The repository walks the same order but places each task
  greedily by execution time times communication, which in practice keeps a connected
  graph on one device: :func:`dfs_paper_partition`, which
  :func:`dse.heuristics.paper_sim.run_paper` uses for ``dfs``.)

The repository's ``icp``, ``mite`` and ``dfs`` (``divide_path_partition``,
``weight_function_partition``, ``dfs_paper_partition``) share their conventions, listed above
:func:`divide_path_partition`: operations are times at the mean device speed, the simulator's
integer divisions truncate to whole display units, its hash-set orders are index order (a random
order of the tasks with ``shuffle``), and a task no device can take fails the run with ``strict``.
Where they do not follow the simulator: its check whether a producer already sends to a device
(``PartitioningStrategy.hasPredNodeAlreadyEdgeToThisDevice``) compares a node id with a device id,
and our tasks carry no file ids, so every placed producer on another device counts; a device can
take a task by the problem's memory (when it has a memory constraint), not by the simulator's RAM
estimate, which only MITE's memory-fill factor uses (booked memory plus one edge's bytes per
producer); and its colocation map is keyed by node ids, ours is in order of first member. Like
the simulator, ``icp`` checks only the last device constraint of a path piece, so a colocated task
with another constraint can land on a device it may not use; ``run_paper``'s repair then moves it
(the simulator would run it there).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from dse.errors import InfeasibleError
from dse.heuristics.base import Graph, Placement, graph_of, quantize
from dse.util.interrupt import cut_point

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def _graph(problem: DagProblem, graph: Graph | None) -> Graph:
    return graph if graph is not None else graph_of(problem)


def _time_of(place: Placement, i: int) -> np.ndarray:
    """Time (per device) of ``i`` with its whole group."""
    return place.g.time[place.group_tasks(i)].sum(axis=0)


# --------------------------------------------------------------------------- hash


def hash_partition(problem: DagProblem, graph: Graph | None = None) -> np.ndarray:
    g = _graph(problem, graph)
    place = Placement(g)
    names = g.tables.op_names
    for i in range(g.n):
        if place.dev[i] >= 0:
            continue
        gid = g.group[i]
        key = g.group_names[gid] if gid >= 0 else names[i]
        allowed = np.flatnonzero(g.mask[i])
        start = zlib.crc32(key.encode("utf-8")) % len(allowed)
        fits = set(place.candidates(i).tolist())
        d = int(allowed[start])
        for k in range(len(allowed)):
            c = int(allowed[(start + k) % len(allowed)])
            if c in fits:
                d = c
                break
        place.assign_group(i, d)
    return place.dev


def round_robin_partition(problem: DagProblem, graph: Graph | None = None,
                          shuffle: np.random.Generator | None = None) -> np.ndarray:
    """The simulator's ``Hashing.partition``: colocation groups first (in order of first member), then
    the other tasks, each to the next device of a round-robin counter that can take it (probing
    forward), the counter moving on by one per placement. The simulator visits the tasks in a Java
    hash-set order; ours is the order of ``zlib.crc32`` of the names (ties: index), or a random one
    with ``shuffle``."""
    g = _graph(problem, graph)
    place = Placement(g)
    names = g.tables.op_names
    leaders = [int(members[0]) for members in g.members if len(members)]
    rest = [i for i in range(g.n) if g.group[i] < 0]
    if shuffle is not None:
        rest = [rest[j] for j in shuffle.permutation(len(rest))]
    else:
        rest.sort(key=lambda i: (zlib.crc32(names[i].encode("utf-8")), i))
    counter = 0
    for i in [*leaders, *rest]:
        fits = set(place.candidates(i).tolist())
        d = next((c % g.m for c in range(counter, counter + g.m) if c % g.m in fits), -1)
        if d < 0:  # the simulator gives up here; we take the first device the task may use
            d = int(place.candidates(i)[0])
        place.assign_group(i, d)
        counter = (counter + 1) % g.m
    return place.dev


# --------------------------------------------------------------------------- cp


def mean_speed_time(g: Graph) -> np.ndarray:
    """Per task its time at the mean device speed, the simulator's ``#operations / averageComputationSpeed``
    (``PartitioningPreprocessor.preprocess``): see :func:`_paper_speed_ops` (0 for a task of no work)."""
    return _paper_speed_ops(g)[1]


def _harmonic_time(g: Graph) -> np.ndarray:
    """``k / sum_d 1/time[i, d]`` over the ``k`` devices task ``i`` may run (0 for a task of no work):
    with ``time = work / speed``, the work over the mean speed of those devices."""
    t = g.time.astype(float)
    allowed = np.asarray(g.tables.allowed, dtype=bool) & (t > 0)
    inv = np.where(allowed, 1.0 / np.where(t > 0, t, 1.0), 0.0)
    total = inv.sum(axis=1)
    return np.where(total > 0, allowed.sum(axis=1) / np.where(total > 0, total, 1.0), 0.0)


def mean_rate_transfer(g: Graph) -> np.ndarray:
    """Per task the time its output tensor takes at the simulator's mean transfer rate: the rates of
    device 0 to every device (0 to itself) summed and divided by the device count
    (``PartitioningPreprocessor.preprocess``); 0 for a task without successors."""
    out = np.zeros(g.n, dtype=float)
    first_out = g.structure.first_out
    others = np.arange(1, g.m)
    if not len(others):
        return out
    for v in range(g.n):
        e = int(first_out[v])
        if e >= g.n_edges:
            continue
        tt = g.tables.edge_transfer_time(e, 0, others).astype(float)
        if (tt <= 0).any():  # an empty tensor (or a free link): no transfer time
            continue
        out[v] = g.m / float((1.0 / tt).sum())
    return out


def cp_critical_path(g: Graph, shuffle: np.random.Generator | None = None) -> np.ndarray:
    """The simulator's critical path (``AssignLongestPath.partition``, ``Node.calculateUpwardsRank``).

    The upward rank is propagated as the simulator does: from each exit (index order), a task
    whose successors have all reported adds its own time at the mean speed and reports to its
    predecessors (index order), depth first. A task takes the first successor that reports,
    ``rank = that rank + its tensor at the mean rate``, and switches to a later one only when that
    one's rank exceeds the value it holds (``this.upwardsRank < successorNode.upwardsRank``), so a
    later successor must beat the first by more than the task's tensor time. The path starts at
    the entry of the largest rank (ties: the first in index order) and follows each task's chosen
    successor. With ``shuffle`` the exits and each task's predecessors are visited in a random
    order, as the simulator's hash sets do. Returns the path's tasks.
    """
    if g.n == 0:
        return np.zeros(0, dtype=np.int64)
    w, c = mean_speed_time(g), mean_rate_transfer(g)
    scale = 1e9 / max(float(w.sum() + c.sum()), 1e-300)  # compare ranks on a grid, free of float noise
    rank = np.zeros(g.n, dtype=float)
    chosen = np.full(g.n, -1, dtype=np.int64)
    heard = np.zeros(g.n, dtype=np.int64)
    out_degree = np.array([len({u for u, _ in g.succs[v]}) for v in range(g.n)], dtype=np.int64)
    preds = [sorted({u for u, _ in g.preds[v]}) for v in range(g.n)]

    def order(items: list[int]) -> list[int]:
        return items if shuffle is None else [items[j] for j in shuffle.permutation(len(items))]

    exits = order([v for v in range(g.n) if out_degree[v] == 0])
    for v in exits:
        rank[v] = w[v]
        stack = [(v, iter(order(preds[v])))]
        while stack:
            succ, pending = stack[-1]
            u = next(pending, None)
            if u is None:
                stack.pop()
                continue
            heard[u] += 1
            if round(rank[u] * scale) < round(rank[succ] * scale):
                chosen[u], rank[u] = succ, rank[succ] + c[u]
            if heard[u] == out_degree[u]:
                rank[u] += w[u]
                stack.append((u, iter(order(preds[u]))))
    q = np.rint(rank * scale).astype(np.int64)
    entries = order([v for v in range(g.n) if not g.preds[v]])
    v = entries[0]
    for x in entries[1:]:  # the first of the largest rank in visiting order (a strict < scan)
        if q[v] < q[x]:
            v = x
    path = [v]
    while chosen[v] >= 0:
        v = int(chosen[v])
        path.append(v)
    return np.asarray(path, dtype=np.int64)


def heft_critical_path(g: Graph) -> np.ndarray:
    """HEFT's critical path: from the entry with the largest upward rank along rank-defining successors."""
    if g.n == 0:
        return np.zeros(0, dtype=np.int64)
    rank = g.upward_rank()
    q = quantize(rank)
    entries = [v for v in range(g.n) if not g.preds[v]]
    v = max(entries, key=lambda x: (q[x], -x))
    path = [v]
    while g.succs[v]:
        best = None
        for w, e in g.succs[v]:
            val = g.cbar[e] + rank[w]
            if best is None or val > best[0] or (val == best[0] and w < best[1]):
                best = (val, w)
        assert best is not None  # the loop runs over a non-empty g.succs[v]
        v = best[1]
        path.append(v)
    return np.asarray(path, dtype=np.int64)


def speed_order(g: Graph) -> np.ndarray:
    """Devices from the fastest to the slowest by :func:`_paper_speed_ops`'s speeds (read from the tasks
    every device may run); ties: lower index (the simulator's stable sort by ``#operations``, devices in
    id order)."""
    return np.lexsort((np.arange(g.m), -quantize(_paper_speed_ops(g)[0])))


def cp_partition(problem: DagProblem, graph: Graph | None = None,
                 shuffle: np.random.Generator | None = None, strict: bool = False) -> np.ndarray:
    """The simulator's CP partition (see the module docstring); ``shuffle`` visits the exits, the
    predecessors (:func:`cp_critical_path`) and the tasks off the critical path in a random order,
    as the simulator's hash sets do, instead of in index and topological order. When the skipping
    scan finds no device for a path task, the simulator fails; ``strict`` raises
    :class:`~dse.errors.InfeasibleError` there, otherwise the fastest device that can take the
    task is used."""
    g = _graph(problem, graph)
    place = Placement(g)
    load = np.zeros(g.m, dtype=np.int64)
    ranked = speed_order(g).tolist()

    def put(i: int, d: int) -> None:
        members = place.group_tasks(i)
        place.assign_group(i, d)
        load[d] += int(g.time[members, d].sum())

    for i in cp_critical_path(g, shuffle=shuffle).tolist():
        if place.dev[i] >= 0:
            continue
        cands = place.candidates(i)
        fits = set(cands.tolist())
        d = -1
        k = 0
        while k < len(ranked):  # the simulator's scan skips the device after each one that cannot take it
            if ranked[k] in fits:
                d = ranked[k]
                break
            k += 2
        if d < 0 and strict:
            raise InfeasibleError(
                f"cp: the simulator's device scan (which skips the device after each one that cannot take a "
                f"task) finds no device for task {g.tables.op_names[i]!r}; the simulator's run fails here")
        if d < 0:  # not strict: the fastest device that can take the task
            d = int(cands[np.argmin(g.time[i, cands])])
        put(i, d)
    rest = g.topo if shuffle is None else shuffle.permutation(g.topo)
    for i in rest.tolist():
        if place.dev[i] >= 0:
            continue
        cands = place.candidates(i)
        put(i, int(cands[np.argmin(load[cands])]))
    return place.dev


# --------------------------------------------------------------------------- icp


def _longest_open_path(g: Graph, open_: np.ndarray, w: np.ndarray) -> list[int]:
    """Longest path by ``w`` among the tasks still open (edges between open tasks only)."""
    n = g.n
    dist = np.full(n, -np.inf)
    arg = np.full(n, -1, dtype=np.int64)
    live = np.zeros(len(g.down_edges), dtype=bool)
    live[g.structure.depth[open_]] = True  # the levels that hold an open task
    for level, alive in zip(g.down_edges, live.tolist(), strict=True):
        if not alive:
            continue  # a closed task's values are never read
        tasks, p = level.tasks, level.task
        vals = np.where(open_[p], dist[p], -np.inf)
        top = level.max(vals, -np.inf)  # the longest open path into each task; -inf: no open producer
        has = top > -np.inf
        dist[tasks] = np.where(has, top, 0.0) + w[tasks]
        if has.any():
            arg[tasks[has]] = p[level.first(vals == top[level.row])[has]]  # the first producer on it
    v = int(np.argmax(np.where(open_, dist, -np.inf)))
    path = [v]
    while arg[v] >= 0:
        v = int(arg[v])
        path.append(v)
    return path[::-1]


def icp_partition(problem: DagProblem, graph: Graph | None = None) -> np.ndarray:
    g = _graph(problem, graph)
    place = Placement(g)
    load = np.zeros(g.m, dtype=np.int64)
    open_ = np.ones(g.n, dtype=bool)
    w = g.wbar.astype(float) + 1e-9  # every task counts, even a zero-time one

    def put(piece: list[int], mask: np.ndarray) -> None:
        # piece is never empty (callers check); summed in order, as sum() would
        cost = _time_of(place, piece[0])
        for i in piece[1:]:
            cost = cost + _time_of(place, i)
        cands = np.flatnonzero(mask)
        d = int(cands[np.argmin(load[cands] + cost[cands])])
        for i in piece:
            if place.dev[i] < 0:
                load[d] += int(_time_of(place, i)[d])
                place.assign_group(i, d)

    while open_.any():
        cut_point("icp: a path per round")  # one round per path: thousands on a large graph
        path = _longest_open_path(g, open_, w)
        # cut the path into maximal pieces that one device may run (and hold) entirely
        piece: list[int] = []
        need = np.zeros(g.m, dtype=np.int64)
        mask = np.ones(g.m, dtype=bool)
        for i in path:
            if place.dev[i] >= 0:
                continue
            own, need_i = place.feasible(i)
            both = mask & own & place.fits(need + need_i)
            if piece and not both.any():
                put(piece, mask)
                piece, need, mask = [], np.zeros(g.m, dtype=np.int64), np.ones(g.m, dtype=bool)
                own, need_i = place.feasible(i)
                both = own & place.fits(need_i)
            if not both.any():  # fits nowhere alone: the usual fallback
                cands = place.candidates(i)
                t = _time_of(place, i)
                d = int(cands[np.argmin(load[cands] + t[cands])])
                load[d] += int(t[d])
                place.assign_group(i, d)
                continue
            piece.append(i)
            need = need + need_i
            mask = both
        if piece:
            put(piece, mask)
        open_[place.dev >= 0] = False
    return place.dev


# --------------------------------------------------------------------------- mite


def _comm(g: Graph, place: Placement, i: int) -> np.ndarray:
    """Communication time (per device) from the already placed producers of ``i``'s group."""
    t = g.tables
    devices = np.arange(g.m)
    out = np.zeros(g.m, dtype=np.int64)
    counted: set[int] = set()
    for j in place.group_tasks(i).tolist():
        for u, e in g.preds[j]:
            a = int(place.dev[u])
            if a < 0:
                continue
            row = t.edge_transfer_time(e, a, devices)
            if g.tf:
                if u in counted:  # one tensor per producer and device
                    continue
                counted.add(u)
                row[np.arange(g.m) != a] += int(g.send[a])
                for v, _ in g.succs[u]:  # devices u already sends to get it for free
                    b = int(place.dev[v])
                    if b >= 0 and b != a:
                        row[b] = 0
            out += row
    return out


def mite_partition(problem: DagProblem, graph: Graph | None = None) -> np.ndarray:
    g = _graph(problem, graph)
    place = Placement(g)
    load = np.zeros(g.m, dtype=np.int64)
    imp = g.importance()
    for i in g.topo.tolist():
        if place.dev[i] >= 0:
            continue
        cands = place.candidates(i)
        t = _time_of(place, i)[cands].astype(float)
        ex = load[cands] + t
        comm = _comm(g, place, i)[cands].astype(float)
        score = ex / max(ex.max(), 1e-12)
        if comm.max() > 0:
            score = score + comm / comm.max()
        score = score + imp[i] * t / max(t.max(), 1e-12)
        d = int(cands[int(np.argmin(score))])
        place.assign_group(i, d)
        load[d] += int(_time_of(place, i)[d])
    return place.dev


# --------------------------------------------------------------------------- contiguous splits


def device_speed(g: Graph) -> np.ndarray:
    """Relative speed per device: total work of the tasks it may run over their time there."""
    w = g.wbar.astype(float)
    t = np.where(g.mask, g.time, 0).astype(float)
    own = np.where(g.mask, w[:, None], 0.0).sum(axis=0)
    tot = t.sum(axis=0)
    return np.where(tot > 0, own / np.maximum(tot, 1e-300), np.where(own > 0, np.inf, 0.0))


def split_contiguous(g: Graph, order: np.ndarray) -> np.ndarray:
    """Cut ``order`` into contiguous batches, one per device (fastest first), sized by speed share."""
    place = Placement(g)
    speed = device_speed(g)
    finite = np.isfinite(speed)
    if not finite.all():
        speed = np.where(finite, speed, speed[finite].max(initial=1.0) * 1e3)
    rank = np.lexsort((np.arange(g.m), -speed))  # fastest first, ties lower index
    share = speed[rank] / max(speed.sum(), 1e-300) if speed.sum() > 0 else np.full(g.m, 1 / g.m)
    bounds = np.cumsum(share)
    w = g.wbar.astype(float)
    total = float(w[order].sum()) if len(order) else 0.0
    done = 0.0
    for i in np.asarray(order).tolist():
        mid = (done + w[i] / 2) / total if total > 0 else 0.0
        done += w[i]
        if place.dev[i] >= 0:
            continue
        k = min(int(np.searchsorted(bounds, mid, side="right")), g.m - 1)
        cands = set(place.candidates(i).tolist())
        d = int(rank[k])
        for step in range(g.m):
            c = int(rank[(k + step) % g.m])
            if c in cands:
                d = c
                break
        place.assign_group(i, d)
    return place.dev


def importance_batch_partition(problem: DagProblem, graph: Graph | None = None) -> np.ndarray:
    """The simulator's ``RangeBasedImportancePartitioning.partition`` ("BatchSplit"): tasks sorted by
    the longest path through them (work at the mean device speed, largest first; ties: lower
    index), the ``k``-th of ``n`` tasks to device ``int(k / (n / m))`` in *index* order (the
    simulator sorts its devices by speed but then indexes the unsorted map), or the next device
    that can take it; a colocation group goes with its first member."""
    g = _graph(problem, graph)
    place = Placement(g)
    q = quantize(_ops_through(g, mean_speed_time(g)))
    per = g.n / max(g.m, 1)
    for k, i in enumerate(sorted(range(g.n), key=lambda x: (-q[x], x))):
        if place.dev[i] >= 0:
            continue
        first = int(k / per)
        cands = place.candidates(i)
        fits = set(cands.tolist())
        d = next((c % g.m for c in range(first, first + g.m) if c % g.m in fits), int(cands[0]))
        place.assign_group(i, d)
    return place.dev


def batchsplit_partition(problem: DagProblem, graph: Graph | None = None) -> np.ndarray:
    g = _graph(problem, graph)
    return split_contiguous(g, g.topo)


def dfs_order(g: Graph) -> np.ndarray:
    """Depth-first preorder from the entries (by decreasing importance, ties lower index)."""
    imp = quantize(g.importance())
    entries = sorted((v for v in range(g.n) if not g.preds[v]), key=lambda v: (-imp[v], v))
    seen = np.zeros(g.n, dtype=bool)
    out: list[int] = []
    for root in entries:
        if seen[root]:
            continue
        stack = [root]
        while stack:
            v = stack.pop()
            if seen[v]:
                continue
            seen[v] = True
            out.append(v)
            kids = sorted({w for w, _ in g.succs[v] if not seen[w]}, reverse=True)
            stack.extend(kids)
    return np.asarray(out, dtype=np.int64)


def dfs_partition(problem: DagProblem, graph: Graph | None = None) -> np.ndarray:
    g = _graph(problem, graph)
    return split_contiguous(g, dfs_order(g))


# --------------------------------------------------------------------------- the simulator's icp, mite, dfs
#
# Shared conventions of the three ports below (the Java files are in ``Partitioning/``):
#
# * a node's ``#operations`` is its time at the mean device speed and a device's speed is relative
#   to the mean (:func:`_paper_speed_ops`); a device's load
#   (``getSumOfOperationsOfAlreadyAssignedNodes() / #operations``) is the summed time of the tasks
#   on it; the simulator's integer divisions truncate to whole time units of the paper, ours to
#   whole display units of the problem (:func:`_whole_units`; the tables round each task's time up,
#   so a sum can cross a unit the simulator's exact quotient does not);
# * the simulator's sets and maps of nodes are Java hash sets, ordered by identity hash codes that
#   are drawn once per run: a fixed order (task index) without ``shuffle``, one random priority per
#   task drawn once per call with it; devices are visited in index order (a ``HashMap`` of small
#   ``Integer`` keys iterates in key order);
# * a device "can add" a node or a group (``Device.canAddComponent``) when the task may run there
#   and, when the problem has a memory constraint, the memory it books fits;
# * where the simulator finds no device for a task and leaves it unassigned (its run is invalid),
#   ``strict`` raises :class:`~dse.errors.InfeasibleError`; otherwise the task goes to the fastest
#   device that can take it once the partitioner is done.


def _whole_units(g: Graph) -> int:
    """Time units of the problem per whole unit of the simulator's integer divisions: one display unit
    (``TableCostModel(scale=s)`` shows the paper's unit, held as ``s`` units; 1 for a problem in
    the paper's own unit)."""
    per = float(g.tables.display_per_time_unit)
    return max(1, int(round(1.0 / per))) if per > 0 else 1


def _hash_priority(g: Graph, shuffle: np.random.Generator | None) -> np.ndarray:
    """Position of each task in the simulator's hash-set orders: index order, or one random draw."""
    return np.arange(g.n) if shuffle is None else np.asarray(shuffle.permutation(g.n))


def _distinct(pairs: list[tuple[int, int]]) -> dict[int, int]:
    """``{neighbour: first edge}`` of an adjacency list (a node's ``HashSet`` of neighbours)."""
    out: dict[int, int] = {}
    for v, e in pairs:
        out.setdefault(v, e)
    return out


class _PaperDevices:
    """The simulator's per-device bookkeeping during partitioning (``Device.addNode``): the summed
    time of the tasks on each device and the RAM estimate that ``getFreeMemoryEstimation`` subtracts
    (``Node.getTotalRamDemand``: RAM storage + output tensor + input tensors, here the task's booked
    memory + the bytes of one edge per producer)."""

    def __init__(self, g: Graph, strict: bool, name: str, shuffle: np.random.Generator | None) -> None:
        self.g, self.strict, self.name = g, strict, name
        self.prio = _hash_priority(g, shuffle)
        self.place = Placement(g)
        self.load = np.zeros(g.m, dtype=np.int64)
        self.ram = np.zeros(g.m, dtype=np.int64)
        t = g.tables
        inputs = np.zeros(g.n, dtype=np.int64)
        for v in range(g.n):
            inputs[v] = sum(int(t.edge_bytes[e]) for e in _distinct(g.preds[v]).values())
        self.demand = t.mem.astype(np.int64) + inputs[:, None]
        self.unit = _whole_units(g)
        self.speed = np.ones(g.m)

    def can_add(self, i: int) -> np.ndarray:
        """Devices that can take ``i`` with its group (``Device.canAddComponent``)."""
        own, need = self.place.feasible(i)
        return own & self.place.fits(need)

    def assign(self, i: int, d: int) -> None:
        """Put ``i``'s unassigned group members (or ``i``) on ``d`` (``PartitioningStrategy.assignNode``)."""
        for j in self.place.group_tasks(i).tolist():
            if self.place.dev[j] < 0:
                self.load[d] += int(self.g.time[j, d])
                self.ram[d] += int(self.demand[j, d])
        self.place.assign_group(i, d)

    def none_fits(self, i: int) -> None:
        if self.strict:
            raise InfeasibleError(
                f"{self.name}: the simulator finds no device for task {self.g.tables.op_names[i]!r} and leaves it "
                f"unassigned; the simulator's run fails here")

    def finish(self) -> np.ndarray:
        """Place what the simulator left unassigned (not strict) on the fastest device that can take it."""
        for i in range(self.g.n):
            if self.place.dev[i] < 0:
                cands = self.place.candidates(i)
                self.assign(i, int(cands[np.argmin(self.g.time[i, cands])]))
        return self.place.dev

    def traffic(self, i: int, d: int) -> int:
        """``PartitioningStrategy.additionalTraffic`` of ``i``'s group on ``d``, in whole units: per member, each
        placed producer on another device (its tensor's transfer to ``d``), and the first placed consumer on
        another device (the member's tensor from ``d``; the simulator's flag is indexed by ``d``, so one
        consumer counts)."""
        g, dev, t = self.g, self.place.dev, self.g.tables
        total = 0
        for j in self.place.group_tasks(i).tolist():
            for u, e in sorted(_distinct(g.preds[j]).items(), key=lambda x: self.prio[x[0]]):
                a = int(dev[u])
                if a >= 0 and a != d:
                    total += int(t.edge_transfer_time(e, a, d)) // self.unit
            for s, e in sorted(_distinct(g.succs[j]).items(), key=lambda x: self.prio[x[0]]):
                b = int(dev[s])
                if b >= 0 and b != d:
                    total += int(t.edge_transfer_time(e, d, b)) // self.unit
                    break
        return total


def _paper_speed_ops(g: Graph) -> tuple[np.ndarray, np.ndarray]:
    """Each device's speed (``#operations`` per time unit) over the mean speed, and each task's
    ``#operations`` over the mean speed (its time at the mean speed, as the simulator's
    ``#operations / averageComputationSpeed``).

    Speeds are read from the tasks every device may run (time = ``#operations / speed``, so a
    device's summed time over them is inversely proportional to its speed); a task's operations
    from its times on the devices it may run, ``time[i, d] * speed[d]`` averaged over them. (A
    task barred from a device has no time there, so the harmonic mean of a whole row would be 0 for it.)
    Without a task every device may run, speeds are 1 and a task's time is :func:`_harmonic_time`."""
    t = g.time.astype(float)
    full = g.tables.allowed.all(axis=1)
    rows = t[full] if full.any() else t
    total = rows.sum(axis=0)
    if not (total > 0).all():
        return np.ones(g.m), _harmonic_time(g)
    inv = 1.0 / total
    speed = inv / inv.mean()
    allowed = np.asarray(g.tables.allowed, dtype=bool)
    count = allowed.sum(axis=1)
    ops = np.where(allowed, t * speed[None, :], 0.0).sum(axis=1) / np.maximum(count, 1)
    return speed, ops


def _ops_through(g: Graph, w: np.ndarray) -> np.ndarray:
    """``Node.getSumOpsTillSinkNodeOpsFromSourceNode`` per task: the longest path of ``#operations``
    ``w`` through it, before it plus from it to an exit (``PartitioningPreprocessor.preprocess``)."""
    down = np.zeros(g.n, dtype=float)
    for level in g.down_edges:
        down[level.tasks] = level.max(down[level.task] + w[level.task], 0.0)
    up = np.zeros(g.n, dtype=float)
    for level in g.up_edges:
        up[level.tasks] = w[level.tasks] + level.max(up[level.task], 0.0)
    return down + up


def divide_path_partition(problem: DagProblem, graph: Graph | None = None,
                          shuffle: np.random.Generator | None = None, strict: bool = False) -> np.ndarray:
    """The simulator's ICP (``DividePathPartitioning.partition``, ``getLongestPath``, ``assignPath``,
    ``getAssignmentDevice``; ``graph/Path.java``: ``addNode``; ``graph/Node.java``:
    ``calculateOpsTillNodeWithoutSendReceive``).

    Rounds while its set of sources is not empty. A round recomputes, from each source (set
    order), every task's ``#operations`` before it over the edges not yet taken (a task's value
    starts at -1 when recomputed, 0 the first time; it keeps the first predecessor that reports
    the largest ``value + #operations``, a later one only when strictly larger) and takes the sink
    of the largest value (the first in set order; the sink's own operations do not count). The path
    runs from that sink up through the kept predecessors; only its edges leave the graph (a task
    with edges left to other tasks stays and can lie on later paths, assigned or not), and the
    source and sink sets are updated as the Java code does. The path's unassigned tasks form
    subpaths, from the source end: an assigned task closes one, and a task with a device constraint
    (not colocated) starts a new one. Each subpath goes to the device that can take it (its last
    constrained task's devices, and the memory) with the least load in whole time units (ties: lower
    index); a colocated task takes its unassigned group with it. A subpath no device can take is
    split by the simulator into parts it never assigns: ``strict`` raises there. A round that changes
    nothing would repeat forever in the simulator, and a round without a sink stops it with an
    exception: both raise with ``strict`` (otherwise the rest goes to the fastest device)."""
    g = _graph(problem, graph)
    pd = _PaperDevices(g, strict, "icp", shuffle)
    prio = pd.prio
    _, w_arr = _paper_speed_ops(g)
    w = w_arr.tolist()
    tol = 0.5e-9 * max(float(w_arr.sum()), 1e-300)  # sums of operations compare beyond float noise
    in_rem = [set(_distinct(g.preds[v])) for v in range(g.n)]
    out_rem = [set(_distinct(g.succs[v])) for v in range(g.n)]
    succ_order = [sorted(out_rem[v], key=lambda x: prio[x]) for v in range(g.n)]
    sources = {v for v in range(g.n) if not in_rem[v]}
    sinks = {v for v in range(g.n) if not out_rem[v]}
    edges_left = sum(len(x) for x in out_rem)
    heard = [0] * g.n  # inputs heard; -1: computed (the simulator's -42)
    before = [0.0] * g.n
    pred = [-1] * g.n
    own = np.asarray(g.tables.allowed, dtype=bool)
    constrained = np.asarray(~own.all(axis=1), dtype=bool)  # a device constraint of the task's own (CPU or GPU)

    def order(items: set[int]) -> list[int]:
        return sorted(items, key=lambda v: prio[v])

    def report(v: int, inc: int) -> bool:
        """``calculateOpsTillNodeWithoutSendReceive(inc, true)`` up to its notifying the successors."""
        if heard[v] < 0:
            heard[v], before[v], pred[v] = 0, -1.0, -1
        if inc >= 0:
            heard[v] += 1
            val = before[inc] + w[inc]
            if val > before[v] + tol:
                before[v], pred[v] = val, inc
        return heard[v] == len(in_rem[v])

    def remaining(v: int) -> list[int]:
        out = out_rem[v]
        return [o for o in succ_order[v] if o in out]

    def recompute() -> None:
        for s in order(sources):
            if not report(s, -1):
                continue
            stack = [(s, iter(remaining(s)))]
            while stack:
                v, pending = stack[-1]
                o = next(pending, None)
                if o is None:
                    heard[v] = -1
                    stack.pop()
                elif report(o, v):
                    stack.append((o, iter(remaining(o))))

    def place_subpath(nodes: list[int], allowed: np.ndarray) -> bool:
        need = np.zeros(g.m, dtype=np.int64)
        for v in nodes:  # Path.addSubPathNode: a colocated task books its whole group
            need = need + pd.place.need(v)
        ok = allowed & pd.place.fits(need)
        best = -1
        for d in range(g.m):
            if ok[d] and (best < 0 or pd.load[d] // pd.unit < pd.load[best] // pd.unit):
                best = d
        if best < 0:
            pd.none_fits(nodes[0])
            return False
        for v in nodes:
            pd.assign(v, best)
        return True

    while sources:
        state = (len(sources), len(sinks), edges_left, int((pd.place.dev >= 0).sum()))
        recompute()
        top = -1
        for v in order(sinks):
            if top < 0 or before[v] > before[top] + tol:
                top = v
        if top < 0:
            if strict:
                raise InfeasibleError("icp: the simulator's longest-path search finds no sink while sources remain; "
                                      "its run stops with an exception here")
            break
        path: list[int] = []
        v, first = top, True
        while v >= 0:
            path.append(v)
            p = pred[v]
            if p >= 0:
                out_rem[p].discard(v)
                in_rem[v].discard(p)
                edges_left -= 1
                if not out_rem[v] and in_rem[v]:
                    sinks.add(v)
                if out_rem[v] and not in_rem[v]:
                    sources.add(v)
                if first and not in_rem[v]:
                    sinks.discard(v)
            first = False
            v = p
        if not out_rem[path[-1]]:
            sources.discard(path[-1])
        # Path.addNode: subpaths from the sink end; index 0 is the one nearest the source end
        subpaths: list[tuple[list[int], list[bool]]] = []  # (nodes, [closed])
        for v in path:
            if pd.place.dev[v] >= 0:
                if subpaths:
                    subpaths[0][1][0] = True
                continue
            if not subpaths or subpaths[0][1][0]:
                subpaths.insert(0, ([], [False]))
            if g.group[v] < 0 and constrained[v]:
                subpaths[0][1][0] = True
                subpaths.insert(0, ([v], [False]))
            else:
                subpaths[0][0].append(v)
        for nodes, _ in subpaths:
            if not nodes:  # the simulator opens an empty subpath before a constrained task; it places nothing
                continue
            allowed = np.ones(g.m, dtype=bool)
            for v in nodes:  # Path.addSubPathNode: the last constrained task sets the constraint
                if constrained[v]:
                    allowed = own[v]
            place_subpath(nodes, allowed)
        after = (len(sources), len(sinks), edges_left, int((pd.place.dev >= 0).sum()))
        if after == state and len(path) == 1:
            if strict:
                raise InfeasibleError(
                    f"icp: the simulator's round takes the single task {g.tables.op_names[path[0]]!r} again and "
                    f"changes nothing; its loop does not end")
            break
    return pd.finish()


def _weighted_choice(pd: _PaperDevices, i: int, importance: float | None) -> int:
    """``getDeviceIdToAssignComponentTo`` of ``WeightFunctionPartitioning`` (``importance`` given) or of
    ``DFSPartitioning`` (``None``): over the devices that can take ``i``'s group, the product of its
    normalized execution time, normalized traffic and, for MITE, importance-speed and memory-fill
    factors; the first device (index order) of the least product; -1 when none can take it."""
    g = pd.g
    ok = np.flatnonzero(pd.can_add(i))
    if not len(ok):
        return -1
    members = pd.place.group_tasks(i)
    execution = (pd.load[ok] + g.time[members][:, ok].sum(axis=0)).astype(float)
    traffic = np.array([pd.traffic(i, int(d)) for d in ok], dtype=float)
    max_exec, max_traffic = float(execution.max()), float(traffic.max())
    ex = execution / max_exec if max_exec != 0.0 else np.ones(len(ok))
    ex = np.where(ex == 0.0, 0.000001, ex)
    comm = traffic / max_traffic if max_traffic != 0.0 else np.ones(len(ok))
    comm = np.where(comm == 0.0, 0.000001, comm)
    value = comm * ex
    if importance is not None:
        speed = pd.speed[ok] / pd.speed[ok].max()  # over the fastest device that can take the task
        factor = 1.0 - importance * speed
        factor = np.where(factor == 0.0, 0.000001, factor)
        fill = pd.ram[ok] / g.tables.mem_capacity[ok].astype(float)
        nonzero = fill[fill != 0.0]
        least = min(1.0, float(nonzero.min())) if len(nonzero) else 1.0
        fill = np.where(fill == 0.0, least / 10.0, fill)
        value = value * factor * fill
    return int(ok[int(np.argmin(value))])  # the first device of the least value (the simulator's strict <)


def weight_function_partition(problem: DagProblem, graph: Graph | None = None,
                              shuffle: np.random.Generator | None = None, strict: bool = False) -> np.ndarray:
    """The simulator's MITE (``WeightFunctionPartitioning.partition``, ``getDeviceIdToAssignComponentTo``,
    ``calculateImportance``; ``PartitioningStrategy.additionalTraffic``, ``getExecutionTimeForDevice``).

    Colocation groups first (in order of first member: the simulator's map of groups is keyed by
    node ids, an order fixed per graph, not drawn with ``shuffle``), then the
    other tasks (topological order; a random order with ``shuffle``), each to the device, among
    those that can take it (index order), of the least product

    ``traffic / max traffic`` x ``execution / max execution`` x ``(1 - importance x speed / fastest
    speed)`` x ``memory fill``

    where execution = the device's load + the task's time there; traffic = per already placed
    producer on another device its tensor's transfer time, plus for the first placed consumer on
    another device the task's tensor's (each in whole time units); importance = the longest path of
    ``#operations`` through the task over the longest path of the graph (a group: the mean of its
    members'); speed relative to the fastest device that can take the task; memory fill = the
    device's booked RAM estimate over its RAM. A factor that is 0 counts as 0.000001, a normalizer
    that is 0 makes its factor 1, and an empty device's fill counts as a tenth of the least non-zero
    fill (1 when there is none). A task no device can take is left unassigned (``strict`` raises).
    """
    g = _graph(problem, graph)
    pd = _PaperDevices(g, strict, "mite", shuffle)
    prio = pd.prio
    speed, w = _paper_speed_ops(g)
    pd.speed = speed
    through = _ops_through(g, w)
    sources = [v for v in range(g.n) if not g.preds[v]]
    top = max((float(through[v]) for v in sources), default=0.0)
    imp = np.round(through / top, 12) if top > 0 else np.zeros(g.n)
    for members in g.members:  # the colocation map is keyed by node ids: an order fixed per graph
        i = int(members[0])
        d = _weighted_choice(pd, i, float(np.round(through[members].sum() / (top * len(members)), 12))
                             if top > 0 else 0.0)
        if d < 0:
            pd.none_fits(i)
            continue
        pd.assign(i, d)
    rest = g.topo.tolist() if shuffle is None else sorted(range(g.n), key=lambda v: prio[v])
    for i in rest:
        if pd.place.dev[i] >= 0:
            continue
        d = _weighted_choice(pd, i, float(imp[i]))
        if d < 0:
            pd.none_fits(i)
            continue
        pd.assign(i, d)
    return pd.finish()


def dfs_paper_partition(problem: DagProblem, graph: Graph | None = None,
                        shuffle: np.random.Generator | None = None, strict: bool = False) -> np.ndarray:
    """The simulator's DFS (``DFSPartitioning.partition``, ``dfs``, ``getDeviceIdToAssignComponentTo``).

    The sources sorted by the longest path of ``#operations`` through them, largest first (a stable
    sort of the set order: ties in index order, random with ``shuffle``); from each, a depth-first
    walk (a task's consumers in set order, each not yet visited walked in turn) places every task it
    reaches that is not yet placed, with its group, on the device, among those that can take it
    (index order), of the least ``execution / max execution`` x ``traffic / max traffic`` (MITE's
    first two factors, :func:`weight_function_partition`). A task no device can take is left
    unassigned (``strict`` raises)."""
    g = _graph(problem, graph)
    pd = _PaperDevices(g, strict, "dfs", shuffle)
    prio = pd.prio
    _, w = _paper_speed_ops(g)
    through = _ops_through(g, w)
    key = quantize(through)
    sources = sorted((v for v in range(g.n) if not g.preds[v]), key=lambda v: prio[v])
    sources.sort(key=lambda v: -key[v])  # stable, as Collections.sort
    succs = [sorted(_distinct(g.succs[v]), key=lambda x: prio[x]) for v in range(g.n)]
    visited = np.zeros(g.n, dtype=bool)

    def visit(v: int) -> None:
        visited[v] = True
        if pd.place.dev[v] >= 0:
            return
        d = _weighted_choice(pd, v, None)
        if d < 0:
            pd.none_fits(v)
            return
        pd.assign(v, d)

    for s in sources:
        visit(s)
        stack = [iter(succs[s])]
        while stack:
            o = next(stack[-1], None)
            if o is None:
                stack.pop()
            elif not visited[o]:
                visit(o)
                stack.append(iter(succs[o]))
    return pd.finish()


PARTITIONERS: dict[str, Callable[[DagProblem], np.ndarray]] = {
    "hash": hash_partition,
    "cp": cp_partition,
    "icp": icp_partition,
    "mite": mite_partition,
    "batchsplit": batchsplit_partition,
    "dfs": dfs_partition,
}
