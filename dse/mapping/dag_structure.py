"""The one description of a task DAG's structure that the dag decoder, heuristics and CP-SAT model read.

:class:`DagStructure` holds, built once per problem with numpy:

* ``topo`` (a topological order, smallest index first among ready tasks) and
  ``topo_pos`` (each task's position in it);
* padded predecessor and successor arrays (``pred_task``/``pred_edge``,
  ``succ_task``/``succ_edge``) whose padding is the sentinel task ``n`` and
  the sentinel edge ``n_edges``;
* ``depth_levels`` (tasks by longest edge count from a source) and
  ``height_levels`` (by longest edge count to a sink);
* the TF paper's send rule: :meth:`DagStructure.remote_rank` (which remote
  devices receive a producer's tensor and in which order) and
  :meth:`DagStructure.send_delays` for one genome;

and the insertion search shared by every insertion-based scheduler,
:func:`earliest_gap` / :func:`insert_interval`.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from dse.cost import CostTables


def _padded(owner: np.ndarray, other: np.ndarray, n: int, n_edges: int) -> tuple[np.ndarray, np.ndarray]:
    """Per task the ``other`` ends and edge indices of its edges (grouped by ``owner``, in edge order), padded."""
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=n)
    width = max(int(counts.max(initial=0)), 1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if n else np.zeros(0, dtype=np.int64)
    col = np.arange(len(order)) - np.repeat(starts, counts)
    task = np.full((n, width), n, dtype=np.int64)
    edge = np.full((n, width), n_edges, dtype=np.int64)
    rows = owner[order]
    task[rows, col] = other[order]
    edge[rows, col] = order
    return task, edge


def _levels(first: np.ndarray, neighbours: np.ndarray, n: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Longest edge count to each task along ``neighbours`` (padded, sentinel ``n``), visiting in ``first``
    order; returns the counts and the tasks of each count."""
    level = np.zeros(n + 1, dtype=np.int64)
    for v in first:
        nb = neighbours[v]
        level[v] = (level[nb] + 1).max() if nb[0] < n else 0
    level = level[:n]
    order = np.argsort(level, kind="stable")
    bounds = np.searchsorted(level[order], np.arange(int(level.max(initial=-1)) + 2))
    return level, [order[bounds[k] : bounds[k + 1]] for k in range(len(bounds) - 1)]


@dataclass(frozen=True, eq=False)
class DagStructure:
    """Topology of the task DAG of ``tables`` (see the module docstring)."""

    n: int
    n_edges: int
    src: np.ndarray
    dst: np.ndarray
    topo: np.ndarray
    topo_pos: np.ndarray
    pred_task: np.ndarray
    pred_edge: np.ndarray
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
        pred_task, pred_edge = _padded(dst, src, n, n_edges)
        succ_task, succ_edge = _padded(src, dst, n, n_edges)
        depth, depth_levels = _levels(topo, pred_task, n)
        _, height_levels = _levels(topo[::-1], succ_task, n)
        first_out = np.full(n, n_edges, dtype=np.int64)
        producers, first = np.unique(src, return_index=True)
        first_out[producers] = first
        for array in (src, dst, topo, topo_pos, pred_task, pred_edge, succ_task, succ_edge, depth, first_out):
            array.setflags(write=False)
        return cls(n, n_edges, src, dst, topo, topo_pos, pred_task, pred_edge, succ_task, succ_edge, depth,
                   tuple(depth_levels), tuple(height_levels), first_out)

    def predecessors(self, v: int) -> list[tuple[int, int]]:
        """``(task, edge)`` pairs entering ``v``."""
        row = self.pred_task[v]
        return [(int(u), int(e)) for u, e in zip(row, self.pred_edge[v], strict=True) if u < self.n]

    def successors(self, v: int) -> list[tuple[int, int]]:
        """``(task, edge)`` pairs leaving ``v``."""
        row = self.succ_task[v]
        return [(int(w), int(e)) for w, e in zip(row, self.succ_edge[v], strict=True) if w < self.n]

    def remote_rank(self, dev: np.ndarray, n_dev: int) -> tuple[np.ndarray, np.ndarray]:
        """The TF send rule for a population of assignments ``dev`` (pop, n).

        Returns ``remote`` (bool (pop, n + 1, n_dev)): the remote devices that
        receive each producer's tensor (row ``n`` is the sentinel, all false);
        and ``rank``: how many of those come before each device (sends go out
        in device-index order).
        """
        pop = len(dev)
        remote = np.zeros((pop, self.n + 1, n_dev), dtype=bool)
        if self.n_edges:
            dd = dev[:, self.dst]
            r, e = np.nonzero(dev[:, self.src] != dd)
            remote[r, self.src[e], dd[r, e]] = True
        rank = np.cumsum(remote, axis=2) - remote
        return remote, rank

    def send_delays(self, dev: np.ndarray, transfer_time: np.ndarray, send_time: np.ndarray,
                    tensor_per_device: bool) -> tuple[np.ndarray, np.ndarray]:
        """For one assignment ``dev`` (n,): per edge the delay from producer finish to arrival, and per
        task the time its device stays busy sending after its compute (zero without the TF rule)."""
        if not self.n_edges:
            return np.zeros(0, dtype=np.int64), np.zeros(self.n, dtype=np.int64)
        a, b = dev[self.src], dev[self.dst]
        delay = transfer_time[np.arange(self.n_edges), a, b].astype(np.int64)
        extra = np.zeros(self.n, dtype=np.int64)
        if tensor_per_device:
            remote, rank = self.remote_rank(dev[None, :], len(send_time))
            remote, rank = remote[0, : self.n], rank[0]
            cross = a != b
            delay = delay + np.where(cross, (rank[self.src, b] + 1) * send_time[a], 0)
            extra = remote.sum(axis=1) * send_time[dev]
        return delay, extra


def earliest_gap(busy: list[tuple[int, int]], ends: list[int], ready: int, length: int) -> int:
    """Earliest start >= ``ready`` of a free slot of ``length`` among sorted disjoint busy intervals.

    ``busy`` holds the intervals ``(start, end)`` in sorted order and ``ends``
    their ends (nondecreasing, since the intervals are disjoint); the search
    starts at the first interval ending after ``ready`` (bisect).
    """
    k = bisect.bisect_right(ends, ready)
    cand = ready
    for j in range(k, len(busy)):
        s, e = busy[j]
        if s >= cand + length:
            break
        if e > cand:
            cand = e
    return cand


def insert_interval(busy: list[tuple[int, int]], ends: list[int], s: int, e: int) -> None:
    """Insert the busy interval ``(s, e)`` keeping ``busy`` and ``ends`` sorted."""
    pos = bisect.bisect(busy, (s, e))
    busy.insert(pos, (s, e))
    ends.insert(pos, e)
