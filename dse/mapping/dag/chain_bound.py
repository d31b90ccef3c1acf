"""A makespan lower bound of the ``dag`` family along a chain of blocks (a series decomposition).

The heads and tails of :mod:`dse.mapping.dag.bounds` look at one task and its direct producers or
consumers at a time. They miss what a long chain of tasks with short side branches costs: each
branch must either share the chain's device (its time adds to the chain's) or run elsewhere and pay
the transfers out and back. This bound reasons about whole stretches of such a chain.

**Chain and blocks.** Take a chain ``c_0 -> ... -> c_L`` (by default the critical path with every
task at its fastest, :func:`critical_chain`). A *side task* lies between two chain tasks: it
descends from ``c_lo`` (its last chain ancestor) and leads to ``c_hi`` (its first chain
descendant). Choosing *cut* tasks among the chain cuts it into blocks: the block between two
consecutive cuts holds the chain tasks strictly between them and every side task whose
``[lo, hi]`` lies within the two cuts. Every task of a block starts after its entry cut finishes
and finishes before its exit cut starts, so blocks never overlap in time. :func:`chain_blocks`
picks the cuts by dynamic programming: the most side-task work inside blocks of at most
``max_inner`` tasks.

**Block costs.** ``cost[a, b]`` is a lower bound on the time from the entry's finish on device
``a`` to the exit's finish on device ``b``, over the block's tasks and edges alone (every other
task and edge is dropped, every device free at the entry's finish: a relaxation). It is computed
exactly for that relaxation by enumeration in a compiled kernel: every labelling of the block's
tasks by device, then every order of them (list scheduling over all precedence-consistent
orders reaches every semi-active schedule, hence an optimal one). The devices are ``a``, ``b``, one
further device ``d`` taken exactly (tried in turn) and, beyond those, *pool* devices that are each
as fast as the fastest device other than ``a`` and ``b`` and linked as well as the best such link
(optimistic, so still a lower bound; exact with at most three devices). Under the TF rules a
tensor crosses once per remote device, its sends occupy the producer's device, and they leave in
device-index order where the devices are known (pool devices: first). Labellings whose earliest
finish (without device contention) plus the shortest path to the exit already reach the best cost
are cut, and orders that only swap two adjacent independent tasks on different devices are
skipped (they give the same schedule).

**The bound.** For a makespan ``C``, ``F_0(a)`` is the head of ``c_0`` on ``a`` plus its time and
``F_{i+1}(b) = max(head + time of the exit on b, min_a F_i(a) + cost_i[a, b])``, a lower bound on the
exit's finish on ``b``; a device where ``F_i(a) + tail`` exceeds ``C`` cannot hold ``c_i`` in a
schedule ending by ``C`` and is struck (heads and tails: :func:`dse.mapping.dag.bounds.task_device_bounds`).
When every device is struck at some cut, no schedule ends by ``C``. :func:`chain_bound` bisects
for the least ``C`` it cannot refute; block costs are computed lazily (for each exit device, entry
devices in increasing ``F`` until their ``F`` plus a cheap lower bound of the cost cannot improve)
and kept across probes.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.dag.bounds import task_device_bounds
from dse.mapping.dag.structure import _edge_delay, compiled_kernels, transfer_arguments
from dse.util.jit import compile_functions, may_compile, plain

if TYPE_CHECKING:
    from dse.mapping.dag.problem import DagProblem

_INF = np.iinfo(np.int64).max // 4
#: Most precedence-consistent orders of one block's inner tasks; a block with more is not formed.
MAX_ORDERS = 5040
#: Pairs of devices per kernel call, so that a time limit is checked between calls.
_PAIRS_PER_CALL = 256


@dataclass(frozen=True)
class Block:
    """The tasks between two consecutive cut tasks of a chain: ``entry`` and ``exit`` (cuts) and the
    ``inner`` tasks (chain and side tasks), in topological order."""

    entry: int
    exit: int
    inner: tuple[int, ...]


def critical_chain(problem: DagProblem) -> np.ndarray:
    """The critical path with every task at its fastest allowed time and free transfers (the path of
    :meth:`DagProblem.critical_path_bound`), first task first; ties go to the earlier producer."""
    t, st = problem.tables, problem.structure
    n = problem.n_tasks
    if not n:
        return np.zeros(0, dtype=np.int64)
    fastest = np.where(t.allowed, t.time, _INF).min(axis=1)
    finish = np.zeros(n, dtype=np.int64)
    cause = np.full(n, -1, dtype=np.int64)
    for level in st.pred_levels:
        arrive = finish[level.task]
        latest = level.max(arrive, 0)
        first = level.first(arrive == latest[level.row])  # the first producer that finishes last; -1: none
        cause[level.tasks[first >= 0]] = level.task[first[first >= 0]]
        finish[level.tasks] = latest + fastest[level.tasks]
    v = int(np.argmax(finish))
    chain = [v]
    while cause[v] >= 0:
        v = int(cause[v])
        chain.append(v)
    return np.array(chain[::-1], dtype=np.int64)


def chain_positions(problem: DagProblem, chain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per task ``(lo, hi)``: the index in ``chain`` of its last chain ancestor and of its first chain
    descendant (a chain task: its own index twice); -1 and ``len(chain)`` when there is none."""
    st = problem.structure
    n, length = problem.n_tasks, len(chain)
    index = np.full(n, -1, dtype=np.int64)
    index[chain] = np.arange(length)
    lo = np.full(n, -1, dtype=np.int64)
    for level in st.pred_levels:
        lo[level.tasks] = np.where(index[level.tasks] >= 0, index[level.tasks], level.max(lo[level.task], -1))
    hi = np.full(n, length, dtype=np.int64)
    for level in st.succ_levels:
        hi[level.tasks] = np.where(index[level.tasks] >= 0, index[level.tasks], level.min(hi[level.task], length))
    return lo, hi


def chain_blocks(problem: DagProblem, chain: np.ndarray | None = None, max_inner: int = 8) -> tuple[Block, ...]:
    """The blocks of ``chain`` (default :func:`critical_chain`) between cuts chosen to hold the most
    side-task work (fastest time) in blocks of at most ``max_inner`` inner tasks and
    :data:`MAX_ORDERS` orders of them (module docstring); consecutive chain tasks are always a block.
    Raises ``ValueError`` when ``chain`` is not a path of the DAG."""
    t, st = problem.tables, problem.structure
    chain = critical_chain(problem) if chain is None else np.asarray(chain, dtype=np.int64)
    length = len(chain)
    if length < 2:
        return ()
    edges = set(zip(st.src.tolist(), st.dst.tolist(), strict=True))
    if not all((int(u), int(v)) in edges for u, v in zip(chain[:-1], chain[1:], strict=True)):
        raise ValueError("the chain must follow edges of the DAG")
    lo, hi = chain_positions(problem, chain)
    side = np.flatnonzero((lo >= 0) & (hi < length) & (lo < hi))
    fastest = np.where(t.allowed, t.time, _INF).min(axis=1)
    by_lo: dict[int, list[int]] = {}
    for w in side.tolist():
        by_lo.setdefault(int(lo[w]), []).append(w)

    def inner_of(i: int, j: int) -> list[int]:
        tasks = chain[i + 1: j].tolist()
        for start in range(i, j):
            tasks += [w for w in by_lo.get(start, ()) if hi[w] <= j]
        return tasks

    best = np.full(length, -1.0)
    best[0] = 0.0
    came = np.zeros(length, dtype=np.int64)
    for j in range(1, length):
        for i in range(j - 1, max(j - max_inner - 2, -1), -1):
            inner = inner_of(i, j)
            if len(inner) > max_inner or (len(inner) > 1 and not _few_orders(problem, inner)):
                continue
            # side work inside blocks, then more cuts (each cut adds its head and tail to the reasoning)
            value = best[i] + float(fastest[[w for w in inner if w not in chain[i + 1: j]]].sum()) + 1e-3
            if value > best[j]:
                best[j], came[j] = value, i
    cuts = [length - 1]
    while cuts[-1] > 0:
        cuts.append(int(came[cuts[-1]]))
    cuts.reverse()
    topo_pos = st.topo_pos
    return tuple(Block(int(chain[i]), int(chain[j]), tuple(sorted(inner_of(i, j), key=lambda v: topo_pos[v])))
                 for i, j in zip(cuts[:-1], cuts[1:], strict=True))


def _few_orders(problem: DagProblem, inner: list[int]) -> bool:
    """Whether the inner tasks have at most :data:`MAX_ORDERS` precedence-consistent orders."""
    return len(_orders(problem, inner, MAX_ORDERS + 1)) <= MAX_ORDERS


def _orders(problem: DagProblem, inner: list[int], limit: int) -> list[tuple[int, ...]]:
    """The precedence-consistent orders (as positions in ``inner``) of ``inner``, at most ``limit``."""
    st = problem.structure
    where = {v: k for k, v in enumerate(inner)}
    preds = [[where[u] for u, _ in st.predecessors(v) if u in where] for v in inner]
    out: list[tuple[int, ...]] = []
    done = [False] * len(inner)
    sequence: list[int] = []

    def extend() -> None:
        if len(out) >= limit:
            return
        if len(sequence) == len(inner):
            out.append(tuple(sequence))
            return
        for k in range(len(inner)):
            if not done[k] and all(done[u] for u in preds[k]):
                done[k] = True
                sequence.append(k)
                extend()
                sequence.pop()
                done[k] = False

    extend()
    return out


@dataclass(frozen=True, eq=False)
class BlockModel:
    """One block in the arrays its cost kernel reads: local task 0 is the entry, ``k - 1`` the exit.

    ``pred_ptr/pred_src/pred_edge``: each local task's in-edges (producer, global edge);
    ``succ_ptr/succ_dst``: out-edges within the block; ``adjacent[u, v]``: an edge ``u -> v``;
    ``coloc_with[i]``: an earlier local task ``i`` must share a device with (-1: none);
    ``coloc_exit[i]``: ``i`` must share the exit's device; ``orders``: the inner tasks'
    precedence-consistent orders; ``from_entry[i]`` and ``to_exit[i]``: the longest path of fastest
    times from the entry's finish to ``i``'s start and from ``i``'s finish to the exit's start; ``pair_min``, ``out_min``, ``in_min``: per in-edge the least transfer over every
    pair of distinct devices, from each device and into each device."""

    k: int
    task: np.ndarray
    pred_ptr: np.ndarray
    pred_src: np.ndarray
    pred_edge: np.ndarray
    succ_ptr: np.ndarray
    succ_dst: np.ndarray
    adjacent: np.ndarray
    coloc_with: np.ndarray
    coloc_exit: np.ndarray
    orders: np.ndarray
    from_entry: np.ndarray
    to_exit: np.ndarray
    pair_min: np.ndarray
    out_min: np.ndarray
    in_min: np.ndarray

    @classmethod
    def of(cls, problem: DagProblem, block: Block, time: np.ndarray) -> BlockModel:
        """The arrays of ``block``; ``time`` (n, m) holds ``_INF`` where a device may not run a task."""
        t, st = problem.tables, problem.structure
        tasks = [block.entry, *block.inner, block.exit]
        k = len(tasks)
        where = {v: i for i, v in enumerate(tasks)}
        preds: list[list[tuple[int, int]]] = [[] for _ in range(k)]
        succs: list[list[int]] = [[] for _ in range(k)]
        for i, v in enumerate(tasks[1:], start=1):
            for u, e in st.predecessors(v):
                if u in where:
                    preds[i].append((where[u], e))
                    succs[where[u]].append(i)
        adjacent = np.zeros((k, k), dtype=np.bool_)
        for i in range(k):
            for u, _ in preds[i]:
                adjacent[u, i] = True
        coloc_with = np.full(k, -1, dtype=np.int64)
        coloc_exit = np.zeros(k, dtype=np.bool_)
        groups = t.colocation
        if groups:
            for i in range(k):
                group = groups[tasks[i]]
                if group is None:
                    continue
                coloc_with[i] = next((j for j in range(i) if groups[tasks[j]] == group), -1)
                coloc_exit[i] = i < k - 1 and groups[tasks[k - 1]] == group
        inner_orders = _orders(problem, list(block.inner), MAX_ORDERS)
        orders = np.array([[p + 1 for p in order] for order in inner_orders], dtype=np.int64).reshape(
            len(inner_orders), k - 2)
        fastest = time.min(axis=1)
        to_exit = np.zeros(k, dtype=np.int64)
        for i in range(k - 2, -1, -1):
            to_exit[i] = max([int(fastest[tasks[j]] + to_exit[j]) for j in range(i + 1, k - 1) if adjacent[i, j]],
                             default=0)
        from_entry = np.zeros(k, dtype=np.int64)
        for i in range(2, k):
            from_entry[i] = max([int(from_entry[j] + fastest[tasks[j]]) for j in range(1, i) if adjacent[j, i]],
                                default=0)
        pred_edge = np.array([e for p in preds for _, e in p], dtype=np.int64)
        m = t.n_dev
        blocks = t.transfer_block(pred_edge).astype(np.int64) if len(pred_edge) else np.zeros((0, m, m), np.int64)
        off = np.where(np.eye(m, dtype=bool)[None], _INF, blocks)
        return cls(k, np.array(tasks, dtype=np.int64),
                   np.cumsum([0] + [len(p) for p in preds]).astype(np.int64),
                   np.array([u for p in preds for u, _ in p], dtype=np.int64), pred_edge,
                   np.cumsum([0] + [len(s) for s in succs]).astype(np.int64),
                   np.array([w for s in succs for w in s], dtype=np.int64), adjacent, coloc_with, coloc_exit,
                   orders, from_entry, to_exit,
                   off.reshape(len(pred_edge), -1).min(axis=1) if m > 1 else np.zeros(len(pred_edge), np.int64),
                   off.min(axis=2) if m > 1 else np.zeros((len(pred_edge), m), np.int64),
                   off.min(axis=1) if m > 1 else np.zeros((len(pred_edge), m), np.int64))

    def lower(self, time: np.ndarray) -> np.ndarray:
        """Per exit device a cost no block schedule beats: the fastest path to the exit plus its time there."""
        return self.to_exit[0] + time[self.task[-1]]


def _send(problem: DagProblem) -> np.ndarray:
    t = problem.tables
    return t.send_time.astype(np.int64) if problem.tensor_per_device else np.zeros(t.n_dev, dtype=np.int64)


def block_costs(problem: DagProblem, model: BlockModel, entry_devices: np.ndarray, exit_devices: np.ndarray,
                time: np.ndarray | None = None, max_third: int = 8) -> np.ndarray:
    """``cost[q]``: a lower bound on the time from the block's entry finishing on ``entry_devices[q]`` to
    its exit finishing on ``exit_devices[q]`` (module docstring), ``_INF`` where no schedule exists
    (e.g. the exit may not run there). ``time`` as for :meth:`BlockModel.of` (default: the tables')."""
    t = problem.tables
    if time is None:
        time = np.where(t.allowed, t.time, _INF).astype(np.int64)
    send = _send(problem)
    return _kernel()(np.ascontiguousarray(entry_devices, dtype=np.int64),
                     np.ascontiguousarray(exit_devices, dtype=np.int64), model.k, model.task, model.pred_ptr,
                     model.pred_src, model.pred_edge, model.succ_ptr, model.succ_dst, model.adjacent,
                     model.coloc_with, model.coloc_exit, model.orders, model.from_entry, model.to_exit, time, send,
                     model.pair_min, model.out_min, model.in_min, max_third, _INF,
                     *transfer_arguments(t))


_COMPILED: dict[str, Callable[..., np.ndarray]] = {}


def _kernel() -> Callable[..., np.ndarray]:
    """The compiled :func:`_block_kernel` (compiled, or loaded from numba's cache, on first use)."""
    if not _COMPILED:
        compiled = compiled_kernels()
        if not may_compile():
            return plain(_block_kernel)  # plain Python while compiling would break a time limit (dse.util.jit)
        scope = globals()
        scope["_edge_delay"] = compiled["_edge_delay"]
        _COMPILED["block"] = compile_functions(scope, ("_best_order", "_pool", "_block_kernel"))["_block_kernel"]
    return _COMPILED["block"]


def _pool(k, task, pred_edge, time, send, excluded, a, b, kind, kind_time, kind_send, transfer, inf, table,
          latency, per_byte, size):  # pragma: no cover - compiled
    """Per-kind values of a pool device (``kind`` 3 or 4): as fast as the fastest device not ``excluded``
    for each task, the least send, the least transfer to and from ``a`` and ``b``; ``inf`` without one."""
    m = time.shape[1]
    for i in range(k):
        kind_time[i, kind] = inf
        for d in range(m):
            if not excluded[d] and time[task[i], d] < kind_time[i, kind]:
                kind_time[i, kind] = time[task[i], d]
    kind_send[kind] = inf
    for d in range(m):
        if not excluded[d] and send[d] < kind_send[kind]:
            kind_send[kind] = send[d]
    for s in range(pred_edge.shape[0]):
        e = pred_edge[s]
        transfer[s, 0, kind] = inf
        transfer[s, kind, 0] = inf
        transfer[s, 1, kind] = inf
        transfer[s, kind, 1] = inf
        for d in range(m):
            if excluded[d]:
                continue
            transfer[s, 0, kind] = min(transfer[s, 0, kind], _edge_delay(e, a, d, m, table, latency, per_byte, size))
            transfer[s, kind, 0] = min(transfer[s, kind, 0], _edge_delay(e, d, a, m, table, latency, per_byte, size))
            transfer[s, 1, kind] = min(transfer[s, 1, kind], _edge_delay(e, b, d, m, table, latency, per_byte, size))
            transfer[s, kind, 1] = min(transfer[s, kind, 1], _edge_delay(e, d, b, m, table, latency, per_byte, size))


def _block_kernel(entry_devices, exit_devices, k, task, pred_ptr, pred_src, pred_edge, succ_ptr, succ_dst,
                  adjacent, coloc_with, coloc_exit, orders, from_entry, to_exit, time, send, pair_min, out_min,
                  in_min, max_third, inf, table, latency, per_byte, size):  # pragma: no cover - compiled
    """Labels: 0 = the entry's device a, 1 = the exit's device b (when it differs), 2 = the third device d
    (exact), 3 + j = pool device j. ``kind = min(label, 4)`` indexes the per-kind times, sends and
    transfers: 3 is the first pool device (a pool device, or in the last step one outside the exactly
    tried devices), 4 the others."""
    m = time.shape[1]
    n_edges = pred_edge.shape[0]
    inner = k - 2
    out = np.full(len(entry_devices), inf, dtype=np.int64)
    kind_time = np.zeros((k, 5), dtype=np.int64)
    kind_send = np.zeros(5, dtype=np.int64)
    kind_device = np.full(5, -1, dtype=np.int64)
    transfer = np.zeros((max(n_edges, 1), 5, 5), dtype=np.int64)
    excluded = np.zeros(m, dtype=np.bool_)
    label = np.zeros(k, dtype=np.int64)
    early = np.zeros(k, dtype=np.int64)  # earliest finish of a labelled prefix, device contention ignored
    remote_count = np.zeros(k, dtype=np.int64)
    remote_label = np.zeros((k, k + 4), dtype=np.int64)
    sends_before = np.zeros(max(n_edges, 1), dtype=np.int64)
    free = np.zeros(k + 4, dtype=np.int64)
    end = np.zeros(k, dtype=np.int64)
    pools_at = np.zeros(k + 1, dtype=np.int64)
    third_at = np.zeros(k + 1, dtype=np.int64)
    third_bound = np.zeros(m, dtype=np.int64)
    for q in range(len(entry_devices)):
        a = entry_devices[q]
        b = exit_devices[q]
        exit_label = 0 if a == b else 1
        exit_time = time[task[k - 1], b]
        if exit_time >= inf or time[task[0], a] >= inf:
            continue
        if coloc_with[k - 1] == 0 and a != b:
            continue
        for i in range(k):
            kind_time[i, 0] = time[task[i], a]
            kind_time[i, 1] = time[task[i], b]
        kind_send[0] = send[a]
        kind_send[1] = send[b]
        kind_device[0] = a
        kind_device[1] = b
        for d in range(m):
            excluded[d] = d == a or d == b
        _pool(k, task, pred_edge, time, send, excluded, a, b, 4, kind_time, kind_send, transfer, inf, table,
              latency, per_byte, size)
        for s in range(n_edges):
            e = pred_edge[s]
            transfer[s, 0, 1] = _edge_delay(e, a, b, m, table, latency, per_byte, size)
            transfer[s, 1, 0] = _edge_delay(e, b, a, m, table, latency, per_byte, size)
            for x in (3, 4):
                for y in (3, 4):
                    transfer[s, x, y] = pair_min[s]
        others = m - (1 if a == b else 2)  # devices besides a and b
        least_send = send.min() if n_edges else 0
        for d in range(m):  # a schedule with a task on d ends no earlier than this
            third_bound[d] = inf
            if excluded[d] or inner == 0:
                continue
            into = inf
            for s in range(n_edges):
                into = min(into, in_min[s, d])
            for i in range(1, k - 1):
                if time[task[i], d] < inf:
                    third_bound[d] = min(third_bound[d], from_entry[i] + least_send + into + time[task[i], d]
                                         + to_exit[i] + exit_time)
        third_order = np.argsort(third_bound)
        best = inf
        # step -1: every task on a or b; then a third device d taken exactly, the most promising first; then,
        # where more devices remain, the first task off a and b on one of them and the rest on pool devices
        for step in range(-1, max_third + 1):
            d = -1
            if step >= 0:
                if others < 1 or inner == 0 or step >= m or third_bound[third_order[step]] >= best:
                    break
                d = third_order[step] if step < max_third else -2
            if d >= 0:
                for i in range(k):
                    kind_time[i, 2] = time[task[i], d]
                    kind_time[i, 3] = kind_time[i, 4]
                kind_send[2] = send[d]
                kind_send[3] = kind_send[4]
                kind_device[2] = d
                for s in range(n_edges):
                    e = pred_edge[s]
                    transfer[s, 0, 2] = _edge_delay(e, a, d, m, table, latency, per_byte, size)
                    transfer[s, 2, 0] = _edge_delay(e, d, a, m, table, latency, per_byte, size)
                    transfer[s, 1, 2] = _edge_delay(e, b, d, m, table, latency, per_byte, size)
                    transfer[s, 2, 1] = _edge_delay(e, d, b, m, table, latency, per_byte, size)
                    for x in (3, 4):
                        transfer[s, 2, x] = out_min[s, d]
                        transfer[s, x, 2] = in_min[s, d]
                    transfer[s, 0, 3] = transfer[s, 0, 4]
                    transfer[s, 3, 0] = transfer[s, 4, 0]
                    transfer[s, 1, 3] = transfer[s, 1, 4]
                    transfer[s, 3, 1] = transfer[s, 4, 1]
            elif d == -2:  # the first pool device is none of the devices tried exactly
                for j in range(max_third):
                    excluded[third_order[j]] = True
                _pool(k, task, pred_edge, time, send, excluded, a, b, 3, kind_time, kind_send, transfer, inf,
                      table, latency, per_byte, size)
            max_pools = others - 1 if d >= 0 else (others if d == -2 else 0)
            label[0] = 0
            label[k - 1] = exit_label
            pos = 1
            if inner > 0:
                label[1] = -1
            pools_at[1] = 0
            third_at[1] = 0
            while True:
                if pos == k - 1:  # a complete labelling (d, or a pool device, used where required): every order
                    if d == -1 or (d >= 0 and third_at[pos] > 0) or (d == -2 and pools_at[pos] > 0):
                        best = _best_order(k, inner, label, pred_ptr, pred_src, succ_ptr, succ_dst, adjacent,
                                           orders, to_exit, kind_time, kind_send, kind_device, transfer,
                                           remote_count, remote_label, sends_before, free, end, exit_time, best)
                    pos -= 1
                    if pos < 1:
                        break
                    continue
                label[pos] += 1
                if label[pos] == 1 and a == b:
                    label[pos] = 2
                if label[pos] == 2 and d < 0:
                    label[pos] = 3
                limit = 3 + pools_at[pos] if pools_at[pos] < max_pools else 2 + pools_at[pos]
                if label[pos] > limit:
                    label[pos] = -1
                    pos -= 1
                    if pos < 1:
                        break
                    continue
                lab = label[pos]
                if lab >= 3 and d >= 0 and third_at[pos] == 0:  # the first task off a and b runs on d itself
                    label[pos] = limit
                    continue
                kind = min(lab, 4)
                if kind_time[pos, kind] >= inf:
                    continue
                if (coloc_with[pos] >= 0 and label[coloc_with[pos]] != lab) or (coloc_exit[pos] and lab != exit_label):
                    continue
                ready = 0
                for s in range(pred_ptr[pos], pred_ptr[pos + 1]):
                    p = pred_src[s]
                    arrive = early[p]
                    if label[p] != lab:
                        kp = min(label[p], 4)
                        arrive += kind_send[kp] + transfer[s, kp, kind]
                    ready = max(ready, arrive)
                early[pos] = ready + kind_time[pos, kind]
                if early[pos] + to_exit[pos] + exit_time >= best:
                    continue
                pools_at[pos + 1] = max(pools_at[pos], lab - 2) if lab >= 3 else pools_at[pos]
                third_at[pos + 1] = third_at[pos] + (1 if lab == 2 else 0)
                pos += 1
                if pos < k - 1:
                    label[pos] = -1
        out[q] = best
    return out


def _best_order(k, inner, label, pred_ptr, pred_src, succ_ptr, succ_dst, adjacent, orders, to_exit, kind_time,
                kind_send, kind_device, transfer, remote_count, remote_label, sends_before, free, end, exit_time,
                best):  # pragma: no cover - compiled
    """The least exit finish over the canonical orders of one labelling, or ``best`` if none is less."""
    for i in range(k):  # the distinct remote labels of each task's consumers
        count = 0
        for s in range(succ_ptr[i], succ_ptr[i + 1]):
            lab = label[succ_dst[s]]
            if lab == label[i]:
                continue
            seen = False
            for r in range(count):
                if remote_label[i, r] == lab:
                    seen = True
                    break
            if not seen:
                remote_label[i, count] = lab
                count += 1
        remote_count[i] = count
    for x in range(k):  # sends leave in device-index order; pool devices' indices are unknown: first
        for s in range(pred_ptr[x], pred_ptr[x + 1]):
            p = pred_src[s]
            if label[p] == label[x]:
                sends_before[s] = 0
                continue
            mine = kind_device[min(label[x], 4)]
            rank = 0
            if mine >= 0:
                for r in range(remote_count[p]):
                    other = kind_device[min(remote_label[p, r], 4)]
                    if 0 <= other < mine:
                        rank += 1
            sends_before[s] = rank + 1
    for o in range(orders.shape[0]):
        canonical = True
        for j in range(inner - 1):
            x = orders[o, j]
            y = orders[o, j + 1]
            if x > y and label[x] != label[y] and not adjacent[x, y]:
                canonical = False
                break
        if not canonical:
            continue
        for lab in range(k + 4):
            free[lab] = 0
        free[label[0]] = remote_count[0] * kind_send[min(label[0], 4)]
        end[0] = 0
        finished = True
        for j in range(inner + 1):
            x = orders[o, j] if j < inner else k - 1
            kind = min(label[x], 4)
            ready = free[label[x]]
            for s in range(pred_ptr[x], pred_ptr[x + 1]):
                p = pred_src[s]
                arrive = end[p]
                if label[p] != label[x]:
                    kp = min(label[p], 4)
                    arrive += sends_before[s] * kind_send[kp] + transfer[s, kp, kind]
                ready = max(ready, arrive)
            end[x] = ready + kind_time[x, kind]
            free[label[x]] = end[x] + remote_count[x] * kind_send[kind]
            if end[x] + to_exit[x] + (exit_time if x < k - 1 else 0) >= best:
                finished = False
                break
        if finished:
            best = end[k - 1]
    return best


class _ChainSearch:
    """The probes of :func:`chain_bound` on one problem and one set of blocks, block costs kept across probes."""

    def __init__(self, problem: DagProblem, blocks: tuple[Block, ...]) -> None:
        t = problem.tables
        self.problem = problem
        self.blocks = blocks
        self.time = np.where(t.allowed, t.time, _INF).astype(np.int64)
        self.head, self.tail, self.reach = task_device_bounds(problem)
        # per block with inner tasks: its model, its costs found so far (-1: not yet), its cheap lower costs
        self.states: list[tuple[BlockModel, np.ndarray, np.ndarray] | None] = []
        for block in blocks:
            model = BlockModel.of(problem, block, self.time) if block.inner else None
            self.states.append(None if model is None else (
                model, np.full((t.n_dev, t.n_dev), -1, dtype=np.int64), model.lower(self.time)))
        self.pairs = 0

    def refutes(self, makespan: int, deadline: float) -> bool | None:
        """True when no schedule ends by ``makespan`` (module docstring), False when the chain allows one,
        None when ``time.monotonic()`` passes ``deadline`` first."""
        t = self.problem.tables
        first = self.blocks[0].entry
        finish = np.where(self.reach[first] <= makespan, self.head[first] + self.time[first], _INF)
        for j, block in enumerate(self.blocks):
            x = block.exit
            entry = np.flatnonzero(finish < _INF)
            exit_ = np.flatnonzero(self.reach[x] <= makespan)
            if not len(entry) or not len(exit_):
                return True
            entry = entry[np.argsort(finish[entry], kind="stable")]
            cost = self._costs(j, entry, exit_, finish[entry], deadline)
            if cost is None:
                return None
            arrive = np.minimum((finish[entry][:, None] + cost).min(axis=0), _INF)
            reached = np.full(t.n_dev, _INF, dtype=np.int64)
            reached[exit_] = np.maximum(arrive, self.head[x, exit_] + self.time[x, exit_])
            finish = np.where((reached < _INF) & (reached + self.tail[x] <= makespan), reached, _INF)
        return not (finish < _INF).any()

    def _costs(self, j: int, entry: np.ndarray, exit_: np.ndarray, ready: np.ndarray,
               deadline: float) -> np.ndarray | None:
        """Block ``j``'s costs from ``entry`` devices (finishing at ``ready``, increasing) to ``exit_``
        devices: exact where they can give an exit's least finish, ``_INF`` elsewhere; None past ``deadline``."""
        block, state = self.blocks[j], self.states[j]
        problem, t = self.problem, self.problem.tables
        if state is None:  # an edge between two chain tasks: its transfer and the send, or nothing on one device
            edges = np.flatnonzero((problem.structure.src == block.entry) & (problem.structure.dst == block.exit))
            a, b = entry[:, None], exit_[None, :]
            delay = np.zeros((len(entry), len(exit_)), dtype=np.int64)
            for e in edges.tolist():
                delay = np.maximum(delay, t.edge_transfer_time(e, a, b) + _send(problem)[a])
            cost = np.where(a == b, 0, delay) + self.time[block.exit, exit_][None, :]
            groups = t.colocation
            if groups and groups[block.entry] is not None and groups[block.entry] == groups[block.exit]:
                cost = np.where(a == b, cost, _INF)
            return np.minimum(cost, _INF)
        model, cache, lowest = state
        sub = cache[np.ix_(entry, exit_)]
        floor = lowest[exit_]
        while True:
            known = np.where(sub >= 0, sub, _INF)
            best = (ready[:, None] + known).min(axis=0)
            need = (sub < 0) & (ready[:, None] + floor[None, :] < best[None, :])
            if not need.any():
                return np.where(sub >= 0, sub, _INF)
            need &= np.cumsum(need, axis=0) <= 4  # per exit device the next few entry devices, best first
            rows, cols = np.nonzero(need)
            for lo in range(0, len(rows), _PAIRS_PER_CALL):
                if _time.monotonic() > deadline:
                    return None
                r, c = rows[lo: lo + _PAIRS_PER_CALL], cols[lo: lo + _PAIRS_PER_CALL]
                found = block_costs(problem, model, entry[r], exit_[c], self.time)
                sub[r, c] = found
                cache[entry[r], exit_[c]] = found
                self.pairs += len(r)


def chain_bound(problem: DagProblem, upper: int | None = None, time_limit: float = 30.0, known: int | None = None,
                max_inner: int = 8, blocks: tuple[Block, ...] | None = None) -> int:
    """The least makespan at or above ``known`` (default: the communication bound) that the chain of
    ``blocks`` (default: :func:`chain_blocks` of the critical chain with ``max_inner``) cannot refute,
    by bisection up to ``upper`` (a known schedule's makespan; every task at its fastest, one after
    another, when None). Always a lower bound, at most ``max(known, upper)``: each refuted probe is a
    proof, so when ``time_limit`` seconds run out the bound proven so far is returned."""
    deadline = _time.monotonic() + time_limit
    from dse.mapping.dag.bounds import communication_bound

    low = communication_bound(problem) if known is None else int(known)
    if upper is None:
        upper = int(np.where(problem.tables.allowed, problem.tables.time, _INF).min(axis=1).sum())
    high = max(low, int(upper))
    if low >= high or time_limit <= 0:
        return low
    blocks = chain_blocks(problem, max_inner=max_inner) if blocks is None else blocks
    if not blocks:
        return low
    search = _ChainSearch(problem, blocks)
    step = max(1, (high - low) // 64)
    while low < high:  # galloping up from the bound proven so far (low probes need fewer block costs), then bisection
        probe = min(low + step, (low + high) // 2)
        refuted = search.refutes(probe, deadline)
        if refuted is None:
            break
        if refuted:
            low, step = probe + 1, 2 * step
        else:
            high, step = probe, max(1, (high - low) // 64)
    return low
