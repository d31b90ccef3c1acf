"""Load bounds of the ``dag`` family: the devices' busy time over the windows the graph forces.

Wide graphs (workflows: hundreds of parallel tasks of a few kinds between a few joins) have a short
critical path; what limits them is load, and which devices can take it. The reasoning, for a set
``S`` of tasks in a schedule of makespan ``C``:

* **windowed load.** A task ``u`` of ``S`` that runs on device ``d`` starts no earlier than its head
  ``a[u, d]`` (a lower bound of its start there) and finishes no later than ``C - b[u, d]`` (``b``: a
  lower bound of the time from its finish to the end). A device runs one task at a time, so
  ``load_d(S) <= C - a_d(S) - b_d(S)`` on every device ``d`` that runs a task of ``S``, with
  ``a_d(S)``, ``b_d(S)`` the least head and tail on ``d`` over ``S``. With ``L <= C`` proven,
  ``C >= load_d(S) + min(a_d(S) + b_d(S), L)`` holds on every device, used or not (an unused one has
  no load).
* **dual weights.** For any weights ``y >= 0`` on the devices summing to 1, their weighted mean gives
  ``C >= sum_d y_d min(a_d + b_d, L) + sum_{u in S} min_d y_d time[u, d]`` whatever the assignment
  (each task's load counted at its cheapest weighted device): weak duality of the linear program
  "split ``S`` over the devices with ``load_d + offset_d <= C``". The weights are that program's
  optimal duals (scipy's HiGHS) and the devices' relative speeds; any weights give a sound bound,
  evaluated in float64 and lowered by a relative margin before rounding up.
* **counting.** Device ``d`` holds at most ``floor((C - a_d(S) - b_d(S)) / tau_d(S))`` tasks of ``S``
  (``tau_d``: the least time on ``d`` over ``S``), so ``C`` is at least the least value at which these
  counts sum to ``|S|`` (:func:`least_slot`): identical tasks that do not divide evenly over the
  devices.
* **heads and tails from load.** A task ``v`` starts after all its ancestors finish, so the windowed
  load of sets of its ancestors (from their heads to ``v``'s start) and the slots of all of them bound
  its start; likewise the load and slots of its descendants bound its tail. Heads also grow along edges (a producer's head plus its
  least time; transfers left out) and tails likewise. Tasks are visited in topological order (reverse
  for tails), so each head includes the load of the ancestors before it: a workflow's phases (split,
  join, split, join) add up instead of overlapping.

The sets are threshold sets: the tasks whose least head (over devices) is at least ``alpha`` and whose
least tail is at least ``beta`` (every ``alpha``, up to :data:`THRESHOLDS` values of ``beta``, and the
mirror sweep); for one task's head (tail), the sets of its ancestors (descendants) whose least head
(tail) is at least ``alpha``.

:func:`load_bound` then refutes makespans ``C`` above that, as
:func:`dse.mapping.dag.bounds.destructive_bound` does: a device on which a task cannot start, run and
finish its tail within ``C`` is struck from its choices; the heads and tails are recomputed on the
narrowed choices (:func:`~dse.mapping.dag.bounds.earliest_finish` and
:func:`~dse.mapping.dag.bounds.time_to_end`, transfers and sends counted) and raised by load; a ``C``
is refuted when a task is left with no device, a window's load or count does not fit, or the linear
program over the narrowed choices needs more than ``C``. That is tried over every choice, then case
by case with the task whose edges take the most transfer time (where it runs sets the heads of most
others) on each of its devices: ``C`` is refuted when every case is. The least unrefuted ``C``
(bisection) is the bound. Transfers (beyond the heads and tails), sends after the first, memory and colocation are left
out, so every refutation is sound. The graph is read from the problem's edge list.
"""

from __future__ import annotations

import functools
import math
import time as _time
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.dag.bounds import earliest_finish, task_device_bounds, time_to_end
from dse.util.graphs import lexicographic_topological_order
from dse.util.lp_bounds import LinearProgram, lagrangian_bound

if TYPE_CHECKING:
    from dse.mapping.dag.problem import DagProblem

_INF = np.iinfo(np.int64).max // 4
#: Relative margin taken off every bound evaluated in float64 before it is rounded up.
MARGIN = 1e-9
#: Most values of the second threshold (least tail, or least head in the mirror sweep) tried per sweep.
THRESHOLDS = 48
#: Largest graph whose ancestor and descendant sets are held (two n x n boolean matrices); larger
#: graphs keep their heads and tails from the edges alone.
MAX_ANCESTOR_TASKS = 4000
#: Largest number of (task, device) options for which the linear programs are solved; larger problems
#: use the relative speeds alone.
MAX_LP_CELLS = 200_000


def load_bound(problem: DagProblem, upper: int | None = None, time_limit: float = 30.0, known: int = 0) -> int:
    """The least makespan at or above the windowed load bound (and ``known``, a bound already proven) that
    the module docstring's reasoning cannot refute, by bisection up to ``upper`` (a known schedule's
    makespan; each task at its fastest, one after another, when None). Always a lower bound, at most
    ``upper``; when ``time_limit`` seconds run out the bound proven so far is returned. 0 without tasks."""
    if not problem.n_tasks:
        return int(known)
    deadline = _time.monotonic() + time_limit
    reasoning = _LoadReasoning(problem, deadline)
    head, tail, _ = task_device_bounds(problem)
    low, _, _ = reasoning.static_bound(head, tail, int(known), deadline)
    if upper is None:
        upper = int(np.where(reasoning.allowed, reasoning.time, _INF).min(axis=1).sum())
    high = max(low, int(upper))
    while low < high and _time.monotonic() < deadline:
        probe = (low + high) // 2
        if reasoning.refuted(probe, deadline):
            low = probe + 1
        else:
            high = probe
    return low


def load_task_device_bounds(problem: DagProblem, known: int = 0, deadline: float = math.inf
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(head, tail, span, bound)``: :func:`~dse.mapping.dag.bounds.task_device_bounds` with the heads and
    tails raised by the load of each task's ancestors and descendants, ``span = head + time + tail`` (a
    huge value where a device may not run a task), and the windowed load bound over them (at least
    ``known``); what is done when ``time.monotonic()`` passes ``deadline`` is returned."""
    head, tail, span = task_device_bounds(problem)
    if not problem.n_tasks:
        return head, tail, span, int(known)
    reasoning = _LoadReasoning(problem, deadline)
    bound, head, tail = reasoning.static_bound(head, tail, int(known), deadline)
    span = np.where(reasoning.allowed, head + reasoning.time + tail, _INF)
    return head, tail, span, bound


class _LoadReasoning:
    """The tables and graph of one problem: times, ancestors and descendants, device weights."""

    def __init__(self, problem: DagProblem, deadline: float = math.inf) -> None:
        t = problem.tables
        self.deadline = deadline
        self.problem = problem
        self.n, self.m = t.n_ops, t.n_dev
        self.allowed = t.allowed.copy()
        self.time = np.where(self.allowed, t.time, _INF).astype(np.int64)
        edges = [(int(u), int(v)) for u, v in np.asarray(t.edges, dtype=np.int64).reshape(-1, 2).tolist()]
        self.order = lexicographic_topological_order(self.n, edges)
        self.producers: list[list[int]] = [[] for _ in range(self.n)]
        self.consumers: list[list[int]] = [[] for _ in range(self.n)]
        for u, v in dict.fromkeys(edges):
            self.producers[v].append(u)
            self.consumers[u].append(v)
        self.ancestors = self._closure(self.producers, self.order) if self.n <= MAX_ANCESTOR_TASKS else None
        self.descendants = (self._closure(self.consumers, self.order[::-1]) if self.n <= MAX_ANCESTOR_TASKS
                            else None)
        self.base_weights = self.weights(self.allowed, None)
        self.span = np.where(self.allowed, self.time, _INF)  # per task and device a least span (static_bound's)

    def _closure(self, before: list[list[int]], order: list[int]) -> np.ndarray:
        """Per task the tasks that come before it (``before``: its direct ones), as an n x n boolean matrix."""
        closure = np.zeros((self.n, self.n), dtype=bool)
        for v in order:
            if _time.monotonic() > self.deadline:  # the sets found so far are sets of true ancestors
                break
            row = closure[v]
            for u in before[v]:
                row |= closure[u]
            row[before[v]] = True
        return closure

    # ------------------------------------------------------------------ weights
    def weights(self, allowed: np.ndarray, dual: np.ndarray | None) -> list[np.ndarray]:
        """The device weights tried over the choices ``allowed``: relative speeds, and ``dual`` (the optimal
        duals of the load program over every task; solved here when None and small enough)."""
        if dual is None and allowed.sum() <= MAX_LP_CELLS:
            dual = self._lp(np.arange(self.n), np.zeros(self.m), allowed)[1]
        return [self._relative_speeds(allowed)] + ([dual] if dual is not None else [])

    def _relative_speeds(self, allowed: np.ndarray) -> np.ndarray:
        """Weights proportional to each device's speed relative to each task's fastest device (the median
        ratio over the tasks it may run; the optimal duals when every table column is a speed)."""
        time = np.where(allowed, self.time, _INF)
        fastest = np.maximum(time.min(axis=1, keepdims=True), 1).astype(np.float64)
        ratio = np.where(allowed, time / fastest, np.nan)
        empty = np.asarray(np.isnan(ratio).all(axis=0))
        slowdown = np.nanmedian(np.where(empty[None, :], 1.0, ratio), axis=0)
        y = np.where(empty, 0.0, 1.0 / np.maximum(slowdown, 1e-12))
        return y / y.sum() if y.sum() > 0 else np.full(self.m, 1.0 / self.m)

    def _lp(self, tasks: np.ndarray, offset: np.ndarray, allowed: np.ndarray) -> tuple[float, np.ndarray | None]:
        """The windowed load program over ``tasks`` (choices ``allowed``, per-device ``offset``): its least
        ``C`` proven through HiGHS' duals (:func:`dse.util.lp_bounds.lagrangian_bound`; ``-inf`` when the
        solver gives no optimum, also when the deadline passes first) and its load rows' duals
        normalized to sum 1 (None then)."""
        from scipy import sparse  # type: ignore[import-untyped, unused-ignore]
        from scipy.optimize import linprog  # type: ignore[import-untyped, unused-ignore]

        op, dev = np.nonzero(allowed[tasks])
        k = len(op)
        if not k:
            return -math.inf, None
        value = self.time[tasks[op], dev].astype(np.float64)
        ceiling = float(value.sum() + np.abs(offset).max(initial=0.0)) + 1.0
        scale = 1.0 / ceiling
        rows = np.concatenate([dev, np.arange(self.m)])
        cols = np.concatenate([np.arange(k), np.full(self.m, k)])
        A_ub = sparse.csr_matrix((np.concatenate([value * scale, -np.ones(self.m)]), (rows, cols)),
                                 shape=(self.m, k + 1))
        A_eq = sparse.csr_matrix((np.ones(k), (op, np.arange(k))), shape=(len(tasks), k + 1))
        c = np.zeros(k + 1)
        c[k] = 1.0
        lp = LinearProgram(c, A_ub, -offset.astype(np.float64) * scale, A_eq, np.ones(len(tasks)),
                           np.zeros(k + 1), np.append(np.ones(k), 1.0))
        left = self.deadline - _time.monotonic()
        if left <= 0:
            return -math.inf, None
        result = linprog(c, A_ub=A_ub, b_ub=lp.b_ub, A_eq=A_eq, b_eq=lp.b_eq,
                         bounds=np.column_stack([lp.lower, lp.upper]), method="highs",
                         options={} if math.isinf(left) else {"time_limit": left})
        if result.status != 0:
            return -math.inf, None
        y = np.maximum(-result.ineqlin.marginals, 0.0)
        proven = lagrangian_bound(lp, y, -result.eqlin.marginals) / scale
        return proven, (y / y.sum() if y.sum() > 0 else None)

    # ------------------------------------------------------------------ windows
    def _costs(self, y: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """Per task its load at its cheapest weighted device, ``min_d y_d time[u, d]`` over ``allowed``."""
        return np.where(allowed, y[None, :] * self.time, np.inf).min(axis=1)

    def _windows(self, head: np.ndarray, tail: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The threshold sets as ``(tasks in order, first, second)`` per sweep: tasks whose second key is at
        least a threshold, in decreasing order of the first key (every prefix is a set)."""
        least_head, least_tail = head.min(axis=1), tail.min(axis=1)
        out = []
        for first, second, a, b in ((least_head, least_tail, head, tail), (least_tail, least_head, tail, head)):
            order = np.argsort(-first, kind="stable")
            levels = np.unique(second)
            if len(levels) > THRESHOLDS:
                levels = np.unique(np.quantile(levels, np.linspace(0.0, 1.0, THRESHOLDS), method="lower"))
            out += [(keep, a, b) for beta in levels if len(keep := order[second[order] >= beta])]
        return out

    def _sweep(self, y: np.ndarray, cost: np.ndarray, windows, cap: int) -> tuple[float, np.ndarray | None]:
        """The best windowed load bound over ``windows`` (every prefix of each) with weights ``y``, offsets
        capped at ``cap``, and that window's tasks."""
        best, best_set = -math.inf, None
        for keep, a, b in windows:
            if _time.monotonic() > self.deadline:
                break
            offsets = np.minimum(np.minimum.accumulate(a[keep], axis=0) + np.minimum.accumulate(b[keep], axis=0),
                                 cap)
            value = np.cumsum(cost[keep]) + offsets @ y
            k = int(np.argmax(value))
            if value[k] > best:
                best, best_set = float(value[k]), keep[: k + 1]
        return best, best_set

    def _count_bound(self, windows, allowed: np.ndarray, cap: int) -> int:
        """The largest counting bound over ``windows`` (every prefix of each): the least makespan at which
        the devices have a slot for each task of the set (:func:`least_slot`), offsets capped at ``cap``."""
        time = np.where(allowed, self.time, _INF)
        best = 0
        for keep, a, b in windows:
            if _time.monotonic() > self.deadline:
                break
            offsets = np.minimum.accumulate(a[keep], axis=0) + np.minimum.accumulate(b[keep], axis=0)
            least = np.minimum.accumulate(time[keep], axis=0)
            sizes = np.arange(1, len(keep) + 1)
            usable = (offsets < cap) & (least < _INF)
            crowded = sizes > usable.sum(axis=1)  # one task per device fits below the others' offsets
            if crowded.any():
                best = max(best, int(least_slot(offsets[crowded], least[crowded], sizes[crowded]).max()))
        return best

    def _raise(self, head: np.ndarray, allowed: np.ndarray, y: np.ndarray, cost: np.ndarray, reverse: bool,
               count: bool, deadline: float) -> np.ndarray:
        """``head`` (the tails with ``reverse``) raised task by task in topological order (reverse for
        tails) by each producer's (consumer's) head plus its least time, by the load of the task's
        ancestors (descendants) over the windows from their heads to its start and, with ``count``, by
        the least time at which the devices have a slot for each of them (module docstring)."""
        head = head.copy()
        order, before, closure = ((self.order[::-1], self.consumers, self.descendants) if reverse
                                  else (self.order, self.producers, self.ancestors))
        time = np.where(allowed, self.time, _INF)
        least = np.where(allowed, head, _INF).min(axis=1)
        for v in order:
            mine = before[v]
            if not mine or not allowed[v].any():
                continue
            if _time.monotonic() > deadline:
                break
            floor = int((head[mine] + time[mine]).min(axis=1).max())
            if closure is not None and closure[v].any():  # (none when the closure ran out of time)
                tasks = np.flatnonzero(closure[v])
                ranked = tasks[np.argsort(-least[tasks], kind="stable")]
                low = np.minimum(np.minimum.accumulate(head[ranked], axis=0), max(least[v], floor))
                floor = max(floor, _ceil(float((np.cumsum(cost[ranked]) + low @ y).max())))
                if count and len(tasks) > 1:
                    slot = least_slot(head[tasks].min(axis=0)[None, :], time[tasks].min(axis=0)[None, :],
                                      np.array([len(tasks)]))
                    floor = max(floor, int(slot[0]))
            head[v] = np.where(allowed[v], np.maximum(head[v], floor), head[v])
            least[v] = max(least[v], floor)
        return head

    def _raised(self, head: np.ndarray, tail: np.ndarray, allowed: np.ndarray, weights: list[np.ndarray],
                deadline: float) -> tuple[np.ndarray, np.ndarray]:
        head = np.where(allowed, head, _INF).astype(np.int64)
        tail = np.where(allowed, tail, _INF).astype(np.int64)
        for k, y in enumerate(weights):
            cost = self._costs(y, allowed)
            head = self._raise(head, allowed, y, cost, False, k == 0, deadline)
            tail = self._raise(tail, allowed, y, cost, True, k == 0, deadline)
        return head, tail

    def static_bound(self, head: np.ndarray, tail: np.ndarray, known: int,
                     deadline: float) -> tuple[int, np.ndarray, np.ndarray]:
        """``(bound, head, tail)``: the heads and tails raised by load and the windowed load and counting
        bounds over the threshold sets (at least ``known`` and every task's least span)."""
        weights = self.base_weights
        head, tail = self._raised(head, tail, self.allowed, weights, deadline)
        self.span = np.where(self.allowed, head + self.time + tail, _INF)
        bound = max(known, int(self.span.min(axis=1).max()))
        windows = self._windows(head, tail)
        for y in weights:
            bound = max(bound, _ceil(self._sweep(y, self._costs(y, self.allowed), windows, bound)[0]))
        return max(bound, self._count_bound(windows, self.allowed, bound)), head, tail

    @functools.cached_property
    def hub(self) -> int:
        """The task whose edges take the most transfer time (summed over device pairs): where it runs sets
        the heads and tails of most others, so :meth:`refuted` tries its devices case by case."""
        t = self.problem.tables
        volume = np.zeros(self.n)
        if t.n_edges:
            total = t.transfer_over_pairs("transfer_time")[0].astype(np.float64)
            np.add.at(volume, t.edges[:, 0], total)
            np.add.at(volume, t.edges[:, 1], total)
        return int(np.argmax(volume))

    def refuted(self, makespan: int, deadline: float) -> bool:
        """True when no schedule ends by ``makespan``: refuted by :meth:`refuted_from` over every choice,
        or else with :meth:`hub` on each of its devices in turn (the device where its span is least first,
        so that an unrefuted case ends the search early); False otherwise or when ``time.monotonic()``
        passes ``deadline``."""
        if self.refuted_from(self.allowed, makespan, deadline):
            return True
        hub = self.hub
        devices = np.flatnonzero(self.allowed[hub])
        if len(devices) < 2:
            return False
        for d in devices[np.argsort(self.span[hub, devices], kind="stable")]:
            allowed = self.allowed.copy()
            allowed[hub] = False
            allowed[hub, d] = True
            if not self.refuted_from(allowed, makespan, deadline):
                return False
        return True

    def refuted_from(self, allowed: np.ndarray, makespan: int, deadline: float) -> bool:
        """True when no schedule that runs each task on a device ``allowed`` leaves it ends by ``makespan``
        (module docstring); False when the reasoning finds no contradiction or ``time.monotonic()`` passes
        ``deadline``."""
        allowed = allowed.copy()
        weights = self.base_weights
        while _time.monotonic() < deadline:
            time = np.where(allowed, self.time, _INF)
            f, g = earliest_finish(self.problem, allowed), time_to_end(self.problem, allowed)
            head, tail = self._raised(np.where(f < _INF, f - time, _INF), np.where(g < _INF, g - time, _INF),
                                      allowed, weights, deadline)
            narrowed = allowed & (head + time + tail <= makespan)
            if not narrowed.any(axis=1).all():
                return True
            proven, dual = (self._lp(np.arange(self.n), np.zeros(self.m), narrowed)
                            if narrowed.sum() <= MAX_LP_CELLS else (-math.inf, None))
            if proven > makespan:
                return True
            weights = self.weights(narrowed, dual)
            head, tail = np.where(narrowed, head, _INF), np.where(narrowed, tail, _INF)
            windows = self._windows(head, tail)
            if self._count_bound(windows, narrowed, makespan) > makespan:
                return True
            if any(_ceil(self._sweep(y, self._costs(y, narrowed), windows, makespan)[0]) > makespan for y in weights):
                return True
            if np.array_equal(narrowed, allowed):
                return False
            allowed = narrowed
        return False


def least_slot(offset: np.ndarray, least: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per row the least ``T`` at which ``count`` tasks fit on the devices, device ``d`` holding
    ``floor((T - offset[d]) / least[d])`` of them (all of them from ``offset[d]`` on when ``least[d]`` is 0;
    none where either is huge): the ``count``-th smallest of ``offset[d] + j least[d]``, ``j >= 1``.
    Rows of ``offset`` and ``least`` are (k, m), ``count`` (k,); huge where no device is usable."""
    offset = np.asarray(offset, dtype=np.int64)
    least = np.asarray(least, dtype=np.int64)
    usable = (offset < _INF) & (least < _INF)
    step = np.maximum(least, 1)
    lo = np.zeros(len(count), dtype=np.int64)
    hi = np.where(usable, offset + count[:, None] * least, _INF).min(axis=1)  # all on one device

    def fits(T: np.ndarray) -> np.ndarray:
        room = T[:, None] - offset
        held = np.where(least > 0, room // step, count[:, None])
        return np.where(usable & (room >= 0), held, 0).sum(axis=1) >= count

    while (live := lo < hi).any():  # the least T in [lo, hi] that fits
        mid = lo + (hi - lo) // 2
        ok = fits(mid)
        hi = np.where(live & ok, mid, hi)
        lo = np.where(live & ~ok, mid + 1, lo)
    return hi


def _ceil(value: float) -> int:
    """``value`` lowered by :data:`MARGIN` of its size, rounded up (``-inf`` and NaN: 0)."""
    if not math.isfinite(value):
        return 0 if not value > 0 else _INF
    return math.ceil(value - MARGIN * (abs(value) + 1.0))
