"""The LLM builder, its memory functions and the collective mechanism against hand calculations and
published model sizes."""

from __future__ import annotations

import pytest

from dse.cost import RooflineCostModel
from dse.cost.mechanisms.collective import collective_seconds
from dse.errors import SpecError
from dse.inputs import catalog
from dse.inputs.builders import build
from dse.inputs.builders.llm import Parallelism, ops_per_layer, pipeline_seconds
from dse.inputs.builders.llm_config import config_from_hf, load_model, models
from dse.inputs.builders.llm_memory import (
    GIB,
    fits,
    kv_bytes_per_token,
    max_batch,
    max_context,
    weight_bytes,
)
from dse.model.platform import Device
from dse.model.workload import validate_workload


def _h100(**declared) -> Device:
    """H100 SXM data-sheet figures (989.4 TFLOP/s fp16 dense, 3,350 GB/s, 80 GB), NVLink 450 GB/s each
    way and NCCL's 5.7 us per ring step; the gpu kind's defaults: gemm 0.75 of peak, 0.85 of bandwidth."""
    return Device("h100", "gpu", {"fp16": 989.4, "fp8": 1979.0}, 3350.0, 80.0, 0.0, 700.0,
                  intra_node_gbps=450.0, intra_node_latency_us=5.7, **declared)


def _op(workload, name):
    return next(op for op in workload.ops if op.name == name)


# ----------------------------------------------------------------------------- configs


@pytest.mark.parametrize(("model", "published", "tolerance"), [
    ("llama2_7b", 6.74e9, 0.005),      # Hugging Face model card, meta-llama/Llama-2-7b-hf: 6.74B parameters
    ("llama2_70b", 68.98e9, 0.005),    # Hugging Face safetensors count of Llama-2-70b-hf: 69.0B
    ("llama3_1_405b", 405e9, 0.01),    # the name and the Llama 3 paper's Table 3: 405B
    ("mixtral_8x7b", 46.7e9, 0.005),   # Mistral AI, "Mixtral of experts" (2023): 46.7B total parameters
    ("gpt3_175b", 175e9, 0.01),        # Brown et al. 2020, Table 2.1: 175.0B
    ("gptj_6b", 6.05e9, 0.01),         # EleutherAI's model card: 6,053,381,344 parameters
])
def test_parameter_counts_match_the_published_ones(model: str, published: float, tolerance: float) -> None:
    assert load_model(model).parameters() == pytest.approx(published, rel=tolerance)


def test_mixtral_active_parameters() -> None:
    # Mistral AI: "only uses 12.9B parameters per token" (2 of 8 experts)
    assert load_model("mixtral_8x7b").parameters(active=True) == pytest.approx(12.9e9, rel=0.005)


def test_prefill_weights_are_the_parameters() -> None:
    """Resident bytes of a one-GPU prefill at fp16 are 2 bytes per parameter (the catalog's count)."""
    workload = validate_workload(build("llm", model="llama2_7b", phase="prefill"))
    assert sum(op.resident_bytes for op in workload.ops) == pytest.approx(2 * load_model("llama2_7b").parameters())


def test_hf_aliases_and_errors() -> None:
    gptj = config_from_hf({"n_layer": 28, "n_embd": 4096, "n_head": 16, "n_inner": None, "vocab_size": 50400,
                           "activation_function": "gelu_new"})
    assert (gptj.layers, gptj.intermediate, gptj.kv_heads, gptj.gated_mlp, gptj.head_dim) == (28, 16384, 16, False, 256)
    with pytest.raises(SpecError, match="num_key_value_heads"):
        config_from_hf({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 8,
                        "num_key_value_heads": 3, "vocab_size": 10})
    with pytest.raises(SpecError, match="hidden_size"):
        config_from_hf({"num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 10})
    with pytest.raises(SpecError, match="model"):
        build("llm", model="no_such_model")


def test_catalog_lists_the_models_with_sources() -> None:
    assert {"llama2_70b", "mixtral_8x7b", "gpt3_175b", "llama3_1_405b"} <= set(models())
    assert catalog.other_kinds()["llm"] == models()
    assert all(load_model(name).sources for name in models())


# ----------------------------------------------------------------------------- memory


def test_kv_cache_of_llama2_70b_by_hand() -> None:
    """Llama-2-70B: 80 layers, 8 KV heads, head_dim 128, fp16. Per token 2 (K and V) x 80 x 8 x 128 x
    2 bytes = 327,680 bytes; batch 16 at 4,096 tokens = 65,536 tokens x 327,680 = 21,474,836,480 bytes
    = 20 GiB. At TP 8 each GPU holds one KV head: 40,960 bytes per token; fp8 halves it."""
    config = load_model("llama2_70b")
    assert kv_bytes_per_token(config) == 327_680
    assert 16 * 4096 * kv_bytes_per_token(config) == 21_474_836_480 == 20 * GIB
    assert kv_bytes_per_token(config, par=Parallelism(tp=8)) == 40_960
    assert kv_bytes_per_token(config, "fp8") == 163_840


def test_decode_attention_reads_the_kv_cache() -> None:
    """One decode step of Llama-2-70B, batch 16 at KV length 4,096: every layer's attention reads the
    whole cache (20 GiB / 80 layers = 268,435,456 bytes) plus q and o (2 x 16 x 64 x 128 x 2 bytes)
    and writes the new token's K and V (16 x 2 x 8 x 128 x 2)."""
    step = build("llm", model="llama2_70b", phase="decode", batch=16, seq_len=4096)
    att = _op(step, "decode.layer0.attention")
    assert att.bytes_moved == 268_435_456 + 2 * 16 * 64 * 128 * 2 + 16 * 2 * 8 * 128 * 2
    assert att.flops == pytest.approx(16 * 4096 * 64 * (4 * 128 + 5))


def test_largest_batch_and_context_fit() -> None:
    """Llama-2-70B in fp16 needs 128.5 GiB of weights: nothing fits one 80 GiB GPU; at TP 8 the largest
    batch is the last that fits and the next does not."""
    config = load_model("llama2_70b")
    assert weight_bytes(config) / GIB == pytest.approx(128.48, abs=0.01)
    assert max_batch(config, 4096, 80.0) == 0
    par = Parallelism(tp=8)
    best = max_batch(config, 4096, 80.0, par=par)
    assert best > 0 and fits(config, best, 4096, 80.0, par=par) and not fits(config, best + 1, 4096, 80.0, par=par)
    longest = max_context(config, 8, 80.0, par=par)
    assert fits(config, 8, longest, 80.0, par=par) and not fits(config, 8, longest + 1, 80.0, par=par)


# ----------------------------------------------------------------------------- collectives


def test_tp8_allreduce_of_one_layer_on_nvlink_by_hand() -> None:
    """Llama-2-70B decode, batch 64, TP 8: each all-reduce carries 64 x 8192 x 2 = 1,048,576 bytes.
    Ring: 2 x 7/8 x 1,048,576 / 450e9 = 4.0777 us plus 2 x 7 x 5.7 us = 79.8 us: 83.8777 us; a layer
    has two: 167.755 us. Tree: 2 x 1,048,576 / 450e9 = 4.6603 us + 2 x 3 x 5.7 = 34.2 us: 38.8603 us."""
    ring = 2 * 7 / 8 * 1_048_576 / 450e9 + 14 * 5.7e-6
    assert ring == pytest.approx(83.8777e-6, rel=1e-5)
    assert collective_seconds("all_reduce", 1_048_576, 8, 450e9, 5.7e-6) == pytest.approx(ring)
    assert collective_seconds("all_reduce", 1_048_576, 8, 450e9, 5.7e-6, "tree") == pytest.approx(38.8603e-6, rel=1e-5)
    step = build("llm", model="llama2_70b", phase="decode", batch=64, seq_len=1024, tp=8)
    model = RooflineCostModel(launch_overhead=False)
    layer = [op for op in step.ops if op.name.startswith("decode.layer0.") and op.op_class == "collective"]
    assert [op.name for op in layer] == ["decode.layer0.attn_allreduce", "decode.layer0.mlp_allreduce"]
    seconds = sum(model.op_time_s(op, _h100()) for op in layer)
    assert seconds == pytest.approx(167.755e-6, rel=1e-5)
    with pytest.raises(SpecError, match="tp"):
        build("llm", model="llama2_70b", tp=3)


def test_a_device_without_links_cannot_run_a_collective() -> None:
    step = build("llm", model="llama2_7b", phase="decode", tp=2)
    bare = Device("g", "gpu", {"fp16": 100.0}, 1000.0, 16.0, 0.0, 100.0)
    assert RooflineCostModel().op_time_s(_op(step, "decode.layer0.attn_allreduce"), bare) is None


def test_pipeline_bubble() -> None:
    """4 stages, 4 micro-batches: (4 + 3) / 4 of one stage's time; the bubble is 3 / 7 of it."""
    assert pipeline_seconds(1.0, 4, 4) == pytest.approx(7 / 4)
    assert 1 - 1.0 / pipeline_seconds(1.0, 4, 4) * (4 / 4) == pytest.approx(3 / 7)
    stage = build("llm", model="llama2_70b", phase="prefill", pp=4, stage=1)
    assert sum(".layer" in op.name and op.name.endswith(".qkv") for op in stage.ops) == 20
    assert _op(stage, "prefill.send").op_class == "collective"


# ----------------------------------------------------------------------------- roofline of a decode step


def test_decode_gemm_is_memory_bound_at_batch_1_and_compute_bound_past_the_crossover() -> None:
    """Llama-2-70B's gate_up GEMM (k = 8192, n = 2 x 28672 = 57344) on the H100 at fp16, m = batch rows.
    compute = 2 m n k / (989.4e12 x 0.75), memory = 2 (n k + m (k + n)) / (3350e9 x 0.85). Equal at
    m* = 1 / (Be / Pe - 1/n - 1/k) with Be / Pe = 2847.5e9 / 742.05e12 = 3.83734e-3 and 1/n + 1/k =
    1.39509e-4: m* = 270.4. Below it the step is memory-bound (reading 0.94 GB of weights), above it
    compute-bound."""
    model = RooflineCostModel()
    for batch, bound in ((1, "memory"), (270, "memory"), (271, "compute"), (1024, "compute")):
        step = build("llm", model="llama2_70b", phase="decode", batch=batch, seq_len=128)
        compute, memory, _ = model.op_time_parts(_op(step, "decode.layer0.gate_up"), _h100())
        assert ("compute" if compute > memory else "memory") == bound, batch
    # the whole step at batch 1 is memory-bound op by op
    step = build("llm", model="llama2_70b", phase="decode", batch=1, seq_len=4096)
    parts = [model.op_time_parts(op, _h100()) for op in step.ops]
    assert all(p[1] >= p[0] for p in parts)


# ----------------------------------------------------------------------------- phases


def test_generate_is_prefill_plus_the_explicit_sum_of_decode_steps() -> None:
    """Decode attention is linear in the KV length and nothing else in a step depends on it, so the
    ``output_len - 1`` steps at lengths seq + 1 ... seq + O - 1 sum to O - 1 steps at seq + O / 2."""
    seq, out = 100, 9
    generate = build("llm", model="llama2_7b", phase="generate", batch=4, seq_len=seq, output_len=out)
    prefill = build("llm", model="llama2_7b", phase="prefill", batch=4, seq_len=seq)
    steps = [build("llm", model="llama2_7b", phase="decode", batch=4, seq_len=seq + t) for t in range(1, out)]
    for op in generate.ops:
        if op.name.startswith("prefill."):
            assert op == _op(prefill, op.name)
            continue
        explicit = [_op(s, op.name) for s in steps]
        assert op.flops == pytest.approx(sum(o.flops for o in explicit), rel=1e-12)
        assert op.bytes_moved == pytest.approx(sum(o.bytes_moved for o in explicit), rel=1e-12)
    model, device = RooflineCostModel(), _h100()
    decode_time = sum(model.op_time_s(op, device) for op in generate.ops if op.name.startswith("decode."))
    explicit_time = sum(model.op_time_s(op, device) for s in steps for op in s.ops)
    assert decode_time == pytest.approx(explicit_time, rel=1e-9)  # batch 4: every op memory-bound


def test_prefill_attention_is_flash_style() -> None:
    """Prefill of one 2,048-token prompt: QK^T and PV over the causal half, 2048 x 2049 / 2 pairs x 32
    heads x (4 x 128 + 5) FLOPs; Q, K, V read and O written once (4 x 2048 x 4096 x 2 bytes) and the
    new K and V written to the cache (2 x 2048 x 4096 x 2): no 32 x 2048 x 2048 score matrix."""
    w = build("llm", model="llama2_7b", phase="prefill", seq_len=2048)
    att = _op(w, "prefill.layer0.attention")
    assert att.flops == pytest.approx(2048 * 2049 / 2 * 32 * (4 * 128 + 5))
    assert att.bytes_moved == 4 * 2048 * 4096 * 2 + 2 * 2048 * 4096 * 2


def test_tensor_parallel_shards_and_moe_decode_reads_touched_experts() -> None:
    one = build("llm", model="llama2_70b", phase="prefill", seq_len=512)
    eight = build("llm", model="llama2_70b", phase="prefill", seq_len=512, tp=8)
    assert _op(eight, "prefill.layer3.gate_up").flops * 8 == pytest.approx(_op(one, "prefill.layer3.gate_up").flops)
    # Mixtral at batch 1: the token reads 2 of its 8 experts' weights (k x n = 4096 x 28672 each, fp16)
    step = build("llm", model="mixtral_8x7b", phase="decode", batch=1, seq_len=128)
    gate_up = _op(step, "decode.layer0.gate_up")
    assert gate_up.bytes_moved == pytest.approx(2 * 4096 * 28672 * 2 + (2 * 4096 + 2 * 28672) * 2)
    assert gate_up.resident_bytes == 8 * 4096 * 28672 * 2


@pytest.mark.parametrize(("model", "tp", "ep"), [("llama2_7b", 1, 1), ("llama2_70b", 8, 1), ("gptj_6b", 2, 1),
                                                ("falcon_180b", 8, 1), ("mixtral_8x7b", 2, 4), ("mixtral_8x7b", 1, 1)])
def test_ops_per_layer_counts_the_layer(model: str, tp: int, ep: int) -> None:
    workload = build("llm", model=model, phase="decode", tp=tp, ep=ep)
    assert sum(op.name.startswith("decode.layer0.") for op in workload.ops) == ops_per_layer(load_model(model), tp, ep)
