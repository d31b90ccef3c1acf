"""Capacity by bisection against a deployment whose capacity is known by hand."""

from __future__ import annotations

import numpy as np
import pytest

from dse.errors import InfeasibleError, SpecError
from dse.sim.serving.capacity import Slo, capacity
from dse.sim.serving.inputs import Deployment, Pool, requests


def _server() -> Deployment:
    """One sequence at a time, 1 s per prefill whatever its length, one output token: a D/D/1 queue."""
    return Deployment((Pool("one", prefill_s=lambda c: 1.0, decode_s=lambda kv: 1.0, kv_capacity_tokens=100,
                            max_batch=1),))


def _even(n: int):
    """``n`` requests 1 s apart at rate 1 (request k at k s)."""
    return requests(np.arange(n, dtype=float), [10] * n, [1] * n)


def test_capacity_of_a_queue_known_by_hand() -> None:
    # At rate r > 1 request k arrives at k / r and starts at k (the server is busy until then): TTFT
    # 1 + k (1 - 1/r). With 51 requests the 90th percentile is request 45's, so TTFT p90 <= 1.5 s holds
    # up to 1 + 45 (1 - 1/r) = 1.5, r* = 45 / 44.5 = 1.011236 requests/s.
    exact = 45 / 44.5
    cap = capacity(_server(), _even(51), Slo(ttft_s=1.5, tpot_s=1.0, percentile=90), rel_tol=1e-4)
    assert cap.converged
    assert exact * (1 - 1e-4) <= cap.rate <= exact * (1 + 1e-9)
    assert exact <= cap.above <= cap.rate * (1 + 1e-4)
    assert cap.result.percentile("ttft_s", 90) <= 1.5
    assert cap.steps <= 20
    # the first 10 left out (warm-up): the 90th percentile of requests 10..50 is at 0.9 x 40 = 36 places
    # in, request 46's: 1 + 46 (1 - 1/r) = 1.5 at r* = 46 / 45.5 = 1.010989 requests/s
    late = capacity(_server(), _even(51), Slo(ttft_s=1.5, tpot_s=1.0, percentile=90), rel_tol=1e-4, warmup=10)
    assert 46 / 45.5 * (1 - 1e-4) <= late.rate <= 46 / 45.5 * (1 + 1e-9)


def test_capacity_stops_at_max_steps_unconverged() -> None:
    cap = capacity(_server(), _even(51), Slo(ttft_s=1.5, tpot_s=1.0), rel_tol=1e-6, max_steps=5)
    assert cap.steps == 5 and not cap.converged
    assert cap.rate <= 45 / 44.5 < cap.above


def test_an_slo_missed_even_at_low_load_is_infeasible_by_how_much() -> None:
    with pytest.raises(InfeasibleError, match="TTFT p90 1 s exceeds its 0.5 s by 0.5 s"):
        capacity(_server(), _even(51), Slo(ttft_s=0.5, tpot_s=1.0), max_steps=5)
    with pytest.raises(SpecError, match="percentile"):
        Slo(1.0, 1.0, percentile=0)
