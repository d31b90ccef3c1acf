"""A deployment's capacity: the highest arrival rate whose simulated run meets the SLOs.

As Vidur-Search does: the same requests (given at rate 1, replayed at rate ``r`` by dividing their
arrival times by ``r``: common random numbers, so runs at two rates differ only in load) are simulated
at a rate that meets the SLOs and one that does not, found by doubling or halving from ``start``, then
the bracket is bisected until it is within ``rel_tol`` of its low end or ``max_steps`` simulations
have run. The capacity reported is the low end: a rate shown to meet the SLOs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dse.errors import InfeasibleError, SpecError
from dse.sim.serving.engine import ServingResult, simulate
from dse.sim.serving.inputs import Deployment, Requests


@dataclass(frozen=True)
class Slo:
    """TTFT and TPOT limits (s), each met at the ``percentile`` of the requests (numpy's linear rule)."""

    ttft_s: float
    tpot_s: float
    percentile: float = 90.0

    def __post_init__(self) -> None:
        for name in ("ttft_s", "tpot_s"):
            value = getattr(self, name)
            if not value > 0:
                raise SpecError("slo", name, value, "must be > 0 seconds")
        if not 0 < self.percentile <= 100:
            raise SpecError("slo", "percentile", self.percentile, "must be in (0, 100]")

    def excess(self, result: ServingResult, warmup: int = 0) -> tuple[float, float]:
        """``(ttft, tpot)``: how far the run's percentiles, over the requests after the first ``warmup``
        (the run's initial transient), exceed the limits in seconds (<= 0: met; +inf when a request did
        not finish; a TPOT with no request of two tokens or more meets it)."""
        if not result.finished.all():
            return float("inf"), float("inf")

        def percentile(values: np.ndarray) -> float:
            values = values[warmup:]
            values = values[np.isfinite(values)]
            return float(np.percentile(values, self.percentile)) if len(values) else float("nan")

        tpot = percentile(result.tpot_s)
        return (percentile(result.ttft_s) - self.ttft_s, tpot - self.tpot_s if np.isfinite(tpot) else -self.tpot_s)

    def met(self, result: ServingResult, warmup: int = 0) -> bool:
        """Whether ``result`` meets both limits (the first ``warmup`` requests left out)."""
        return max(self.excess(result, warmup)) <= 0


@dataclass(frozen=True)
class Capacity:
    """``rate``: the highest rate (requests/s) shown to meet the SLOs; ``above``: the lowest shown to miss
    them (inf when none was found); ``steps``: simulations run; ``converged``: whether the bracket
    closed within the tolerance; ``result``: the run at ``rate``."""

    rate: float
    above: float
    steps: int
    converged: bool
    result: ServingResult


def capacity(deployment: Deployment, base: Requests, slo: Slo, *, start: float = 1.0, rel_tol: float = 0.01,
             max_steps: int = 40, warmup: int = 0) -> Capacity:
    """The :class:`Capacity` of ``deployment`` for ``base`` (the requests at rate 1) under ``slo``, its
    percentiles over the requests after the first ``warmup`` (a run starts empty: its first requests see
    no queue).

    Raises :class:`~dse.errors.InfeasibleError` naming the SLO missed and by how much when even the
    lowest rate tried (``start`` halved until the steps run out) misses it, and :class:`SpecError` for
    a ``start``, ``rel_tol`` or ``max_steps`` out of range.
    """
    if not (np.isfinite(start) and start > 0):
        raise SpecError("capacity", "start", start, "must be a finite rate > 0")
    if not 0 < rel_tol < 1:
        raise SpecError("capacity", "rel_tol", rel_tol, "must be in (0, 1)")
    if max_steps < 2:
        raise SpecError("capacity", "max_steps", max_steps, "must be >= 2")
    if warmup < 0 or (warmup and warmup >= len(base)):
        raise SpecError("capacity", "warmup", warmup, f"must be in [0, {len(base)}): the requests left out")
    steps = 0
    results: dict[float, ServingResult] = {}

    def meets(rate: float) -> bool:
        nonlocal steps
        steps += 1
        results[rate] = simulate(deployment, base.at_rate(rate))
        return slo.met(results[rate], warmup)

    low, high = 0.0, float("inf")
    rate = start
    while steps < max_steps:
        if meets(rate):
            low = rate
            if np.isfinite(high):
                break
            rate *= 2
        else:
            high = rate
            if low > 0:
                break
            rate /= 2
    if low == 0.0:
        ttft, tpot = slo.excess(results[high], warmup)
        which = (f"TTFT p{slo.percentile:g} {slo.ttft_s + ttft:.6g} s exceeds its {slo.ttft_s:g} s by {ttft:.6g} s"
                 if ttft > 0 else
                 f"TPOT p{slo.percentile:g} {slo.tpot_s + tpot:.6g} s exceeds its {slo.tpot_s:g} s by {tpot:.6g} s")
        raise InfeasibleError(f"SLO: even at {high:.6g} requests/s, the lowest rate tried, {which}")
    while steps < max_steps and high - low > rel_tol * low:
        mid = (low + high) / 2
        if meets(mid):
            low = mid
        else:
            high = mid
    return Capacity(low, high, steps, high - low <= rel_tol * low, results[low])
