"""Lower bounds of the ``pipeline`` family's objectives, valid for every feasible mapping.

* **period** (an upper bound of the throughput) and **energy**: the linear relaxation of the device
  (and level) assignment, :class:`~dse.util.assignment_relaxation.AssignmentRelaxation`: the period is
  at least every device's load; the energy is at least the ops' energies plus every used device's
  idle power over the period (charged per item); under the power cap the energy is at most
  ``cap x period``; with memory each device holds at most its capacity. With DVFS each op may take
  any level of its device (the genome ties the ops of a device to one level: a relaxation);
  transfers and links only add time and energy and are left out.
* **latency**: the longest path of the DAG with every op at its fastest option and free transfers.

Within limits on the objectives (:meth:`PipelineProblem.objective_lower_bounds` ``at_most``) an op
can only take options no longer than the period, the latency or the deadline allow, and the
relaxation minimizes under those limits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from dse.util.assignment_relaxation import AssignmentRelaxation

if TYPE_CHECKING:
    from dse.mapping.pipeline.problem import PipelineProblem


def relaxation(problem: PipelineProblem) -> AssignmentRelaxation:
    """The assignment relaxation of ``problem``: one option per allowed (op, device, level)."""
    t = problem.tables
    levels = problem.levels
    count = np.ones(t.n_dev, dtype=np.int64) if levels is None else levels.count
    time_table = t.time[None] if levels is None else levels.time
    energy_table = t.energy[None] if levels is None else levels.energy
    level, op, device = np.nonzero(t.allowed[None] & (np.arange(time_table.shape[0])[:, None, None]
                                                       < count[None, None, :]))
    time = time_table[level, op, device].astype(np.int64)
    energy = energy_table[level, op, device].astype(np.int64)
    most_time = np.zeros(t.n_ops, dtype=np.int64)
    most_energy = np.zeros(t.n_ops, dtype=np.int64)
    np.maximum.at(most_time, op, time)
    np.maximum.at(most_energy, op, energy)
    transfer_time = int(t.transfer_time.reshape(t.n_edges, -1).max(axis=1).sum()) if t.n_edges else 0
    transfer_energy = int(t.transfer_energy.reshape(t.n_edges, -1).max(axis=1).sum()) if t.n_edges else 0
    span_ceiling = int(most_time.sum()) + transfer_time + 1  # the period is a device's or a link's load
    return AssignmentRelaxation(
        op=op, device=device, time=time, energy=energy, mem=t.mem[op, device].astype(np.int64), n_ops=t.n_ops,
        idle_mw=t.idle_power_mw, mem_capacity=t.mem_capacity if problem.memory else None,
        power_cap_mw=problem.power_cap_mw, span_floor=0, span_ceiling=span_ceiling,
        energy_ceiling=int(most_energy.sum()) + transfer_energy + int(t.idle_power_mw.sum()) * span_ceiling + 1)


def lower_bounds(problem: PipelineProblem, at_most: Sequence[int | None] | None = None) -> tuple[float, ...]:
    """Per objective of ``problem`` (internal units: period, energy, latency) a lower bound of every
    feasible mapping whose objectives are at most ``at_most`` (None: no limit); ``inf`` in every
    objective when no mapping meets the limits (proven)."""
    limits = dict.fromkeys(("period", "energy", "latency"))
    for objective, limit in zip(problem.objectives, at_most or [None] * len(problem.objectives), strict=True):
        limits[objective.internal_name] = None if limit is None else int(limit)
    latency_limit = min((v for v in (limits["latency"], problem.deadline) if v is not None), default=None)
    relaxed = relaxation(problem)
    period, energy = relaxed.lower_bounds(limits["period"], limits["energy"], latency_limit)
    if math.isinf(period):
        return tuple(math.inf for _ in problem.objectives)
    keep = relaxed.time <= min(v for v in (limits["period"], latency_limit, relaxed.span_ceiling) if v is not None)
    latency = _least_latency(problem, relaxed.op[keep], relaxed.time[keep])
    if limits["latency"] is not None and latency > limits["latency"]:
        return tuple(math.inf for _ in problem.objectives)
    values = {"period": period, "energy": energy, "latency": float(latency)}
    return tuple(values[o.internal_name] for o in problem.objectives)


def _least_latency(problem: PipelineProblem, op: np.ndarray, time: np.ndarray) -> int:
    """The longest path with every op at its fastest of the options ``(op, time)`` and free transfers."""
    t = problem.tables
    fastest = np.full(t.n_ops, np.iinfo(np.int64).max)
    np.minimum.at(fastest, op, time)
    finish = np.zeros(t.n_ops, dtype=np.int64)
    source, entering = t.edges[:, 0], t.predecessors()
    for i in t.topological_order():
        finish[i] = finish[source[entering[i]]].max(initial=0) + fastest[i]
    return int(finish.max(initial=0))
