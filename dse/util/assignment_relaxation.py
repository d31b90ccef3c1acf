"""The linear relaxation of assigning ops to devices: lower bounds on the span and the energy.

Every op takes exactly one of its *options* (a device, with DVFS a device at one level), each with a
time, an energy and resident bytes on its device. For every such assignment:

* the span (a pipeline's period, a schedule's makespan) is at least every device's load (the summed
  times of its ops) and at least ``span_floor``;
* the energy is at least the ops' energies plus every used device's idle power over the span, hence
  at least ``ops + sum_d idle[d] * load[d]`` (a used device idles over a span no shorter than its
  load) and at least ``ops + idle_floor * span``, where ``idle_floor`` is the idle power surely
  charged: the least of any device that can run an op, or the sum over the devices some op can only
  run on, whichever is larger;
* under a power cap the energy is at most ``cap * span``; with memory capacities each device's
  resident bytes are at most its capacity.

Letting each op take fractions of its options turns this into a linear program; its minimum of the
span, or of the energy, within limits on both, bounds every assignment that meets the limits.
:mod:`dse.util.lp_bounds` makes the minimum safe against the LP solver's tolerances. Transfers, links
and schedules are left out (they only add time and energy), which keeps it a bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dse.util.lp_bounds import LinearProgram, minimum_at_least
from dse.util.rounding import ceil_int


@dataclass(frozen=True, eq=False)
class AssignmentRelaxation:
    """The options (one entry each: ``op``, ``device``, ``time``, ``energy``, ``mem``) of ``n_ops`` ops over
    devices with ``idle_mw`` (mW, one per device) and ``mem_capacity`` (bytes, None: no memory limit),
    under ``power_cap_mw`` (None: none). ``span_floor`` is a lower bound of the span known beforehand;
    ``span_ceiling`` and ``energy_ceiling`` are upper bounds of every assignment's span and energy
    (the program needs finite variables). Times and the span in one time unit, energies in pJ with
    power in mW (mW x ns = pJ; the arithmetic does not depend on the unit)."""

    op: np.ndarray
    device: np.ndarray
    time: np.ndarray
    energy: np.ndarray
    mem: np.ndarray
    n_ops: int
    idle_mw: np.ndarray
    mem_capacity: np.ndarray | None
    power_cap_mw: int | None
    span_floor: int
    span_ceiling: int
    energy_ceiling: int

    def lower_bounds(self, span_at_most: int | None = None, energy_at_most: int | None = None,
                     option_time_at_most: int | None = None) -> tuple[float, float]:
        """``(span, energy)``: integers that every assignment with span at most ``span_at_most`` and energy at
        most ``energy_at_most`` (None: no limit) reaches or exceeds; options longer than the span limit or
        ``option_time_at_most`` are left out. ``(inf, inf)`` when no such assignment exists (proven)."""
        limit = min(v for v in (span_at_most, option_time_at_most, self.span_ceiling) if v is not None)
        keep = self.time <= limit
        if self.n_ops and not np.isin(np.arange(self.n_ops), self.op[keep]).all():
            return math.inf, math.inf  # an op with no option left
        span_hi = self.span_ceiling if span_at_most is None else min(self.span_ceiling, span_at_most)
        energy_hi = self.energy_ceiling if energy_at_most is None else min(self.energy_ceiling, energy_at_most)
        if not self.n_ops:
            return float(self.span_floor), 0.0
        simple_span, simple_energy = self._simple_bounds(keep)
        if simple_span > span_hi or simple_energy > energy_hi:
            return math.inf, math.inf
        span = max(simple_span, self._linear_minimum(keep, simple_span, span_hi, energy_hi, "span"))
        if span > span_hi:
            return math.inf, math.inf
        span_lo = max(simple_span, ceil_int(span))
        energy = max(simple_energy, self._linear_minimum(keep, span_lo, span_hi, energy_hi, "energy"))
        if span > span_hi or energy > energy_hi:
            return math.inf, math.inf
        return float(ceil_int(span)), float(ceil_int(energy))

    def _idle_floor(self, keep: np.ndarray) -> int:
        """The idle power (mW) surely charged when only the options ``keep`` remain."""
        devices = np.unique(self.device[keep])
        floor = int(self.idle_mw[devices].min(initial=0)) if len(devices) else 0
        pairs = np.unique(np.column_stack([self.op[keep], self.device[keep]]), axis=0)  # distinct (op, device)
        choices = np.bincount(pairs[:, 0], minlength=self.n_ops)
        forced = np.unique(pairs[choices[pairs[:, 0]] == 1, 1])  # devices some op can only run on
        return max(floor, int(self.idle_mw[forced].sum()))

    def _simple_bounds(self, keep: np.ndarray) -> tuple[int, int]:
        """Without the program: the span floor and the slowest op at its fastest option; the ops' least
        energies plus the surely charged idle power over that span."""
        least_time = np.full(self.n_ops, np.iinfo(np.int64).max)
        least_energy = np.full(self.n_ops, np.iinfo(np.int64).max)
        np.minimum.at(least_time, self.op[keep], self.time[keep])
        np.minimum.at(least_energy, self.op[keep], self.energy[keep])
        span = max(self.span_floor, int(least_time.max()))
        return span, int(least_energy.sum()) + self._idle_floor(keep) * span

    def _linear_minimum(self, keep: np.ndarray, span_lo: int, span_hi: int, energy_hi: int, objective: str) -> float:
        """The safe minimum of the span or the energy (``objective``) of the relaxation over the options
        ``keep`` with the span in ``[span_lo, span_hi]``: variables the option fractions, the span and the
        energy, each scaled to about one."""
        from scipy import sparse  # type: ignore[import-untyped, unused-ignore]

        options = np.flatnonzero(keep)
        op, device = self.op[options], self.device[options]
        time, energy = self.time[options].astype(np.float64), self.energy[options].astype(np.float64)
        k = len(options)
        idle = self.idle_mw.astype(np.float64)
        t_scale = 1.0 / max(float(span_hi), 1.0)
        e_scale = 1.0 / max(float(energy_hi), 1.0)
        span_col, energy_col = k, k + 1
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        bounds_ub: list[float] = []

        def row(columns: np.ndarray, values: np.ndarray, rhs: float) -> None:
            rows.append(np.full(len(columns), len(bounds_ub)))
            cols.append(columns)
            vals.append(values)
            bounds_ub.append(rhs)

        used = np.unique(device)
        for d in used:  # load[d] <= span
            mine = np.flatnonzero(device == d)
            row(np.append(mine, span_col), np.append(time[mine] * t_scale, -1.0), 0.0)
        # ops + sum_d idle[d] * load[d] <= energy
        row(np.append(np.arange(k), energy_col), np.append((energy + idle[device] * time) * e_scale, -1.0), 0.0)
        # ops + idle_floor * span <= energy
        row(np.append(np.arange(k), [span_col, energy_col]),
            np.append(energy * e_scale, [self._idle_floor(keep) * e_scale / t_scale, -1.0]), 0.0)
        if self.power_cap_mw is not None:  # energy <= cap * span
            row(np.array([span_col, energy_col]), np.array([-self.power_cap_mw * e_scale / t_scale, 1.0]), 0.0)
        if self.mem_capacity is not None:
            mem = self.mem[options].astype(np.float64)
            for d in used:
                mine = np.flatnonzero((device == d) & (mem > 0))
                if len(mine):
                    cap = max(float(self.mem_capacity[d]), 1.0)
                    row(mine, mem[mine] / cap, float(self.mem_capacity[d]) / cap)
        n_var = k + 2
        A_ub = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                 shape=(len(bounds_ub), n_var))
        A_eq = sparse.csr_matrix((np.ones(k), (op, np.arange(k))), shape=(self.n_ops, n_var))
        c = np.zeros(n_var)
        c[span_col if objective == "span" else energy_col] = 1.0
        lower = np.concatenate([np.zeros(k), [span_lo * t_scale, 0.0]])
        upper = np.concatenate([np.ones(k), [span_hi * t_scale, energy_hi * e_scale]])
        if (lower > upper).any():
            return math.inf
        value = minimum_at_least(LinearProgram(c, A_ub, np.array(bounds_ub), A_eq, np.ones(self.n_ops), lower,
                                               upper))
        return value / (t_scale if objective == "span" else e_scale)
