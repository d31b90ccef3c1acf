"""Real-time multi-model simulation: frames of several models on a multi-accelerator system.

Semantics (``docs/family-multimodel.md``):

* frame ``i`` of a model at ``F`` fps arrives at ``i / F`` s and is due at ``(i + 1) / F`` s,
  for every ``i`` with ``join_s <= i / F < min(leave_s, duration_s)``;
* a model with ``depends_on`` runs frame ``i`` only with its ``probability`` (a seeded draw)
  and only after the parent's latest frame arrived at or before it completes; when that
  parent frame is dropped (or there is none) the frame is not triggered;
* a frame is a chain of layer blocks (the cost tables' ops); a block runs on one accelerator
  without preemption, the scheduler decides at every block boundary which ready frame's next
  block runs on a free accelerator; an accelerator runs one block at a time;
* a spatial scheduler (``Scheduler.pods > 1``, Planaria-style) instead cuts every accelerator into
  ``pods`` sub-arrays: at frame boundaries it gives a waiting frame ``k`` free sub-arrays of one
  accelerator (``Scheduler.place``), and the frame runs all its blocks there, at the ``k``-pod
  costs (:func:`pod_costs`), concurrently with the frames on the other sub-arrays; the trace names
  them ``ACC[i,j]``; with ``pods = 1`` and ``Scheduler.holds_frames`` the same happens on whole
  accelerators (a frame keeps its accelerator until it completes: model-level granularity; the trace
  names the accelerator alone);
* a frame still waiting at its deadline is dropped then (XRBench's rule); one whose last
  block ends after the deadline completes late (a miss, not a drop); a scheduler may drop a
  frame earlier (``Scheduler.hopeless``);
* energy: each executed block's table energy (active power over its time plus off-chip
  traffic) plus every accelerator's idle power over the rest of the horizon
  (``max(last deadline, last block end)``); with sub-arrays, idle power is charged per idle sub-array.

Everything is in integer nanoseconds and picojoules, and a run is deterministic for a seed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dse.cost.accelerator import MultiModelTables
from dse.model.accelerators import Scenario
from dse.sim.core import EventQueue
from dse.util.interrupt import stop_point
from dse.util.rounding import ceil_int

#: Columns of a trace (one row per executed block, one per dropped frame with empty accelerator).
#: Events between two checks for a stop request (a power of two minus one: a bit mask).
STOP_EVERY = 4095
TRACE_COLUMNS = ("scheduler", "model", "frame", "block", "accelerator", "start_ms", "end_ms", "arrival_ms",
                 "deadline_ms", "energy_mj")


class Frame:
    """One frame of one model; mutable simulation state (``next``: index of its next block)."""

    __slots__ = ("model", "index", "arrival", "deadline", "ops", "next", "ready_since", "state", "end",
                 "energy", "children", "parent", "alloc", "started")

    def __init__(self, model: int, index: int, arrival: int, deadline: int, ops: tuple[int, ...]) -> None:
        self.model = model
        self.index = index
        self.arrival = arrival
        self.deadline = deadline
        self.ops = ops
        self.next = 0
        self.ready_since = arrival
        self.state = "future"  # future, pending (waits for its parent), ready, running, done, dropped, cancelled
        self.end = -1
        self.energy = 0
        self.children: list[Frame] = []
        self.parent: Frame | None = None
        self.alloc: tuple[int, tuple[int, ...]] = (-1, ())  # accelerator and sub-arrays while running
        self.started = 0

    @property
    def op(self) -> int:
        """The op (table row) of the next block."""
        return self.ops[self.next]


@dataclass(frozen=True)
class SimSetup:
    """What a scheduler may read: the tables as Python lists and per-model facts.

    ``time[op][acc]`` (ns), ``energy[op][acc]`` (pJ); ``best_time[op]``: the fastest accelerator's
    time; ``remaining_min[op]``: the fastest time of this block and the rest of its model's blocks;
    ``period[m]``: model ``m``'s frame period (ns).
    """

    tables: MultiModelTables
    scenario: Scenario
    time: list[list[int]]
    energy: list[list[int]]
    best_time: list[int]
    best_energy: list[int]
    remaining_min: list[int]
    period: list[int]
    n_acc: int


@dataclass
class SimResult:
    """Outcome of one run: totals, per-model counts, per-accelerator energy and (optionally) the trace rows."""

    scheduler: str
    energy_pj: int
    frames: np.ndarray  # per model: triggered frames
    dropped: np.ndarray  # per model
    late: np.ndarray  # per model: completed after the deadline
    latency_ns_sum: int
    completed: int
    busy_ns: np.ndarray
    acc_energy_pj: np.ndarray
    horizon_ns: int
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def missed(self) -> int:
        return int(self.dropped.sum() + self.late.sum())

    @property
    def energy_j(self) -> float:
        return self.energy_pj * 1e-12

    @property
    def mean_latency_s(self) -> float:
        return self.latency_ns_sum * 1e-9 / self.completed if self.completed else 0.0


class Scheduler(ABC):
    """A run-time policy: ``pick`` a ready frame for a free accelerator."""

    name: ClassVar[str] = "scheduler"
    #: Sub-arrays per accelerator: 1, whole accelerators (``pick`` decides); more, spatial (``place`` decides).
    pods: int = 1
    #: True: frames are placed whole (``place`` decides) and keep their accelerator or sub-arrays until they
    #: complete or are dropped (model-level granularity, no preemption), also with ``pods = 1``.
    holds_frames: bool = False

    def start(self, setup: SimSetup) -> None:
        """Called once before a run (reset state here)."""
        self.setup = setup

    @abstractmethod
    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        """The frame whose next block runs on ``acc`` now, or ``None``."""

    def place(self, now: int, free: Sequence[int], ready: Sequence[Frame]) -> tuple[Frame, int, int] | None:
        """Spatial schedulers only: ``(frame, acc, k)`` to start a waiting ``frame`` on ``k`` of ``acc``'s
        ``free[acc]`` free sub-arrays, where it runs all its blocks; ``None`` to start nothing more now."""
        raise NotImplementedError(f"{self.name} is not a spatial scheduler")

    def hopeless(self, now: int, frame: Frame) -> bool:
        """True to drop a waiting ``frame`` before its deadline (default: never)."""
        return False

    def finished(self, now: int, frame: Frame, dropped: bool) -> None:
        """Called when a frame completes or is dropped (default: nothing to update)."""
        return None


def setup(tables: MultiModelTables, scenario: Scenario | None = None) -> SimSetup:
    """The :class:`SimSetup` of ``tables`` (``scenario`` overrides the tables' own, e.g. its timeline)."""
    scenario = scenario or tables.scenario
    if scenario is None:
        raise ValueError("the tables carry no scenario")
    time = tables.time.tolist()
    energy = tables.energy.tolist()
    best = tables.time.min(axis=1)
    remaining = np.zeros(tables.n_ops, dtype=np.int64)
    for ops in tables.model_ops:
        acc = 0
        for op in reversed(ops):
            acc += int(best[op])
            remaining[op] = acc
    period = [round(1e9 / m.fps) for m in scenario.models]
    return SimSetup(tables, scenario, time, energy, best.tolist(), tables.energy.min(axis=1).tolist(),
                    remaining.tolist(), period, tables.n_dev)


def pod_costs(setup: SimSetup, pods: int) -> tuple[list[list[list[int]]], list[list[list[int]]]]:
    """``(time, energy)`` with ``time[op][acc][k - 1]``: the block on ``k`` of ``pods`` sub-arrays of ``acc``.

    From the tables' analytic ``pod_time``/``pod_energy`` when they have them for ``pods``; otherwise
    time scales as ``ceil(time x pods / k)`` and energy stays (a ``k / pods`` share of the power for
    ``pods / k`` times as long).
    """
    tables = setup.tables
    if tables.pod_time is not None and tables.pod_energy is not None and tables.pod_time.shape[2] == pods:
        return tables.pod_time.tolist(), tables.pod_energy.tolist()
    time = [[[-(-t * pods // k) for k in range(1, pods + 1)] for t in row] for row in setup.time]
    energy = [[[e] * pods for e in row] for row in setup.energy]
    return time, energy


def make_frames(setup: SimSetup, duration_s: float, seed: int) -> list[Frame]:
    """Every frame of the run in model order, dependent frames linked to their parent frame."""
    rng = np.random.default_rng(seed)
    scenario = setup.scenario
    index = {m.name: k for k, m in enumerate(scenario.models)}
    per_model: list[list[Frame]] = []
    for m, model in enumerate(scenario.models):
        frames = []
        stop = duration_s if model.leave_s is None else min(duration_s, model.leave_s)
        for i in range(ceil_int(model.join_s * model.fps), ceil_int(stop * model.fps)):
            frames.append(Frame(m, i, round(i * 1e9 / model.fps), round((i + 1) * 1e9 / model.fps),
                                setup.tables.model_ops[m]))
        per_model.append(frames)
    order = sorted(range(len(scenario.models)), key=lambda k: _depth(scenario, k))
    for m in order:
        model = scenario.models[m]
        if model.depends_on is None:
            continue
        parents = per_model[index[model.depends_on]]
        draws = rng.random(len(per_model[m]))
        arrivals = np.array([p.arrival for p in parents], dtype=np.int64)
        for frame, draw in zip(per_model[m], draws, strict=True):
            k = int(np.searchsorted(arrivals, frame.arrival, side="right")) - 1
            if draw >= model.probability or k < 0 or parents[k].state == "cancelled":
                frame.state = "cancelled"
                continue
            frame.parent = parents[k]
            parents[k].children.append(frame)
    return [f for frames in per_model for f in frames]


def _depth(scenario: Scenario, m: int) -> int:
    depth, parent = 0, scenario.models[m].depends_on
    while parent is not None:
        depth += 1
        parent = scenario.model(parent).depends_on
    return depth


def simulate(setup: SimSetup, scheduler: Scheduler, *, duration_s: float, seed: int = 0,
             trace: bool = False, stoppable: bool = False) -> SimResult:
    """Run ``scheduler`` on ``setup``'s scenario for ``duration_s`` seconds of arrivals.

    Returns a :class:`SimResult` (with ``trace``: its rows, columns :data:`TRACE_COLUMNS`).
    Deterministic for a ``seed`` (the dependent models' draws). Raises ``ValueError`` when a
    spatial scheduler places a frame that is not waiting or on sub-arrays that are not free, and, when
    ``stoppable``, :class:`~dse.util.interrupt.Interrupted` once a signal asks for a stop (checked every few
    thousand events; a solver scoring genomes leaves it off and polls its own stop token).
    """
    frames = make_frames(setup, duration_s, seed)
    n_models, n_acc = len(setup.scenario.models), setup.n_acc
    names = [m.name for m in setup.scenario.models]
    acc_names = setup.tables.device_names
    pods = max(1, int(scheduler.pods))
    spatial = pods > 1 or bool(scheduler.holds_frames)
    if spatial:
        time_k, energy_k = pod_costs(setup, pods)
    time, energy = setup.time, setup.energy
    counts = np.zeros(n_models, dtype=np.int64)
    dropped = np.zeros(n_models, dtype=np.int64)
    late = np.zeros(n_models, dtype=np.int64)
    busy = np.zeros(n_acc, dtype=np.int64)  # sub-array ns (ns when whole accelerators)
    dyn = np.zeros(n_acc, dtype=np.int64)
    free = [list(range(pods)) for _ in range(n_acc)]
    ready: list[Frame] = []
    rows: list[tuple[Any, ...]] = []
    stats = {"latency": 0, "completed": 0, "last": 0}
    sched_name = scheduler.name
    scheduler.start(setup)

    queue = EventQueue()
    for f in frames:
        if f.state != "cancelled":
            queue.push(f.arrival * 1e-9, "arrive", frame=f)

    def cost(f: Frame) -> tuple[int, int]:
        acc, held = f.alloc
        if spatial:
            return time_k[f.op][acc][len(held) - 1], energy_k[f.op][acc][len(held) - 1]
        return time[f.op][acc], energy[f.op][acc]

    def run_block(f: Frame, now: int) -> None:
        f.state = "running"
        f.started = now
        queue.push((now + cost(f)[0]) * 1e-9, "done", frame=f)

    def claim(f: Frame, acc: int, k: int) -> None:
        if f not in ready or not 1 <= k <= len(free[acc]):
            raise ValueError(f"{sched_name}: cannot start {names[f.model]} frame {f.index} on {k} sub-arrays of "
                             f"{acc_names[acc]} ({len(free[acc])} free)")
        ready.remove(f)
        f.alloc = (acc, tuple(free[acc][:k]))
        del free[acc][:k]

    def release(f: Frame) -> None:
        acc, held = f.alloc
        free[acc] = sorted(free[acc] + list(held))
        f.alloc = (-1, ())

    def drop(f: Frame, at: int) -> None:
        f.state = "dropped"
        f.end = at
        dropped[f.model] += 1
        stats["last"] = max(stats["last"], at)
        if trace:
            rows.append((sched_name, names[f.model], f.index, f.next, "", at * 1e-6, at * 1e-6,
                         f.arrival * 1e-6, f.deadline * 1e-6, 0.0))
        for child in f.children:
            if child.state in ("future", "pending"):
                if child.state == "pending":
                    counts[child.model] -= 1
                child.state = "cancelled"
        scheduler.finished(at, f, True)

    def make_ready(f: Frame, now: int) -> None:
        f.state = "ready"
        f.ready_since = now
        ready.append(f)

    def dispatch(now: int) -> None:
        for f in [f for f in ready if f.deadline <= now or scheduler.hopeless(now, f)]:
            ready.remove(f)
            drop(f, max(now if f.deadline > now else f.deadline, f.ready_since))
        if spatial:
            while ready and any(free):
                placed = scheduler.place(now, [len(p) for p in free], ready)
                if placed is None:
                    break
                claim(placed[0], placed[1], placed[2])
                run_block(placed[0], now)
            return
        for acc in range(n_acc):
            if not free[acc] or not ready:
                continue
            chosen = scheduler.pick(now, acc, ready)
            if chosen is None:
                continue
            claim(chosen, acc, 1)
            run_block(chosen, now)

    events = 0
    while queue:
        events += 1
        if stoppable and (events & STOP_EVERY) == 1:  # the first event, then every STOP_EVERY + 1
            stop_point()
        event = queue.pop()
        now = round(event.time * 1e9)
        if event.kind == "arrive":
            f = event.data["frame"]
            if f.state == "cancelled":
                continue
            counts[f.model] += 1
            parent = f.parent
            if parent is not None and parent.state != "done":
                f.state = "pending"
            else:
                make_ready(f, now)
        else:
            f = event.data["frame"]
            acc, held = f.alloc
            spent, used = cost(f)
            now = f.started + spent  # exact integer end (the queue's float time may round)
            busy[acc] += spent * len(held)
            dyn[acc] += used
            f.energy += used
            stats["last"] = max(stats["last"], now)
            if trace:
                label = f"{acc_names[acc]}[{','.join(map(str, held))}]" if pods > 1 else acc_names[acc]
                rows.append((sched_name, names[f.model], f.index, f.next, label, f.started * 1e-6, now * 1e-6,
                             f.arrival * 1e-6, f.deadline * 1e-6, used * 1e-9))
            f.next += 1
            if f.next == len(f.ops):
                release(f)
                f.state = "done"
                f.end = now
                stats["completed"] += 1
                stats["latency"] += now - f.arrival
                if now > f.deadline:
                    late[f.model] += 1
                for child in f.children:
                    if child.state == "pending":
                        if child.deadline <= now:
                            drop(child, child.deadline)
                        else:
                            make_ready(child, now)
                scheduler.finished(now, f, False)
            elif now >= f.deadline:
                release(f)
                drop(f, now)
            elif spatial:
                run_block(f, now)  # the frame keeps its sub-arrays until it completes or is dropped
            else:
                release(f)
                make_ready(f, now)
        if queue.peek_time() > event.time or not queue:
            dispatch(now)
    last_now = stats["last"]
    for f in list(ready):
        drop(f, max(f.deadline, f.ready_since))
    horizon = max([last_now] + [f.deadline for f in frames])
    idle = np.asarray(setup.tables.idle_power_mw, dtype=np.int64) * (horizon * pods - busy) // pods
    acc_energy = dyn + idle
    return SimResult(sched_name, int(acc_energy.sum()), counts, dropped, late, stats["latency"], stats["completed"],
                     busy // pods, acc_energy, horizon, rows)
