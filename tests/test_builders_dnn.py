"""DNN builders against independently published model sizes."""

from __future__ import annotations

import pytest

from dse.builders import build
from dse.workload import validate_workload

LAYER_CLASSES = ("conv", "dwconv", "gemm")


def macs(workload) -> float:
    return sum(op.flops for op in workload.ops if op.op_class in LAYER_CLASSES) / 2


def params(workload, bytes_per_element: int = 2) -> float:
    return sum(op.resident_bytes for op in workload.ops) / bytes_per_element


def test_resnet50_matches_published_size() -> None:
    w = validate_workload(build("resnet50"))
    # He et al. 2016, Table 1: 3.8e9 FLOPs (multiply-adds) counting convs; torchvision's model card:
    # 4.09 GFLOPS (MACs) and 25,557,032 parameters (batch-norm affine parameters included)
    assert macs(w) == pytest.approx(4.09e9, rel=0.01)
    assert params(w) == 25_557_032
    assert sum(op.op_class == "conv" for op in w.ops) == 53  # 49 in the main path + 4 projections
    assert sum(op.op_class == "elementwise" for op in w.ops) == 16  # one residual add per block


def test_mobilenetv2_matches_published_size() -> None:
    w = validate_workload(build("mobilenetv2"))
    # Sandler et al. 2018, Table 4: 300 M multiply-adds, 3.4 M parameters (classifier included);
    # torchvision's model card: 3,504,872 parameters, 0.30 GFLOPS
    assert macs(w) == pytest.approx(300e6, rel=0.02)
    assert params(w) == 3_504_872


def test_bert_base_matches_published_size() -> None:
    w = validate_workload(build("bert_base"))
    # Devlin et al. 2019: 110 M parameters; Hugging Face's BertModel counts 109,482,240 including
    # the 768 x 768 pooler (590,592) that this encoder-only graph leaves out
    assert params(w) == 109_482_240 - 590_592
    # per layer and token, 12 H^2 multiply-adds in the projections and FFN (hand calculation)
    s, h = 128, 768
    projections = sum(op.flops for op in w.ops if op.op_class == "gemm") / 2
    assert projections == 12 * (12 * h * h * s)


@pytest.mark.parametrize("name", ["resnet50", "mobilenetv2"])
def test_block_granularity_keeps_the_work(name: str) -> None:
    layers, blocks = build(name), build(name, granularity="block")
    assert len(blocks.ops) <= 22 < len(layers.ops)
    total = sum(op.flops for op in layers.ops)
    assert sum(op.flops for op in blocks.ops) == pytest.approx(total)
    assert params(blocks) == params(layers)
