"""Run-time schedulers of the real-time multi-model simulator, all behind :class:`Scheduler`.

At every block boundary the simulator asks, for each free accelerator, ``pick(now, acc, ready)``:
which ready frame's next block runs there (``None``: leave it idle). Shipped:

* ``fcfs``: the earliest-arrived frame; ``edf``: the earliest deadline; ``least_slack``: the
  smallest slack (deadline - now - fastest remaining time);
* ``static``: a Herald-style static partition of models to accelerators found offline
  (greedy, heaviest model first, onto the accelerator that keeps the largest utilization
  lowest), earliest deadline first on each accelerator;
* ``mapped``: a given (model, block) -> accelerator mapping and model priorities (the
  ``multimodel`` family's genome);
* ``dream``: DREAM-style scoring of urgency, fairness and accelerator preference, with weights
  tuned online by hill climbing over windows, and early dropping of hopeless frames;
* ``planaria``: Planaria-style spatial multi-tenancy: every accelerator is cut into
  :data:`~dse.accelerator_cost.PODS` sub-arrays, re-partitioned among frames at frame boundaries
  (``pods > 1``: the simulator asks ``place`` instead of ``pick``).

Example::

    result = simulate(setup(tables), make_scheduler("edf"), duration_s=2.0, seed=0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dse.accelerator_cost import PODS
from dse.runtime.realtime import Frame, Scheduler, SimSetup, pod_costs

__all__ = ["SCHEDULERS", "Dream", "EDF", "FCFS", "LeastSlack", "Mapped", "Planaria", "Scheduler", "Static",
           "make_scheduler", "static_partition"]


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
    """Herald-style offline partition: accelerator per model, heaviest model (fps x fastest time) first, each onto
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
    """Herald-style: :func:`static_partition` computed at start, EDF on each accelerator."""

    name = "static"

    def __init__(self) -> None:
        super().__init__([])

    def start(self, setup: SimSetup) -> None:
        super().start(setup)
        per_model = static_partition(setup)
        self.device_of_op = [per_model[m] for m in setup.tables.model_of_op]


class Dream(Scheduler):
    """DREAM-style: score = w_u x urgency + w_f x fairness + w_p x preference; drops hopeless frames early.

    * urgency ``= 1 - clip(slack / period, 0, 1)``, slack = deadline - now - fastest remaining time;
    * fairness: the model's recent drop ratio (exponential average over its finished frames, factor 0.8);
    * preference ``= (fastest time / time here + lowest energy / energy here) / 2`` for the next block;
    * every ``window_ms`` of simulated time the window's cost (dynamic energy per finished frame x
      (misses + 1)) is compared with the best so far: a better trial weight vector is kept, a worse
      one reverted, and the next trial moves one weight by +-``step`` (a few cheap steps per second);
    * a frame that is not urgent (urgency below ``patience``) waits rather than run a block on an
      accelerator that spends over 10% more energy on it than the cheapest one;
    * with ``feasible_only``, a frame never runs a block on an accelerator that would make it late
      even if its remaining blocks ran on the fastest ones (it waits for a faster one instead);
    * a waiting frame is dropped as soon as even the fastest accelerators cannot finish it in time.
    """

    name = "dream"

    def __init__(self, weights: Sequence[float] = (1.0, 0.5, 0.5), window_ms: float = 100.0, step: float = 0.25,
                 tune: bool = True, patience: float = 0.5, feasible_only: bool = True) -> None:
        self.initial = tuple(float(w) for w in weights)
        self.window_ns = int(window_ms * 1e6)
        self.step = step
        self.tune = tune
        self.patience = patience
        self.feasible_only = feasible_only

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

    def hopeless(self, now: int, frame: Frame) -> bool:
        return now + self.setup.remaining_min[frame.op] > frame.deadline

    def pick(self, now: int, acc: int, ready: Sequence[Frame]) -> Frame | None:
        s = self.setup
        wu, wf, wp = self.weights
        best, best_score = None, -1.0
        for f in ready:
            op = f.op
            slack = f.deadline - now - s.remaining_min[op]
            urgency = 1.0 - min(max(slack / s.period[f.model], 0.0), 1.0)
            if urgency < self.patience and s.energy[op][acc] > 1.1 * s.best_energy[op]:
                continue  # not urgent: leave it for an accelerator that runs it more cheaply
            if self.feasible_only and now + s.time[op][acc] + s.remaining_min[op] - s.best_time[op] > f.deadline:
                continue  # this accelerator would make it late even if the rest ran on the fastest ones
            pref = 0.5 * (s.best_time[op] / s.time[op][acc] + s.best_energy[op] / max(s.energy[op][acc], 1))
            score = wu * urgency + wf * self.drop_ratio[f.model] + wp * pref
            if score > best_score:
                best, best_score = f, score
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
    With ``pods = 1`` it is EDF over whole accelerators.
    """

    name = "planaria"

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


#: Scheduler factories by name (the names ``dse simulate`` accepts).
SCHEDULERS: dict[str, Callable[[], Scheduler]] = {
    "fcfs": FCFS,
    "edf": EDF,
    "least_slack": LeastSlack,
    "static": Static,
    "dream": Dream,
    "planaria": Planaria,
}


def make_scheduler(name: str) -> Scheduler:
    """A fresh scheduler called ``name``; raises ``KeyError`` naming the known ones."""
    try:
        return SCHEDULERS[name]()
    except KeyError:
        raise KeyError(f"unknown scheduler {name!r}; known: {', '.join(SCHEDULERS)}") from None
