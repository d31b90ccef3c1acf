"""The one interface of the classic heuristics, and what they share.

Every heuristic is a function ``(problem: DagProblem) -> HeuristicResult``. A
result holds a device per task and a task order; its ``makespan`` is the
makespan of ``problem.genome(devices, order)`` decoded by the problem's own
decoder with ``insertion=result.insertion`` (:func:`finish` does that
decoding, so the number is never the heuristic's private estimate).

Shared pieces:

* :class:`Graph`: adjacency (predecessor / successor lists and compressed rows, levels),
  the candidate devices of each task (its allowed devices, intersected over its
  colocation group), mean costs in *exact scaled integers* where they fit in
  int64 (so that published ties, e.g. Topcuoglu's ranks 80 = 80, stay ties);
* :class:`Placement`: device choice bookkeeping (colocation groups follow
  their first placed member; memory capacities are respected when
  ``problem.memory`` and some candidate still fits);
* the DAG's topology (levels, compressed-row adjacency, topological positions) and the
  insertion search come from the problem's
  :class:`~dse.mapping.dag.structure.DagStructure`, which the decoder reads too;
* :func:`finish`: repair, decode, wrap.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.mapping.dag.structure import (
    OPEN_END,
    _earliest,
    _edge_delay,
    _insert,
    compiled_kernels,
    transfer_arguments,
)
from dse.util.interrupt import cut_point
from dse.util.jit import compile_functions, may_compile, plain

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
        self.preds, self.succs = st.adjacency()
        self.down_levels = list(st.depth_levels)
        self.up_levels = list(st.height_levels)
        self.down_edges = st.pred_levels  # the down levels with their tasks' in-edges
        self.up_edges = st.succ_levels  # the up levels with their tasks' out-edges
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
        off, _ = t.transfer_over_pairs("transfer_time")  # per edge, summed over the pairs a != b
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
        self.cbar = cbar

    # ------------------------------------------------------------------ ranks
    def upward_rank(self) -> np.ndarray:
        """Topcuoglu's rank_u (in units of 1/S): mean cost plus the longest mean-cost path to an exit."""
        rank = np.zeros(self.n, dtype=self.wbar.dtype)
        for level in self.up_edges:
            tail = level.max(self.cbar[level.edge] + rank[level.task], 0)
            rank[level.tasks] = self.wbar[level.tasks] + tail
        return rank

    def downward_rank(self) -> np.ndarray:
        """Topcuoglu's rank_d (units of 1/S): longest mean-cost path from an entry, excluding the task."""
        rank = np.zeros(self.n, dtype=self.wbar.dtype)
        for level in self.down_edges:
            p = level.task
            rank[level.tasks] = level.max(rank[p] + self.wbar[p] + self.cbar[level.edge], 0)
        return rank

    def importance(self) -> np.ndarray:
        """Longest mean-time path through each task (communication ignored) over the longest path: in [0, 1]."""
        down = np.zeros(self.n, dtype=float)
        w = self.wbar.astype(float)
        for level in self.down_edges:
            down[level.tasks] = level.max(down[level.task] + w[level.task], 0.0)
        up = np.zeros(self.n, dtype=float)
        for level in self.up_edges:
            up[level.tasks] = w[level.tasks] + level.max(up[level.task], 0.0)
        through = down + up
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
    gap on the device after every input has arrived (insertion, the
    :class:`~dse.mapping.dag.structure.Timeline` rules). Candidates are those of
    :meth:`Placement.candidates` (colocation groups follow their first placed
    member; memory capacities are respected while some candidate fits).

    Returns ``(devices, order, start, finish)``: this placement's own timing.
    Decoding ``genome(devices, order)`` with insertion reproduces it exactly in
    per-edge mode; with ``tensor_per_device`` and nonzero ``send_time`` the
    sends of a task are unknown when it is placed (its consumers are not), so
    this timing is an estimate there and only the decoded one counts. Runs a
    compiled kernel (numba, cached on disk after the first use). Raises
    :class:`~dse.util.interrupt.Cut` when a stop was requested (or the enclosing work limit passed) while
    the kernel loaded.
    """
    t = g.tables
    n, m = g.n, g.m
    key = quantize(priority)
    group_mem = (np.stack([t.mem[members].sum(axis=0) for members in g.members]) if g.members
                 else np.zeros((1, m), dtype=np.int64))
    has_bias = bias is not None
    bias_arr = np.ascontiguousarray(bias) if bias is not None else np.zeros((1, 1), dtype=np.int64)
    forced_arr = (np.asarray(forced, dtype=np.bool_) if forced is not None and forced_device is not None
                  else np.zeros(n, dtype=np.bool_))
    sends = g.tf and bool(g.send.any())
    st = g.structure
    kernel = _list_kernel()
    cut_point("list scheduling")  # loading the kernel can take a second: a stop request (or limit) ends it here
    return kernel(
        np.ascontiguousarray(g.time), key, st.pred_ptr, st.pred_task, st.pred_edge, st.succ_ptr, st.succ_task,
        np.ascontiguousarray(g.mask),
        bool(g.problem.memory), np.ascontiguousarray(t.mem), t.mem_capacity, g.group, group_mem, forced_arr,
        -1 if forced_device is None else int(forced_device), has_bias, bias_arr, int(g.S), *transfer_arguments(t),
        sends, np.ascontiguousarray(g.send))


_KERNELS: dict[str, Callable[..., Any]] = {}


def _list_kernel() -> Callable[..., Any]:
    """The compiled :func:`_list_schedule_kernel` (compiled, or loaded from numba's cache, on first use)."""
    if not _KERNELS:
        compiled = compiled_kernels()
        if not may_compile():
            return plain(_list_schedule_kernel)  # plain Python while compiling would break a time limit (dse.util.jit)
        scope = globals()
        for name in ("_earliest", "_insert", "_edge_delay"):
            scope[name] = compiled[name]
        _KERNELS["list"] = compile_functions(scope, ("_heap_less", "_heap_push", "_list_schedule_kernel"))[
            "_list_schedule_kernel"]
    return _KERNELS["list"]


def _heap_less(hk, hv, i, j):  # pragma: no cover - compiled
    return hk[i] > hk[j] or (hk[i] == hk[j] and hv[i] < hv[j])  # larger key first, then lower index


def _heap_push(hk, hv, size_h, k, v):  # pragma: no cover - compiled
    """Push task ``v`` with key ``k`` onto the binary heap ``(hk, hv)`` of ``size_h`` entries; the new size."""
    hk[size_h], hv[size_h] = k, v
    i = size_h
    while i > 0 and _heap_less(hk, hv, i, (i - 1) // 2):
        p = (i - 1) // 2
        hk[i], hk[p] = hk[p], hk[i]
        hv[i], hv[p] = hv[p], hv[i]
        i = p
    return size_h + 1


def _list_schedule_kernel(T, key, pred_ptr, pred_task, pred_edge, succ_ptr, succ_task, mask, memory, mem, cap,
                          group, group_mem, forced, forced_device, has_bias, bias, S, table, latency, per_byte,
                          size, sends, send):  # pragma: no cover - compiled
    n, m = T.shape
    dev = np.full(n, -1, dtype=np.int64)
    lock = np.full(group_mem.shape[0], -1, dtype=np.int64)
    used = np.zeros(m, dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    fin = np.zeros(n, dtype=np.int64)
    order = np.zeros(n, dtype=np.int64)
    remote = np.zeros((n, m), dtype=np.bool_)
    ready = np.zeros(m, dtype=np.int64)
    rank = np.zeros(m, dtype=np.int64)
    cand = np.zeros(m, dtype=np.bool_)
    gs = np.zeros((m, n + 2), dtype=np.int64)
    ge = np.zeros((m, n + 2), dtype=np.int64)
    bs = np.zeros((m, n + 2), dtype=np.int64)
    be = np.zeros((m, n + 2), dtype=np.int64)
    gc = np.ones(m, dtype=np.int64)
    bc = np.zeros(m, dtype=np.int64)
    ge[:, 0] = OPEN_END
    indeg = np.zeros(n, dtype=np.int64)
    for v in range(n):
        indeg[v] = pred_ptr[v + 1] - pred_ptr[v]
    hk = np.zeros(n, dtype=np.int64)  # binary heap of ready tasks
    hv = np.zeros(n, dtype=np.int64)
    size_h = 0
    for v in range(n):
        if indeg[v] == 0:
            size_h = _heap_push(hk, hv, size_h, key[v], v)
    for step in range(n):
        v = hv[0]
        size_h -= 1
        hk[0], hv[0] = hk[size_h], hv[size_h]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= size_h:
                break
            if c + 1 < size_h and _heap_less(hk, hv, c + 1, c):
                c += 1
            if not _heap_less(hk, hv, c, i):
                break
            hk[i], hk[c] = hk[c], hk[i]
            hv[i], hv[c] = hv[c], hv[i]
            i = c
        order[step] = v
        ready[:] = 0
        for j in range(pred_ptr[v], pred_ptr[v + 1]):
            u = pred_task[j]
            e = pred_edge[j]
            a = dev[u]
            if sends:
                count = 0
                for d in range(m):
                    rank[d] = count
                    if remote[u, d]:
                        count += 1
            for d in range(m):
                delay = _edge_delay(e, a, d, m, table, latency, per_byte, size)
                if sends and d != a:
                    delay += (rank[d] + 1) * send[a]
                if fin[u] + delay > ready[d]:
                    ready[d] = fin[u] + delay
        gid = group[v]
        if gid >= 0 and lock[gid] >= 0:
            cand[:] = False
            cand[lock[gid]] = True
        else:
            any_fit = False
            if memory:
                for d in range(m):
                    need = group_mem[gid, d] if gid >= 0 else mem[v, d]
                    cand[d] = mask[v, d] and used[d] + need <= cap[d]
                    any_fit = any_fit or cand[d]
            if not any_fit:
                for d in range(m):
                    cand[d] = mask[v, d]
        if forced[v] and forced_device >= 0 and cand[forced_device]:
            cand[:] = False
            cand[forced_device] = True
        best_d, best_s, best_f = -1, 0, 0
        best_score = bias[0, 0] * 0  # the score's type: int64, or float64 with a float bias
        for d in range(m):
            if not cand[d]:
                continue
            s = _earliest(gs, ge, gc, bs, be, bc, d, ready[d], T[v, d])
            f = s + T[v, d]
            score = f * S + bias[v, d] if has_bias else f * S * 0 + f
            if best_d < 0 or score < best_score:
                best_d, best_s, best_f, best_score = d, s, f, score
        d = best_d
        if gid >= 0:
            if lock[gid] < 0:
                lock[gid] = d
                used[d] += group_mem[gid, d]
            dev[v] = lock[gid]
        else:
            dev[v] = d
            used[d] += mem[v, d]
        start[v], fin[v] = best_s, best_f
        _insert(gs, ge, gc, bs, be, bc, d, best_s, best_f)
        if sends:
            for j in range(pred_ptr[v], pred_ptr[v + 1]):
                u = pred_task[j]
                if dev[u] != d:
                    remote[u, d] = True
        for j in range(succ_ptr[v], succ_ptr[v + 1]):
            w = succ_task[j]
            indeg[w] -= 1
            if indeg[w] == 0:
                size_h = _heap_push(hk, hv, size_h, key[w], w)
    return dev, order, start, fin


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
