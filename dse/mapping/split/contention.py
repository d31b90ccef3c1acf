"""What co-running devices of a split share: cores (with each other and with other programs) and the
memory system, as a processor-sharing model with pairwise slowdowns.

Two mechanisms, each with its figure:

* **Cores, shared by processor sharing.** The operating system's fair scheduler (Linux CFS) shares
  the cores equally between scheduling groups (with autogroups, one per login session; else one for
  the machine) and, inside a group, equally between its runnable threads. With ``T`` threads of ours
  beside ``B`` runnable threads of other programs in our group, and ``K`` cores that our group gets
  (all ``C`` cores when nothing outside it runs; fewer when other sessions compete), each of ours
  runs at ``min(1, K / (T + B))`` of a core. A CPU worker group of ``N`` threads counts ``N``; an
  accelerator counts the one host thread that drives it (its own compute is not slowed, but the
  core is taken from the CPU groups). ``B`` and ``K`` are measured at run time: ``B`` by counting
  runnable threads, ``K`` from the share of a core probe threads get (:func:`capacity_from_share`).
* **Memory system, shared pairwise.** A group running beside another is slowed by what they share
  in hardware (memory bandwidth per socket, the last-level cache, SMT siblings): the factor
  ``slowdown[d, h]`` (CPU time of ``d`` beside ``h`` over its CPU time alone) is measured by
  ``dse calibrate`` for each pair of groups. Beside several groups, the excesses add:
  ``1 + sum_h (slowdown[d, h] - 1)`` (each co-runner takes its own part of the shared bandwidth;
  STREAM-style reasoning: a bandwidth-bound part slows by the share the others take).

:func:`finish_times` runs the two together over a split: every device's work (its compute time
alone on an idle machine, from a calibration) is consumed at its current rate, and the rates change
as devices finish (the others then get more of the cores and less contention). It returns each
device's finishing time. :func:`corun_predictor` is the same model for the family's per-part tables,
under the assumption that every device of the platform runs for the whole split (what a balanced
co-execution does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dse.cost.calibration.model import Calibration
from dse.mapping.split.inputs import GemmWorkload, SplitDevice, SplitPlatform

#: A compute-time predictor (as :data:`dse.mapping.split.model.Predictor`): (device, workload, rows) -> seconds.
Predictor = Callable[[SplitDevice, GemmWorkload, np.ndarray], np.ndarray]

#: Share of a core above which a probe is taken to have had a core to itself (no background load).
FULL_SHARE = 0.97


def host_threads(device: SplitDevice) -> int:
    """Threads a device keeps busy while its part runs: a CPU group's threads, an accelerator's host thread."""
    return max(device.threads, 1) if device.kind == "cpu" else 1


@dataclass(frozen=True)
class ContentionModel:
    """Cores and pairwise slowdowns of co-running devices.

    ``cores``: the machine's logical cores; ``background``: runnable threads of other programs in our
    scheduling group (measured at run time; 0 on an idle machine); ``slowdown[(a, b)]``: the slowdown of a
    device of fit name ``a`` while one of fit name ``b`` runs (1 where not measured); ``capacity``: the
    cores our scheduling group gets (None: all ``cores``; fewer when other sessions compete for them).
    """

    cores: int
    background: float = 0.0
    slowdown: tuple[tuple[tuple[str, str], float], ...] = ()
    capacity: float | None = None

    def pair(self, device: SplitDevice, beside: SplitDevice) -> float:
        """Slowdown of ``device`` while ``beside`` runs (1 where not measured or either is an accelerator)."""
        if device.kind != "cpu" or beside.kind != "cpu":
            return 1.0
        return dict(self.slowdown).get((device.fit_device, beside.fit_device), 1.0)

    def core_share(self, threads: float) -> float:
        """Share of a core each of ``threads`` running threads of ours gets beside the background:
        ``min(1, capacity / (threads + background))``."""
        capacity = self.cores if self.capacity is None else self.capacity
        return min(1.0, capacity / max(threads + self.background, 1e-12))


def calibrated_contention(calibration: Calibration, background: float = 0.0) -> ContentionModel:
    """The contention model of a calibration's machine: its logical cores and its measured pair slowdowns,
    beside ``background`` runnable threads of other programs."""
    pairs = tuple(((c.device, c.beside), float(c.slowdown)) for c in calibration.contention)
    return ContentionModel(calibration.machine.logical_cores, float(background), pairs)


def capacity_from_share(share: float, threads: int, background: float, cores: int) -> float:
    """Cores our scheduling group gets, from ``threads`` probe threads getting ``share`` of a core each beside
    ``background`` runnable threads of other programs in the group: ``share x (threads + background)``, at
    most ``cores``. A probe that got (nearly) a core each says only that the group gets at least that many:
    taken as every core (the same predictions for any split of at most ``threads`` threads).
    """
    if share >= FULL_SHARE or share <= 0:
        return float(cores)
    return min(float(cores), share * (threads + background))


def finish_times(work_s: Sequence[float], devices: Sequence[SplitDevice], model: ContentionModel) -> np.ndarray:
    """Seconds from the common start until each device finishes ``work_s`` (its compute time alone on an
    idle machine; 0 = no part), all starting at once, under processor sharing with pairwise slowdowns.

    Between two finishes every running device ``d`` progresses at ``share / (1 + sum_h (slowdown[d, h] - 1))``
    (``share`` = the core share of the running threads; 1 for an accelerator's own compute), ``h`` over the
    other running devices.
    """
    work = np.asarray(work_s, dtype=float)
    n = len(devices)
    remaining = work.copy()
    done = np.zeros(n)
    running = remaining > 0
    cpu = np.array([d.kind == "cpu" for d in devices])
    threads = np.array([host_threads(d) for d in devices], dtype=float)
    pair = np.array([[model.pair(a, b) - 1.0 if i != j else 0.0 for j, b in enumerate(devices)]
                     for i, a in enumerate(devices)]).reshape(n, n)
    now = 0.0
    while running.any():
        share = model.core_share(float(threads[running].sum()))
        rate = np.where(cpu, share, 1.0) / (1.0 + pair[:, running].sum(axis=1))
        left = np.where(running, remaining / np.where(running, rate, 1.0), np.inf)
        step = float(left.min())
        now += step
        remaining = np.where(running, remaining - rate * step, remaining)
        finished = running & (left <= step * (1 + 1e-12))
        done[finished] = now
        remaining[finished] = 0.0
        running &= ~finished
    return done


def corun_factor(platform: SplitPlatform, model: ContentionModel) -> np.ndarray:
    """Per device, how much longer its compute takes when every device of ``platform`` runs for the whole
    time: ``(1 + sum_h (slowdown[d, h] - 1)) / share`` (no share for an accelerator's own compute)."""
    devices = platform.devices
    share = model.core_share(float(sum(host_threads(d) for d in devices)))
    return np.array([(1.0 + sum(model.pair(d, h) - 1.0 for h in devices if h is not d))
                     / (share if d.kind == "cpu" else 1.0) for d in devices])


def corun_predictor(predict: Predictor, platform: SplitPlatform, model: ContentionModel) -> Predictor:
    """``predict`` (alone, idle machine) with every device's time stretched by :func:`corun_factor`: what the
    family's per-part tables read when the split is optimized for co-execution."""
    factor = dict(zip(platform.device_names, corun_factor(platform, model), strict=True))

    def stretched(device: SplitDevice, workload: GemmWorkload, rows: np.ndarray) -> np.ndarray:
        return np.asarray(predict(device, workload, rows), dtype=float) * factor.get(device.name, 1.0)

    return stretched
