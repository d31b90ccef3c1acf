"""Run-time schedulers of the real-time multi-model simulator, all behind :class:`Scheduler`.

At every block boundary the simulator asks, for each free accelerator, ``pick(now, acc, ready)``:
which ready frame's next block runs there (``None``: leave it idle). Shipped:

* ``fcfs``: the earliest-arrived frame; ``edf``: the earliest deadline; ``least_slack``: the
  smallest slack (deadline - now - fastest remaining time);
* ``static``: a static partition of whole models to accelerators found offline
  (greedy, heaviest model first, onto the accelerator that keeps the largest utilization
  lowest), earliest deadline first on each accelerator;
* ``herald``: Herald-style static layer-block assignment (each block on its lowest-EDP accelerator,
  then load balancing), earliest deadline first on each accelerator;
* ``mapped``: a given (model, block) -> accelerator mapping and model priorities (the
  ``multimodel`` family's genome);
* ``dream``: DREAM-style scoring of urgency, fairness and accelerator affinity with weights set once
  (:class:`DreamWeights`), frame dropping, preemption at layer-block boundaries, waiting for a cheaper
  accelerator while the deadline allows;
* ``planaria``: Planaria-style spatial multi-tenancy: every accelerator is cut into
  :data:`~dse.cost.accelerator.PODS` sub-arrays, re-partitioned among frames at frame boundaries
  (``pods > 1``: the simulator asks ``place`` instead of ``pick``);
* ``planaria_acc``: the same policy on whole accelerators, each frame holding one to its end.

Example::

    result = simulate(setup(tables), make_scheduler("edf"), duration_s=2.0, seed=0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dse.cost.accelerator import PODS
from dse.sim.realtime import Frame, Scheduler, SimSetup, pod_costs

__all__ = ["SCHEDULERS", "Dream", "DreamWeights", "EDF", "FCFS", "Herald", "LeastSlack", "Mapped", "Planaria", "PlanariaWhole",
           "Scheduler", "Static", "herald_assignment", "make_scheduler", "static_partition"]


class FCFS(Scheduler):
    """First come, first served (ties: model order)."""

    name = "fcfs"

    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        return min(ready, key=lambda f: (f.arrival, f.model))


class EDF(Scheduler):
    """Earliest deadline first (ties: arrival, model order)."""

    name = "edf"

    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        return min(ready, key=lambda f: (f.deadline, f.arrival, f.model))


class LeastSlack(Scheduler):
    """Least slack first: deadline - now - the fastest time of the frame's remaining blocks."""

    name = "least_slack"

    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        remaining = self.setup.remaining_min
        return min(ready, key=lambda f: (f.deadline - remaining[f.op], f.model))


class Mapped(Scheduler):
    """A fixed op -> accelerator mapping; on each accelerator, the highest priority (lowest number), then EDF."""

    name = "mapped"

    def __init__(self, device_of_op: Sequence[int], priority: Sequence[int] | None = None) -> None:
        self.device_of_op = [int(d) for d in device_of_op]
        self.priority = None if priority is None else [int(p) for p in priority]

    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        mine = [f for f in ready if self.device_of_op[f.op] == acc]
        if not mine:
            return None
        if self.priority is None:
            return min(mine, key=lambda f: (f.deadline, f.model))
        prio = self.priority
        return min(mine, key=lambda f: (prio[f.model], f.deadline, f.model))


def static_partition(setup: SimSetup) -> list[int]:
    """Offline partition of whole models: accelerator per model, heaviest model (fps x fastest time) first, each onto
    the accelerator whose utilization (sum of fps x the model's time there) stays lowest; ties: fastest."""
    tables, scenario = setup.tables, setup.scenario
    times = np.array([[sum(setup.time[op][a] for op in ops) for a in range(setup.n_acc)] for ops in tables.model_ops],
                     dtype=float)
    load = times * np.array([m.fps for m in scenario.models])[:, None] * 1e-9
    util = np.zeros(setup.n_acc)
    choice = [0] * len(scenario.models)
    for m in sorted(range(len(scenario.models)), key=lambda k: (-load[k].min(), k)):
        a = int(min(range(setup.n_acc), key=lambda a: (util[a] + load[m, a], load[m, a], a)))
        choice[m] = a
        util[a] += load[m, a]
    return choice


class Static(Mapped):
    """Whole models to accelerators: :func:`static_partition` computed at start, EDF on each accelerator."""

    name = "static"

    def __init__(self) -> None:
        super().__init__([])

    def start(self, setup: SimSetup) -> None:
        super().start(setup)
        per_model = static_partition(setup)
        self.device_of_op = [per_model[m] for m in setup.tables.model_of_op]


def herald_assignment(setup: SimSetup) -> list[int]:
    """Herald-style offline layer-block assignment: accelerator per op (``(model, block)``).

    Each block first goes to the accelerator whose dataflow runs it with the lowest energy-delay
    product (Herald's dataflow affinity); then, while it lowers the largest utilization (sum over
    blocks of the model's fps x the block's time there), the block move off the most loaded
    accelerator that lowers it most is made (ties: the smaller EDP increase, then op and accelerator
    order). Returns the accelerator index of every op.
    """
    n_acc, time, energy = setup.n_acc, setup.time, setup.energy
    fps = [setup.scenario.models[m].fps for m in setup.tables.model_of_op]
    n_ops = len(time)
    edp = [[time[op][a] * energy[op][a] for a in range(n_acc)] for op in range(n_ops)]
    choice = [min(range(n_acc), key=row.__getitem__) for row in edp]  # ties: the lower accelerator
    load = [[fps[op] * time[op][a] * 1e-9 for a in range(n_acc)] for op in range(n_ops)]
    util = [0.0] * n_acc
    for op, a in enumerate(choice):
        util[a] += load[op][a]
    for _ in range(n_ops * n_acc):
        top = max(range(n_acc), key=lambda a: (util[a], -a))
        peak = util[top]
        best: tuple[float, int, int, int] | None = None
        for op in (op for op in range(n_ops) if choice[op] == top):
            for b in range(n_acc):
                if b == top:
                    continue
                after = [u for a, u in enumerate(util) if a not in (top, b)]
                new_peak = max([util[top] - load[op][top], util[b] + load[op][b], *after])
                if new_peak < peak - 1e-12:
                    key = (new_peak, edp[op][b] - edp[op][top], op, b)
                    if best is None or key < best:
                        best = key
        if best is None:
            break
        op, b = best[2], best[3]
        util[top] -= load[op][top]
        util[b] += load[op][b]
        choice[op] = b
    return choice


class Herald(Mapped):
    """Herald-style: :func:`herald_assignment` computed at start (static), earliest deadline first on each
    accelerator; no early drops, no re-mapping at run time."""

    name = "herald"

    def __init__(self) -> None:
        super().__init__([])

    def start(self, setup: SimSetup) -> None:
        super().start(setup)
        self.device_of_op = herald_assignment(setup)


@dataclass(frozen=True)
class DreamWeights:
    """DREAM-style tunable parameters, set once for every scenario and system (``docs/family-multimodel.md``).

    ``urgency``, ``fairness``, ``affinity``: the score's weights; ``patience``: urgency below which a
    frame may wait for a cheaper accelerator; ``energy_margin``: how much more energy than the cheaper
    one still counts as no worse; ``wait_guard``: periods of slack a wait must leave; ``lookahead``: wait
    only for an accelerator that frees up in time, and drop a frame once no accelerator frees up in time
    (off: wait for the cheapest whenever not urgent, drop only on the fastest remaining time).
    """

    urgency: float = 1.0
    fairness: float = 0.5
    affinity: float = 0.5
    patience: float = 0.8
    energy_margin: float = 0.0
    wait_guard: float = 0.25
    lookahead: bool = True


class Dream(Scheduler):
    """DREAM-style scheduler: UXCost-aware scoring, frame dropping, preemption at layer-block boundaries, affinity.

    For a free accelerator ``acc`` and each ready frame ``f`` (next block ``op``):

    * urgency ``= 1 - clip(slack / period, 0, 1)``, slack = deadline - now - fastest remaining time;
    * fairness: the model's recent miss ratio (exponential average over its finished frames, factor 0.8);
    * affinity ``= (fastest time / time on acc + lowest energy / energy on acc) / 2`` for ``op``;
    * score ``= w_u x urgency + w_f x fairness + w_a x affinity``; the highest score runs its next block.

    Around the score: a frame that is not urgent (urgency below ``patience``) does not run on ``acc``
    while an accelerator spending ``1 + energy_margin`` times less energy on the block frees up in time
    (its busy-until time + its time for the block + the fastest rest + ``wait_guard`` periods before the
    deadline: accelerator affinity); a frame never runs a block on an accelerator that would make it late
    even if its remaining blocks ran on the fastest ones (it waits for a faster one); a waiting or
    preempted frame is dropped as soon as the earliest end of its next block (over the accelerators,
    each from when it frees up) plus the fastest time of its other blocks is past its deadline (frame
    dropping; a dropped parent triggers no child). Every frame gives its accelerator back after each layer block, so
    a higher-scored frame of another model preempts it there (layer-block preemption); a frame partway
    through its model that becomes hopeless is dropped there (model-level preemption: its remaining
    blocks never run). With ``tune``, the weights move online by hill climbing over ``window_ms`` windows
    (window cost: dynamic energy per finished frame x (misses + 1)).
    """

    name = "dream"

    def __init__(self, weights: DreamWeights | Sequence[float] = DreamWeights(), window_ms: float = 100.0,
                 step: float = 0.25, tune: bool = False, feasible_only: bool = True, drop: bool = True) -> None:
        if not isinstance(weights, DreamWeights):
            wu, wf, wa = (float(w) for w in weights)
            weights = DreamWeights(urgency=wu, fairness=wf, affinity=wa)
        self.params = weights
        self.initial = (weights.urgency, weights.fairness, weights.affinity)
        self.patience = weights.patience
        self.margin = 1.0 + weights.energy_margin
        self.window_ns = int(window_ms * 1e6)
        self.step = step
        self.tune = tune
        self.feasible_only = feasible_only
        self.drop = drop

    def start(self, setup: SimSetup) -> None:
        super().start(setup)
        self.weights = list(self.initial)
        self.best_weights = list(self.initial)
        self.best_cost = float("inf")
        self.trial = 0
        self.window_end = self.window_ns
        self.window_energy = 0
        self.window_frames = 0
        self.window_misses = 0
        self.drop_ratio = [0.0] * len(setup.scenario.models)
        self.after = [r - b for r, b in zip(setup.remaining_min, setup.best_time, strict=True)]
        self.busy_until = [0] * setup.n_acc

    def hopeless(self, now: int, frame: Frame) -> bool:
        if not self.drop:
            return False
        s, op = self.setup, frame.op
        if now + s.remaining_min[op] > frame.deadline:
            return True
        if not self.params.lookahead:
            return False
        first = min(max(now, self.busy_until[b]) + s.time[op][b] for b in range(s.n_acc))
        return first + self.after[op] > frame.deadline

    def score(self, now: int, acc: int, frame: Frame) -> float | None:
        """``frame``'s score for its next block on ``acc``, or ``None`` when it should not run there now."""
        s = self.setup
        op = frame.op
        slack = frame.deadline - now - s.remaining_min[op]
        urgency = 1.0 - min(max(slack / s.period[frame.model], 0.0), 1.0)
        if urgency < self.patience and s.energy[op][acc] > self.margin * s.best_energy[op]:
            if not self.params.lookahead:
                return None  # not urgent: wait for an accelerator that runs the block more cheaply
            guard = self.params.wait_guard * s.period[frame.model]
            for b in range(s.n_acc):
                if (b != acc and s.energy[op][b] * self.margin < s.energy[op][acc]
                        and max(now, self.busy_until[b]) + s.time[op][b] + self.after[op] + guard <= frame.deadline):
                    return None  # a cheaper accelerator frees up in time: wait for it
        if self.feasible_only and now + s.time[op][acc] + self.after[op] > frame.deadline:
            return None  # this accelerator would make it late even if the rest ran on the fastest ones
        affinity = 0.5 * (s.best_time[op] / s.time[op][acc] + s.best_energy[op] / max(s.energy[op][acc], 1))
        wu, wf, wa = self.weights
        return wu * urgency + wf * self.drop_ratio[frame.model] + wa * affinity

    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        best, best_score = None, -1.0
        for f in ready:
            value = self.score(now, acc, f)
            if value is not None and value > best_score:
                best, best_score = f, value
        if best is not None:
            self.busy_until[acc] = now + self.setup.time[best.op][acc]
        return best

    def finished(self, now: int, frame: Frame, dropped: bool) -> None:
        missed = dropped or frame.end > frame.deadline
        self.drop_ratio[frame.model] = 0.8 * self.drop_ratio[frame.model] + 0.2 * missed
        self.window_energy += frame.energy
        self.window_frames += 1
        self.window_misses += missed
        if self.tune and now >= self.window_end:
            self._tune()
            self.window_end = now + self.window_ns

    def _tune(self) -> None:
        cost = self.window_energy / max(self.window_frames, 1) * (self.window_misses + 1)
        if cost < self.best_cost:
            self.best_cost, self.best_weights = cost, list(self.weights)
        self.weights = list(self.best_weights)
        k, sign = divmod(self.trial, 2)
        self.weights[k % 3] = max(0.0, self.weights[k % 3] + (self.step if sign == 0 else -self.step))
        self.trial = (self.trial + 1) % 6
        self.window_energy = self.window_frames = self.window_misses = 0


class Planaria(Scheduler):
    """Planaria-style spatial scheduler: accelerators cut into ``pods`` sub-arrays, re-partitioned at frame boundaries.

    Waiting frames are served earliest deadline first; each gets, on one accelerator, the fewest free
    sub-arrays that finish all its remaining blocks by its deadline (ties: least energy, then the
    lower accelerator); when no free choice makes the deadline, the one that finishes it soonest.
    A frame keeps its sub-arrays until it completes or is dropped (no preemption, no early drops).
    With ``pods = 1`` (:class:`PlanariaWhole`, ``planaria_acc``) the same policy allocates the system's own
    accelerators whole, at model granularity: the setting of DREAM's comparison, whose systems have no
    fission hardware.
    """

    name = "planaria"
    holds_frames = True

    def __init__(self, pods: int = PODS) -> None:
        self.pods = int(pods)

    def start(self, setup: SimSetup) -> None:
        super().start(setup)
        time, energy = pod_costs(setup, self.pods)
        n_acc, k_range = setup.n_acc, range(self.pods)
        # remaining[op][acc][k - 1]: this block and the rest of its model's blocks on k sub-arrays of acc
        self.remaining = [[[0] * self.pods for _ in range(n_acc)] for _ in time]
        self.remaining_energy = [[[0] * self.pods for _ in range(n_acc)] for _ in time]
        for ops in setup.tables.model_ops:
            after = [[0] * self.pods for _ in range(n_acc)]
            after_e = [[0] * self.pods for _ in range(n_acc)]
            for op in reversed(ops):
                for a in range(n_acc):
                    for k in k_range:
                        after[a][k] += time[op][a][k]
                        after_e[a][k] += energy[op][a][k]
                self.remaining[op] = [list(row) for row in after]
                self.remaining_energy[op] = [list(row) for row in after_e]

    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        return min(ready, key=lambda f: (f.deadline, f.arrival, f.model))

    def place(self, now: int, free: Sequence[int], ready: Sequence[Frame]) -> tuple[Frame, int, int] | None:
        frame = min(ready, key=lambda f: (f.deadline, f.arrival, f.model))
        remaining, remaining_energy = self.remaining[frame.op], self.remaining_energy[frame.op]
        best: tuple[tuple[int, int, int, int], int, int] | None = None
        for acc, n_free in enumerate(free):
            for k in range(1, n_free + 1):
                end = now + remaining[acc][k - 1]
                e = remaining_energy[acc][k - 1]
                key = (0, k, e, acc) if end <= frame.deadline else (1, end, e, acc)
                if best is None or key < best[0]:
                    best = (key, acc, k)
        return None if best is None else (frame, best[1], best[2])


class PlanariaWhole(Planaria):
    """:class:`Planaria`'s policy on the system's own accelerators (``pods = 1``): a waiting frame gets a whole
    free accelerator and keeps it until it completes or is dropped (model granularity, no fission hardware)."""

    name = "planaria_acc"

    def __init__(self) -> None:
        super().__init__(pods=1)


#: Scheduler factories by name (the names ``dse simulate`` accepts).
SCHEDULERS: dict[str, Callable[[], Scheduler]] = {
    "fcfs": FCFS,
    "edf": EDF,
    "least_slack": LeastSlack,
    "static": Static,
    "herald": Herald,
    "dream": Dream,
    "planaria": Planaria,
    "planaria_acc": PlanariaWhole,
}


def make_scheduler(name: str) -> Scheduler:
    """A fresh scheduler called ``name``; raises ``KeyError`` naming the known ones."""
    try:
        return SCHEDULERS[name]()
    except KeyError:
        raise KeyError(f"unknown scheduler {name!r}; known: {', '.join(SCHEDULERS)}") from None
