"""Lower bounds of the ``split`` family's time (makespan) and energy, valid for every feasible split.

A split gives device ``d`` some ``c_d`` chunks, summing to the total. Its makespan is at least every
device's busy time ``time[d, c_d]`` (host links only add), and its energy is the parts' dynamic
energy, each used pool's copy of ``B``, and every device's idle power over the makespan.

* **makespan**: the least ``theta`` for which chunk counts with ``time[d, c_d] <= theta`` on every
  device can sum to the total (bisection over the table's times, reachability by dynamic programming);
* **energy**: the least dynamic energy of chunk counts summing to the total (a dynamic programme over
  the devices), plus the cheapest pool's copy of ``B`` (some pool takes rows), plus the idle power
  over the makespan's bound.

With memory limits a device is allowed only counts whose bytes fit its pool alone (the pool's sum
is relaxed); within limits on the objectives only counts no longer than the makespan allowed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dse.mapping.split.problem import SplitProblem

_NONE = np.iinfo(np.int64).max // 4


def lower_bounds(problem: SplitProblem, at_most: Sequence[int | None] | None = None) -> tuple[float, ...]:
    """Per objective of ``problem`` (internal units: makespan, energy) a lower bound of every feasible split
    whose objectives are at most ``at_most`` (None: no limit); ``inf`` in every objective when none
    exists (proven)."""
    p = problem.parts
    limits: dict[str, int | None] = dict.fromkeys(("makespan", "energy"))
    for objective, limit in zip(problem.objectives, at_most or [None] * len(problem.objectives), strict=True):
        limits[objective.internal_name] = None if limit is None else int(limit)
    allowed = np.ones_like(p.time, dtype=bool)
    if problem.memory:
        allowed &= p.mem <= p.pool_capacity[p.pool][:, None]
    if limits["makespan"] is not None:
        allowed &= p.time <= limits["makespan"]
    candidates = np.unique(p.time[allowed])
    if not len(candidates) or not _reachable(allowed & (p.time <= candidates[-1]), p.total):
        return tuple(math.inf for _ in problem.objectives)
    low, high = 0, len(candidates) - 1  # the least candidate that still reaches the total
    while low < high:
        mid = (low + high) // 2
        if _reachable(allowed & (p.time <= candidates[mid]), p.total):
            high = mid
        else:
            low = mid + 1
    makespan = int(candidates[low])
    dynamic = _least_energy(np.where(allowed, p.energy, _NONE), p.total)
    pools = np.unique(p.pool[allowed[:, 1:].any(axis=1)]) if p.total else np.zeros(0, dtype=np.int64)
    copy = int(p.pool_b_energy[pools].min(initial=0)) if p.total else 0
    energy = dynamic + copy + int(p.idle_mw_total) * makespan
    if limits["energy"] is not None and energy > limits["energy"]:
        return tuple(math.inf for _ in problem.objectives)
    values = {"makespan": float(makespan), "energy": float(energy)}
    return tuple(values[o.internal_name] for o in problem.objectives)


def _reachable(allowed: np.ndarray, total: int) -> bool:
    """Whether one allowed count per device (``allowed[d, c]``) can sum to ``total``."""
    sums = np.zeros(total + 1, dtype=bool)
    sums[0] = True
    for row in allowed:
        nxt = np.zeros_like(sums)
        for c in np.flatnonzero(row):
            nxt[c:] |= sums[: total + 1 - c]
        sums = nxt
    return bool(sums[total])


def _least_energy(energy: np.ndarray, total: int) -> int:
    """The least sum of ``energy[d, c_d]`` over counts summing to ``total`` (``_NONE``: not allowed)."""
    best = np.full(total + 1, _NONE, dtype=np.int64)
    best[0] = 0
    for row in energy:
        nxt = np.full_like(best, _NONE)
        for c in np.flatnonzero(row < _NONE):
            np.minimum(nxt[c:], best[: total + 1 - c] + row[c], out=nxt[c:])
        best = np.minimum(nxt, _NONE)
    return int(best[total])
