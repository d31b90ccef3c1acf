"""PEFT: Arabnejad & Barbosa, "List scheduling algorithm for heterogeneous systems by an
optimistic cost table", IEEE TPDS 25(3), 2014.

* Optimistic cost table, from the exits up (``OCT(exit, p) = 0``)::

      OCT(i, p) = max_{j in succ(i)} min_{w} ( OCT(j, w) + time(j, w) + c̄(i, j) [w != p] )

  with ``w`` over the devices ``j`` may run on and ``c̄`` the mean communication cost
  (as in HEFT). Computed level by level with numpy (exact scaled integers when they fit).
* ``rank_oct(i)`` = mean of ``OCT(i, p)`` over the devices ``i`` may run on; ready tasks
  are taken by decreasing ``rank_oct`` (ties: lower index).
* Each task goes to the device minimizing ``O_EFT = EFT + OCT(i, p)`` with insertion
  (ties: lower device index).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import Graph, HeuristicResult, finish, graph_of, list_schedule

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def optimistic_cost_table(g: Graph) -> np.ndarray:
    """OCT (n, m) in units of 1/S (``g.S``); entries on devices a task may not use are meaningless."""
    n, m = g.n, g.m
    dtype = g.wbar.dtype
    big = np.iinfo(np.int64).max // 4 if dtype.kind == "i" else np.inf
    oct_ = np.zeros((n, m), dtype=dtype)
    A = np.zeros((n, m), dtype=dtype)  # OCT(j, w) + time(j, w) on allowed w, "infinite" elsewhere
    scaled_time = g.time * g.S
    for level in g.up_edges:
        Aj = A[level.task]  # (out-edges of the level, m)
        best_other = Aj.min(axis=1, keepdims=True) + g.cbar[level.edge][:, None]
        tasks = level.tasks
        oct_[tasks] = level.max(np.minimum(Aj, best_other), 0)
        A[tasks] = np.where(g.mask[tasks], oct_[tasks] + scaled_time[tasks], big)
    return oct_


def peft_plan(problem: DagProblem, graph: Graph | None = None):
    """PEFT's own ``(devices, order, start, finish)`` before decoding."""
    g = graph or graph_of(problem)
    table = optimistic_cost_table(g)
    k = g.mask.sum(axis=1)
    total = np.where(g.mask, table, 0).sum(axis=1)
    if g.wbar.dtype.kind == "i":
        L = int(np.lcm.reduce(np.unique(k))) if len(k) else 1
        rank = total * (L // k)  # mean * L, exact
    else:
        rank = total / k
    return list_schedule(g, rank, bias=table)


def peft(problem: DagProblem) -> HeuristicResult:
    devices, order, _, _ = peft_plan(problem)
    return finish(problem, "peft", devices, order, insertion=True)
