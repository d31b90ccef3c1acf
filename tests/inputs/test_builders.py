"""Workload builders against independently published model sizes and hand calculations."""

from __future__ import annotations

import pytest

from dse.errors import SpecError
from dse.inputs.builders import BUILDERS, SOURCE, build
from dse.model.workload import validate_workload

LAYER_CLASSES = ("conv", "dwconv", "gemm")


def macs(workload) -> float:
    """Multiply-accumulates of the conv / fc layers (what model cards report as 'FLOPs')."""
    return sum(op.flops for op in workload.ops if op.op_class in LAYER_CLASSES) / 2


def params(workload, bytes_per_element: int = 2) -> float:
    """Parameters: resident bytes over the element width (fp16 by default)."""
    return sum(op.resident_bytes for op in workload.ops) / bytes_per_element


# ----------------------------------------------------------------------------- every builder


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_default_workloads_validate(name: str) -> None:
    workload = validate_workload(build(name))
    assert workload.n_ops >= 1
    for op in workload.ops:
        assert op.flops >= 0 and op.bytes_moved > 0 and op.output_bytes > 0
        assert op.bytes_moved >= op.output_bytes


def test_default_op_counts() -> None:
    counts = {name: build(name).n_ops for name in BUILDERS}
    # Sparse builders, counted from the algorithms: GraphSAGE-mean 4 ops a layer (aggregate, two linears,
    # sum) x 2 layers; GIN 4 a layer (aggregate, self term, 2-layer MLP) x 2; CG 6 an iteration (SpMV,
    # two dots, two axpys, the direction update) x 1; PageRank 3 an iteration (SpMV, damping, change) x 2;
    # spmm: the one sparse product. llm (Llama-2 7B prefill, one GPU): the embedding, 32 layers of 8 ops
    # (two norms, qkv, attention, o_proj, gate_up, the gated product, down), the final norm, the LM head.
    assert counts == {"resnet50": 72, "mobilenetv2": 64, "bert_base": 85, "bert_large": 1 + 7 * 24, "gcn": 5, "gemm": 1,
                      "random_pipeline": 16, "graphsage": 8, "gin": 8, "cg": 6, "pagerank": 6, "spmm": 1,
                      "llm": 1 + 32 * 8 + 2}
    assert build("resnet50", granularity="block").n_ops == 20
    assert build("mobilenetv2", granularity="block").n_ops == 21


# ----------------------------------------------------------------------------- ResNet-50


def test_resnet50_matches_published_size() -> None:
    w = build("resnet50")
    # He et al. 2016 (Table 1) and the torchvision model card (ResNet50_Weights.IMAGENET1K_V1):
    # 4.09 GFLOPS counted as multiply-adds (~8.2 GFLOPs) and 25,557,032 = 25.6 M parameters
    assert macs(w) == pytest.approx(4.1e9, rel=0.05)
    assert sum(op.flops for op in w.ops) == pytest.approx(8.2e9, rel=0.05)
    assert params(w) == pytest.approx(25.6e6, rel=0.03)
    assert params(w) == 25_557_032  # torchvision's exact count (conv + batch-norm affine + fc)
    assert sum(op.op_class == "conv" for op in w.ops) == 53  # 49 on the main path + 4 projections
    assert sum(op.op_class == "elementwise" for op in w.ops) == 16  # one residual add per block


def test_resnet50_first_layer_by_hand() -> None:
    conv1 = build("resnet50", batch=2, precision="fp32").ops[0]
    # 7x7x3 -> 64 at stride 2: 112 x 112 x 64 outputs x 147 MACs, twice per sample
    assert conv1.flops == 2 * 2 * 112 * 112 * 64 * 7 * 7 * 3
    weights = 7 * 7 * 3 * 64 + 2 * 64
    assert conv1.resident_bytes == 4 * weights
    assert conv1.output_bytes == 4 * 2 * 112 * 112 * 64
    assert conv1.bytes_moved == 4 * (weights + 2 * (224 * 224 * 3 + 112 * 112 * 64))


def test_resnet50_layer_graph_is_a_dag_with_residual_adds() -> None:
    w = build("resnet50")
    names = [op.name for op in w.ops]
    add = names.index("conv2_1.add")
    producers = sorted(names[s] for s, d in w.edges if d == add)
    assert producers == ["conv2_1.c", "conv2_1.proj"]
    add2 = names.index("conv2_2.add")
    assert sorted(names[s] for s, d in w.edges if d == add2) == ["conv2_1.add", "conv2_2.c"]


# ----------------------------------------------------------------------------- MobileNetV2


def test_mobilenetv2_matches_published_size() -> None:
    w = build("mobilenetv2")
    # Sandler et al. 2018, Table 4: MobileNetV2 (1.0, 224): 300 M multiply-adds, 3.4 M parameters;
    # the torchvision model card counts 3,504,872 parameters (batch-norm affine included), 0.30 GFLOPS
    assert macs(w) == pytest.approx(300e6, rel=0.05)
    assert params(w) == pytest.approx(3.4e6, rel=0.05)
    assert params(w) == 3_504_872
    assert sum(op.op_class == "dwconv" for op in w.ops) == 17


@pytest.mark.parametrize("name", ["resnet50", "mobilenetv2"])
def test_block_granularity_keeps_the_work(name: str) -> None:
    layers, blocks = build(name), build(name, granularity="block")
    assert blocks.n_ops <= 22 < layers.n_ops
    assert sum(op.flops for op in blocks.ops) == pytest.approx(sum(op.flops for op in layers.ops))
    assert sum(op.bytes_moved for op in blocks.ops) == pytest.approx(sum(op.bytes_moved for op in layers.ops))
    assert params(blocks) == params(layers)
    assert blocks.edges == tuple((i, i + 1) for i in range(blocks.n_ops - 1))  # a chain
    assert blocks.ops[-1].output_bytes == layers.ops[-1].output_bytes


def test_batch_scales_activations_not_weights() -> None:
    one, four = build("resnet50"), build("resnet50", batch=4)
    assert sum(op.flops for op in four.ops) == pytest.approx(4 * sum(op.flops for op in one.ops))
    assert params(four) == params(one)


# ----------------------------------------------------------------------------- BERT-base


def test_bert_base_matches_published_size() -> None:
    w = build("bert_base")
    h, ffn = 768, 3072
    encoder = sum(op.resident_bytes for op in w.ops if op.name.startswith("layer")) / 2
    # per encoder layer: Q, K, V, output projections (4 H^2 + 4 H), FFN (2 x 4 H^2 + 5 H), two
    # LayerNorms (4 H): 12 x 7,087,872 = 85.05 M, the "~85 M" usually quoted for BERT-base's encoder
    assert encoder == 12 * (4 * h * h + 4 * h + 2 * h * ffn + ffn + h + 4 * h)
    assert encoder == pytest.approx(85e6, rel=0.01)
    # Devlin et al. 2019 give 110 M (rounded) for the whole model; Hugging Face's BertModel counts
    # 109,482,240, which includes the 768 x 768 pooler (590,592) that this encoder graph leaves out
    assert params(w) == 109_482_240 - 590_592
    assert params(w) + 590_592 == pytest.approx(110e6, rel=0.01)


def test_bert_large_matches_published_size_and_flops_by_hand() -> None:
    """BERT-large (Devlin et al. 2019: 24 layers, H = 1024, 16 heads, FFN 4H): Hugging Face's BertModel for
    bert-large-uncased counts 335,141,888 parameters, of which the 1024 x 1024 pooler (1,049,600) is not in
    this encoder graph; Devlin et al. round to 340 M. At 384 tokens the projections and FFN are
    24 layers x 12 H^2 multiply-adds per token: 2 x 24 x 12 x 1024^2 x 384 = 231,928,233,984 FLOP."""
    w = build("bert_large", seq_len=384)
    assert params(w) == 335_141_888 - 1_049_600
    assert sum(op.flops for op in w.ops if op.op_class == "gemm") == 231_928_233_984
    ops = {op.name: op for op in w.ops}
    assert ops["layer23.attention"].flops == 4 * 384 * 384 * 1024 + 5 * 16 * 384 * 384


def test_bert_base_flops_by_hand() -> None:
    s, h, heads = 128, 768, 12
    w = build("bert_base", seq_len=s)
    # per layer and token, 12 H^2 multiply-adds in the projections and the FFN
    assert sum(op.flops for op in w.ops if op.op_class == "gemm") == 12 * 2 * 12 * h * h * s
    ops = {op.name: op for op in w.ops}
    # QK^T and attention x V (2 s^2 H multiply-adds) plus ~5 FLOPs per softmax score
    assert ops["layer0.attention"].flops == 4 * s * s * h + 5 * heads * s * s
    assert ops["layer0.attention"].output_bytes == 2 * s * h
    assert {op.op_class for op in w.ops} == {"embedding", "gemm", "attention", "norm"}
    names = [op.name for op in w.ops]
    norm = names.index("layer0.add_norm1")
    assert sorted(names[a] for a, b in w.edges if b == norm) == ["embeddings", "layer0.out_proj"]


def test_bert_layers_and_sequence() -> None:
    assert build("bert_base", layers=2).n_ops == 1 + 7 * 2
    short, long = build("bert_base", seq_len=64), build("bert_base", seq_len=128)
    gemm = sum(op.flops for op in short.ops if op.op_class == "gemm")
    assert sum(op.flops for op in long.ops if op.op_class == "gemm") == 2 * gemm
    with pytest.raises(SpecError) as info:
        build("bert_base", seq_len=1024)
    assert info.value.field == "seq_len"


# ----------------------------------------------------------------------------- GCN


def test_gcn_cora_by_hand() -> None:
    w = build("gcn", dataset="cora", layers=2, hidden=16)
    ops = {op.name: op for op in w.ops}
    n, nnz = 2708, 10556 + 2708  # PyG's 10,556 directed edges + one self-loop per node
    # layer 0 narrows 1433 -> 16: combine first, then aggregate on width 16
    assert [op.name for op in w.ops] == ["l0.combine", "l0.aggregate", "l1.combine", "l1.aggregate",
                                         "log_softmax"]
    assert ops["l0.combine"].flops == 2 * n * 1433 * 16
    assert ops["l0.aggregate"].flops == 2 * (10556 + 2708) * 16
    assert ops["l1.combine"].flops == 2 * n * 16 * 7
    assert ops["l1.aggregate"].flops == 2 * (10556 + 2708) * 7
    csr = nnz * (4 + 4) + (n + 1) * 4  # fp32 values, int32 column indices and row pointers
    assert ops["l0.aggregate"].resident_bytes == csr
    assert ops["l0.aggregate"].bytes_moved == csr + (nnz + n) * 16 * 4  # gathered rows + output
    assert ops["l0.aggregate"].features["density"] == pytest.approx(nnz / n**2)
    assert ops["l0.aggregate"].features["degree_skew"] == pytest.approx(1.3)
    assert ops["l0.combine"].resident_bytes == 1433 * 16 * 4
    assert w.edges == tuple((i, i + 1) for i in range(4))


def test_gcn_order_rules() -> None:
    widening = build("gcn", dataset="pubmed", hidden=1024)  # 500 -> 1024 widens: aggregate first
    assert [op.name for op in widening.ops][:2] == ["l0.aggregate", "l0.combine"]
    assert widening.ops[0].flops == 2 * (88648 + 19717) * 500
    pyg = build("gcn", dataset="pubmed", hidden=1024, order="combine_first")  # PyG's GCNConv
    assert [op.name for op in pyg.ops][:2] == ["l0.combine", "l0.aggregate"]
    assert pyg.ops[1].flops == 2 * (88648 + 19717) * 1024


def test_gcn_overrides_and_custom_graphs() -> None:
    w = build("gcn", dataset="citeseer", degree_skew=0.5, layers=3)
    assert w.n_ops == 7 and all(op.features["degree_skew"] == 0.5 for op in w.ops if op.op_class == "spmm")
    custom = build("gcn", dataset="custom", nodes=100, edges=400, features=32, classes=4, hidden=8)
    spmm = next(op for op in custom.ops if op.op_class == "spmm")
    assert spmm.features == {"density": 500 / 100**2, "degree_skew": 0.0}
    with pytest.raises(SpecError) as info:
        build("gcn", dataset="custom", nodes=100, features=32, classes=4)
    assert info.value.field == "edges"


# ----------------------------------------------------------------------------- GEMM


def test_gemm_by_hand() -> None:
    (op,) = build("gemm", m=64, n=32, k=16, precision="fp16").ops
    assert op.flops == 2 * 64 * 32 * 16
    assert op.bytes_moved == (64 * 16 + 16 * 32 + 64 * 32) * 2
    assert op.resident_bytes == 16 * 32 * 2 and op.output_bytes == 64 * 32 * 2
    tiled = build("gemm", m=10, n=8, k=4, tiles=3)
    assert sum(o.flops for o in tiled.ops if o.op_class == "gemm") == 2 * 10 * 8 * 4
    assert tiled.edges == ((0, 3), (1, 3), (2, 3))
    assert tiled.ops[-1].op_class == "memcpy" and tiled.ops[-1].output_bytes == 10 * 8 * 2


# ----------------------------------------------------------------------------- random DAGs


def test_random_pipeline_is_deterministic_and_layered() -> None:
    a, b = build("random_pipeline", n_ops=40, seed=7), build("random_pipeline", n_ops=40, seed=7)
    assert a == b
    assert a != build("random_pipeline", n_ops=40, seed=8)
    validate_workload(a)
    indegree = [sum(1 for _, d in a.edges if d == i) for i in range(a.n_ops)]
    assert indegree[0] == 0 and all(k <= 2 for k in indegree)
    assert all(s < d for s, d in a.edges)
    assert {op.op_class for op in a.ops} <= {"gemm", "conv", "spmm", "elementwise"}
    for op in a.ops:
        assert op.resident_bytes + op.output_bytes <= op.bytes_moved
        if op.op_class == "spmm":
            assert 1e-5 <= op.features["density"] <= 1e-2 and 0 <= op.features["degree_skew"] <= 3


def test_random_pipeline_many_small_instances() -> None:
    for seed in range(20):
        w = validate_workload(build("random_pipeline", n_ops=8, seed=seed))
        assert w.n_ops == 8
        assert all(indeg >= 1 for indeg in [sum(1 for _, d in w.edges if d == i) for i in range(8)][3:])


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("nope", {}, "builder"),
        ("gcn", {"datset": "cora"}, "datset"),
        ("gcn", {"dataset": "nope"}, "dataset"),
        ("gcn", {"layers": 0}, "layers"),
        ("gcn", {"nodes": "many"}, "nodes"),
        ("gcn", {"edges": -1}, "edges"),
        ("gcn", {"order": "sideways"}, "order"),
        ("gemm", {"m": -4}, "m"),
        ("gemm", {"m": "big"}, "m"),
        ("gemm", {"m": 2.5}, "m"),
        ("gemm", {"k": True}, "k"),
        ("gemm", {"m": 4, "tiles": 5}, "tiles"),
        ("gemm", {"precision": "fp4"}, "precision"),
        ("resnet50", {"batch": 0}, "batch"),
        ("resnet50", {"granularity": "stage"}, "granularity"),
        ("mobilenetv2", {"width": 2}, "width"),
        ("bert_base", {"layers": -2}, "layers"),
        ("random_pipeline", {"n_ops": 0}, "n_ops"),
        ("random_pipeline", {"seed": -1}, "seed"),
        ("random_pipeline", {"sparse_share": 2.0}, "sparse_share"),
    ],
)
def test_builder_errors_name_the_field(name: str, params: dict, field: str) -> None:
    with pytest.raises(SpecError) as info:
        build(name, **params)
    assert info.value.field == field
    assert info.value.source == SOURCE == "workload.builder"


def test_integral_floats_are_accepted_for_sizes() -> None:
    assert build("gemm", m=64.0, n=8, k=8) == build("gemm", m=64, n=8, k=8)


def test_bert_variable_sequence_lengths_are_the_expectation_over_lengths() -> None:
    """One layer, lengths of mean 64 and standard deviation 16 (at most 128), by hand: the QKV GEMM is
    linear in the length, 2 x E[s] x 768 x 2304 = 2 x 64 x 768 x 2304 = 226,492,416 FLOP; the attention
    is quadratic, 4 x E[s^2] x 768 + 5 x 12 x E[s^2] with E[s^2] = 64^2 + 16^2 = 4,352: 13,630,464 FLOP
    (padding to 128 would charge 4 x 16,384 x 768 + 60 x 16,384 = 51,314,688)."""
    varied = build("bert_base", seq_len=128, seq_len_mean=64, seq_len_std=16, layers=1)
    ops = {op.name: op for op in varied.ops}
    assert ops["layer0.qkv"].flops == 226_492_416
    assert ops["layer0.attention"].flops == 13_630_464
    padded = {op.name: op for op in build("bert_base", seq_len=128, layers=1).ops}
    assert padded["layer0.attention"].flops == 51_314_688
    assert build("bert_base", seq_len=128, seq_len_mean=128, layers=1).ops[1].flops == padded["layer0.qkv"].flops
    for bad in ({"seq_len_mean": 200}, {"seq_len_mean": 0}, {"seq_len_std": 4}):
        with pytest.raises(SpecError, match="seq_len_"):
            build("bert_base", seq_len=128, **bad)


# --------------------------------------------------------------------------- gather-scatter aggregation


def test_gather_scatter_aggregation_by_hand() -> None:
    """4 rows, 10 edges, width 3, fp32 (4 B), int64 edge index (8 B per edge; messages 10 x 3 x 4 = 120 B,
    output 4 x 3 x 4 = 48 B). Weighted sum (GCN): gather 80 + 2 x 120 = 320 B, 1 kernel; message
    2 x 120 + 10 x 4 = 280 B, 30 FLOP, 1 kernel; scatter 80 + 120 + 2 x 48 = 296 B, 2 kernels. Mean
    (SAGE), unweighted: the scatter adds ones 40 + index 80 + counts 3 x 16 + division 2 x 48 = 264 B:
    560 B in 7 kernels."""
    from dse.inputs.builders.message_passing import aggregate_ops

    gather, message, scatter = aggregate_ops("a", 4, 10, 3, "fp32", 0.0, "gather_scatter", weighted=True)
    assert (gather.op_class, gather.bytes_moved, gather.features["kernels"]) == ("embedding", 320.0, 1.0)
    assert (message.op_class, message.bytes_moved, message.flops) == ("elementwise", 280.0, 30.0)
    assert (scatter.bytes_moved, scatter.features["kernels"], scatter.output_bytes) == (296.0, 2.0, 48.0)
    ops = aggregate_ops("a", 4, 10, 3, "fp32", 0.0, "gather_scatter", reduce="mean")
    assert [o.name for o in ops] == ["a.gather", "a.scatter"]
    assert (ops[1].bytes_moved, ops[1].features["kernels"]) == (560.0, 7.0)
    fused = aggregate_ops("a", 4, 10, 3, "fp32", 0.0)
    assert [o.op_class for o in fused] == ["spmm"]


def test_gcn_as_pytorch_geometric_runs_it() -> None:
    """GCN, 2 layers, gather-scatter with gcn_norm per call: per layer gcn_norm (180 B per edge of
    nnz = 20 + 10 self-loops = 30: 5,400 B, 23 kernels), combine, gather, message, scatter and the bias
    (+ ReLU after the first layer), then the log-softmax: 2 x 6 + 1 = 13 ops in a chain."""
    w = build("gcn", dataset="custom", nodes=10, edges=20, features=4, classes=4, hidden=4, layers=2,
              order="combine_first", aggregation="gather_scatter", normalize="per_call")
    assert [o.name for o in w.ops] == [
        "l0.gcn_norm", "l0.combine", "l0.aggregate.gather", "l0.aggregate.message", "l0.aggregate.scatter",
        "l0.bias_act", "l1.gcn_norm", "l1.combine", "l1.aggregate.gather", "l1.aggregate.message",
        "l1.aggregate.scatter", "l1.bias_act", "log_softmax"]
    assert w.ops[0].bytes_moved == 5_400.0 and w.ops[0].features["kernels"] == 23.0
    assert [w.ops[5].features["kernels"], w.ops[11].features["kernels"]] == [2.0, 1.0]
    assert w.edges == tuple((i, i + 1) for i in range(12))
    validate_workload(w)
    for bad in (dict(aggregation="scatter"), dict(normalize="always")):
        with pytest.raises(SpecError, match="aggregation|normalize"):
            build("gcn", dataset="custom", nodes=10, edges=20, features=4, classes=4, **bad)


def test_graphsage_and_gin_gather_scatter_keep_their_dependencies() -> None:
    """GraphSAGE: gather -> scatter -> lin_neigh -> sum <- lin_self, the ReLU between layers, the next layer's
    gather and lin_self fed by it; GIN a chain with the MLP's ReLU."""
    sage = build("graphsage", dataset="custom", rows=10, nnz=20, width=4, classes=4, hidden=4, layers=2,
                 aggregation="gather_scatter")
    names = [o.name for o in sage.ops]
    assert names[:6] == ["l0.aggregate.gather", "l0.aggregate.scatter", "l0.lin_neigh", "l0.lin_self", "l0.sum",
                         "l0.act"]
    assert {(0, 1), (1, 2), (2, 4), (3, 4), (4, 5), (5, 6), (5, 9)} <= set(sage.edges)
    validate_workload(sage)
    gin = build("gin", dataset="custom", rows=10, nnz=20, width=4, classes=4, hidden=4, layers=1,
                aggregation="gather_scatter")
    assert [o.name for o in gin.ops] == ["l0.aggregate.gather", "l0.aggregate.scatter", "l0.self", "l0.mlp1",
                                         "l0.mlp_act", "l0.mlp2"]
    assert gin.ops[2].features["kernels"] == 2.0
