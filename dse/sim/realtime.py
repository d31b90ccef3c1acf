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

Everything is in integer nanoseconds and picojoules, the event queue's clock too
(:class:`~dse.sim.core.IntEventQueue`), and a run is deterministic for a seed. A run's state and its steps
(arrival, block start and end, completion, drop, dispatch) are one :class:`RealTimeRun`; :func:`simulate`
builds and plays one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dse.cost.accelerator import MultiModelTables
from dse.model.accelerators import Scenario
from dse.sim.core import IntEventQueue
from dse.util.interrupt import stop_point
from dse.util.rounding import ceil_int

#: Events between two checks for a stop request (a power of two minus one: a bit mask).
STOP_EVERY = 4095
#: Columns of a trace (one row per executed block, one per dropped frame with empty accelerator).
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
    """Outcome of one run: totals, per-model counts, per-accelerator energy and (optionally) the trace rows.

    ``acc_energy_pj`` is every accelerator's whole energy, ``block_energy_pj`` the part its executed blocks
    spent (the rest is its idle power over the horizon)."""

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
    block_energy_pj: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

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


class RealTimeRun:
    """One run of ``scheduler`` on ``setup``'s scenario: the simulation's state and its steps.

    :func:`simulate` builds one and plays it with :meth:`run`, once. All times are integer ns, all energies
    integer pJ. State:

    * ``frames``: every frame of the run; ``queue``: the frames' arrivals and block ends;
    * ``free[acc]``: accelerator ``acc``'s free sub-arrays (``[0]`` or ``[]`` for a whole accelerator);
      ``ready``: the frames waiting for an accelerator, in the order they became ready;
    * per model: ``triggered``, ``dropped`` and ``late`` frames; per accelerator: ``busy_ns`` (sub-array ns)
      and ``block_energy_pj`` (what its executed blocks spent);
    * over completed frames: ``completed`` and ``latency_ns`` (their summed latency); ``last_ns``: the latest
      block end or drop; with ``trace``, the trace ``rows`` (columns :data:`TRACE_COLUMNS`).

    A run that raises (a stop request, ``KeyboardInterrupt``) leaves its half-updated state in this object
    alone, which then refuses to run again; the setup is never written to, and the scheduler's own state is
    reset by the next run's ``Scheduler.start``.
    """

    def __init__(self, setup: SimSetup, scheduler: Scheduler, *, duration_s: float, seed: int = 0,
                 trace: bool = False) -> None:
        self.setup = setup
        self.scheduler = scheduler
        self.trace = trace
        self.frames = make_frames(setup, duration_s, seed)
        self.model_names = [m.name for m in setup.scenario.models]
        self.acc_names = setup.tables.device_names
        self.pods = max(1, int(scheduler.pods))
        #: True: frames hold sub-arrays (or whole accelerators) from their first block to their last.
        self.spatial = self.pods > 1 or bool(scheduler.holds_frames)
        if self.spatial:
            self.time_k, self.energy_k = pod_costs(setup, self.pods)
        n_models, n_acc = len(setup.scenario.models), setup.n_acc
        self.queue = IntEventQueue()
        self.free = [list(range(self.pods)) for _ in range(n_acc)]
        self.ready: list[Frame] = []
        self.triggered = [0] * n_models
        self.dropped = [0] * n_models
        self.late = [0] * n_models
        self.busy_ns = [0] * n_acc
        self.block_energy_pj = [0] * n_acc
        self.completed = 0
        self.latency_ns = 0
        self.last_ns = 0
        self.rows: list[tuple[Any, ...]] = []
        self.played = False

    def run(self, stoppable: bool = False) -> SimResult:
        """Play the run: every arrival and block end in time order, the scheduler asked after the last event
        of each instant. Returns the :class:`SimResult`.

        Raises ``RuntimeError`` when this run was already played (or started), ``ValueError`` when a spatial
        scheduler places a frame that is not waiting or on sub-arrays that are not free, and, when
        ``stoppable``, :class:`~dse.util.interrupt.Interrupted` once a signal asks for a stop (checked at the
        first event and every ``STOP_EVERY + 1`` events after it).
        """
        if self.played:
            raise RuntimeError("a RealTimeRun plays once; build a new one")
        self.played = True
        self.scheduler.start(self.setup)
        queue = self.queue
        for f in self.frames:
            if f.state != "cancelled":
                queue.push(f.arrival, "arrive", f)
        events = 0
        while queue:
            events += 1
            if stoppable and (events & STOP_EVERY) == 1:
                stop_point()
            event = queue.pop()
            now, f = event.time, event.item
            if event.kind == "arrive":
                if f.state == "cancelled":  # its parent was dropped after the arrival was queued
                    continue
                self.arrive(f, now)
            else:
                self.end_block(f, now)
            if not queue or queue.peek_time() > now:
                self.dispatch(now)
        return self.finish()

    def block_cost(self, f: Frame) -> tuple[int, int]:
        """``(ns, pJ)`` of ``f``'s next block on the accelerator (and sub-arrays) it holds."""
        acc, held = f.alloc
        if self.spatial:
            k = len(held) - 1
            return self.time_k[f.op][acc][k], self.energy_k[f.op][acc][k]
        return self.setup.time[f.op][acc], self.setup.energy[f.op][acc]

    def start_block(self, f: Frame, now: int) -> None:
        """Start ``f``'s next block at ``now`` on what it holds; its end is queued."""
        f.state = "running"
        f.started = now
        self.queue.push(now + self.block_cost(f)[0], "end", f)

    def claim(self, f: Frame, acc: int, k: int) -> None:
        """Give the waiting frame ``f`` the first ``k`` free sub-arrays of ``acc`` (``k = 1``, the whole
        accelerator, without sub-arrays); raises ``ValueError`` when ``f`` is not waiting or fewer are free."""
        free = self.free[acc]
        if f not in self.ready or not 1 <= k <= len(free):
            raise ValueError(f"{self.scheduler.name}: cannot start {self.model_names[f.model]} frame {f.index} on "
                             f"{k} sub-arrays of {self.acc_names[acc]} ({len(free)} free)")
        self.ready.remove(f)
        f.alloc = (acc, tuple(free[:k]))
        del free[:k]

    def release(self, f: Frame) -> None:
        """Return what ``f`` holds to its accelerator's free sub-arrays (kept in order)."""
        acc, held = f.alloc
        self.free[acc] = sorted(self.free[acc] + list(held))
        f.alloc = (-1, ())

    def drop(self, f: Frame, at: int) -> None:
        """Drop frame ``f`` (no longer waiting, holding nothing) at ``at``; its children not yet ready are
        cancelled (one already counted as triggered is counted out again)."""
        f.state = "dropped"
        f.end = at
        self.dropped[f.model] += 1
        self.last_ns = max(self.last_ns, at)
        if self.trace:
            self.rows.append((self.scheduler.name, self.model_names[f.model], f.index, f.next, "", at * 1e-6,
                              at * 1e-6, f.arrival * 1e-6, f.deadline * 1e-6, 0.0))
        for child in f.children:
            if child.state in ("future", "pending"):
                if child.state == "pending":
                    self.triggered[child.model] -= 1
                child.state = "cancelled"
        self.scheduler.finished(at, f, True)

    def make_ready(self, f: Frame, now: int) -> None:
        """Put ``f`` at the end of the ready list, waiting since ``now``."""
        f.state = "ready"
        f.ready_since = now
        self.ready.append(f)

    def dispatch(self, now: int) -> None:
        """At the end of instant ``now``: drop the waiting frames past their deadline or that the scheduler
        gives up, then start what the scheduler chooses on the free accelerators (or sub-arrays)."""
        scheduler = self.scheduler
        for f in [f for f in self.ready if f.deadline <= now or scheduler.hopeless(now, f)]:
            self.ready.remove(f)
            self.drop(f, max(now if f.deadline > now else f.deadline, f.ready_since))
        if self.spatial:
            while self.ready and any(self.free):
                placed = scheduler.place(now, [len(p) for p in self.free], self.ready)
                if placed is None:
                    break
                self.claim(*placed)
                self.start_block(placed[0], now)
            return
        for acc, free in enumerate(self.free):
            if not free or not self.ready:
                continue
            chosen = scheduler.pick(now, acc, self.ready)
            if chosen is None:
                continue
            self.claim(chosen, acc, 1)
            self.start_block(chosen, now)

    def arrive(self, f: Frame, now: int) -> None:
        """Frame ``f`` arrives at ``now``: counted as triggered, ready unless it waits for its parent."""
        self.triggered[f.model] += 1
        if f.parent is not None and f.parent.state != "done":
            f.state = "pending"
        else:
            self.make_ready(f, now)

    def end_block(self, f: Frame, now: int) -> None:
        """``f``'s running block ends at ``now``: its time and energy are booked; the frame completes, is
        dropped (past its deadline), runs on (holding its sub-arrays) or waits again."""
        acc, held = f.alloc
        spent, used = self.block_cost(f)
        self.busy_ns[acc] += spent * len(held)
        self.block_energy_pj[acc] += used
        f.energy += used
        self.last_ns = max(self.last_ns, now)
        if self.trace:
            label = f"{self.acc_names[acc]}[{','.join(map(str, held))}]" if self.pods > 1 else self.acc_names[acc]
            self.rows.append((self.scheduler.name, self.model_names[f.model], f.index, f.next, label,
                              f.started * 1e-6, now * 1e-6, f.arrival * 1e-6, f.deadline * 1e-6, used * 1e-9))
        f.next += 1
        if f.next == len(f.ops):
            self.release(f)
            self.complete(f, now)
        elif now >= f.deadline:
            self.release(f)
            self.drop(f, now)
        elif self.spatial:
            self.start_block(f, now)  # the frame keeps its sub-arrays until it completes or is dropped
        else:
            self.release(f)
            self.make_ready(f, now)

    def complete(self, f: Frame, now: int) -> None:
        """``f``'s last block ended at ``now``: counted (late past its deadline); its children waiting for it
        become ready, or are dropped when already past their deadline."""
        f.state = "done"
        f.end = now
        self.completed += 1
        self.latency_ns += now - f.arrival
        if now > f.deadline:
            self.late[f.model] += 1
        for child in f.children:
            if child.state == "pending":
                if child.deadline <= now:
                    self.drop(child, child.deadline)
                else:
                    self.make_ready(child, now)
        self.scheduler.finished(now, f, False)

    def finish(self) -> SimResult:
        """Drop the frames still waiting (at their deadline) and total the run: every accelerator's block
        energy plus its idle power over the horizon ``max(last deadline, last block end or drop)``."""
        last = self.last_ns
        for f in list(self.ready):
            self.drop(f, max(f.deadline, f.ready_since))
        horizon = max([last] + [f.deadline for f in self.frames])
        busy = np.array(self.busy_ns, dtype=np.int64)  # sub-array ns
        idle = np.asarray(self.setup.tables.idle_power_mw, dtype=np.int64) * (horizon * self.pods - busy) // self.pods
        acc_energy = np.array(self.block_energy_pj, dtype=np.int64) + idle
        return SimResult(self.scheduler.name, int(acc_energy.sum()), np.array(self.triggered, dtype=np.int64),
                         np.array(self.dropped, dtype=np.int64), np.array(self.late, dtype=np.int64),
                         self.latency_ns, self.completed, busy // self.pods, acc_energy, horizon, self.rows,
                         np.array(self.block_energy_pj, dtype=np.int64))


def simulate(setup: SimSetup, scheduler: Scheduler, *, duration_s: float, seed: int = 0,
             trace: bool = False, stoppable: bool = False) -> SimResult:
    """Run ``scheduler`` on ``setup``'s scenario for ``duration_s`` seconds of arrivals (a :class:`RealTimeRun`).

    Returns a :class:`SimResult` (with ``trace``: its rows, columns :data:`TRACE_COLUMNS`).
    Deterministic for a ``seed`` (the dependent models' draws). Raises ``ValueError`` when a
    spatial scheduler places a frame that is not waiting or on sub-arrays that are not free, and, when
    ``stoppable``, :class:`~dse.util.interrupt.Interrupted` once a signal asks for a stop (checked every few
    thousand events; a solver scoring genomes leaves it off and polls its own stop token).
    """
    return RealTimeRun(setup, scheduler, duration_s=duration_s, seed=seed, trace=trace).run(stoppable)
