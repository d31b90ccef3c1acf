"""CPOP (Critical-Path-On-a-Processor): Topcuoglu, Hariri, Wu, IEEE TPDS 13(3), 2002.

* ``priority(i) = rank_u(i) + rank_d(i)`` (mean costs as in :mod:`dse.heuristics.heft`);
  ``|CP|`` is the largest priority.
* The critical path starts at the lowest-index entry task with priority ``|CP|`` and
  follows, at each step, the lowest-index successor with priority ``|CP|``.
* The critical-path device is the one minimizing the summed computation time of the path
  among the devices every path task may use (ties: lower index); if no device may run the
  whole path, path tasks are placed like the others.
* Ready tasks are taken by decreasing priority (ties: lower index); a path task goes to the
  critical-path device (earliest gap there, insertion), any other to the device with the
  earliest finish time with insertion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import Graph, HeuristicResult, finish, graph_of, list_schedule, quantize

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def critical_path(g: Graph) -> tuple[np.ndarray, np.ndarray]:
    """``(priority, path)``: CPOP's priorities and its critical path (task indices, entry first)."""
    prio = g.upward_rank() + g.downward_rank()
    q = quantize(prio)
    if g.n == 0:
        return prio, np.zeros(0, dtype=np.int64)
    top = q.max()
    entries = [v for v in range(g.n) if not g.preds[v] and q[v] == top]
    path = []
    v = entries[0] if entries else int(np.argmax(q))
    while True:
        path.append(v)
        nxt = sorted({w for w, _ in g.succs[v] if q[w] == top})
        if not nxt:
            break
        v = nxt[0]
    return prio, np.asarray(path, dtype=np.int64)


def cpop_plan(problem: DagProblem, graph: Graph | None = None):
    """CPOP's own ``(devices, order, start, finish)`` before decoding."""
    g = graph or graph_of(problem)
    prio, path = critical_path(g)
    common = g.mask[path].all(axis=0) if len(path) else np.zeros(g.m, dtype=bool)
    forced = np.zeros(g.n, dtype=bool)
    device = None
    if common.any():
        cost = np.where(common, g.time[path].sum(axis=0), np.iinfo(np.int64).max)
        device = int(np.argmin(cost))
        forced[path] = True
    return list_schedule(g, prio, forced=forced, forced_device=device)


def cpop(problem: DagProblem) -> HeuristicResult:
    devices, order, _, _ = cpop_plan(problem)
    return finish(problem, "cpop", devices, order, insertion=True)
