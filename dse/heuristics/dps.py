"""DPS (Dynamic Priority Scheduling): Ahmad, Dhodhi, Ul-Mustafa, "DPS: dynamic priority
scheduling heuristic for heterogeneous computing systems", IEE Proc. Computers and Digital
Techniques 145(6), 1998.

A task's priority is recomputed at every step as its bottom level minus its *dynamic* top level:

* bottom level: HEFT's ``rank_u`` with mean computation and communication costs (static);
* dynamic top level: the latest ``finish(u) + mean transfer(u, v)`` over its predecessors ``u``
  as they were actually placed (0 for an entry task), which grows as the schedule does.

The ready task with the largest priority (ties: lower index) goes to the device where it
finishes the earliest (ties: lower index). Times are the ready-set engine's
(:mod:`dse.heuristics.ready_list`: inputs' arrival and the device's ready time, no insertion);
the result is decoded with the problem's own decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dse.heuristics.base import HeuristicResult, finish, graph_of
from dse.heuristics.ready_list import Ready, ReadyState, ready_list_schedule

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def dps(problem: DagProblem) -> HeuristicResult:
    g = graph_of(problem)
    bottom = g.upward_rank()

    def rule(state: ReadyState, ready: Ready) -> tuple[int, int]:
        priority = bottom[ready.tasks] - state.last_arrival[ready.tasks]
        row = int(priority.argmax())
        return row, int(ready.row(row)[2].argmin())

    devices, order, _, _ = ready_list_schedule(g, rule)
    return finish(problem, "dps", devices, order, insertion=problem.insertion)
