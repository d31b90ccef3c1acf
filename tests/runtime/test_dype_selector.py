"""The selector: never a configuration that breaks a limit when one meets them all; says so when none does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dse.errors import SpecError
from dse.runtime.policies import Limits, Preference, select

figures = st.lists(st.tuples(st.floats(1, 1e4), st.floats(1e-4, 10), st.floats(1e-5, 1), st.booleans()),
                   min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(rows=figures, power=st.one_of(st.none(), st.floats(0.01, 1e4)), latency=st.one_of(st.none(), st.floats(1e-5, 1)),
       kind=st.sampled_from(["throughput", "energy", "weighted"]), weight=st.floats(0, 1))
def test_selector_meets_limits_whenever_some_candidate_does(rows, power, latency, kind, weight) -> None:
    t, e, lat, valid = (np.array(c) for c in zip(*rows, strict=True))
    limits = Limits(power_w=power, latency_s=latency)
    preference = Preference(kind, weight)
    sel = select(t, e, lat, limits, preference, valid)
    # brute force: which candidates meet every limit (power = J/item x items/s)
    meets = valid.copy()
    if power is not None:
        meets &= e * t <= power * (1 + 1e-12)
    if latency is not None:
        meets &= lat <= latency * (1 + 1e-12)
    if meets.any():
        assert sel.feasible and meets[sel.index]
        if kind == "throughput":  # the fastest of those meeting the limits
            assert t[sel.index] == pytest.approx(t[meets].max())
        elif kind == "energy":
            assert e[sel.index] == pytest.approx(e[meets].min())
        else:  # the weighted score's minimum, recomputed by hand
            score = weight * t[meets].max() / t + (1 - weight) * e / e[meets].min()
            assert score[sel.index] <= score[meets].min() * (1 + 1e-9)
    else:
        assert not sel.feasible and sel.reason


def test_selector_names_the_limit_and_the_best_reachable_value() -> None:
    # powers: 10 x 5 = 50 W and 20 x 4 = 80 W; a 40 W cap cannot be met, the lowest power is 50 W
    sel = select([10.0, 20.0], [5.0, 4.0], [0.1, 0.1], Limits(power_w=40), Preference())
    assert not sel.feasible and sel.index == 0
    assert "power_w 40 W" in sel.reason and "50 W" in sel.reason
    sel = select([10.0, 20.0], [5.0, 4.0], [0.1, 0.2], Limits(latency_s=0.05), Preference())
    assert not sel.feasible and "deadline 50 ms" in sel.reason and "100 ms" in sel.reason
    # with a 60 W cap only the first meets it, although the second is faster
    assert select([10.0, 20.0], [5.0, 4.0], [0.1, 0.1], Limits(power_w=60), Preference()).index == 0


def test_preference_is_checked() -> None:
    with pytest.raises(SpecError):
        Preference("speed")
    with pytest.raises(SpecError):
        Preference("weighted", 1.5)
    with pytest.raises(ValueError):
        select([], [], [], Limits(), Preference())
