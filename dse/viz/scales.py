"""One rule for an objective's axis, used by every front figure (:mod:`dse.viz.fronts`) and by ``dse report``
(the page reads the plans :func:`plan_axis` makes, so both draw the same axes).

* The fronts keep at least :data:`FRONT_SHARE` of each axis: a baseline so far out that it would leave
  them less is drawn *off the axis*, at its edge, labelled with its value; the nearer baselines extend
  the axis. Baselines are weighed nearest first (the one that would squash the fronts least).
* An axis is logarithmic when the values drawn on it (the fronts and the baselines on the axis) are all
  positive and span more than :data:`LOG_RATIO`.

A front with no spread on an axis (one point, or equal values) counts as spanning
:data:`MIN_RELATIVE_SPAN` of its value there. Non-finite values are left out.

Example::

    plan = plan_axis([7800, 14794], [3294, 1438])   # a front's throughputs, two baselines'
    plan.scale, plan.below                             # ('linear', (1,)): the second baseline is off the axis
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FRONT_SHARE", "LOG_RATIO", "MIN_RELATIVE_SPAN", "PAD", "AxisPlan", "plan_axis"]

#: An axis whose drawn values are all positive and span more than this ratio is logarithmic.
LOG_RATIO = 10.0
#: The least share of each axis the fronts keep; a baseline that would leave them less is drawn off the axis.
FRONT_SHARE = 1 / 3
#: The span a front with no spread on an axis counts as: this share of its value (its log on a log axis).
MIN_RELATIVE_SPAN = 0.1
#: Margin on each side of the shown values, as a share of their span (on the axis's scale).
PAD = 0.08


@dataclass(frozen=True)
class AxisPlan:
    """How one objective's axis is drawn: its ``scale`` (``linear`` or ``log``), the values it must show
    (``lo`` to ``hi``: the fronts and the baselines on the axis) and the baselines off it, by their index in
    the baselines given to :func:`plan_axis`: ``below`` (smaller than ``lo``) and ``above``."""

    scale: str
    lo: float
    hi: float
    below: tuple[int, ...] = ()
    above: tuple[int, ...] = ()

    @property
    def log(self) -> bool:
        return self.scale == "log"

    def limits(self) -> tuple[float, float]:
        """The axis's limits: ``lo`` to ``hi`` with :data:`PAD` of their span (on the axis's scale) on each
        side; a span of zero gets the padding of :data:`MIN_RELATIVE_SPAN` of the value (1 around zero)."""
        lo, hi = (math.log10(self.lo), math.log10(self.hi)) if self.log else (self.lo, self.hi)
        span = hi - lo or _least_span(lo, hi, self.log)
        lo, hi = lo - PAD * span, hi + PAD * span
        return (10**lo, 10**hi) if self.log else (lo, hi)

    def window(self) -> tuple[float, float]:
        """The limits widened by their whole span on each side (on the axis's scale): what is clipped there
        has no edge in view, whatever room labels add at the axis's edges."""
        lo, hi = self.limits()
        if self.log:
            return lo / (hi / lo), hi * (hi / lo)
        return lo - (hi - lo), hi + (hi - lo)

    def to_dict(self, names: Sequence[str] = ()) -> dict[str, Any]:
        """JSON-ready: the plan and its ``range`` (:meth:`limits`), the off-axis baselines by name when
        ``names`` (the baselines' names, in the order given to :func:`plan_axis`) is given."""
        def named(which: tuple[int, ...]) -> list[Any]:
            return [names[k] for k in which] if names else list(which)

        return {"scale": self.scale, "lo": self.lo, "hi": self.hi, "range": list(self.limits()),
                "below": named(self.below), "above": named(self.above)}


def _least_span(lo: float, hi: float, log: bool) -> float:
    """The span a front from ``lo`` to ``hi`` counts as at least (:data:`MIN_RELATIVE_SPAN`), on the scale."""
    if log:
        return math.log10(1 + MIN_RELATIVE_SPAN)
    return MIN_RELATIVE_SPAN * max(abs(lo), abs(hi)) or 1.0


def _is_log(lo: float, hi: float) -> bool:
    return lo > 0 and hi / lo > LOG_RATIO


def _front_share(front: tuple[float, float], shown: tuple[float, float]) -> float:
    """The share of the axis showing ``shown`` that the front (``front``: its lowest and highest value)
    covers, on the scale :data:`LOG_RATIO` picks for ``shown``."""
    log = _is_log(*shown)
    scale = math.log10 if log else float
    flo, fhi, lo, hi = (scale(v) for v in (*front, *shown))
    covered = max(fhi - flo, _least_span(flo, fhi, log))
    return covered / max(hi - lo, covered)


def plan_axis(front: Sequence[float | None], baselines: Sequence[float | None] = ()) -> AxisPlan:
    """The plan of one axis showing the values ``front`` (every front point's, all fronts together) and
    ``baselines`` (each baseline's; ``None`` or non-finite for one not drawn): see the module docstring."""
    values = [float(v) for v in front if v is not None and math.isfinite(v)]
    others = [(k, float(v)) for k, v in enumerate(baselines) if v is not None and math.isfinite(v)]
    if not values:  # no front: the baselines alone, all on the axis
        values, others = [v for _, v in others], []
    if not values:
        return AxisPlan("linear", 0.0, 1.0)
    flo, fhi = min(values), max(values)
    lo, hi = flo, fhi
    outside = [(k, v) for k, v in others if not flo <= v <= fhi]
    # nearest first: the baseline that alone would leave the fronts the largest share
    outside.sort(key=lambda kv: (-_front_share((flo, fhi), (min(flo, kv[1]), max(fhi, kv[1]))), kv[0]))
    for _, v in outside:
        tried = (min(lo, v), max(hi, v))
        if _front_share((flo, fhi), tried) >= FRONT_SHARE:
            lo, hi = tried
    below = tuple(sorted(k for k, v in outside if v < lo))
    above = tuple(sorted(k for k, v in outside if v > hi))
    return AxisPlan("log" if _is_log(lo, hi) else "linear", lo, hi, below, above)
