"""The one interface of the classic heuristics, and what they share.

Every heuristic is a function ``(problem: DagProblem) -> HeuristicResult``. A
result holds a device per task and a task order; its ``makespan`` is the
makespan of ``problem.genome(devices, order)`` decoded by the problem's own
decoder with ``insertion=result.insertion`` (:func:`finish` does that
decoding, so the number is never the heuristic's private estimate).

Shared pieces:

* :class:`Graph`: adjacency (padded predecessor / successor arrays, levels),
  the candidate devices of each task (its allowed devices, intersected over its
  colocation group), mean costs in *exact scaled integers* where they fit in
  int64 (so that published ties, e.g. Topcuoglu's ranks 80 = 80, stay ties);
* :class:`Placement`: device choice bookkeeping (colocation groups follow
  their first placed member; memory capacities are respected when
  ``problem.memory`` and some candidate still fits);
* the DAG's topology (levels, padded adjacency, topological positions) and the
  insertion search come from the problem's
  :class:`~dse.mapping.dag_structure.DagStructure`, which the decoder reads too;
* :func:`finish`: repair, decode, wrap.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.dag_structure import earliest_gap, insert_interval

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


@dataclass(frozen=True, eq=False)
class HeuristicResult:
    """A heuristic's mapping: ``devices[i]`` per task, ``order`` (task indices, first runs first).

    ``makespan`` is the decoded makespan of ``problem.genome(devices, order)``
    with ``insertion``; ``problem.schedule(genome, insertion=insertion)``
    reproduces it exactly.
    """

    name: str
    devices: np.ndarray
    order: np.ndarray
    makespan: int
    insertion: bool


# --------------------------------------------------------------------------- graph data


def _lcm(values) -> int:
    out = 1
    for v in values:
        out = out * int(v) // math.gcd(out, int(v))
    return out


class Graph:
    """Adjacency, candidate devices and mean costs of a :class:`DagProblem`, precomputed once."""

    def __init__(self, problem: DagProblem) -> None:
        t = problem.tables
        self.problem = problem
        self.tables = t
        n, m, E = t.n_ops, t.n_dev, t.n_edges
        self.n, self.m, self.n_edges = n, m, E
        self.time = t.time
        self.tf = bool(problem.tensor_per_device and E > 0)
        self.send = t.send_time
        st = problem.structure
        self.structure = st
        self.src, self.dst = st.src, st.dst
        self.topo, self.topo_pos = st.topo, st.topo_pos
        self.preds = [st.predecessors(v) for v in range(n)]
        self.succs = [st.successors(v) for v in range(n)]
        self.pred_task, self.pred_edge = st.pred_task, st.pred_edge
        self.succ_task, self.succ_edge = st.succ_task, st.succ_edge
        self.pred_arr = [np.array([u for u, _ in p], dtype=np.int64) for p in self.preds]
        self.pred_earr = [np.array([e for _, e in p], dtype=np.int64) for p in self.preds]
        self.down_levels = list(st.depth_levels)
        self.up_levels = list(st.height_levels)
        # colocation groups and candidate devices
        self.group = np.full(n, -1, dtype=np.int64)
        self.members: list[np.ndarray] = []
        names: dict[str, int] = {}
        coloc = t.colocation if t.colocation else (None,) * n
        lists: list[list[int]] = []
        for i, g in enumerate(coloc):
            if g is None:
                continue
            if g not in names:
                names[g] = len(lists)
                lists.append([])
            self.group[i] = names[g]
            lists[names[g]].append(i)
        self.members = [np.asarray(x, dtype=np.int64) for x in lists]
        self.group_names = list(names)
        mask = t.allowed.copy()
        for mem in self.members:
            common = t.allowed[mem].all(axis=0)
            if common.any():
                mask[mem] = common
        none = ~mask.any(axis=1)
        mask[none] = True  # no device may run it: let repair decide, any choice is infeasible
        self.mask = mask
        # exact scaled means: value * S is an integer when it fits in int64
        k = mask.sum(axis=1)
        pairs = m * (m - 1) if m > 1 else 1
        S = _lcm([*np.unique(k).tolist(), pairs, m])
        tt = t.transfer_time
        off = tt.sum(axis=(1, 2)) - np.einsum("ijj->i", tt) if E else np.zeros(0, dtype=np.int64)
        bound = (int(np.where(mask, self.time, 0).max(axis=1).sum()) + int(off.sum())
                 + int(self.send.sum()) * max(E, 1) + 1) * S * (m + 1)
        self.exact = S < 2**40 and bound < 2**62
        if self.exact:
            self.S = S
            wsum = np.where(mask, self.time, 0).sum(axis=1)
            self.wbar = wsum * (S // k)
            cbar = off * (S // pairs) if m > 1 else np.zeros(E, dtype=np.int64)
            if self.tf and m > 1:
                cbar = cbar + int(self.send.sum()) * (S // m)
        else:
            self.S = 1
            self.wbar = np.where(mask, self.time, 0).sum(axis=1) / k
            cbar = off / pairs if m > 1 else np.zeros(E)
            if self.tf and m > 1:
                cbar = cbar + self.send.mean()
        self.cbar = np.concatenate([cbar, np.zeros(1, dtype=cbar.dtype)])  # sentinel edge

    # ------------------------------------------------------------------ ranks
    def upward_rank(self) -> np.ndarray:
        """Topcuoglu's rank_u (in units of 1/S): mean cost plus the longest mean-cost path to an exit."""
        rank = np.zeros(self.n + 1, dtype=self.wbar.dtype)
        for tasks in self.up_levels:
            s, e = self.succ_task[tasks], self.succ_edge[tasks]
            tail = np.where(s < self.n, self.cbar[e] + rank[s], 0).max(axis=1)
            rank[tasks] = self.wbar[tasks] + tail
        return rank[: self.n]

    def downward_rank(self) -> np.ndarray:
        """Topcuoglu's rank_d (units of 1/S): longest mean-cost path from an entry, excluding the task."""
        rank = np.zeros(self.n + 1, dtype=self.wbar.dtype)
        wb = np.concatenate([self.wbar, np.zeros(1, dtype=self.wbar.dtype)])
        for tasks in self.down_levels:
            p, e = self.pred_task[tasks], self.pred_edge[tasks]
            rank[tasks] = np.where(p < self.n, rank[p] + wb[p] + self.cbar[e], 0).max(axis=1)
        return rank[: self.n]

    def importance(self) -> np.ndarray:
        """Longest mean-time path through each task (communication ignored) over the longest path: in [0, 1]."""
        down = np.zeros(self.n + 1, dtype=float)
        w = self.wbar.astype(float)
        for tasks in self.down_levels:
            p = self.pred_task[tasks]
            down[tasks] = np.where(p < self.n, down[p] + np.append(w, 0.0)[p], 0.0).max(axis=1)
        up = np.zeros(self.n + 1, dtype=float)
        for tasks in self.up_levels:
            s = self.succ_task[tasks]
            up[tasks] = w[tasks] + np.where(s < self.n, up[s], 0.0).max(axis=1)
        through = down[: self.n] + up[: self.n]
        top = through.max(initial=0.0)
        return through / top if top > 0 else np.zeros(self.n)


_GRAPHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def graph_of(problem: DagProblem) -> Graph:
    """The :class:`Graph` of ``problem``, cached while the problem lives (rebuilt if its settings change)."""
    key = (id(problem.tables), bool(problem.memory), bool(problem.tensor_per_device))
    try:
        hit = _GRAPHS.get(problem)
    except TypeError:  # unhashable problem: no cache
        return Graph(problem)
    if hit is not None and hit[0] == key:
        return hit[1]
    g = Graph(problem)
    _GRAPHS[problem] = (key, g)
    return g


# --------------------------------------------------------------------------- placement


class Placement:
    """Device assignment with colocation groups and (optionally) memory capacities."""

    def __init__(self, g: Graph) -> None:
        self.g = g
        t = g.tables
        self.dev = np.full(g.n, -1, dtype=np.int64)
        self.lock = np.full(len(g.members), -1, dtype=np.int64)
        self.memory = bool(g.problem.memory)
        self.used = np.zeros(g.m, dtype=np.int64)
        self.cap = t.mem_capacity
        self.mem = t.mem

    def need(self, i: int) -> np.ndarray:
        """Memory (per device) that placing ``i`` (with its whole group) would add."""
        gid = self.g.group[i]
        if gid >= 0:
            return self.mem[self.g.members[gid]].sum(axis=0)
        return self.mem[i]

    def candidates(self, i: int) -> np.ndarray:
        """Devices ``i`` may go to: its group's device if locked, else allowed ones that fit in memory (if any)."""
        gid = self.g.group[i]
        if gid >= 0 and self.lock[gid] >= 0:
            return self.lock[gid : gid + 1]
        mask = self.g.mask[i]
        if self.memory:
            fits = mask & (self.used + self.need(i) <= self.cap)
            if fits.any():
                mask = fits
        return np.flatnonzero(mask)

    def feasible(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(devices i may use, memory it would add)``: its group's device (nothing to add) if locked."""
        gid = self.g.group[i]
        if gid >= 0 and self.lock[gid] >= 0:
            mask = np.zeros(self.g.m, dtype=bool)
            mask[self.lock[gid]] = True
            return mask, np.zeros(self.g.m, dtype=np.int64)
        return self.g.mask[i], self.need(i)

    def fits(self, need: np.ndarray) -> np.ndarray:
        """Devices with room for ``need`` more (all of them without a memory constraint)."""
        if not self.memory:
            return np.ones(self.g.m, dtype=bool)
        return self.used + need <= self.cap

    def group_tasks(self, i: int) -> np.ndarray:
        gid = self.g.group[i]
        return self.g.members[gid] if gid >= 0 else np.array([i], dtype=np.int64)

    def assign(self, i: int, d: int) -> None:
        """Put ``i`` on ``d``; the first member of a group takes the whole group (and its memory) there."""
        gid = self.g.group[i]
        if gid >= 0:
            if self.lock[gid] < 0:
                self.lock[gid] = d
                self.used[d] += int(self.mem[self.g.members[gid], d].sum())
            self.dev[i] = self.lock[gid]
            return
        self.dev[i] = d
        self.used[d] += int(self.mem[i, d])

    def assign_group(self, i: int, d: int) -> None:
        """Put ``i`` and every member of its group on ``d`` (partitioners)."""
        self.assign(i, d)
        for j in self.group_tasks(i):
            self.dev[j] = self.dev[i]


def list_schedule(g: Graph, priority: np.ndarray, *, bias: np.ndarray | None = None,
                  forced: np.ndarray | None = None, forced_device: int | None = None):
    """Insertion-based list scheduling (HEFT's second phase, shared by HEFT, CPOP and PEFT).

    Ready tasks are taken by decreasing ``priority`` (ties: lower index), so the
    order is always topological. Each goes to the candidate device with the
    smallest earliest finish time (``EFT * S + bias[task, device]`` when
    ``bias`` is given, PEFT's optimistic costs in units of 1/S), ties to the
    lower device index; tasks with ``forced[task]`` go to ``forced_device``
    when it is a candidate (CPOP's critical path). The start is the earliest
    gap on the device after every input has arrived (insertion).

    Returns ``(devices, order, start, finish)``: this placement's own timing.
    Decoding ``genome(devices, order)`` with insertion reproduces it exactly in
    per-edge mode; with ``tensor_per_device`` and nonzero ``send_time`` the
    sends of a task are unknown when it is placed (its consumers are not), so
    this timing is an estimate there and only the decoded one counts.
    """
    import heapq

    n, m = g.n, g.m
    T = g.time
    tt = g.tables.transfer_time
    place = Placement(g)
    start = np.zeros(n, dtype=np.int64)
    fin = np.zeros(n, dtype=np.int64)
    busy: list[list[tuple[int, int]]] = [[] for _ in range(m)]
    ends: list[list[int]] = [[] for _ in range(m)]
    sends = g.tf and bool(g.send.any())
    remote: list[set[int]] = [set() for _ in range(n)] if sends else []
    indeg = np.array([len(p) for p in g.preds], dtype=np.int64)
    key = quantize(priority)
    heap = [(-int(key[v]), v) for v in range(n) if indeg[v] == 0]
    heapq.heapify(heap)
    order = []
    S = g.S
    while heap:
        _, v = heapq.heappop(heap)
        order.append(v)
        P = g.pred_arr[v]
        if len(P):
            dp = place.dev[P]
            arr = fin[P][:, None] + tt[g.pred_earr[v], dp, :]
            if sends:
                for j, u in enumerate(P.tolist()):
                    a = int(dp[j])
                    for d in range(m):
                        if d != a:
                            rank = sum(1 for b in remote[u] if b < d and b != d)
                            arr[j, d] += (rank + 1) * int(g.send[a])
            ready = arr.max(axis=0)
        else:
            ready = np.zeros(m, dtype=np.int64)
        cands = place.candidates(v)
        if forced is not None and forced[v] and forced_device is not None and forced_device in cands:
            cands = np.array([forced_device], dtype=np.int64)
        best = None
        for d in cands.tolist():
            s = earliest_gap(busy[d], ends[d], int(ready[d]), int(T[v, d]))
            f = s + int(T[v, d])
            score = f if bias is None else f * S + bias[v, d]
            if best is None or score < best[0]:
                best = (score, d, s, f)
        assert best is not None, f"task {v} has no candidate device"  # every task has an allowed device
        _, d, s, f = best
        place.assign(v, d)
        start[v], fin[v] = s, f
        insert_interval(busy[d], ends[d], s, f)
        if sends:
            for u in P.tolist():
                if place.dev[u] != d:
                    remote[u].add(d)
        for w, _ in g.succs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(heap, (-int(key[w]), w))
    return place.dev.copy(), np.asarray(order, dtype=np.int64), start, fin


def quantize(key: np.ndarray) -> np.ndarray:
    """Integer sort keys: exact integers as they are, floats rounded to 1e-9 of the largest magnitude."""
    key = np.asarray(key)
    if key.dtype.kind in "iu":
        return key.astype(np.int64)
    top = float(np.abs(key).max(initial=0.0))
    if top == 0:
        return np.zeros(len(key), dtype=np.int64)
    return np.rint(key * (1e9 / top)).astype(np.int64)


# --------------------------------------------------------------------------- result


def repaired_devices(problem: DagProblem, devices: np.ndarray) -> np.ndarray:
    """Devices after ``problem.repair`` (allowed devices, colocation), as the decoder will see them."""
    genome = problem.repair(problem.genome(np.asarray(devices, dtype=np.int64)))
    return genome[: problem.n_tasks].astype(np.int64)


def finish(problem: DagProblem, name: str, devices: np.ndarray, order: np.ndarray,
           insertion: bool) -> HeuristicResult:
    """Repair the devices, decode ``genome(devices, order)`` and wrap it as a :class:`HeuristicResult`."""
    devices = repaired_devices(problem, devices)
    order = np.asarray(order, dtype=np.int64)
    makespan = problem.schedule(problem.genome(devices, order), insertion=insertion).makespan
    return HeuristicResult(name, devices, order, int(makespan), insertion)
