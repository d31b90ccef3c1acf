"""The serving simulator against runs worked by hand (hand-made timing functions, times in seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from dse.errors import InfeasibleError, SpecError
from dse.sim.serving.engine import ITERATION_COLUMNS, simulate
from dse.sim.serving.inputs import Deployment, Pool, fixed, poisson, requests, uniform
from dse.util.interrupt import Interrupted, active_token, interruptible


def per_token(s: float, overhead: float = 0.0):
    """Prefill seconds: ``overhead`` + ``s`` per chunk token."""
    return lambda chunks: overhead + s * float(chunks.sum())


def constant(s: float):
    return lambda values: s


def pool(name: str = "p", **kw) -> Pool:
    base = {"prefill_s": per_token(1e-3), "decode_s": constant(0.01), "kv_capacity_tokens": 10_000}
    return Pool(name, **(base | kw))


def one(p: Pool, arrival: list[float], inputs: list[int], outputs: list[int], **kw):
    return simulate(Deployment((p,)), requests(arrival, inputs, outputs), **kw)


def test_one_request_alone_ttft_is_its_prefill_and_tpot_its_decode_step_at_batch_1() -> None:
    # prefill 1 ms per token: 100 tokens, 0.1 s; a step at batch 1 and KV length L: 0.01 + 1e-5 L s.
    # Steps at KV 100, 101, 102, 103: 0.011 + 0.01101 + 0.01102 + 0.01103 = 0.04406 s, 4 tokens.
    p = pool(decode_s=lambda kv: 0.01 + 1e-5 * float(kv.sum()) + 0.1 * (len(kv) - 1))
    r = one(p, [1.0], [100], [5])
    assert r.ttft_s[0] == pytest.approx(0.1)
    assert r.tpot_s[0] == pytest.approx(0.04406 / 4)
    assert r.e2e_s[0] == pytest.approx(0.14406)
    assert r.finish_s[0] == pytest.approx(1.14406)
    assert r.complete and r.preemptions[0] == 0 and r.output_tokens[0] == 5


def test_two_simultaneous_requests_share_their_prefill_and_decode_iterations() -> None:
    # One prefill iteration of both prompts: 0.05 + 1 ms x 300 = 0.35 s; then two decode steps at batch 2,
    # 0.02 + 0.005 x 2 = 0.03 s each (alone they would be 0.15 + 0.2 and 0.025 s: no batching).
    p = pool(prefill_s=per_token(1e-3, 0.05), decode_s=lambda kv: 0.02 + 0.005 * len(kv))
    r = one(p, [0.0, 0.0], [100, 200], [3, 3], trace=True)
    assert r.ttft_s == pytest.approx([0.35, 0.35])
    assert r.tpot_s == pytest.approx([0.03, 0.03])
    assert r.e2e_s == pytest.approx([0.41, 0.41])
    rows = [dict(zip(ITERATION_COLUMNS, row, strict=True)) for row in r.iterations]
    assert [(x["prefills"], x["decodes"], x["prefill_tokens"]) for x in rows] == [(2, 0, 300), (0, 2, 0), (0, 2, 0)]
    assert [x["kv_tokens"] for x in rows] == [300, 302, 304]


def test_a_prefill_iteration_holds_whole_prompts_up_to_max_prefill_tokens() -> None:
    # Worked by hand: 250 prompt tokens an iteration, prefill 0.05 s + 1 ms per token, one output token
    # each (done at its prefill). A, B, C (100 tokens) and D (300) at 0: A and B fill 200 (C would make
    # 300): 0-0.25; C (D would make 400): 0.25-0.40; D alone, though over the limit: 0.40-0.75.
    p = pool(prefill_s=per_token(1e-3, 0.05), max_prefill_tokens=250)
    r = one(p, [0.0] * 4, [100, 100, 100, 300], [1] * 4, trace=True)
    assert r.ttft_s == pytest.approx([0.25, 0.25, 0.40, 0.75])
    assert [row[ITERATION_COLUMNS.index("prefills")] for row in r.iterations] == [2, 1, 1]


def test_random_routing_takes_the_seeded_generators_draws_whatever_the_load() -> None:
    # two one-replica pools; least-unfinished would alternate a, b, a, b... for requests arriving together
    deployment = Deployment((pool("a"), pool("b")), routing="random", routing_seed=3)
    r = simulate(deployment, requests([0.0] * 8, [10] * 8, [2] * 8))
    draws = np.random.default_rng(3)
    assert r.prefill_pool.tolist() == [int(draws.integers(2)) for _ in range(8)]
    assert simulate(Deployment((pool("a"), pool("b"))), requests([0.0] * 4, [10] * 4, [2] * 4)).prefill_pool.tolist() \
        == [0, 1, 0, 1]
    with pytest.raises(SpecError, match="field 'routing'"):
        Deployment((pool("a"),), routing="fastest")
    with pytest.raises(SpecError, match="field 'routing_seed'"):
        Deployment((pool("a"),), routing="random", routing_seed=-1)


def test_kv_capacity_forces_the_newest_to_be_preempted_and_recomputed() -> None:
    # Worked by hand: capacity 10 tokens, A and B (4 prompt, 4 output tokens) at time 0, prefill 0.1 s per
    # token, a decode step 1 s. 0-0.8: both prefilled (8 tokens held), first tokens at 0.8. 0.8-1.8: a step
    # (10 held). 1.8: the next step needs 12 > 10: B, the newest, is preempted (5 freed); its recompute of
    # 4 + 2 tokens does not fit beside A (5 held + 1 to decode), so A steps alone: 1.8-2.8, 2.8-3.8, done
    # at 3.8 (TPOT (3.8 - 0.8) / 3 = 1). 3.8-4.4: B's 6 tokens prefilled again (its 3rd token); 4.4-5.4
    # its last step: e2e 5.4, TPOT (5.4 - 0.8) / 3.
    p = pool(prefill_s=per_token(0.1), decode_s=constant(1.0), kv_capacity_tokens=10)
    r = one(p, [0.0, 0.0], [4, 4], [4, 4], trace=True)
    assert r.preemptions.tolist() == [0, 1]
    assert r.ttft_s == pytest.approx([0.8, 0.8])
    assert r.e2e_s == pytest.approx([3.8, 5.4])
    assert r.tpot_s == pytest.approx([1.0, 4.6 / 3])
    rows = [dict(zip(ITERATION_COLUMNS, row, strict=True)) for row in r.iterations]
    assert [x["start_s"] for x in rows] == pytest.approx([0.0, 0.8, 1.8, 2.8, 3.8, 4.4])
    assert max(x["kv_tokens"] for x in rows) == 10


def test_chunked_prefill_mixes_chunks_and_decodes_within_the_token_budget() -> None:
    # Worked by hand: budget 4 tokens, prefill 0.1 s per chunk token, a step 1 s. A (6 prompt, 3 output) at
    # 0, B (3, 2) at 0.1. 0-0.4: A's 4 tokens. 0.4-0.8: A's last 2 and B's first 2 (A's first token at 0.8).
    # 0.8-1.9: A decodes (1 token of the budget) and B's last token is prefilled: 1.0 + 0.1 s (B's first
    # token at 1.9, TTFT 1.8). 1.9-2.9: both decode; both done at 2.9.
    p = pool(prefill_s=per_token(0.1), decode_s=constant(1.0), token_budget=4, max_batch=4)
    r = one(p, [0.0, 0.1], [6, 3], [3, 2])
    assert r.ttft_s == pytest.approx([0.8, 1.8])
    assert r.e2e_s == pytest.approx([2.9, 2.8])
    assert r.tpot_s == pytest.approx([1.05, 1.0])


def test_disaggregated_ttft_includes_the_kv_transfer() -> None:
    # Prefill 0.2 s; the prompt's KV cache: 100 tokens x 1 MB over 10 GB/s = 0.01 s; then 2 steps of
    # 0.05 s on the decode pool: TTFT 0.21, e2e 0.31, TPOT 0.05.
    pre = pool("pre", role="prefill", prefill_s=constant(0.2), kv_bytes_per_token=1e6)
    dec = pool("dec", role="decode", decode_s=constant(0.05))
    r = simulate(Deployment((pre, dec), kv_link_gbps=10.0), requests([0.0], [100], [3]))
    assert r.ttft_s[0] == pytest.approx(0.21)
    assert r.e2e_s[0] == pytest.approx(0.31)
    assert r.tpot_s[0] == pytest.approx(0.05)
    assert (r.prefill_pool[0], r.decode_pool[0]) == (0, 1)
    assert r.busy_s == pytest.approx([0.2, 0.1])
    assert r.output_tokens.tolist() == [0, 3]


def test_energy_is_busy_power_while_busy_and_idle_power_otherwise() -> None:
    # 2 GPUs per replica at 300 W busy, 50 W idle. The request arrives at 1 s: prefill 0.2 s and two
    # steps of 0.05 s on replica 0 (busy 0.3 s of a 1.3 s run), replica 1 idle throughout:
    # 2 x (0.3 x 300 + 1.0 x 50) + 2 x 1.3 x 50 = 280 + 130 = 410 J.
    p = pool(prefill_s=constant(0.2), decode_s=constant(0.05), gpus=2, replicas=2, busy_w=300.0, idle_w=50.0)
    r = one(p, [1.0], [10], [3])
    assert r.horizon_s == pytest.approx(1.3)
    assert r.busy_s[0] == pytest.approx(0.3)
    assert r.energy_j[0] == pytest.approx(410.0)


def _poisson_pool() -> Pool:
    return pool(prefill_s=per_token(2e-4, 0.01), decode_s=lambda kv: 0.01 + 1e-3 * len(kv), max_batch=16,
                kv_capacity_tokens=4000)


def test_littles_law_on_a_long_poisson_run() -> None:
    # Mean number in system, integrated over the run by the simulator, against rate x mean latency.
    reqs = poisson(7.0, 5000, uniform(50, 150), uniform(1, 30), seed=3)
    r = simulate(Deployment((_poisson_pool(),)), reqs)
    assert r.finished.all()
    assert r.mean_in_system == pytest.approx(7.0 * r.e2e_s.mean(), rel=0.03)
    assert r.mean_in_system > 1.0  # requests queue and batch, not a trivially empty system


def test_same_seed_same_run_other_seed_other_run() -> None:
    d = Deployment((_poisson_pool(),))
    a = simulate(d, poisson(6.0, 300, uniform(50, 150), uniform(1, 30), seed=1))
    b = simulate(d, poisson(6.0, 300, uniform(50, 150), uniform(1, 30), seed=1))
    c = simulate(d, poisson(6.0, 300, uniform(50, 150), uniform(1, 30), seed=2))
    assert np.array_equal(a.e2e_s, b.e2e_s) and np.array_equal(a.energy_j, b.energy_j)
    assert not np.array_equal(a.e2e_s, c.e2e_s)


def test_a_stop_request_ends_the_run_early_with_partial_results() -> None:
    # Requests 1 s apart, 0.5 s prefill each, one output token: every finished one took 0.5 s. The 100th
    # prefill asks for a stop; the loop honours it at its next check (event 4097).
    calls = [0]

    def prefill(chunks: np.ndarray) -> float:
        calls[0] += 1
        if calls[0] == 100:
            active_token().request()
        return 0.5

    n = 5000
    p = pool(prefill_s=prefill)
    with interruptible(), pytest.raises(Interrupted) as stop:
        one(p, list(np.arange(n, dtype=float)), [10] * n, [1] * n)
    partial = stop.value.partial
    assert not partial.complete
    done = partial.finished
    assert 100 <= done.sum() < n
    assert partial.e2e_s[done] == pytest.approx(0.5)
    assert np.isnan(partial.e2e_s[~done]).all()


def test_a_request_no_kv_cache_can_hold_is_infeasible_by_how_much() -> None:
    p = pool(kv_capacity_tokens=100)
    with pytest.raises(InfeasibleError, match="request 1 needs 109 tokens .* pool p holds 100 .*9 over"):
        one(p, [0.0, 0.0], [50, 100], [2, 10])


@pytest.mark.parametrize(("kw", "field"), [({"max_batch": 0}, "max_batch"), ({"role": "mixed"}, "role"),
                                           ({"token_budget": 8, "max_batch": 16}, "token_budget"),
                                           ({"busy_w": -1.0}, "busy_w"),
                                           ({"max_prefill_tokens": 0}, "max_prefill_tokens")])
def test_bad_pool_fields_are_one_line_naming_the_field(kw: dict, field: str) -> None:
    with pytest.raises(SpecError, match=f"pool p: field '{field}'"):
        pool(**kw)


def test_bad_requests_and_deployments_name_the_row_or_field() -> None:
    with pytest.raises(SpecError, match=r"arrival_s\[2\]' = 0.5: is before the row above"):
        requests([0.0, 1.0, 0.5], [1, 1, 1], [1, 1, 1])
    with pytest.raises(SpecError, match=r"output_len\[1\]' = 0"):
        requests([0.0, 1.0], [1, 1], [1, 0])
    with pytest.raises(SpecError, match="kv_link_gbps"):
        Deployment((pool("a", role="prefill"), pool("b", role="decode")))
    with pytest.raises(SpecError, match="needs a decode pool"):
        Deployment((pool("a", role="prefill"),), kv_link_gbps=1.0)
    assert fixed(3).sample(np.random.default_rng(0), 2).tolist() == [3, 3]
