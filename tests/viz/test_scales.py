"""The one axis rule (dse.viz.scales): which baselines go off the axis, when an axis is logarithmic.

Every expected value is worked by hand in the comment beside it.
"""

from __future__ import annotations

import math

import pytest

from dse.viz.scales import FRONT_SHARE, LOG_RATIO, AxisPlan, plan_axis


def test_quickstart_axes() -> None:
    """quickstart's fronts and baselines (only cpu, only gpu, only fpga, static), as dse solve prints them.

    Throughput: the front spans 7800.3..14794 (6993.7). only cpu at 3294.5 leaves it 6993.7 / 11499.5 = 0.61
    of a linear axis (4.5x): kept. only fpga at 1438.5 would make 10.28x, a log axis, where the front has
    log(14794 / 7800.3) / log(14794 / 1438.5) = 0.278 / 1.012 = 0.27 < 1/3: off, below.
    Energy: the front spans 10.854..21.4 (10.546); only gpu (24.573) and static (26.746) leave it 0.77 and
    0.66: kept; only fpga (69.516) would leave it 10.546 / 58.66 = 0.18 and only cpu (84.99) 0.14: off, above.
    """
    throughput = plan_axis([7800.3, 11892, 13838, 14316, 14756, 14794], [3294.5, 10174, 1438.5, 11892])
    assert throughput == AxisPlan("linear", 3294.5, 14794.0, below=(2,), above=())
    energy = plan_axis([10.854, 12.02, 13.179, 15.815, 16.108, 21.4], [84.99, 24.573, 69.516, 26.746])
    assert energy == AxisPlan("linear", 10.854, 26.746, below=(), above=(0, 2))


def test_log_past_ten_x_of_the_shown_values() -> None:
    assert LOG_RATIO == 10.0 and FRONT_SHARE == pytest.approx(1 / 3)
    assert plan_axis([1.0, 10.5]).scale == "log"  # 10.5x
    assert plan_axis([1.0, 9.5]).scale == "linear"  # 9.5x
    assert plan_axis([-1.0, 100.0]).scale == "linear"  # not all positive: no log axis
    # a front of 1..5 and a baseline at 100: log axis (100x), the front's share log(5) / log(100) = 0.35: kept
    assert plan_axis([1.0, 5.0], [100.0]) == AxisPlan("log", 1.0, 100.0)
    # a baseline at 200 instead: log(5) / log(200) = 0.30 < 1/3: off, and the axis the front's, linear (5x)
    assert plan_axis([1.0, 5.0], [200.0]) == AxisPlan("linear", 1.0, 5.0, above=(0,))


def test_a_front_without_spread_counts_as_a_tenth_of_its_value() -> None:
    # one point at 100 counts as spanning 10: a baseline at 120 leaves it 10 / 20 = 0.5 (kept), one at 140
    # 10 / 40 = 0.25 (off)
    assert plan_axis([100.0], [120.0, 140.0]) == AxisPlan("linear", 100.0, 120.0, above=(1,))


def test_baselines_are_weighed_nearest_first_and_unshown_values_ignored() -> None:
    # front 10..20 (10). 25 leaves 10 / 15 = 0.67: kept; then 5 leaves 10 / 20 = 0.5: kept; 45 would leave
    # 10 / 40 = 0.25: off. None and NaN are not drawn at all.
    plan = plan_axis([10.0, 20.0], [45.0, None, 5.0, math.nan, 25.0])
    assert plan == AxisPlan("linear", 5.0, 25.0, above=(0,))
    assert plan_axis([], [3.0, 4.0]) == AxisPlan("linear", 3.0, 4.0)  # no front: the baselines alone
    assert plan_axis([]) == AxisPlan("linear", 0.0, 1.0)


def test_limits_pad_the_shown_values_on_the_axis_scale() -> None:
    # linear 10..20: 8% of 10 each side; log 1..100: 8% of two decades each side, 10^-0.16 .. 10^2.16
    assert AxisPlan("linear", 10.0, 20.0).limits() == pytest.approx((9.2, 20.8))
    assert AxisPlan("log", 1.0, 100.0).limits() == pytest.approx((10**-0.16, 10**2.16))
    assert AxisPlan("linear", 5.0, 5.0).limits() == pytest.approx((4.96, 5.04))  # no span: 8% of 0.5
    plan = AxisPlan("linear", 1.0, 2.0, below=(1,), above=(0,))
    assert plan.to_dict(["a", "b"]) == {"scale": "linear", "lo": 1.0, "hi": 2.0, "range": list(plan.limits()),
                                        "below": ["b"], "above": ["a"]}
