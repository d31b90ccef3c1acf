"""Local schedulers of the TF paper (Mayer, Mayer, Laich, DIDL 2017; repository
``mayerrn/tensorflowPartitioningAndScheduling``, ``Code/PartSchedSimulation/src/scheduler``).

Each scheduler is ``(problem, devices) -> order``: given a device per task it runs a
small event simulation of the devices' queues and returns the tasks in the order they
start. The simulation is work-conserving and non-preemptive: a device that is free takes,
among its tasks whose inputs have all arrived, the one its rule prefers; a device with
nothing arrived waits for the next arrival. Transfer timing is the decoder's (per edge, or
the TF rules with ``tensor_per_device``: one tensor per remote device, sends after the
compute in device-index order, each ``send_time`` long, the device busy until they end).

Every start is then ``max(inputs arrived, the device's previous task released)``, which is
the non-insertion decoder's rule, so decoding ``genome(devices, order)`` with
``insertion=False`` reproduces the simulation exactly (tests check it). With strictly
positive task times the insertion decoder reproduces it too (no idle gap ever precedes a
waiting task on a work-conserving device).

Rules (the task a free device takes; remaining ties: topological position):

* ``fifo`` (``FifoScheduler``): the task whose inputs arrived first.
* ``lro`` (``LargestRemainedOperationFirstScheduler``, "largest remaining operations"):
  the largest *remaining work*, the longest path of work (mean time over the task's
  devices, the analogue of ``#operations``) from the task to an exit, task included,
  communication ignored; this is the repository's ``remainedOperationsTillSinkNode``
  (a longest path, not the sum over all descendants).
* ``pct`` (``LargestRemainedTimeToFinishFirst``, "PCT"): the largest remaining time to
  finish with this partition: ``time[i, dev i] + max over successors (transfer delay +
  their value)``, i.e. the bottom level / critical path to the exit.
* ``msr`` (``HighDegreeVerticesFirstScheduler``, abbreviated "MSR" by the repository's
  ``Scheduler.abbreavatonForSchedulingName``): the largest successor score: per
  successor +1; if it is on another device +1 more; if this task is then its last missing
  input +1 more; and if that successor's device has nothing to do right now +5 more.
  Ties: larger ``pct`` value. It favours tasks that release work to idle devices.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import Graph, graph_of, quantize

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

RULES = ("fifo", "lro", "pct", "msr")


def edge_delays(g: Graph, dev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per edge: delay from producer finish to arrival; per task: send time after its compute
    (the decoder's rule, :meth:`~dse.mapping.dag.structure.DagStructure.send_delays`)."""
    return g.structure.send_delays(dev, g.tables, g.tf)


def remaining_work(g: Graph) -> np.ndarray:
    """Longest path of work (mean time) from each task to an exit, the task included (scaled by S)."""
    out = np.zeros(g.n, dtype=g.wbar.dtype)
    for level in g.up_edges:
        out[level.tasks] = g.wbar[level.tasks] + level.max(out[level.task], 0)
    return out


def remaining_time(g: Graph, dev: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Bottom level with this partition: own time plus the longest (delay + bottom level) over successors."""
    T = g.time[np.arange(g.n), dev]
    out = np.zeros(g.n, dtype=np.int64)
    for level in g.up_edges:
        out[level.tasks] = T[level.tasks] + level.max(off[level.edge] + out[level.task], 0)
    return out


def simulate(problem: DagProblem, devices: np.ndarray, rule: str, graph: Graph | None = None):
    """Run the device-queue simulation; returns ``(order, start, finish, release, makespan)``."""
    if rule not in RULES:
        raise ValueError(f"unknown scheduler {rule!r}; choose one of {', '.join(RULES)}")
    g = graph if graph is not None else graph_of(problem)
    n, m = g.n, g.m
    dev = np.asarray(devices, dtype=np.int64)
    T = g.time[np.arange(n), dev]
    off, extra = edge_delays(g, dev)
    pct = remaining_time(g, dev, off)
    pos = g.topo_pos
    if rule == "lro":
        static = -quantize(remaining_work(g))
    elif rule == "pct":
        static = -pct
    else:
        static = None
    succ_distinct = [sorted({w for w, _ in g.succs[v]}) for v in range(n)]
    unstarted = np.array([len({u for u, _ in g.preds[v]}) for v in range(n)], dtype=np.int64)
    remaining = np.array([len(p) for p in g.preds], dtype=np.int64)
    acc = np.zeros(n, dtype=np.int64)  # latest input arrival so far
    pending: list[list[tuple[int, int, int]]] = [[] for _ in range(m)]  # (ready, pos, task)
    avail: list[list] = [[] for _ in range(m)]
    free = np.zeros(m, dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    fin = np.zeros(n, dtype=np.int64)
    release = np.zeros(n, dtype=np.int64)
    for v in range(n):
        if remaining[v] == 0:
            heapq.heappush(pending[dev[v]], (0, int(pos[v]), v))
    order: list[int] = []

    def idle(d: int, now: int) -> bool:
        return free[d] <= now and not avail[d] and not (pending[d] and pending[d][0][0] <= now)

    for _ in range(n):
        best_t, d = None, -1
        for c in range(m):
            if avail[c]:
                tc = int(free[c])
            elif pending[c]:
                tc = max(int(free[c]), pending[c][0][0])
            else:
                continue
            if best_t is None or tc < best_t:
                best_t, d = tc, c
        if d < 0:
            raise RuntimeError("simulation stalled: the graph has a cycle")
        assert best_t is not None  # set together with d >= 0
        now = best_t
        while pending[d] and pending[d][0][0] <= now:
            ready, p, v = heapq.heappop(pending[d])
            if rule == "fifo":
                heapq.heappush(avail[d], (ready, p, v))
            elif static is not None:
                heapq.heappush(avail[d], (int(static[v]), p, v))
            else:
                avail[d].append(v)
        if rule == "msr":
            best = None
            for j, v in enumerate(avail[d]):
                score = 0
                for w in succ_distinct[v]:
                    score += 1
                    dw = int(dev[w])
                    if dw != d:
                        score += 1
                        if unstarted[w] == 1:
                            score += 1
                            if idle(dw, now):
                                score += 5
                k = (-score, -int(pct[v]), int(pos[v]))
                if best is None or k < best[0]:
                    best = (k, j)
            assert best is not None  # avail[d] holds at least the task that made d the next device
            v = avail[d].pop(best[1])
        else:
            v = heapq.heappop(avail[d])[2]
        order.append(v)
        start[v] = now
        fin[v] = now + T[v]
        release[v] = fin[v] + extra[v]
        free[d] = release[v]
        for w in succ_distinct[v]:
            unstarted[w] -= 1
        for w, e in g.succs[v]:
            acc[w] = max(acc[w], fin[v] + off[e])
            remaining[w] -= 1
            if remaining[w] == 0:
                heapq.heappush(pending[dev[w]], (int(acc[w]), int(pos[w]), w))
    makespan = int(fin.max(initial=0))
    return np.asarray(order, dtype=np.int64), start, fin, release, makespan


def fifo(problem: DagProblem, devices: np.ndarray, graph: Graph | None = None) -> np.ndarray:
    return simulate(problem, devices, "fifo", graph)[0]


def lro(problem: DagProblem, devices: np.ndarray, graph: Graph | None = None) -> np.ndarray:
    return simulate(problem, devices, "lro", graph)[0]


def pct(problem: DagProblem, devices: np.ndarray, graph: Graph | None = None) -> np.ndarray:
    return simulate(problem, devices, "pct", graph)[0]


def msr(problem: DagProblem, devices: np.ndarray, graph: Graph | None = None) -> np.ndarray:
    return simulate(problem, devices, "msr", graph)[0]
