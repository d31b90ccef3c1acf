"""Batch-mode mapping heuristics on a DAG's ready set: MinMin, MaxMin, Sufferage and Duplex.

Maheswaran, Ali, Siegel, Hensgen, Freund, "Dynamic mapping of a class of independent tasks onto
heterogeneous computing systems", JPDC 59(2), 1999 (MinMin, MaxMin, Sufferage); Braun, Siegel,
Beck et al., "A comparison of eleven static heuristics for mapping a class of independent tasks
onto heterogeneous distributed computing systems", JPDC 61(6), 2001 (Duplex).

The papers map a batch of independent tasks; on a DAG the batch is the *ready set* (every
predecessor placed), the variant of the DAG-scheduling literature, re-formed after every pick.
Each task's completion time on a device is the ready-set engine's
(:mod:`dse.heuristics.ready_list`: inputs' arrival and the device's ready time, no insertion).

* ``minmin``: the ready task whose earliest completion time is smallest goes to that device;
* ``maxmin``: the ready task whose earliest completion time is largest goes to that device;
* ``sufferage``: the ready task with the largest *sufferage* (its second-earliest completion
  time minus its earliest; 0 with one candidate device) goes to its earliest-completion device.
  One task per step (the DAG variant), not Maheswaran's pass that commits one task per machine;
  ties: smaller earliest completion, then lower index;
* ``duplex``: MinMin and MaxMin both run; the one with the smaller decoded makespan is kept
  (ties: MinMin).

Other ties: lower task index, lower device index. The result is decoded with the problem's own decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import HeuristicResult
from dse.heuristics.ready_list import (
    Ready,
    ReadyState,
    best_device,
    earliest_finish,
    schedule_by_rule,
)

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def _min_min(state: ReadyState, ready: Ready) -> tuple[int, int]:
    row = int(earliest_finish(ready).argmin())
    return row, int(best_device(ready)[row])


def _max_min(state: ReadyState, ready: Ready) -> tuple[int, int]:
    row = int(earliest_finish(ready).argmax())
    return row, int(best_device(ready)[row])


def sufferage_values(ready: Ready) -> np.ndarray:
    """Per ready task its second-earliest minus its earliest completion time (0 with one candidate)."""
    if ready.finish.shape[1] < 2:
        return np.zeros(len(ready.tasks), dtype=np.int64)
    two = np.partition(ready.finish, 1, axis=1)[:, :2]
    return np.where(ready.cand.sum(axis=1) > 1, two[:, 1] - two[:, 0], 0)


def _sufferage(state: ReadyState, ready: Ready) -> tuple[int, int]:
    row = int(np.lexsort((np.arange(len(ready.tasks)), earliest_finish(ready), -sufferage_values(ready)))[0])
    return row, int(best_device(ready)[row])


def minmin(problem: DagProblem) -> HeuristicResult:
    return schedule_by_rule(problem, "minmin", _min_min)


def maxmin(problem: DagProblem) -> HeuristicResult:
    return schedule_by_rule(problem, "maxmin", _max_min)


def sufferage(problem: DagProblem) -> HeuristicResult:
    return schedule_by_rule(problem, "sufferage", _sufferage)


def duplex(problem: DagProblem) -> HeuristicResult:
    """The better of :func:`minmin` and :func:`maxmin` by decoded makespan (ties: MinMin), named ``duplex``."""
    a, b = minmin(problem), maxmin(problem)
    best = a if a.makespan <= b.makespan else b
    return HeuristicResult("duplex", best.devices, best.order, best.makespan, best.insertion)
