"""HEFT: Topcuoglu, Hariri, Wu, "Performance-effective and low-complexity task scheduling
for heterogeneous computing", IEEE TPDS 13(3), 2002.

* Upward rank ``rank_u(i) = w̄(i) + max_{(i,j)} (c̄(i,j) + rank_u(j))`` with ``w̄`` the mean
  computation time over the devices the task may run on (its allowed devices, intersected
  over its colocation group) and ``c̄`` the mean of ``transfer_time[e, a, b]`` over the
  ``m (m - 1)`` pairs ``a != b`` (0 with one device; with ``tensor_per_device`` the mean
  ``send_time`` is added). Ranks are computed level by level with numpy, in exact scaled
  integers when they fit (so exact ties stay ties).
* Tasks are taken by decreasing rank (ties: lower index; a ready list, so zero-cost ties
  can never break precedence), each onto the device with the earliest finish time with
  insertion (ties: lower device index), searching each device's sorted busy intervals
  with bisect.

The returned order is that rank order with ``insertion=True``: decoding it with insertion
reproduces HEFT's placement exactly (per-edge mode; with ``tensor_per_device`` sends the
decoded makespan is the one reported). Memory capacities are respected when the problem
has a memory constraint and some allowed device still fits the task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dse.heuristics.base import Graph, HeuristicResult, finish, graph_of, list_schedule

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def heft_plan(problem: DagProblem, graph: Graph | None = None):
    """HEFT's own ``(devices, order, start, finish)`` before decoding."""
    g = graph or graph_of(problem)
    return list_schedule(g, g.upward_rank())


def heft(problem: DagProblem) -> HeuristicResult:
    devices, order, _, _ = heft_plan(problem)
    return finish(problem, "heft", devices, order, insertion=True)
