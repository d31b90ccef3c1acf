"""ETF (Earliest Task First): Hwang, Chow, Anger, Lee, "Scheduling precedence graphs in systems
with interprocessor communication times", SIAM J. Comput. 18(2), 1989.

At each step every ready task is tried on every device it may use; the pair with the earliest
*start* time is placed (ties: the larger static level, then the lower task index, then the lower
device index). The static level is the longest path of mean computation time from the task to
an exit, the task included, communication ignored (Hwang et al.'s ``SL``; the mean is over the
devices the task may use). Start times are the ready-set engine's
(:mod:`dse.heuristics.ready_list`: inputs' arrival and the device's ready time, no insertion),
the paper's model with heterogeneous times and per-pair transfer times. The result is decoded
with the problem's own decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import HeuristicResult, finish, graph_of
from dse.heuristics.ready_list import Ready, ReadyState, ready_list_schedule
from dse.heuristics.schedulers import remaining_work

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def etf(problem: DagProblem) -> HeuristicResult:
    g = graph_of(problem)
    level = remaining_work(g)

    def rule(state: ReadyState, ready: Ready) -> tuple[int, int]:
        first = ready.start.min(axis=1)
        rows = np.flatnonzero(first == first.min())
        row = int(rows[np.argmax(level[ready.tasks[rows]])])  # first of the largest: lowest index
        return row, int(ready.start[row].argmin())

    devices, order, _, _ = ready_list_schedule(g, rule)
    return finish(problem, "etf", devices, order, insertion=problem.insertion)
