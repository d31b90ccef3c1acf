"""A lower bound on the UXCost that any scheduler on whole accelerators can reach in a run of the simulator.

Under :func:`dse.sim.realtime.simulate`'s semantics a run's energy is every accelerator's idle power
over the horizon plus, per executed block, its table energy minus the idle energy of the accelerator over
the block's time. So, with ``m[op] = min over accelerators of (energy - idle power x time)``:

* the horizon is at least the last deadline of the run's frames, so idle energy is at least
  ``sum(idle power) x last deadline``;
* a frame that completes spends at least ``sum(m)`` over its blocks; a dropped one at least the negative
  part of that sum (it may stop after any block);
* a frame of a model with no parent is always triggered; when it cannot finish in time even alone on the
  fastest accelerators (``arrival + fastest time of all its blocks > deadline``) every schedule misses it;
* every other frame either completes (counted in full) or is dropped or never triggered; each drop that
  saves energy costs at least one miss (the frame's own, or an ancestor's whose drop cancels it), and
  saves at most the frame's and its descendants' energy;
* a schedule that misses only the forced frames completes every other frame by its deadline, so no
  accelerator runs their blocks for longer than the last deadline, and each frame's blocks, which run
  one after another, take no longer than its window: the cheapest fractional assignment of those blocks
  to accelerators under both (summed over each model's frames; a linear program) bounds its energy
  (``energy_all_kept_pj``; infinite when even that assignment does not fit).

The bound is ``min over k`` of ``(E_floor - S_k) x (forced misses + k + 1)`` where ``S_k`` is the sum of the
``k`` largest savings: the best a scheduler could do even if it dropped frames on purpose. It does not
place frames in time (when each may use which accelerator), so a schedule may not reach it. A spatial
scheduler (``pods > 1``, Planaria-style) runs at other costs (sub-arrays) and is not bounded by it: every
place that shows the floor says so (:func:`scope`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dse.cost.accelerator import MultiModelTables
from dse.sim.realtime import Scheduler, SimSetup, make_frames
from dse.sim.xr_metrics import uxcost


def on_whole_accelerators(scheduler: Scheduler) -> bool:
    """Whether ``scheduler`` runs blocks on whole accelerators (``pods == 1``): the schedules the floor bounds."""
    return scheduler.pods == 1


def scope(uncovered: Sequence[str]) -> str:
    """The floor's scope in one line: schedules on whole accelerators; ``uncovered`` names a run's schedulers
    that run blocks on sub-arrays instead (Planaria-style, not :func:`on_whole_accelerators`).

    Example: ``scope(["planaria"])`` -> ``"for schedules on whole accelerators; Planaria-style sub-array
    schedules (planaria) are not covered"``.
    """
    if not uncovered:
        return "for schedules on whole accelerators (every scheduler of this run)"
    return (f"for schedules on whole accelerators; Planaria-style sub-array schedules ({', '.join(uncovered)}) "
            "are not covered")


@dataclass(frozen=True)
class UXBound:
    """A floor for ``energy x (missed + 1)`` of any whole-accelerator schedule of one run.

    ``energy_pj`` and ``missed``: the floor's energy (pJ) and misses at its best number of deliberate drops
    ``drops`` (0 when dropping never pays); ``forced_misses``: frames every schedule misses;
    ``energy_all_kept_pj``: the energy floor when every other frame completes by its deadline
    (``math.inf`` when the accelerators cannot fit them).
    """

    energy_pj: int
    missed: int
    drops: int
    forced_misses: int
    energy_all_kept_pj: float

    @property
    def energy_j(self) -> float:
        return self.energy_pj * 1e-12

    def uxcost(self, ref_energy_j: float, ref_missed: int) -> float:
        """The floor as a UXCost against a reference run (energy J, misses), deliberate drops allowed."""
        return uxcost(self.energy_j, self.missed, ref_energy_j, ref_missed)

    def uxcost_kept(self, ref_energy_j: float, ref_missed: int) -> float:
        """The floor for schedules that miss only the forced frames (no frame that could make its deadline
        alone is dropped), as a UXCost against a reference run."""
        return uxcost(self.energy_all_kept_pj * 1e-12, self.forced_misses, ref_energy_j, ref_missed)


def ux_bound(setup: SimSetup, duration_s: float, seed: int = 0) -> UXBound:
    """The :class:`UXBound` of ``setup``'s scenario over ``duration_s`` seconds of arrivals with ``seed``.

    Raises ``ValueError`` for a non-positive ``duration_s``.
    """
    if not duration_s > 0:
        raise ValueError(f"duration_s must be positive, got {duration_s}")
    tables = setup.tables
    idle = np.asarray(tables.idle_power_mw, dtype=np.int64)
    marginal_table = tables.energy - idle[None, :] * tables.time  # pJ per block and accelerator
    marginal = marginal_table.min(axis=1)
    full = np.array([int(marginal[list(ops)].sum()) for ops in tables.model_ops], dtype=np.int64)
    negative = np.array([int(np.minimum(marginal[list(ops)], 0).sum()) for ops in tables.model_ops], dtype=np.int64)
    fastest = np.array([setup.remaining_min[ops[0]] for ops in tables.model_ops], dtype=np.int64)

    frames = make_frames(setup, duration_s, seed)
    horizon = max((f.deadline for f in frames), default=0)
    idle_pj = int(idle.sum()) * horizon
    live = [f for f in frames if f.state != "cancelled"]
    if not live:
        return UXBound(idle_pj, 0, 0, 0, idle_pj)
    position = {id(f): k for k, f in enumerate(live)}
    model = np.array([f.model for f in live], dtype=np.int64)
    window = np.array([f.deadline - f.arrival for f in live], dtype=np.int64)
    parent = np.array([position.get(id(f.parent), -1) if f.parent is not None else -1 for f in live],
                      dtype=np.int64)
    infeasible = fastest[model] > window

    # a frame is optional (no miss charged, spends at least its negative part) when it or an ancestor is
    # infeasible and it is not a root; mandatory otherwise. Frames come in model order, parents' models
    # first in dependency order, so one pass per depth level settles every frame.
    depth = _depths(parent)
    blocked = infeasible.copy()
    for level in range(1, int(depth.max()) + 1):
        at = np.flatnonzero(depth == level)
        blocked[at] |= blocked[parent[at]]
    root = parent < 0
    forced = root & infeasible
    mandatory = ~blocked
    kept = np.where(mandatory, full[model], negative[model])
    energy_all_kept = idle_pj + int(kept.sum())
    optional_pj = idle_pj + int(negative[model[~mandatory]].sum())
    runs = np.bincount(model[mandatory], minlength=len(tables.model_ops))
    windows = np.bincount(model[mandatory], weights=window[mandatory], minlength=len(tables.model_ops))
    energy_kept_fitting = optional_pj + _cheapest_fit(tables, marginal_table, runs, windows, horizon)

    # savings of dropping a mandatory frame: its own and its mandatory descendants' (full - negative)
    saving = np.where(mandatory, full[model] - negative[model], 0)
    for level in range(int(depth.max()), 0, -1):
        at = np.flatnonzero(depth == level)
        np.add.at(saving, parent[at], saving[at])
    saving = np.sort(saving[mandatory])[::-1]
    floor = idle_pj + int(negative[model].sum())
    k = np.arange(saving.size + 1)
    energy = np.maximum(energy_all_kept - np.concatenate(([0], np.cumsum(saving))), floor)
    n_forced = int(forced.sum())
    cost = energy.astype(float) * (n_forced + k + 1)
    best = int(np.argmin(cost))
    return UXBound(int(energy[best]), n_forced + best, best, n_forced, max(energy_all_kept, energy_kept_fitting))


def _cheapest_fit(tables: MultiModelTables, marginal_table: np.ndarray, runs: np.ndarray, windows_ns: np.ndarray,
                  capacity_ns: int) -> float:
    """The least total marginal energy (pJ) of ``runs[m]`` executions of every block of model ``m``, split
    fractionally over the accelerators with at most ``capacity_ns`` of busy time each, and with the
    blocks of model ``m`` taking at most ``windows_ns[m]`` (the sum of its frames' windows: a frame's
    blocks run one after another within its window) (a linear program); ``math.inf`` when they do not
    fit, ``-math.inf`` when the solver gives no answer (the floor then stands without this part). Rounded
    down by a relative 1e-6 so that solver tolerances never lift it above the true optimum."""
    from scipy.optimize import linprog  # type: ignore[import-untyped, unused-ignore]

    count = np.zeros(tables.n_ops)
    for m, ops in enumerate(tables.model_ops):
        count[list(ops)] = runs[m]
    used = np.flatnonzero(count > 0)
    if used.size == 0:
        return 0.0
    n_acc = tables.n_dev
    time_ms = tables.time[used].astype(float) * 1e-6
    cost_mj = marginal_table[used].astype(float) * 1e-9
    # x[i, a]: executions of block used[i] on accelerator a (row-major)
    equal = np.kron(np.eye(used.size), np.ones(n_acc))
    capacity = np.zeros((n_acc, used.size * n_acc))
    for a in range(n_acc):
        capacity[a, a::n_acc] = time_ms[:, a]
    models = np.flatnonzero(runs > 0).tolist()
    row_of = {int(op): i for i, op in enumerate(used)}
    chains = np.zeros((len(models), used.size * n_acc))
    for r, m in enumerate(models):
        for op in tables.model_ops[m]:
            row = row_of[int(op)]
            chains[r, row * n_acc:(row + 1) * n_acc] = time_ms[row]
    result = linprog(cost_mj.ravel(), A_ub=np.vstack([capacity, chains]),
                     b_ub=np.concatenate([np.full(n_acc, capacity_ns * 1e-6), windows_ns[models] * 1e-6]),
                     A_eq=equal, b_eq=count[used], bounds=(0, None), method="highs")
    if result.status == 2:  # infeasible: the blocks do not fit in the accelerators' time
        return math.inf
    if result.status != 0:  # an iteration limit or numerical trouble: no tightening rather than a wrong one
        return -math.inf
    value = float(result.fun) * 1e9
    return value - abs(value) * 1e-6


def _depths(parent: np.ndarray) -> np.ndarray:
    """Each frame's number of ancestors (``parent[i] = -1`` for a root)."""
    depth = np.zeros(parent.size, dtype=np.int64)
    current = parent.copy()
    while (current >= 0).any():
        has = current >= 0
        depth[has] += 1
        current[has] = parent[current[has]]
    return depth
