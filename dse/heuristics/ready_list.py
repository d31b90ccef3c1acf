"""The ready-set engine shared by the dynamic list schedulers (ETF, FLB, DPS, MCT, MET, MinMin...).

:func:`ready_list_schedule` keeps the set of *ready* tasks (every predecessor already placed)
and, at each step, the earliest start and finish of every ready task on every device it may
use, as one ``(ready, devices)`` numpy array each (a whole ready set at once, no per-pair loop).
A *rule* (``(state, ready) -> (row, device)``) picks one ready task and its device; the engine
places it, then updates its successors' data-ready times and the bookkeeping the rules read.

Timing is the machine-ready-time model of the batch-mode literature (Maheswaran et al. 1999,
Braun et al. 2001) and of ETF (Hwang et al. 1989): a task starts at the later of its inputs'
arrival on that device (producer finish plus the edge's transfer time, zero on the same device)
and the end of the device's last placed task, no insertion into gaps. In per-edge mode decoding
``genome(devices, order)`` with ``insertion=False`` reproduces that timing exactly; with
``tensor_per_device`` the send rule is not in the estimate (a task's consumers are not placed
yet). Each heuristic's result is ``genome(devices, order)`` decoded by the problem's own decoder
(``problem.insertion``), so that its genome seeds the searches as it is: on a problem that decodes
with insertion a task may then start in an earlier gap than the engine's estimate, and only the
decoded makespan counts. Candidate devices are those of
:class:`~dse.heuristics.base.Placement` (colocation groups follow their first placed member;
memory capacities are respected while some allowed device still fits).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import Graph, HeuristicResult, Placement, finish, graph_of
from dse.mapping.dag.structure import OPEN_END

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


class Ready:
    """The ready set at one step: ``tasks`` (k,) in increasing index, and per task and device
    ``start`` / ``finish`` (k, m) with :data:`OPEN_END` where ``cand`` (k, m) is False.

    The (k, m) arrays are computed on first use; :meth:`row` gives one task's without them (a rule
    that ranks tasks by their own numbers, such as DPS or MCT, then costs O(k + m) a step).
    """

    def __init__(self, tasks: np.ndarray, times: Callable[[np.ndarray], tuple[np.ndarray, ...]]) -> None:
        self.tasks = tasks
        self._times = times
        self._all: tuple[np.ndarray, ...] | None = None

    def _every(self) -> tuple[np.ndarray, ...]:
        if self._all is None:
            self._all = self._times(self.tasks)
        return self._all

    @property
    def cand(self) -> np.ndarray:
        return self._every()[0]

    @property
    def start(self) -> np.ndarray:
        return self._every()[1]

    @property
    def finish(self) -> np.ndarray:
        return self._every()[2]

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(cand, start, finish)`` of the ``i``-th ready task, each (m,)."""
        if self._all is not None:
            return self._all[0][i], self._all[1][i], self._all[2][i]
        cand, start, finish = self._times(self.tasks[i : i + 1])
        return cand[0], start[0], finish[0]


class ReadyState:
    """What the rules may read besides the ready set (all arrays indexed by task or device).

    ``avail[d]``: when device ``d`` ends its last placed task. ``last_arrival[v]`` (units of
    1/``g.S``): the latest ``finish(u) + mean transfer(u, v)`` over the placed predecessors ``u``
    of ``v`` (0 for an entry task), and ``enabling[v]`` the device of that predecessor (-1 for an
    entry task): FLB's last message arrival time and enabling processor, DPS's dynamic top level.
    """

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.avail = np.zeros(g.m, dtype=np.int64)
        self.last_arrival = np.zeros(g.n, dtype=g.wbar.dtype)
        self.enabling = np.full(g.n, -1, dtype=np.int64)
        self.time = np.asarray(g.time, dtype=np.int64)


#: ``(state, ready) -> (row of the chosen task in ready.tasks, its device)``.
Rule = Callable[[ReadyState, Ready], tuple[int, int]]


def _needs(g: Graph) -> np.ndarray:
    """Per task and device the memory that placing it (with its whole colocation group) adds."""
    need = np.asarray(g.tables.mem, dtype=np.int64).copy()
    for members in g.members:
        need[members] = need[members].sum(axis=0)
    return need


def ready_list_schedule(g: Graph, rule: Rule) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Place every task of ``g`` one at a time as ``rule`` picks from the ready set.

    Returns ``(devices, order, start, finish)``: the order of the picks (always topological) and
    the engine's own timing (see the module docstring).
    """
    n, m = g.n, g.m
    tables = g.tables
    state = ReadyState(g)
    place = Placement(g)
    need = _needs(g)
    memory = bool(g.problem.memory)
    time = state.time
    data_ready = np.zeros((n, m), dtype=np.int64)
    waiting = np.array([len(p) for p in g.preds], dtype=np.int64)
    is_ready = waiting == 0
    succs = [(np.array([w for w, _ in row], dtype=np.int64), np.array([e for _, e in row], dtype=np.int64))
             for row in g.succs]
    scale = g.S
    devices = np.arange(m)
    order = np.zeros(n, dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    fin = np.zeros(n, dtype=np.int64)

    def times(tasks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(cand, start, finish)`` (k, m) of ``tasks`` now (see :class:`Ready`)."""
        cand = g.mask[tasks].copy()
        if memory:
            fits = cand & (place.used + need[tasks] <= place.cap)
            some = fits.any(axis=1)
            cand[some] = fits[some]
        if g.members:
            gid = g.group[tasks]
            lock = np.where(gid >= 0, place.lock[np.maximum(gid, 0)], -1)
            locked = lock >= 0
            cand[locked] = devices[None, :] == lock[locked, None]
        s = np.maximum(data_ready[tasks], state.avail[None, :])
        f = s + time[tasks]
        return cand, np.where(cand, s, OPEN_END), np.where(cand, f, OPEN_END)

    for step in range(n):
        ready = Ready(np.flatnonzero(is_ready), times)
        row, d = rule(state, ready)
        v = int(ready.tasks[row])
        place.assign(v, int(d))
        d = int(place.dev[v])
        order[step] = v
        start[v] = max(int(data_ready[v, d]), int(state.avail[d]))
        fin[v] = start[v] + int(time[v, d])
        state.avail[d] = fin[v]
        is_ready[v] = False
        w, e = succs[v]
        if len(w):
            delay = tables.edge_transfer_time(e[:, None], d, devices[None, :])
            np.maximum.at(data_ready, w, fin[v] + delay)
            arrival = fin[v] * scale + g.cbar[e]
            for k in range(len(w)):  # ties keep the predecessor placed first
                if arrival[k] > state.last_arrival[w[k]]:
                    state.last_arrival[w[k]] = arrival[k]
                    state.enabling[w[k]] = d
            np.subtract.at(waiting, w, 1)
            is_ready[w[waiting[w] == 0]] = True
    return place.dev.copy(), order, start, fin


def best_device(ready: Ready) -> np.ndarray:
    """Per ready task the candidate device with the earliest finish (ties: lower index)."""
    return ready.finish.argmin(axis=1)


def earliest_finish(ready: Ready) -> np.ndarray:
    """Per ready task its earliest finish over its candidate devices (the MCT of the batch literature)."""
    return ready.finish.min(axis=1)


def schedule_by_rule(problem: DagProblem, name: str, rule: Rule) -> HeuristicResult:
    """Heuristic ``name``'s result on ``problem``: :func:`ready_list_schedule` with ``rule``, decoded with the
    problem's own insertion setting."""
    devices, order, _, _ = ready_list_schedule(graph_of(problem), rule)
    return finish(problem, name, devices, order, insertion=problem.insertion)
