"""The serving family: one pool evaluated by hand, CP-SAT against exhaustive search on the family's small
instances (hypothesis over seeds), the infeasibility messages, and the catalog problems loading and solving."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import dse
from dse import testing
from dse.errors import InfeasibleError
from dse.inputs.builders.llm_memory import GIB
from dse.mapping.serving import ServingProblem, example_problem
from dse.mapping.serving.inputs import ServingOptions
from dse.mapping.serving.table import figures_at_load, table_from_times

ROOT_PROBLEMS = ("llm_llama2_70b_8xh100", "llm_llama2_70b_8xh100_slo", "llm_llama31_8b_mixed_fleet", "llm_mixtral_h200")


def _one_option_problem(**slo: float) -> ServingProblem:
    """One GPU type (4 GPUs of 80 GiB, 300 W), TP 2, batch 16, 100 output tokens; per stage a prompt's
    prefill 0.2 s alone and 0.15 s in a full prefill iteration, a decode step 0.02 s; 30 GiB of weights
    and 1 GiB of KV per GPU."""
    options = ServingOptions(pools=2, tp=[2], pp=[1], batch=[16], precisions=["fp16"], clocks=[1.0])
    shape = (1, 1, 1, 1, 1, 1, 1)
    memory = np.zeros((*shape, 4))
    memory[..., 0], memory[..., 1] = 30 * GIB, 1 * GIB
    table = table_from_times(["gpu"], [4], [80.0], options, 100, None, np.full(shape, 0.2), np.full(shape, 0.02),
                             np.full(shape, 300.0), memory, np.ones(shape, dtype=bool), **slo,
                             s_pf_batched=np.full(shape, 0.15))
    return ServingProblem(table, name="by_hand")


def test_one_pool_evaluated_by_hand() -> None:
    # by hand: D = 100 - 1 = 99 decode steps (the prefill gives the first token); prompts prefilled in full
    # iterations: cycle = D t_step + B s_pf_batched = 99 x 0.02 + 16 x 0.15 = 4.38 s; 16 / 4.38 = 3.652968
    # req/s per replica; two replicas 7.305936 req/s = 730.5936 tokens/s; TTFT (a lone prompt) 200 ms;
    # TPOT 4.38 s / 99 = 44.2424 ms; power 2 replicas x 2 GPUs x 300 W = 1200 W; 1200 / 730.5936 =
    # 1200 x 4.38 / 3200 = 1.6425 J per output token
    problem = _one_option_problem()
    mapping = problem.decode(np.array([0, 0, 0, 2, 0, 0, 0, 0] + [0] * 8))
    assert problem.table.rate[0] == 3_652_968
    assert mapping.tokens_per_s == pytest.approx(730.5936, abs=1e-4)
    assert mapping.joules_per_token == pytest.approx(1.6425, rel=1e-6)
    assert mapping.power_w == 1200 and mapping.gpus == 4
    pool = mapping.pools[0]
    assert pool["ttft_ms"] == pytest.approx(200.0) and pool["tpot_ms"] == pytest.approx(44.2424, abs=1e-4)
    assert pool["memory_gib"][:2] == (30.0, 1.0) and pool["memory_gib"][2:] == (0.0, 0.0)
    # two pools of two replicas need 8 GPUs of the 4: the gpus constraint is 100% over
    ev = problem.evaluate(np.array([[0, 0, 0, 2, 0, 0, 0, 0] * 2]))
    assert problem.slack(ev.G[0])["gpus"] == pytest.approx(-1.0)


def test_figures_at_load_by_hand() -> None:
    # One engine (pp 1): a prompt's prefill P = 0.1 s; a decode step 0.01 s at one sequence and 0.02 s at
    # m = 11, so c1 = 0.01 / 10 = 0.001 s per sequence and c0 = 0.009 s; 101 output tokens, D = 100 steps;
    # 2 requests/s: rho = 2 x 0.1 = 0.2, g = c1 x 2 x D = 0.2, b = 1 + 0.04 / (1.2 x 100) = 1.000333.
    # both: TPOT = (b c0 + rho P / ((1 - rho^2) D)) / (1 - rho - b g)
    #            = (0.009003 + 0.02 / 96) / (0.8 - 0.2000667) = 0.0092113 / 0.5999333 = 0.0153539 s;
    #   n = 2 x 100 x 0.0153539 = 3.07 < 11; V = c0 + g TPOT = 0.009 + 0.2 x 0.0153539 = 0.0120708 s;
    #   Lbar = V / 1.2 + rho P / (1 - rho^2) = 0.0100590 + 0.0208333 = 0.0308923 s;
    #   TTFT = P + (1/2 + rho) Lbar = 0.1 + 0.7 x 0.0308923 = 0.1216246 s.
    # prefill (KV transfer 0.05 s): TTFT = 0.1 + 0.7 x 0.0208333 + 0.05 = 0.1645833 s.
    # decode: TPOT = c0 / (1 - g) = 0.009 / 0.8 = 0.01125 s.
    # At 12 requests/s rho = 1.2 (both, prefill) and g = 1.2 (decode): saturated, inf.
    roles, kv = np.array([0, 1, 2]), np.array([0.0, 0.05, 0.0])
    ttft, tpot = figures_at_load(0.1, 0.02, 0.01, 1, 11, roles, kv, 2.0, 101)
    assert ttft[:2] == pytest.approx([0.1216246, 0.1645833], rel=1e-6) and np.isnan(ttft[2])
    assert tpot[[0, 2]] == pytest.approx([0.0153539, 0.01125], rel=1e-5) and np.isnan(tpot[1])
    ttft, tpot = figures_at_load(0.1, 0.02, 0.01, 1, 11, roles, kv, 12.0, 101)
    assert np.isinf(ttft[:2]).all() and np.isinf(tpot[[0, 2]]).all()
    # a batch limit of 3 with steps of 0.01 and 0.0102 s (c1 = 0.0001, c0 = 0.0099) at 3 requests/s:
    # rho = 0.3, g = 0.03, TPOT = (0.0099 + 0.03 / 91) / (0.7 - 0.03) = 0.01527 s, so n = 3 x 100 x
    # 0.01527 = 4.6 sequences would decode, over the limit of 3: inf
    assert np.isinf(figures_at_load(0.1, 0.0102, 0.01, 1, 3, 0, 0.0, 3.0, 101)[1])
    assert np.isfinite(figures_at_load(0.1, 0.0102, 0.01, 1, 5, 0, 0.0, 3.0, 101)[1])


def test_figures_at_load_on_a_bent_decode_step_by_hand() -> None:
    # One engine (pp 1), P = 0.1 s, D = 100 steps; a decode step of 0.01 s at one sequence, 0.015 s at two
    # and 0.016 s at four (a mixture of experts' step: steep, then flat). Segments: c1 = 0.005, c0 = 0.005
    # on [1, 2]; c1 = 0.0005, c0 = 0.014 on [2, 4].
    # decode at 1.5 requests/s: on [1, 2], g = 0.005 x 1.5 x 100 = 0.75, TPOT = 0.005 / 0.25 = 0.02 s
    #   and n = 1.5 x 100 x 0.02 = 3, off the segment; on [2, 4], g = 0.075, TPOT = 0.014 / 0.925 =
    #   0.0151351 s, n = 2.27, on it (V(2.27) = 0.014 + 0.0005 x 2.27 = 0.0151351: TPOT = V(n)).
    # both at 1.5 requests/s: rho = 0.15, b = 1 + 0.0225 / 115 = 1.00019565, rho P / (1 - rho^2) =
    #   0.0153453; on [1, 2] TPOT = 0.0516201 s, n = 7.74, off it; on [2, 4] TPOT = (b 0.014 + 0.0153453 /
    #   100) / (0.85 - b 0.075) = 0.0182664 s, n = 2.74, on it; V = 0.014 + 0.075 x 0.0182664 = 0.0153700;
    #   TTFT = 0.1 + 0.65 x (0.01537 / 1.15 + 0.0153453) = 0.1186618 s.
    # One line through one and four sequences (the default samples) gives 0.0114286 s for decode.
    samples = (np.array([1.0, 2.0, 4.0]), np.array([0.01, 0.015, 0.016]))
    roles = np.array([0, 2])
    ttft, tpot = figures_at_load(0.1, 0.016, 0.01, 1, 4, roles, 0.0, 1.5, 101, samples)
    assert tpot == pytest.approx([0.0182664, 0.0151351], rel=1e-5)
    assert ttft[0] == pytest.approx(0.1186618, rel=1e-6) and np.isnan(ttft[1])
    assert figures_at_load(0.1, 0.016, 0.01, 1, 4, 2, 0.0, 1.5, 101)[1] == pytest.approx(0.0114286, rel=1e-5)
    # padded samples (the last repeated) change nothing
    padded = (np.array([1.0, 2.0, 4.0, 4.0, 4.0]), np.array([0.01, 0.015, 0.016, 0.016, 0.016]))
    assert figures_at_load(0.1, 0.016, 0.01, 1, 4, roles, 0.0, 1.5, 101, padded)[1] == pytest.approx(tpot, rel=1e-12)
    # a batch limit of 2: the 2.27 sequences decode would need are over it: inf
    assert np.isinf(figures_at_load(0.1, 0.015, 0.01, 1, 2, 2, 0.0, 1.5, 101, (samples[0][:2], samples[1][:2]))[1])


def test_an_slo_below_the_option_masks_it_and_says_by_how_much() -> None:
    problem = _one_option_problem(tpot_ms=44.0)  # the 44.24 ms TPOT misses it
    assert not problem.table.usable[0]
    with pytest.raises(InfeasibleError, match=r"slo: the TPOT SLO of .* below the fastest decode step, 44.24 ms"):
        problem.check_feasible()


# derandomized: the same 12 seeds on every run, and seed 499, whose box at the best throughput CP-SAT once
# left unproven (status feasible); it ends optimal now and stays here as a check.
@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 500))
@example(seed=499)
@pytest.mark.slow
def test_cpsat_equals_exhaustive_on_small_fleets(seed: int) -> None:
    problem = example_problem(seed)
    front = testing.check_exact_agrees(problem)
    assert front.status in ("optimal", "infeasible")


def test_the_model_needing_more_memory_than_any_gpu_names_weights_and_capacity() -> None:
    problem = dse.load_problem("problems/llm_llama31_8b_mixed_fleet.yaml", changes={
        "workload.model": "llama2_70b", "platform.gpus": [{"gpu": "l4", "count": 1}],
        "options.tp": [1], "options.batch": [8], "options.clocks": [1.0]})
    # llama2_70b at fp16: 68.98e9 parameters x 2 bytes = 138 GB (dse.inputs.builders.llm_memory.weight_bytes);
    # the L4 holds 24 GiB = 25.77 GB
    with pytest.raises(InfeasibleError, match=r"memory: llama2_70b needs 138 GB of weights at FP16 and the "
                                              r"largest fleet GPU holds 25.77 GB"):
        problem.check_feasible()


def test_the_table_samples_the_decode_step_at_the_simulators_batches() -> None:
    problem = dse.load_problem("problems/llm_mixtral_h200.yaml", changes={
        "options.tp": [1], "options.batch": [8], "options.clocks": [1.0], "options.split": False})
    t = problem.table
    o = int(np.flatnonzero(t.usable)[0])
    assert t.step_batches[o].tolist() == [1, 2, 4, 8]
    steps = t.step_seconds[o]
    assert steps[0] == t.s_dec_one[o] and steps[-1] == t.s_dec[o] and (np.diff(steps) > 0).all()
    # Mixtral's top-2 of 8 experts: two sequences read 1 - (6/8)^2 = 44% of the experts, one 25%, eight
    # 90% (dse.inputs.builders.llm): the step at two lies above the line from one to eight
    assert steps[1] > steps[0] + (steps[-1] - steps[0]) / 7


def test_a_ttft_slo_below_the_fastest_prefill_is_infeasible() -> None:
    problem = dse.load_problem("problems/llm_llama31_8b_mixed_fleet.yaml", changes={
        "workload.slo.ttft_ms": 1.0, "options.tp": [1], "options.batch": [8], "options.clocks": [1.0]})
    with pytest.raises(InfeasibleError, match=r"slo: the TTFT SLO of 1 ms is below the fastest prefill, [0-9.]+ ms"):
        problem.check_feasible()


def test_a_power_budget_below_every_replica_is_infeasible() -> None:
    problem = _one_option_problem()
    tight = ServingProblem(problem.table, power_cap_mw=500_000)
    with pytest.raises(InfeasibleError, match=r"power: the budget of 500 W is below the smallest replica's 600 W"):
        tight.check_feasible()


@pytest.mark.slow
@pytest.mark.parametrize("name", ROOT_PROBLEMS)
def test_the_llm_problems_load_and_solve_to_a_proven_front(name: str) -> None:
    problem = dse.load_problem(f"problems/{name}.yaml")
    problem.check_feasible()
    front = dse.solve(problem, "cpsat", time_limit=60, seed=0, progress=False)
    assert front.status == "optimal" and len(front) >= 2
    assert all(p.proven for p in front.points)


def test_cost_is_the_price_of_the_deployments_gpus_per_hour_by_hand() -> None:
    """Two GPU types priced 2.5 and 1.0 per GPU-hour, TP 1 or 2: 2 replicas of TP 2 on the first type and
    3 of TP 1 on the second cost 2 x 2 x 2.5 + 3 x 1 x 1.0 = 13 per hour, by hand."""
    options = ServingOptions(pools=2, tp=[1, 2], pp=[1], batch=[16], precisions=["fp16"], clocks=[1.0])
    shape = (2, 2, 1, 1, 1, 1, 1)
    memory = np.zeros((*shape, 4))
    table = table_from_times(["a", "b"], [4, 4], [80.0, 80.0], options, 100, None, np.full(shape, 0.2),
                             np.full(shape, 0.02), np.full(shape, 300.0), memory, np.ones(shape, dtype=bool),
                             price_per_hour=[2.5, 1.0])
    problem = ServingProblem(table, ("throughput", "energy", "cost"), name="priced")
    genome = np.array([0, 1, 0, 2, 0, 0, 0, 0, 1, 0, 0, 3, 0, 0, 0, 0])  # pools: (a, tp 2) x 2, (b, tp 1) x 3
    point = problem.evaluate(genome[None, :])
    assert problem.objectives[2].column == "cost_price_per_h"
    assert problem.objectives[2].to_user(point.F[0, 2]) == pytest.approx(13.0)
    # without prices each GPU-hour costs 1: the 2 x 2 + 3 x 1 = 7 GPUs
    plain = ServingProblem(table_from_times(["a", "b"], [4, 4], [80.0, 80.0], options, 100, None,
                                            np.full(shape, 0.2), np.full(shape, 0.02), np.full(shape, 300.0), memory,
                                            np.ones(shape, dtype=bool)), ("throughput", "cost"), name="unpriced")
    assert plain.objectives[1].to_user(plain.evaluate(genome[None, :]).F[0, 1]) == pytest.approx(7.0)


def test_cpsat_equals_exhaustive_with_cost_as_a_third_objective() -> None:
    problem = example_problem(2)  # the first seed whose instance minimizes cost too
    assert [o.name for o in problem.objectives] == ["throughput", "energy", "cost"]
    front = testing.check_exact_agrees(problem)
    assert front.status == "optimal" and len(front) > 1


def test_a_fleet_pricing_some_gpu_types_only_is_refused() -> None:
    with pytest.raises(dse.SpecError, match=r"platform\.gpus\[1\]\.price_per_hour.*give every GPU type a price"):
        dse.load_problem("problems/llm_llama31_8b_mixed_fleet.yaml", changes={
            "platform.gpus": [{"gpu": "l4", "count": 2, "price_per_hour": 0.8}, {"gpu": "a100_sxm_80gb", "count": 1}]})


def test_a_token_count_outside_its_range_is_one_line_naming_the_field() -> None:
    """Found by the spec fuzzer: ``input_tokens: 0`` escaped as a pydantic ValidationError."""
    for bad in (0, -3, True, 2**21):
        with pytest.raises(dse.SpecError, match=r"field 'workload\.input_tokens' = .*is a token count"):
            dse.load_problem("problems/llm_llama2_70b_8xh100.yaml", changes={"workload.input_tokens": bad})
