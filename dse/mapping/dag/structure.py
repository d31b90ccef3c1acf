"""The one description of a task DAG's structure that the dag decoder, heuristics and CP-SAT model read.

:class:`DagStructure` holds, built once per problem with numpy:

* ``topo`` (a topological order, smallest index first among ready tasks) and
  ``topo_pos`` (each task's position in it);
* the predecessors and successors as compressed rows, linear in the edges: task ``v``'s
  in-edges are ``pred_task[pred_ptr[v]:pred_ptr[v + 1]]`` (producers) and ``pred_edge[...]``
  (edge indices), in edge order, its out-edges ``succ_task``/``succ_edge`` by ``succ_ptr``;
* ``depth_levels`` (tasks by longest edge count from a source) and
  ``height_levels`` (by longest edge count to a sink), and the same levels with their tasks'
  in-edges (:attr:`DagStructure.pred_levels`) and out-edges (:attr:`DagStructure.succ_levels`) as
  :class:`LevelEdges`, whose per-task reductions run the level-by-level recurrences in numpy;
* the TF paper's send rule in numpy: :meth:`DagStructure.remote_sends` (which remote devices
  receive each producer's tensor and in which order) and :meth:`DagStructure.transfer_delays`
  (per edge the delay from producer finish to arrival and per task its send time, for a whole
  population, read from the tables' per-edge accessors; :meth:`DagStructure.send_delays` for one
  genome); the compiled kernel applies the same rule per genome (``_send_rule``);

the insertion search shared by every insertion-based scheduler, :class:`Timeline` (per device
its sorted free gaps, searched with bisect, so contiguous work costs O(log n) a query), and the
compiled list-scheduling kernel :func:`list_schedule_population` that both dag decoders run.
The kernel is compiled by numba on first use and cached on disk (``cache=True``), so it compiles
once per install; numba is imported only then (loading a problem does not pay for it). It
implements exactly the rules of :class:`Timeline`.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.cost import CostTables
from dse.util.jit import compile_functions, may_compile, plain
from dse.util.rounding import CEIL_SLACK

#: End of the open-ended free gap after a device's last task.
OPEN_END = np.iinfo(np.int64).max // 4


def _compressed_rows(owner: np.ndarray, other: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per task the ``other`` ends and indices of its edges (grouped by ``owner``, in edge order), as
    compressed rows ``(ptr, task, edge)``: task ``v``'s are ``task[ptr[v]:ptr[v + 1]]`` and ``edge[...]``."""
    edge = np.argsort(owner, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=ptr[1:])
    return ptr, np.ascontiguousarray(other[edge], dtype=np.int64), edge.astype(np.int64)


def _row_entries(ptr: np.ndarray, tasks: np.ndarray) -> np.ndarray:
    """The positions of the rows of ``tasks`` in compressed rows with offsets ``ptr``, row after row."""
    starts = ptr[tasks]
    counts = ptr[tasks + 1] - starts
    ends = np.cumsum(counts)
    return np.repeat(starts - (ends - counts), counts) + np.arange(ends[-1] if len(ends) else 0)


def _levels(in_ptr: np.ndarray, out_ptr: np.ndarray, out_task: np.ndarray, n: int
            ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Longest edge count to each task from a task with no in-edge (in-edges counted by the offsets
    ``in_ptr``, out-edges the compressed rows ``out_ptr, out_task``); returns the counts and the tasks of
    each count, in index order. Peels the DAG a level at a time, visiting each edge once."""
    level = np.zeros(n, dtype=np.int64)
    waiting = np.diff(in_ptr)
    frontier = np.flatnonzero(waiting == 0)
    levels: list[np.ndarray] = []
    while len(frontier):
        level[frontier] = len(levels)
        levels.append(frontier)
        reached, count = np.unique(out_task[_row_entries(out_ptr, frontier)], return_counts=True)
        waiting[reached] -= count
        frontier = reached[waiting[reached] == 0]
    return level, levels


@dataclass(frozen=True, eq=False)
class LevelEdges:
    """One level's tasks with their in-edges (or out-edges), as compressed rows: row ``i``, task
    ``tasks[i]``, holds the other ends ``task[ptr[i]:ptr[i + 1]]`` and the edge indices ``edge[...]``,
    in edge order. The reductions take ``values``, one per entry (along the first axis), and return one
    per row."""

    tasks: np.ndarray
    ptr: np.ndarray
    task: np.ndarray
    edge: np.ndarray

    @classmethod
    def of(cls, tasks: np.ndarray, ptr: np.ndarray, task: np.ndarray, edge: np.ndarray) -> LevelEdges:
        """The rows of ``tasks`` out of a whole DAG's compressed rows ``(ptr, task, edge)``."""
        local = np.zeros(len(tasks) + 1, dtype=np.int64)
        np.cumsum(ptr[tasks + 1] - ptr[tasks], out=local[1:])
        entries = _row_entries(ptr, tasks)
        rows = (local, task[entries], edge[entries])
        for array in rows:
            array.setflags(write=False)
        return cls(tasks, *rows)

    @functools.cached_property
    def row(self) -> np.ndarray:
        """Per entry its row."""
        return np.repeat(np.arange(len(self.tasks)), np.diff(self.ptr))

    @functools.cached_property
    def _filled(self) -> np.ndarray | None:
        """The rows with an entry, None when every row has one (every level of a DAG but the first)."""
        filled = self.ptr[:-1] < self.ptr[1:]
        return None if filled.all() else filled

    def max(self, values: np.ndarray, initial: Any) -> np.ndarray:
        """Per row the largest of ``initial`` and its entries' ``values``."""
        return self._reduce(np.maximum, values, initial)

    def min(self, values: np.ndarray, initial: Any) -> np.ndarray:
        """Per row the smallest of ``initial`` and its entries' ``values``."""
        return self._reduce(np.minimum, values, initial)

    def first(self, hits: np.ndarray) -> np.ndarray:
        """Per row its first entry (an index into ``task``) where ``hits`` holds; -1 where none does."""
        none = len(hits)
        first = self._reduce(np.minimum, np.where(hits, np.arange(none), none), none)
        first[first == none] = -1
        return first

    def _reduce(self, ufunc: np.ufunc, values: np.ndarray, initial: Any) -> np.ndarray:
        """Per row ``ufunc`` over ``initial`` and its entries' ``values``."""
        if not len(values):
            return np.full((len(self.tasks), *values.shape[1:]), initial, dtype=values.dtype)
        filled = self._filled
        if filled is None:
            return ufunc(ufunc.reduceat(values, self.ptr[:-1], axis=0), initial)
        out = np.full((len(self.tasks), *values.shape[1:]), initial, dtype=values.dtype)
        out[filled] = ufunc(ufunc.reduceat(values, self.ptr[:-1][filled], axis=0), initial)
        return out


@dataclass(frozen=True, eq=False)
class DagStructure:
    """Topology of the task DAG of ``tables`` (see the module docstring)."""

    n: int
    n_edges: int
    src: np.ndarray
    dst: np.ndarray
    topo: np.ndarray
    topo_pos: np.ndarray
    pred_ptr: np.ndarray
    pred_task: np.ndarray
    pred_edge: np.ndarray
    succ_ptr: np.ndarray
    succ_task: np.ndarray
    succ_edge: np.ndarray
    depth: np.ndarray
    depth_levels: tuple[np.ndarray, ...]
    height_levels: tuple[np.ndarray, ...]
    first_out: np.ndarray

    @classmethod
    def of(cls, tables: CostTables) -> DagStructure:
        """Build the structure of ``tables``' DAG; raises ``ValueError`` for a cycle."""
        n, n_edges = tables.n_ops, tables.n_edges
        src = np.ascontiguousarray(tables.edges[:, 0], dtype=np.int64)
        dst = np.ascontiguousarray(tables.edges[:, 1], dtype=np.int64)
        topo = tables.topological_order()
        topo_pos = np.empty(n, dtype=np.int64)
        topo_pos[topo] = np.arange(n)
        pred_ptr, pred_task, pred_edge = _compressed_rows(dst, src, n)
        succ_ptr, succ_task, succ_edge = _compressed_rows(src, dst, n)
        depth, depth_levels = _levels(pred_ptr, succ_ptr, succ_task, n)
        _, height_levels = _levels(succ_ptr, pred_ptr, pred_task, n)
        first_out = np.full(n, n_edges, dtype=np.int64)
        producers, first = np.unique(src, return_index=True)
        first_out[producers] = first
        for array in (src, dst, topo, topo_pos, pred_ptr, pred_task, pred_edge, succ_ptr, succ_task, succ_edge, depth,
                      first_out):
            array.setflags(write=False)
        return cls(n, n_edges, src, dst, topo, topo_pos, pred_ptr, pred_task, pred_edge, succ_ptr, succ_task,
                   succ_edge, depth, tuple(depth_levels), tuple(height_levels), first_out)

    @functools.cached_property
    def pred_levels(self) -> tuple[LevelEdges, ...]:
        """Each of :attr:`depth_levels` with its tasks' in-edges (built on first use)."""
        return tuple(LevelEdges.of(tasks, self.pred_ptr, self.pred_task, self.pred_edge)
                     for tasks in self.depth_levels)

    @functools.cached_property
    def succ_levels(self) -> tuple[LevelEdges, ...]:
        """Each of :attr:`height_levels` with its tasks' out-edges (built on first use)."""
        return tuple(LevelEdges.of(tasks, self.succ_ptr, self.succ_task, self.succ_edge)
                     for tasks in self.height_levels)

    def predecessors(self, v: int) -> list[tuple[int, int]]:
        """``(task, edge)`` pairs entering ``v``."""
        lo, hi = self.pred_ptr[v], self.pred_ptr[v + 1]
        return list(zip(self.pred_task[lo:hi].tolist(), self.pred_edge[lo:hi].tolist(), strict=True))

    def successors(self, v: int) -> list[tuple[int, int]]:
        """``(task, edge)`` pairs leaving ``v``."""
        lo, hi = self.succ_ptr[v], self.succ_ptr[v + 1]
        return list(zip(self.succ_task[lo:hi].tolist(), self.succ_edge[lo:hi].tolist(), strict=True))

    def adjacency(self) -> tuple[list[list[tuple[int, int]]], list[list[tuple[int, int]]]]:
        """Every task's :meth:`predecessors` and :meth:`successors` at once (lists of Python ints, built from
        the compressed rows in one conversion each rather than task by task)."""

        def rows(ptr: np.ndarray, tasks: np.ndarray, edges: np.ndarray) -> list[list[tuple[int, int]]]:
            pairs = list(zip(tasks.tolist(), edges.tolist(), strict=True))
            bounds = ptr.tolist()
            return [pairs[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]

        return rows(self.pred_ptr, self.pred_task, self.pred_edge), rows(self.succ_ptr, self.succ_task, self.succ_edge)

    def remote_sends(self, dev: np.ndarray, n_dev: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The TF send rule for a population ``dev`` (pop, n) in O(pop x edges) memory.

        Returns ``(rows, producers, devices)``: one entry per tensor that crosses (genome row,
        producer, remote device), sorted; and ``edge_rank`` (pop, n_edges): per crossing edge how
        many remote devices of its producer come before its consumer's device (sends go out in
        device-index order), -1 for an edge that stays on its device.
        """
        pop = len(dev)
        edge_rank = np.full((pop, self.n_edges), -1, dtype=np.int64)
        if not self.n_edges:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, edge_rank
        dd = dev[:, self.dst]
        r, e = np.nonzero(dev[:, self.src] != dd)
        key = (r * self.n + self.src[e]) * n_dev + dd[r, e]
        triples = np.unique(key)
        group = triples // n_dev
        rank = np.arange(len(triples)) - np.searchsorted(group, group, side="left")
        edge_rank[r, e] = rank[np.searchsorted(triples, key)]
        return group // self.n, group % self.n, triples % n_dev, edge_rank

    def transfer_delays(self, tables: CostTables, dev: np.ndarray,
                        tensor_per_device: bool) -> tuple[np.ndarray, np.ndarray]:
        """For a population ``dev`` (pop, n): per edge the delay from producer finish to arrival (pop, n_edges)
        and per task the time its device stays busy sending after its compute (pop, n; zero without the TF
        rule), from the tables' per-edge accessors."""
        dev = np.atleast_2d(dev)
        pop = len(dev)
        extra = np.zeros((pop, self.n), dtype=np.int64)
        if not self.n_edges:
            return np.zeros((pop, 0), dtype=np.int64), extra
        a = dev[:, self.src]
        delay = tables.edge_transfer_time(np.arange(self.n_edges)[None, :], a, dev[:, self.dst])
        if tensor_per_device:
            send = tables.send_time
            rows, producers, _, edge_rank = self.remote_sends(dev, tables.n_dev)
            delay = delay + np.where(edge_rank >= 0, (edge_rank + 1) * send[a], 0)
            count = np.zeros((pop, self.n), dtype=np.int64)
            np.add.at(count, (rows, producers), 1)
            extra = count * send[dev]
        return delay, extra

    def send_delays(self, dev: np.ndarray, tables: CostTables, tensor_per_device: bool) -> tuple[np.ndarray, np.ndarray]:
        """For one assignment ``dev`` (n,): per edge the delay from producer finish to arrival, and per task
        the time its device stays busy sending after its compute (zero without the TF rule); the
        population rule of :meth:`transfer_delays` for one row (no (edges x devices^2) table is built)."""
        delay, extra = self.transfer_delays(tables, np.asarray(dev)[None, :], tensor_per_device)
        return delay[0], extra[0]


class Timeline:
    """One device's busy intervals for insertion scheduling, with its free gaps kept sorted.

    A task of length ``L > 0`` may start at ``c`` when ``(c, c + L)`` meets no busy interval and
    contains no zero-length task; :meth:`earliest` finds the earliest such ``c >= ready`` by
    bisecting the sorted free gaps (busy intervals that touch leave no gap, so a device full of
    contiguous work answers in O(log n)). A zero-length task may start at ``ready`` unless that
    falls strictly inside a busy interval (then at its end).
    """

    __slots__ = ("gap_start", "gap_end", "busy_start", "busy_end", "tail")

    def __init__(self) -> None:
        self.gap_start: list[int] = [0]
        self.gap_end: list[int] = [int(OPEN_END)]
        self.busy_start: list[int] = []
        self.busy_end: list[int] = []
        self.tail = 0  #: the latest end (where a non-insertion scheduler appends)

    def earliest(self, ready: int, length: int) -> int:
        """Earliest start ``>= ready`` of a slot of ``length`` (see the class docstring)."""
        if length <= 0:
            k = bisect.bisect_right(self.busy_end, ready)
            if k < len(self.busy_end) and self.busy_start[k] < ready:
                return self.busy_end[k]
            return ready
        gs, ge = self.gap_start, self.gap_end
        k = bisect.bisect_right(ge, ready)
        while True:
            c = gs[k] if gs[k] > ready else ready
            if c + length <= ge[k]:
                return c
            k += 1

    def insert(self, s: int, e: int) -> None:
        """Mark ``(s, e)`` busy; it must lie in one free gap (as :meth:`earliest` or ``s >= tail`` give)."""
        k = bisect.bisect_right(self.busy_start, s)
        while k > 0 and self.busy_start[k - 1] == s and self.busy_end[k - 1] > e:
            k -= 1  # (s, e) sorts before (s, e') with e' > e
        self.busy_start.insert(k, s)
        self.busy_end.insert(k, e)
        self.tail = max(self.tail, e)
        gs, ge = self.gap_start, self.gap_end
        g = bisect.bisect_right(gs, s) - 1
        if g < 0 or not (gs[g] <= s and e <= ge[g]) or (s == e and not gs[g] < s < ge[g]):
            return  # a zero-length task on a gap's edge (or inside busy time) splits nothing
        a, b = gs[g], ge[g]
        starts = ([a] if s > a else []) + ([e] if b > e else [])
        ends = ([s] if s > a else []) + ([b] if b > e else [])
        gs[g: g + 1] = starts
        ge[g: g + 1] = ends


def _bisect_right(values, d, hi, x):  # pragma: no cover - compiled
    """First index in ``values[d, :hi]`` (sorted) whose value is > ``x``."""
    lo = 0
    while lo < hi:
        mid = (lo + hi) // 2
        if x < values[d, mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _earliest(gs, ge, gc, bs, be, bc, d, ready, length):  # pragma: no cover - compiled
    """:meth:`Timeline.earliest` on device ``d`` of the array form (gaps ``gs/ge[d, :gc[d]]``, busy
    intervals ``bs/be[d, :bc[d]]``)."""
    if length <= 0:
        k = _bisect_right(be, d, bc[d], ready)
        if k < bc[d] and bs[d, k] < ready:
            return be[d, k]
        return ready
    k = _bisect_right(ge, d, gc[d], ready)
    while True:
        c = gs[d, k] if gs[d, k] > ready else ready
        if c + length <= ge[d, k]:
            return c
        k += 1


def _insert(gs, ge, gc, bs, be, bc, d, s, e):  # pragma: no cover - compiled
    """:meth:`Timeline.insert` on device ``d`` of the array form (updates the counts ``gc, bc`` in place)."""
    k = _bisect_right(bs, d, bc[d], s)
    while k > 0 and bs[d, k - 1] == s and be[d, k - 1] > e:
        k -= 1
    for j in range(bc[d], k, -1):
        bs[d, j] = bs[d, j - 1]
        be[d, j] = be[d, j - 1]
    bs[d, k] = s
    be[d, k] = e
    bc[d] += 1
    g = _bisect_right(gs, d, gc[d], s) - 1
    if g < 0 or not (gs[d, g] <= s and e <= ge[d, g]) or (s == e and not (gs[d, g] < s and s < ge[d, g])):
        return
    a, b = gs[d, g], ge[d, g]
    left, right = s > a, b > e
    new = int(left) + int(right)
    if new == 0:
        for j in range(g, gc[d] - 1):
            gs[d, j] = gs[d, j + 1]
            ge[d, j] = ge[d, j + 1]
    elif new == 2:
        for j in range(gc[d], g + 1, -1):
            gs[d, j] = gs[d, j - 1]
            ge[d, j] = ge[d, j - 1]
    pos = g
    if left:
        gs[d, pos] = a
        ge[d, pos] = s
        pos += 1
    if right:
        gs[d, pos] = e
        ge[d, pos] = b
    gc[d] += new - 1


def _edge_delay(e, a, b, n_dev, table, latency, per_byte, size):  # pragma: no cover - compiled
    """Integer transfer time of edge ``e`` from device ``a`` to ``b``: the explicit ``table`` (flat
    (n_edges, n_dev, n_dev)) when it is not empty, else :meth:`CostTables.edge_transfer_time`'s rule
    from the flat per-pair ``latency`` and ``per_byte`` rates and the per-edge ``size`` (0 on one device)."""
    if table.shape[0] > 0:
        return table[(e * n_dev + a) * n_dev + b]
    raw = np.ceil(latency[a * n_dev + b] + size[e] * per_byte[a * n_dev + b] - CEIL_SLACK)  # ceil_all, compiled
    return np.int64(raw) if raw > 0 else np.int64(0)


def _sort_by(key, out):  # pragma: no cover - compiled
    """``out`` = the indices of ``key`` in increasing key order (heapsort; keys are distinct)."""
    n = len(key)
    for i in range(n):
        out[i] = i
    for start in range(n // 2 - 1, -1, -1):
        _sift(key, out, start, n)
    for end in range(n - 1, 0, -1):
        out[0], out[end] = out[end], out[0]
        _sift(key, out, 0, end)


def _sift(key, out, i, size):  # pragma: no cover - compiled
    while True:
        c = 2 * i + 1
        if c >= size:
            return
        if c + 1 < size and key[out[c + 1]] > key[out[c]]:
            c += 1
        if key[out[c]] <= key[out[i]]:
            return
        out[i], out[c] = out[c], out[i]
        i = c


_COMPILED: dict[str, Callable[..., Any]] = {}


#: The kernels of this module, callees first.
KERNEL_NAMES = ("_bisect_right", "_earliest", "_insert", "_sift", "_sort_by", "_edge_delay", "_slot", "_send_rule",
                "_schedule")


def compiled_kernels() -> dict[str, Callable[..., Any]]:
    """The ``_earliest``, ``_insert``, ``_edge_delay``, ``_schedule``... kernels by name: compiled (or loaded from
    numba's on-disk cache) on first call, numba imported only then; the plain Python functions instead while
    :func:`dse.util.jit.may_compile` says compiling now would break a running time limit."""
    if not _COMPILED:
        if not may_compile():
            return {name: plain(globals()[name]) for name in KERNEL_NAMES}
        _COMPILED.update(compile_functions(globals(), KERNEL_NAMES))
    return _COMPILED


def list_schedule_population(structure: DagStructure, tables: CostTables, keys: np.ndarray, dev: np.ndarray,
                             insertion: bool, tensor_per_device: bool
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """List-schedule a population: ``keys`` and ``dev`` (pop, n) are the genomes' priority and device genes.

    Per genome the order sorts the tasks by precedence-consistent key (``key'[v] = max(key[v], key'[u])``
    over predecessors ``u``), then topological position; in that order each task starts at the earliest
    time all its inputs have arrived (producer finish + the edge's transfer time, plus under the TF rules
    its send delay) and its device is free: after the device's latest task, or with ``insertion`` in the
    earliest free gap (the :class:`Timeline` rules). A task occupies its device for its time plus, under
    the TF rules, its sends. Returns ``(order, start, finish, release, makespan)``: (pop, n) x 4 and (pop,).
    Runs a compiled kernel (see the module docstring); transfer times are computed in it from the tables'
    per-edge sizes and per-pair rates (or read from explicit tables), never stored per genome.
    """
    dev = np.ascontiguousarray(dev, dtype=np.int64)
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    return compiled_kernels()["_schedule"](
        keys, dev, np.ascontiguousarray(tables.time), structure.topo, structure.topo_pos,
        structure.pred_ptr, structure.pred_task, structure.pred_edge, structure.succ_ptr, structure.succ_task,
        structure.succ_edge, tables.n_dev, insertion,
        *transfer_arguments(tables), sends_occupy(structure, tables, tensor_per_device), tables.send_time)


def sends_occupy(structure: DagStructure, tables: CostTables, tensor_per_device: bool) -> bool:
    """Whether the kernels apply the TF send rule: under ``tensor_per_device``, with edges and a nonzero
    send time on some device (otherwise the rule adds nothing and is skipped)."""
    return bool(tensor_per_device and structure.n_edges and tables.send_time.any())


def transfer_arguments(tables: CostTables) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The compiled kernels' transfer arguments for :func:`_edge_delay`, ``(table, latency, per_byte,
    size)``: the flat explicit (n_edges, n_dev, n_dev) table (empty when the times come from the rates),
    the flat per-pair rates and the per-edge sizes. All read-only, so that a kernel compiles once for
    either kind of tables (numba types a read-only array apart from a writable one)."""
    explicit = tables.transfer_is_explicit("transfer_time")
    table = (np.ascontiguousarray(tables.transfer_time, dtype=np.int64).reshape(-1) if explicit
             else np.zeros(0, dtype=np.int64))
    out = []
    for array in (table, np.ascontiguousarray(tables.link_latency).reshape(-1),
                  np.ascontiguousarray(tables.link_time_per_byte).reshape(-1), np.ascontiguousarray(tables.edge_size)):
        view = array.view()
        view.flags.writeable = False
        out.append(view)
    return out[0], out[1], out[2], out[3]


def _slot(values, count, x):  # pragma: no cover - compiled
    """The index of ``x`` in ``values[:count]``, or ``count`` when it is not there."""
    for q in range(count):
        if values[q] == x:
            return q
    return count


def _send_rule(p, dev, succ_ptr, succ_task, succ_edge, send, remote, send_delay,
               extra):  # pragma: no cover - compiled
    """The TF send rule for genome ``p``: per edge the delay its sends add (``(rank + 1) x send`` of the
    producer's device, where ``rank`` counts the producer's remote devices below the consumer's: sends
    go out in device-index order; 0 on one device) into ``send_delay``, and per task the time its
    device stays busy sending (one send per remote device) into ``extra``; ``remote`` is scratch (one
    slot per device)."""
    n = succ_ptr.shape[0] - 1
    for u in range(n):
        a = dev[p, u]
        count = 0
        for j in range(succ_ptr[u], succ_ptr[u + 1]):  # the distinct remote devices of u's consumers
            b = dev[p, succ_task[j]]
            if b != a and _slot(remote, count, b) == count:
                remote[count] = b
                count += 1
        extra[u] = count * send[a]
        for j in range(succ_ptr[u], succ_ptr[u + 1]):
            b = dev[p, succ_task[j]]
            rank = 0
            for q in range(count):
                if remote[q] < b:
                    rank += 1
            send_delay[succ_edge[j]] = 0 if b == a else (rank + 1) * send[a]


def _schedule(keys, dev, time, topo, topo_pos, pred_ptr, pred_task, pred_edge, succ_ptr, succ_task, succ_edge, n_dev,
              insertion, table, latency, per_byte, size, sends, send):  # pragma: no cover - compiled
    pop, n = dev.shape
    order = np.zeros((pop, n), dtype=np.int64)
    start = np.zeros((pop, n), dtype=np.int64)
    finish = np.zeros((pop, n), dtype=np.int64)
    release = np.zeros((pop, n), dtype=np.int64)
    makespan = np.zeros(pop, dtype=np.int64)
    cap = n + 2 if insertion else 1
    gs = np.zeros((n_dev, cap), dtype=np.int64)
    ge = np.zeros((n_dev, cap), dtype=np.int64)
    bs = np.zeros((n_dev, cap), dtype=np.int64)
    be = np.zeros((n_dev, cap), dtype=np.int64)
    gc = np.zeros(n_dev, dtype=np.int64)
    bc = np.zeros(n_dev, dtype=np.int64)
    avail = np.zeros(n_dev, dtype=np.int64)
    key = np.zeros(n, dtype=np.int64)
    sort_key = np.zeros(n, dtype=np.int64)
    bucket = np.zeros(4 * n + 2, dtype=np.int64)
    send_delay = np.zeros(size.shape[0], dtype=np.int64)  # per edge
    extra = np.zeros(n, dtype=np.int64)
    remote = np.zeros(n_dev, dtype=np.int64)
    for p in range(pop):
        if sends:
            _send_rule(p, dev, succ_ptr, succ_task, succ_edge, send, remote, send_delay, extra)
        for v in topo:  # precedence-consistent keys
            kv = keys[p, v]
            for j in range(pred_ptr[v], pred_ptr[v + 1]):
                u = pred_task[j]
                if key[u] > kv:
                    kv = key[u]
            key[v] = kv
            sort_key[v] = kv * n + topo_pos[v]
        low, high = key.min() if n else 0, key.max() if n else 0
        if high - low < 4 * n:  # counting sort by key; visiting tasks in topological order keeps ties in it
            bucket[: high - low + 2] = 0
            for v in range(n):
                bucket[key[v] - low + 1] += 1
            for b in range(1, high - low + 2):
                bucket[b] += bucket[b - 1]
            for v in topo:
                order[p, bucket[key[v] - low]] = v
                bucket[key[v] - low] += 1
        else:
            _sort_by(sort_key, order[p])  # keys are distinct (topological positions are)
        avail[:] = 0
        if insertion:
            gs[:, 0] = 0
            ge[:, 0] = OPEN_END
            gc[:] = 1
            bc[:] = 0
        top = 0
        for k in range(n):
            v = order[p, k]
            d = dev[p, v]
            ready = 0
            for j in range(pred_ptr[v], pred_ptr[v + 1]):
                u = pred_task[j]
                e = pred_edge[j]
                delay = _edge_delay(e, dev[p, u], d, n_dev, table, latency, per_byte, size)
                arrive = finish[p, u] + delay + send_delay[e]
                if arrive > ready:
                    ready = arrive
            t = time[v, d]
            occupy = t + extra[v]
            if insertion:
                s = _earliest(gs, ge, gc, bs, be, bc, d, ready, occupy)
                _insert(gs, ge, gc, bs, be, bc, d, s, s + occupy)
            else:
                s = ready if ready > avail[d] else avail[d]
                avail[d] = s + occupy
            start[p, v] = s
            finish[p, v] = s + t
            release[p, v] = s + occupy
            if s + t > top:
                top = s + t
        makespan[p] = top
    return order, start, finish, release, makespan
