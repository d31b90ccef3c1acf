"""Pools costed by the llm builder: the same seconds ``dse accuracy`` gives a prefill or decode row."""

from __future__ import annotations

import numpy as np
import pytest

from dse.cost import RooflineCostModel
from dse.errors import InfeasibleError
from dse.inputs.builders import build
from dse.inputs.builders.llm_config import load_model
from dse.inputs.builders.llm_memory import GIB, memory_use
from dse.inputs.catalog import find
from dse.mapping.pipeline.problem import PipelineProblem
from dse.model.platform import Platform, load_platform
from dse.sim.serving.engine import simulate
from dse.sim.serving.inputs import Deployment, requests
from dse.sim.serving.llm import DEFAULT_PREFILL_TOKENS, LlmTiming, llm_pool


@pytest.fixture(scope="module")
def h100():
    return load_platform(find("platforms", "h100_8gpu_nvlink")).devices[0]


def accuracy_seconds(device, **params) -> float:
    """The period ``dse accuracy`` decodes for a workload with every op on ``device`` (dse.runs.accuracy)."""
    tables = RooflineCostModel().tables(build("llm", **params), Platform(device.name, (device,)))
    problem = PipelineProblem(tables, ("throughput", "energy", "latency"), memory=False, name="row")
    return problem.decode(np.zeros(tables.n_ops, dtype=np.int64)).period * tables.seconds_per_time_unit


def test_pool_timing_equals_the_accuracy_costing_at_powers_of_two(h100) -> None:
    pool = llm_pool("h100", h100, "llama2_7b", tp=2)
    prefill = accuracy_seconds(h100, model="llama2_7b", phase="prefill", batch=2, seq_len=512, tp=2)
    decode = accuracy_seconds(h100, model="llama2_7b", phase="decode", batch=4, seq_len=1024, tp=2)
    assert pool.prefill_s(np.array([256, 768])) == pytest.approx(prefill, rel=1e-12)  # mean 512
    assert pool.decode_s(np.array([1024] * 4)) == pytest.approx(decode, rel=1e-12)
    assert pool.gpus == 2 and pool.busy_w == h100.active_w


def test_between_powers_of_two_the_timing_is_the_linear_interpolation(h100) -> None:
    timing = LlmTiming(h100, "llama2_7b")
    low, high = timing.seconds("decode", 4, 1024), timing.seconds("decode", 4, 2048)
    assert timing.decode_s(np.array([1536] * 4)) == pytest.approx((low + high) / 2, rel=1e-12)
    b4, b8 = timing.seconds("decode", 4, 1024), timing.seconds("decode", 8, 1024)
    assert timing.decode_s(np.array([1024] * 6)) == pytest.approx((b4 + b8) / 2, rel=1e-12)


def test_pipeline_stages_take_pp_times_one_stage(h100) -> None:
    two = LlmTiming(h100, "llama2_7b", pp=2)
    stage = accuracy_seconds(h100, model="llama2_7b", phase="decode", batch=1, seq_len=256, pp=2)
    assert two.decode_s(np.array([256])) == pytest.approx(2 * stage, rel=1e-12)


def test_kv_capacity_is_the_most_tokens_the_memory_holds(h100) -> None:
    pool = llm_pool("h100", h100, "llama2_7b")
    config = load_model("llama2_7b")

    def total(tokens: int) -> float:
        return memory_use(config, 1, tokens, h100.mem_gib, prefill_tokens=DEFAULT_PREFILL_TOKENS).total

    assert total(pool.kv_capacity_tokens) <= h100.mem_gib * GIB < total(pool.kv_capacity_tokens + 1)
    # the whole model's KV per token for a transfer: 2 x 32 layers x 32 KV heads x 128 x 2 bytes
    assert pool.kv_bytes_per_token == 2 * 32 * 32 * 128 * 2


def test_a_model_whose_weights_do_not_fit_is_infeasible_by_how_much(h100) -> None:
    with pytest.raises(InfeasibleError, match=r"memory: .*128.5 GiB of fp16 weights.*GiB short"):
        llm_pool("h100", h100, "llama2_70b")


def test_one_request_on_an_llm_pool_takes_its_prefill_then_its_decode_steps(h100) -> None:
    pool = llm_pool("h100", h100, "llama2_7b")
    r = simulate(Deployment((pool,)), requests([0.0], [512], [2]))
    assert r.ttft_s[0] == pytest.approx(pool.prefill_s(np.array([512])), abs=1e-9)
    assert r.tpot_s[0] == pytest.approx(pool.decode_s(np.array([512])), abs=1e-9)
