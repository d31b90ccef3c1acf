"""The cost of re-mapping a pipeline at run time (DyPe's switch): every op that moves sends its resident
data over the platform's route (``latency + bytes / bandwidth``, summed) and every device whose ops or
level change reconfigures (``reconfigure_ms``, in parallel), all times ``switch.scale``; the energy is the
transfers' energy plus every device's idle power over the switch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.mapping.pipeline import PipelineProblem
from dse.runtime.stream_spec import SwitchSpec
from dse.sim.core import energy_j

__all__ = ["SwitchCost", "switch_cost", "switch_costs"]


@dataclass(frozen=True)
class SwitchCost:
    """Seconds and joules of one re-mapping."""

    seconds: float
    joules: float


def switch_cost(problem: PipelineProblem, platform: Any, old: np.ndarray, new: np.ndarray,
                settings: SwitchSpec) -> SwitchCost:
    """Cost of going from genome ``old`` to ``new`` on ``problem``'s input (see the module docstring)."""
    t = problem.tables
    n = t.n_ops
    names = t.device_names
    moved = np.flatnonzero(old[:n] != new[:n])
    transfer_s, transfer_j = 0.0, 0.0
    for i in moved:
        a, b = names[int(old[i])], names[int(new[i])]
        bandwidth, latency_us, pj_per_byte = platform.route(a, b)
        size = float(t.mem[i, int(new[i])])
        transfer_s += latency_us * 1e-6 + size / (bandwidth * 1e9)
        transfer_j += size * pj_per_byte * 1e-12
    changed = set(int(old[i]) for i in moved) | set(int(new[i]) for i in moved)
    if problem.levels is not None:
        lo, ln = problem.level_matrix(old)[:, 0], problem.level_matrix(new)[:, 0]
        changed |= set(int(d) for d in np.flatnonzero(lo != ln))
    reconfigure_s = settings.reconfigure_ms * 1e-3 if changed else 0.0
    seconds = (transfer_s + reconfigure_s) * settings.scale
    devices = platform.devices
    idle = energy_j(np.zeros(len(devices)), np.asarray([d.active_w for d in devices]),
                    np.asarray([d.idle_w for d in devices]), seconds).sum()
    return SwitchCost(seconds, float(idle + transfer_j * settings.scale))


def switch_costs(problem: PipelineProblem, platform: Any, old: np.ndarray, genomes: np.ndarray,
                 settings: SwitchSpec) -> tuple[np.ndarray, np.ndarray]:
    """Seconds and joules of going from ``old`` to each row of ``genomes``, as :func:`switch_cost` counts
    them one at a time (a per-op table of what moving it to each device costs, summed over the ops
    that move; one reconfiguration when any device or level gene changes)."""
    t = problem.tables
    n, names = t.n_ops, t.device_names
    X = np.atleast_2d(np.asarray(genomes, dtype=np.int64))
    old = np.asarray(old, dtype=np.int64)
    move_s = np.zeros((n, t.n_dev))
    move_j = np.zeros((n, t.n_dev))
    for i in range(n):
        for d in range(t.n_dev):
            if d == int(old[i]):
                continue
            bandwidth, latency_us, pj_per_byte = platform.route(names[int(old[i])], names[d])
            size = float(t.mem[i, d])
            move_s[i, d] = latency_us * 1e-6 + size / (bandwidth * 1e9)
            move_j[i, d] = size * pj_per_byte * 1e-12
    ops = np.arange(n)
    transfer_s = move_s[ops, X[:, :n]].sum(axis=1)
    transfer_j = move_j[ops, X[:, :n]].sum(axis=1)
    changed = (X != old[None, : X.shape[1]]).any(axis=1)
    seconds = (transfer_s + np.where(changed, settings.reconfigure_ms * 1e-3, 0.0)) * settings.scale
    idle_w = float(sum(d.idle_w for d in platform.devices))
    return seconds, idle_w * seconds + transfer_j * settings.scale
