"""The TF paper's event simulation: sends are tasks of their own, picked by the scheduler's rule.

Mayer, Mayer, Laich, DIDL 2017; simulator: repository
``mayerrn/tensorflowPartitioningAndScheduling``, ``Code/PartSchedSimulation/src``. After
partitioning, the simulator inserts a send and a receive node for every tensor that crosses
to a device (``Device.addSendReceiveNodes``): one pair per producer and remote device, however
many consumers the tensor has there (the tensor-once rule). A send is an ordinary entry of
its device's ready queue: the scheduler picks it among the compute tasks by its own rule,
it occupies the device for its time (10 operations at the device's speed, the problem's
``send_time``), and the tensor reaches the receiving device ``transfer_time`` after the send
ends (``Device.scheduledSendNode``). A receive takes no device time; the receiving device
takes the tensor in when its clock reaches the arrival (``Device.receivePastData``).

The rules this module follows, each with its place in the simulator (``docs/family-dag.md``
lists them with the tests that check them):

* *Ready queue* (``Device.readyToScheduleNodes``, a linked list): entries are appended when
  they become ready. When a task starts, its local successors that have all their inputs
  are appended (task index order), then its sends (remote device index order); a device
  appends the consumers of the tensors that have arrived, in the order the sends were
  made, at each of its decisions (``Device.schedule`` calls ``receivePastData`` first).
* *Device order* (``DeviceScheduler.execute``): the device with the earliest clock that has
  something ready decides next; an idle device waits for its next arrival. Ties between
  devices: lower index.
* *Rules* (``scheduler/*.java``): ``fifo`` takes the head of the queue; ``lro``, ``pct`` and
  ``msr`` take the largest value, the earliest entry of the queue among equal values (a
  strict ``>`` scan).
* *PCT values* (``Node.calculateRemainedTimeToFinishTillSinkNode``) are computed on the graph
  with its sends and receives: a task's own time plus the largest value of its local
  successors and sends; a send's is its time plus the transfer plus its receive's value; a
  receive's is 10 operations at the receiving device's speed (the receiving device's
  ``send_time``) plus the largest value of its consumers there.
* *LRO values* (``Node.calculateRemainedOperationsTillSinkNode``): the same longest path in
  operations, a send and a receive 10 operations each (here: mean times over the devices).
* *MSR values* (``HighDegreeVerticesFirstScheduler.getValueForNode``): a task scores 1 per
  local successor and per send; a send scores 3, and 5 more when its receiving device has
  nothing ready at its own clock; ties: larger PCT value, then the earlier entry.

The makespan is the finish of the last task (``DeviceScheduler.execute`` reads the largest
device clock, which is that finish).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import Graph, graph_of, repaired_devices
from dse.heuristics.partitioners import (
    cp_partition,
    dfs_paper_partition,
    divide_path_partition,
    importance_batch_partition,
    round_robin_partition,
    weight_function_partition,
)

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

RULES = ("fifo", "lro", "pct", "msr")


@dataclass(frozen=True, eq=False)
class PaperRun:
    """One simulated iteration under the paper simulator's rules.

    ``order``: the tasks in start order; ``start`` / ``finish`` per task; ``sends``: one row
    ``(producer, remote device, start, end, arrival)`` per send, in the order they ran;
    ``makespan``: finish of the last task.
    """

    devices: np.ndarray
    order: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    sends: np.ndarray
    makespan: int


@dataclass(frozen=True, eq=False)
class _Sends:
    """The send entries of one assignment: entry ``n + k`` is send ``k``."""

    producer: np.ndarray  # (k,) producing task
    target: np.ndarray  # (k,) receiving device
    transfer: np.ndarray  # (k,) transfer time after the send ends
    of_task: list[list[int]]  # per task its send indices, remote device order
    consumers: list[list[int]]  # per send the consumers on its target device, index order


def _sends(g: Graph, dev: np.ndarray) -> _Sends:
    t = g.tables
    first_out = g.structure.first_out
    producer: list[int] = []
    target: list[int] = []
    transfer: list[int] = []
    of_task: list[list[int]] = [[] for _ in range(g.n)]
    consumers: list[list[int]] = []
    for v in range(g.n):
        remote: dict[int, list[int]] = {}
        for w, _ in g.succs[v]:
            b = int(dev[w])
            if b != dev[v]:
                remote.setdefault(b, [])
                if w not in remote[b]:
                    remote[b].append(w)
        for b in sorted(remote):
            of_task[v].append(len(producer))
            producer.append(v)
            target.append(b)
            transfer.append(int(t.edge_transfer_time(int(first_out[v]), int(dev[v]), b)))
            consumers.append(sorted(remote[b]))
    return _Sends(np.asarray(producer, dtype=np.int64), np.asarray(target, dtype=np.int64),
                  np.asarray(transfer, dtype=np.int64), of_task, consumers)


def _local_succs(g: Graph, dev: np.ndarray) -> list[list[int]]:
    return [sorted({w for w, _ in g.succs[v] if dev[w] == dev[v]}) for v in range(g.n)]


def remaining_time(g: Graph, dev: np.ndarray, sends: _Sends | None = None) -> np.ndarray:
    """PCT value of every task and send (tasks first): the longest time to the end through
    the graph with its sends and receives (see the module docstring)."""
    sends = sends if sends is not None else _sends(g, dev)
    T = g.time[np.arange(g.n), dev]
    own_send = g.send
    local = _local_succs(g, dev)
    k = len(sends.producer)
    out = np.zeros(g.n + k, dtype=np.int64)
    for tasks in g.up_levels:
        for v in tasks.tolist():
            best = 0
            for w in local[v]:
                best = max(best, int(out[w]))
            for s in sends.of_task[v]:
                b = int(sends.target[s])
                recv = int(own_send[b]) + max((int(out[w]) for w in sends.consumers[s]), default=0)
                out[g.n + s] = int(own_send[dev[v]]) + int(sends.transfer[s]) + recv
                best = max(best, int(out[g.n + s]))
            out[v] = int(T[v]) + best
    return out


def remaining_work(g: Graph, dev: np.ndarray, sends: _Sends | None = None) -> np.ndarray:
    """LRO value of every task and send (tasks first): the longest path of work to the end, a
    send and a receive each counting one send's work (mean times over the devices)."""
    sends = sends if sends is not None else _sends(g, dev)
    w = g.wbar.astype(float) / g.S
    send_work = float(g.send.mean()) if g.m else 0.0
    local = _local_succs(g, dev)
    k = len(sends.producer)
    out = np.zeros(g.n + k, dtype=float)
    for tasks in g.up_levels:
        for v in tasks.tolist():
            best = 0.0
            for u in local[v]:
                best = max(best, float(out[u]))
            for s in sends.of_task[v]:
                recv = send_work + max((float(out[u]) for u in sends.consumers[s]), default=0.0)
                out[g.n + s] = send_work + recv
                best = max(best, send_work + recv)
            out[v] = w[v] + best
    return out


def simulate_paper(problem: DagProblem, devices: np.ndarray, rule: str, graph: Graph | None = None,
                   shuffle: np.random.Generator | None = None) -> PaperRun:
    """Simulate one iteration of ``devices`` under the paper simulator's rules with scheduler ``rule``.

    ``shuffle``: draw the orders the simulator takes from Java hash sets (a started task's
    successors and sends joining the queue, a tensor's consumers, the entries ready at the
    start) at random instead of fixing them, as the simulator's runs differ from each other.
    Returns a :class:`PaperRun`; raises ``ValueError`` for an unknown rule.
    """
    if rule not in RULES:
        raise ValueError(f"unknown scheduler {rule!r}; choose one of {', '.join(RULES)}")
    if not problem.tensor_per_device:
        raise ValueError("the paper's simulation follows the TF rules: the problem needs tensor_per_device")
    g = graph if graph is not None else graph_of(problem)
    n, m = g.n, g.m
    dev = np.asarray(devices, dtype=np.int64)
    sends = _sends(g, dev)
    k = len(sends.producer)
    T = g.time[np.arange(n), dev]
    dur = np.concatenate([T, g.send[dev[sends.producer]] if k else np.zeros(0, dtype=np.int64)])
    where = np.concatenate([dev, dev[sends.producer] if k else np.zeros(0, dtype=np.int64)])
    local = _local_succs(g, dev)
    pct = remaining_time(g, dev, sends) if rule in ("pct", "msr") else None
    value: np.ndarray | None = None
    if rule == "pct":
        value = pct
    elif rule == "lro":
        value = remaining_work(g, dev, sends)
    # inputs still missing per task: one per distinct local producer and per remote producer
    # (whose tensor comes through one receive)
    missing = np.array([len({u for u, _ in g.preds[v]}) for v in range(n)], dtype=np.int64)
    seq = 0
    queues: list[list] = [[] for _ in range(m)]  # heaps of (key, seq, entry) or lists for msr
    inbox: list[list[tuple[int, int, int]]] = [[] for _ in range(m)]  # (arrival, send order, send)
    free = np.zeros(m, dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    fin = np.zeros(n, dtype=np.int64)
    rows: list[tuple[int, int, int, int, int]] = []
    order: list[int] = []
    sent = 0

    def push(entry: int) -> None:
        nonlocal seq
        q = queues[int(where[entry])]
        if rule == "fifo":
            heapq.heappush(q, (0, seq, entry))
        elif rule == "msr":
            q.append((seq, entry))
        else:
            assert value is not None
            heapq.heappush(q, (-value[entry], seq, entry))
        seq += 1

    def receive(d: int, now: int) -> None:
        box = inbox[d]
        if not box or min(a for a, _, _ in box) > now:
            return
        kept = []
        for item in sorted(box, key=lambda x: x[1]):  # in the order the sends were made
            if item[0] <= now:
                for w in mixed(sends.consumers[item[2]]):
                    missing[w] -= 1
                    if missing[w] == 0:
                        push(w)
            else:
                kept.append(item)
        inbox[d] = kept

    def has_ready(d: int, clock: int) -> bool:
        return bool(queues[d]) or any(a <= clock for a, _, _ in inbox[d])

    def mixed(items: list[int]) -> list[int]:
        return items if shuffle is None or len(items) < 2 else [items[j] for j in shuffle.permutation(len(items))]

    for v in mixed(sorted(range(n), key=lambda x: int(g.topo_pos[x]))):
        if missing[v] == 0:
            push(v)
    picks, total = 0, n + k
    while picks < total:
        best_t, d = None, -1
        for c in range(m):
            if has_ready(c, int(free[c])):
                tc = int(free[c])
            elif inbox[c]:
                tc = min(a for a, _, _ in inbox[c])
            else:
                continue
            if best_t is None or tc < best_t:
                best_t, d = tc, c
        if d < 0:
            raise RuntimeError("simulation stalled: the graph has a cycle")
        assert best_t is not None
        now = best_t
        receive(d, now)
        if not queues[d]:  # the tensors that arrived complete no task yet
            continue
        picks += 1
        if rule == "msr":
            entry = _msr_pick(queues[d], n, local, sends, pct, has_ready, free)
        else:
            entry = heapq.heappop(queues[d])[2]
        end = now + int(dur[entry])
        free[d] = end
        if entry < n:
            order.append(entry)
            start[entry], fin[entry] = now, end
            for w in mixed([*local[entry], *(n + s for s in sends.of_task[entry])]):
                if w >= n:  # a send
                    push(w)
                    continue
                missing[w] -= 1
                if missing[w] == 0:
                    push(w)
        else:
            s = entry - n
            b = int(sends.target[s])
            arrival = end + int(sends.transfer[s])
            inbox[b].append((arrival, sent, s))
            sent += 1
            rows.append((int(sends.producer[s]), b, now, end, arrival))
    makespan = int(fin.max(initial=0))
    return PaperRun(dev, np.asarray(order, dtype=np.int64), start, fin,
                    np.asarray(rows, dtype=np.int64).reshape(-1, 5), makespan)


def _msr_pick(queue: list, n: int, local: list[list[int]], sends: _Sends, pct: np.ndarray | None,
              has_ready: Callable[[int, int], bool], free: np.ndarray) -> int:
    """Pop the MSR choice from ``queue`` (a list of ``(seq, entry)`` in queue order)."""
    best, at = None, -1
    for j, (_, entry) in enumerate(queue):
        if entry < n:
            score = len(local[entry]) + len(sends.of_task[entry])
        else:
            b = int(sends.target[entry - n])
            score = 3 + (0 if has_ready(b, int(free[b])) else 5)
        assert pct is not None  # computed for msr
        key = (score, int(pct[entry]))
        if best is None or key > best:
            best, at = key, j
    return int(queue.pop(at)[1])


#: Each partitioner of :data:`~dse.heuristics.partitioners.PARTITIONERS` under the simulator's rules
#: (``name -> (problem, shuffle) -> devices``; a task the simulator finds no device for raises).
PAPER_PARTITIONERS: dict[str, Callable[[DagProblem, np.random.Generator | None], np.ndarray]] = {
    "hash": lambda problem, shuffle: round_robin_partition(problem, shuffle=shuffle),  # its round robin
    "cp": lambda problem, shuffle: cp_partition(problem, shuffle=shuffle, strict=True),
    "icp": lambda problem, shuffle: divide_path_partition(problem, shuffle=shuffle, strict=True),
    "mite": lambda problem, shuffle: weight_function_partition(problem, shuffle=shuffle, strict=True),
    "batchsplit": lambda problem, shuffle: importance_batch_partition(problem),  # batches follow importance
    "dfs": lambda problem, shuffle: dfs_paper_partition(problem, shuffle=shuffle, strict=True),
}


def run_paper(problem: DagProblem, name: str, shuffle: np.random.Generator | None = None) -> PaperRun:
    """Partition with ``PARTITIONER`` and simulate with ``SCHEDULER`` (``name`` = ``"cp+pct"`` etc.)
    under the paper simulator's rules, ``hash`` being the simulator's round robin
    (:func:`~dse.heuristics.partitioners.round_robin_partition`), ``batchsplit`` its importance
    batches (:func:`~dse.heuristics.partitioners.importance_batch_partition`), ``icp``, ``mite`` and
    ``dfs`` its ``DividePathPartitioning``, ``WeightFunctionPartitioning`` and ``DFSPartitioning``
    (:func:`~dse.heuristics.partitioners.divide_path_partition`,
    :func:`~dse.heuristics.partitioners.weight_function_partition`,
    :func:`~dse.heuristics.partitioners.dfs_paper_partition`); ``shuffle`` draws the hash-set orders
    at random (also the partitioners' orders of the tasks). Where the simulator's partitioner finds
    no device for a task (its run fails), :class:`~dse.errors.InfeasibleError` is raised. Raises
    ``ValueError`` for an unknown name."""
    part, _, sched = name.strip().lower().partition("+")
    if part not in PAPER_PARTITIONERS or sched not in RULES:
        raise ValueError(f"unknown pair {name!r}; partitioners: {', '.join(PAPER_PARTITIONERS)}; "
                         f"schedulers: {', '.join(RULES)}")
    devices = PAPER_PARTITIONERS[part](problem, shuffle)
    return simulate_paper(problem, repaired_devices(problem, devices), sched, shuffle=shuffle)
