"""Lower bounds of the ``dag`` family's makespan and energy, valid for every feasible schedule.

* **makespan**: the critical path (every task at its fastest device, transfers free), and the linear
  relaxation of the device assignment
  (:class:`~dse.util.assignment_relaxation.AssignmentRelaxation`): a device runs one task at a time,
  so the makespan is at least every device's load;
* **energy**: the same relaxation: the tasks' energies plus every used device's idle power over the
  makespan (at least its load, at least the makespan's bound); transfers and sends only add time
  and energy and are left out, colocation is relaxed.

Within limits on the objectives (and the deadline) a task can only take devices on which it fits
in the makespan allowed, and the relaxation minimizes under those limits. The makespan bounds of
:mod:`dse.mapping.dag.bounds` (transfers and sends counted) are stronger and need compiled kernels;
the exact model starts its makespan's domain from them, and the certificate takes the larger.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from dse.util.assignment_relaxation import AssignmentRelaxation
from dse.util.rounding import ceil_int

if TYPE_CHECKING:
    from dse.mapping.dag.problem import DagProblem


def relaxation(problem: DagProblem) -> AssignmentRelaxation:
    """The assignment relaxation of ``problem``: one option per allowed (task, device)."""
    t = problem.tables
    op, device = np.nonzero(t.allowed)
    n, m = t.n_ops, t.n_dev
    most_time = np.where(t.allowed, t.time, 0).max(axis=1, initial=0)
    most_energy = np.where(t.allowed, t.energy, 0).max(axis=1, initial=0)
    transfer_time, transfer_energy = _largest_transfer(problem)
    # a list schedule's makespan: a walk back from the last task through the device or the input that
    # held it up covers each task (with its sends) and each edge at most once
    span_ceiling = (int(most_time.sum()) + t.n_edges * transfer_time + n * max(m - 1, 0) * int(t.send_time.max(initial=0))
                    + 1)
    energy_ceiling = (int(most_energy.sum()) + (t.n_edges + n * m) * transfer_energy
                      + int(t.idle_power_mw.sum()) * span_ceiling + 1)
    return AssignmentRelaxation(
        op=op, device=device, time=t.time[op, device].astype(np.int64), energy=t.energy[op, device].astype(np.int64),
        mem=t.mem[op, device].astype(np.int64), n_ops=n, idle_mw=t.idle_power_mw,
        mem_capacity=t.mem_capacity if problem.memory else None, power_cap_mw=None, span_floor=0,
        span_ceiling=span_ceiling, energy_ceiling=energy_ceiling)


def _largest_transfer(problem: DagProblem) -> tuple[int, int]:
    """Upper bounds of any edge's transfer time and energy between any two devices."""
    t = problem.tables
    if not t.n_edges:
        return 0, 0
    size = float(t.edge_size.max(initial=0.0))
    time = (int(t.transfer_time.max()) if t.transfer_is_explicit("transfer_time")
            else ceil_int(float(t.link_latency.max()) + size * float(t.link_time_per_byte.max())) + 1)
    energy = (int(t.transfer_energy.max()) if t.transfer_is_explicit("transfer_energy")
              else ceil_int(size * float(t.link_energy_per_byte.max())) + 1)
    return max(time, 0), max(energy, 0)


def lower_bounds(problem: DagProblem, at_most: Sequence[int | None] | None = None) -> tuple[float, ...]:
    """Per objective of ``problem`` (internal units: makespan, energy) a lower bound of every feasible
    schedule whose objectives are at most ``at_most`` (None: no limit) and that meets the deadline;
    ``inf`` in every objective when none does (proven)."""
    limits: dict[str, int | None] = dict.fromkeys(("makespan", "energy"))
    for objective, limit in zip(problem.objectives, at_most or [None] * len(problem.objectives), strict=True):
        limits[objective.internal_name] = None if limit is None else int(limit)
    makespan_limit = min((v for v in (limits["makespan"], problem.deadline) if v is not None), default=None)
    relaxed = relaxation(problem)
    keep = relaxed.time <= (relaxed.span_ceiling if makespan_limit is None else makespan_limit)
    path = _critical_path(problem, relaxed.op[keep], relaxed.time[keep])
    relaxed = dataclasses.replace(relaxed, span_floor=path)
    makespan, energy = relaxed.lower_bounds(makespan_limit, limits["energy"])
    if math.isinf(makespan):
        return tuple(math.inf for _ in problem.objectives)
    values = {"makespan": makespan, "energy": energy}
    return tuple(values[o.internal_name] for o in problem.objectives)


def _critical_path(problem: DagProblem, op: np.ndarray, time: np.ndarray) -> int:
    """The longest path with every task at its fastest of the options ``(op, time)`` and free transfers
    (0 when some task has no option: the relaxation then finds none)."""
    st = problem.structure
    n = problem.n_tasks
    fastest = np.full(n, np.iinfo(np.int64).max // 4)
    np.minimum.at(fastest, op, time)
    if n and fastest.max() == np.iinfo(np.int64).max // 4:
        return 0
    finish = np.zeros(n, dtype=np.int64)
    for level in st.pred_levels:
        finish[level.tasks] = level.max(finish[level.task], 0) + fastest[level.tasks]
    return int(finish.max(initial=0))
