"""FLB (Fast Load Balancing): Radulescu, van Gemund, "FLB: Fast Load Balancing for
distributed-memory machines", ICPP 1999, and "Fast and effective task scheduling in
heterogeneous systems", HCW 2000.

FLB places, at each step, the ready task that can start the earliest, looking at only two
devices per task: its *enabling processor* (the device of the predecessor whose message arrives
last) and the device that becomes idle the earliest. A ready task's candidates here:

* its enabling device (from :class:`~dse.heuristics.ready_list.ReadyState`: the predecessor with
  the latest ``finish + mean transfer``; an entry task has none), when it may use it;
* the candidate device with the earliest ready time (ties: lower index).

Among those pairs the earliest start wins (ties: the larger bottom level, HEFT's ``rank_u``
with mean costs, then the lower task index, then the enabling device). On identical devices
with uniform links this is the paper's choice (its lemma: the earliest-starting task starts on
one of those two devices); with heterogeneous times and links it is the same two-candidate rule,
which no longer guarantees the earliest start over all devices. Start times are the ready-set
engine's (no insertion); the result is decoded with the problem's own decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import HeuristicResult, finish, graph_of
from dse.heuristics.ready_list import Ready, ReadyState, ready_list_schedule
from dse.mapping.dag.structure import OPEN_END

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def flb(problem: DagProblem) -> HeuristicResult:
    g = graph_of(problem)
    level = g.upward_rank()

    def rule(state: ReadyState, ready: Ready) -> tuple[int, int]:
        k = len(ready.tasks)
        rows = np.arange(k)
        idle = np.where(ready.cand, state.avail[None, :], OPEN_END).argmin(axis=1)
        ep = state.enabling[ready.tasks]
        has_ep = (ep >= 0) & ready.cand[rows, np.maximum(ep, 0)]
        ep_start = np.where(has_ep, ready.start[rows, np.maximum(ep, 0)], OPEN_END)
        idle_start = ready.start[rows, idle]
        use_ep = ep_start <= idle_start
        best = np.where(use_ep, ep_start, idle_start)
        row = int(np.lexsort((rows, -level[ready.tasks], best))[0])
        return row, int(ep[row] if use_ep[row] else idle[row])

    devices, order, _, _ = ready_list_schedule(g, rule)
    return finish(problem, "flb", devices, order, insertion=problem.insertion)
