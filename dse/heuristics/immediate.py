"""Immediate-mode mapping heuristics on a DAG: MCT and MET.

Maheswaran, Ali, Siegel, Hensgen, Freund, "Dynamic mapping of a class of independent tasks onto
heterogeneous computing systems", JPDC 59(2), 1999; Braun, Siegel, Beck et al., "A comparison of
eleven static heuristics for mapping a class of independent tasks onto heterogeneous distributed
computing systems", JPDC 61(6), 2001.

Tasks arrive one at a time and each is mapped at once; on a DAG they arrive in topological order
(the structure's ``topo``: among ready tasks the lowest index first), each when its predecessors
are placed. Timing is the ready-set engine's (:mod:`dse.heuristics.ready_list`: inputs' arrival
and the device's ready time, no insertion).

* ``mct`` (minimum completion time): the device where the task completes earliest
  (ties: lower device index);
* ``met`` (minimum execution time): the device where the task's own time is smallest, whatever
  its load (ties: earlier completion, then lower device index).

The result is decoded with the problem's own decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import HeuristicResult
from dse.heuristics.ready_list import Ready, ReadyState, schedule_by_rule
from dse.mapping.dag.structure import OPEN_END

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def _first_arrived(state: ReadyState, ready: Ready) -> int:
    return int(state.g.topo_pos[ready.tasks].argmin())


def _mct(state: ReadyState, ready: Ready) -> tuple[int, int]:
    row = _first_arrived(state, ready)
    return row, int(ready.row(row)[2].argmin())


def _met(state: ReadyState, ready: Ready) -> tuple[int, int]:
    row = _first_arrived(state, ready)
    cand, _, finish = ready.row(row)
    own = np.where(cand, state.time[ready.tasks[row]], OPEN_END)
    return row, int(np.lexsort((np.arange(len(own)), finish, own))[0])


def mct(problem: DagProblem) -> HeuristicResult:
    return schedule_by_rule(problem, "mct", _mct)


def met(problem: DagProblem) -> HeuristicResult:
    return schedule_by_rule(problem, "met", _met)
