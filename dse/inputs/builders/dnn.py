"""DNN inference graphs computed from their published architecture definitions.

* ResNet-50: He, Zhang, Ren, Sun, "Deep residual learning for image recognition",
  CVPR 2016, Table 1 (bottleneck blocks [3, 4, 6, 3]); the stride-2 of each
  stage's first block sits on its 3x3 conv, as in torchvision's ResNet-50 ("v1.5");
* MobileNetV2 1.0: Sandler, Howard, Zhu, Zhmoginov, Chen, "MobileNetV2: inverted
  residuals and linear bottlenecks", CVPR 2018, Table 2;
* BERT-base: Devlin, Chang, Lee, Toutanova, "BERT: pre-training of deep
  bidirectional transformers for language understanding", NAACL 2019
  (L = 12, H = 768, A = 12, feed-forward 4H, WordPiece vocabulary 30,522,
  512 positions, 2 segment types).

Accounting, per op and per ``batch`` samples (weights are read once per batch):

* ``flops`` = 2 x multiply-accumulates for conv / dwconv / gemm / attention
  matmuls; elementwise ops, pools and norms count their arithmetic per element
  (stated where they are built); activations (ReLU, ReLU6, GELU) and
  inference batch-norm are folded into the preceding layer and not counted;
* ``bytes_moved`` = weights + input activations + output activations at the
  precision's width (embedding lookups read only the rows they gather);
* ``resident_bytes`` = weights (a conv's batch-norm scale and shift are counted
  with it, which reproduces the models' published parameter counts);
* ``output_bytes`` = the output activation.

Graph shape: with ``granularity="layer"`` every conv / fc layer is an op and a
residual addition is an ``elementwise`` op with two inputs (the block's last
conv and the shortcut), so the workload is a DAG. With ``granularity="block"``
each residual block (ResNet bottleneck, MobileNetV2 inverted residual) is one
``conv`` op whose FLOPs, bytes and weights are the sums over its layers
(layer-by-layer execution inside the block, intermediates through device
memory) and whose output is the block's output: a chain of about 20 ops.
BERT's residual additions are folded into its add & norm ops (two inputs each).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dse.errors import SpecError
from dse.inputs.builders.gemm import SOURCE, bytes_per_element, require_positive, require_size
from dse.model.workload import Op, Workload

GRANULARITIES = ("layer", "block")


@dataclass
class _Graph:
    """Accumulates ops and edges; :meth:`add` returns the new op's index."""

    precision: str
    batch: int
    ops: list[Op] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)

    def add(self, name: str, op_class: str, *, flops: float, weights: float, in_elems: float,
            out_elems: float, inputs: list[int], bytes_moved: float | None = None) -> int:
        """Add an op; ``flops``, ``in_elems`` and ``out_elems`` are per sample, ``weights`` per batch."""
        bpe, b = bytes_per_element(self.precision), self.batch
        moved = (weights + b * (in_elems + out_elems)) * bpe if bytes_moved is None else bytes_moved
        self.ops.append(Op(
            name=name, op_class=op_class, flops=float(flops * b), bytes_moved=float(moved),
            resident_bytes=float(weights * bpe), output_bytes=float(b * out_elems * bpe),
            precision=self.precision,
        ))
        index = len(self.ops) - 1
        self.edges += [(i, index) for i in inputs]
        return index

    def merge(self, name: str, first: int, op_class: str) -> int:
        """Collapse ``ops[first:]`` into one op, keeping the edges into the block; returns its index."""
        block = self.ops[first:]
        merged = Op(name=name, op_class=op_class, flops=sum(o.flops for o in block),
                    bytes_moved=sum(o.bytes_moved for o in block),
                    resident_bytes=sum(o.resident_bytes for o in block),
                    output_bytes=block[-1].output_bytes, precision=self.precision)
        inside = set(range(first, len(self.ops)))
        outer = sorted({s for s, d in self.edges if d in inside and s not in inside})
        self.edges = [(s, d) for s, d in self.edges if d not in inside] + [(s, first) for s in outer]
        self.ops = self.ops[:first] + [merged]
        return first

    def workload(self, name: str, description: str) -> Workload:
        return Workload(name, tuple(self.ops), tuple(sorted(set(self.edges))), description=description)


def _check(batch: int, precision: str, granularity: str | None = None) -> None:
    require_positive(batch=batch)
    bytes_per_element(precision)
    if granularity is not None and granularity not in GRANULARITIES:
        raise SpecError(SOURCE, "granularity", granularity, f"must be one of {', '.join(GRANULARITIES)}")


def _conv(g: _Graph, name: str, cin: int, cout: int, k: int, stride: int, hw: int, inputs: list[int],
          depthwise: bool = False) -> tuple[int, int]:
    """A k x k conv ('same' padding) with batch-norm on a square ``hw`` input; returns (op index, output hw)."""
    out_hw = -(-hw // stride)
    if depthwise:  # one k x k filter per channel (cout == cin)
        macs, weights, cls = out_hw * out_hw * cin * k * k, cin * k * k + 2 * cin, "dwconv"
    else:
        macs, weights, cls = out_hw * out_hw * cout * cin * k * k, cin * cout * k * k + 2 * cout, "conv"
    index = g.add(name, cls, flops=2 * macs, weights=weights, in_elems=hw * hw * cin,
                  out_elems=out_hw * out_hw * cout, inputs=inputs)
    return index, out_hw


def _add(g: _Graph, name: str, elems: int, inputs: list[int], relu: bool) -> int:
    """Residual addition of two tensors of ``elems`` elements (1 FLOP per element, +1 for a ReLU)."""
    return g.add(name, "elementwise", flops=(2 if relu else 1) * elems, weights=0, in_elems=2 * elems,
                 out_elems=elems, inputs=inputs)


def _classifier(g: _Graph, x: int, hw: int, channels: int, classes: int = 1000) -> None:
    """Global average pool (1 FLOP per input element) and the fully connected classifier."""
    x = g.add("avgpool", "pool", flops=hw * hw * channels, weights=0, in_elems=hw * hw * channels,
              out_elems=channels, inputs=[x])
    g.add("fc", "gemm", flops=2 * channels * classes, weights=channels * classes + classes,
          in_elems=channels, out_elems=classes, inputs=[x])


#: ResNet-50 stages (He et al. 2016, Table 1): (bottleneck blocks, bottleneck width); output is 4x width.
RESNET50_STAGES = ((3, 64), (4, 128), (6, 256), (3, 512))


def resnet50(batch: int = 1, precision: str = "fp16", granularity: str = "layer") -> Workload:
    """ResNet-50 at 224 x 224 (He et al. 2016).

    ``layer``: 72 ops (53 convs, 16 residual adds, max pool, average pool, fc);
    ``block``: 20 ops (conv1, max pool, 16 bottleneck blocks, average pool, fc).
    Raises :class:`SpecError` for a non-positive batch, an unknown precision or granularity.
    """
    _check(batch, precision, granularity)
    g = _Graph(precision, batch)
    x, hw = _conv(g, "conv1", 3, 64, 7, 2, 224, [])
    pooled = -(-hw // 2)  # 3 x 3 max pool, stride 2: 9 comparisons per output element
    x = g.add("maxpool", "pool", flops=pooled * pooled * 64 * 9, weights=0, in_elems=hw * hw * 64,
              out_elems=pooled * pooled * 64, inputs=[x])
    hw, cin = pooled, 64
    for stage, (blocks, width) in enumerate(RESNET50_STAGES, start=2):
        for b in range(blocks):
            first, pre = len(g.ops), f"conv{stage}_{b + 1}"
            stride = 2 if b == 0 and stage > 2 else 1
            a, _ = _conv(g, f"{pre}.a", cin, width, 1, 1, hw, [x])
            m, out_hw = _conv(g, f"{pre}.b", width, width, 3, stride, hw, [a])
            c, _ = _conv(g, f"{pre}.c", width, 4 * width, 1, 1, out_hw, [m])
            shortcut = x
            if b == 0:  # projection shortcut where the shape changes
                shortcut, _ = _conv(g, f"{pre}.proj", cin, 4 * width, 1, stride, hw, [x])
            x = _add(g, f"{pre}.add", out_hw * out_hw * 4 * width, [c, shortcut], relu=True)
            if granularity == "block":
                x = g.merge(pre, first, "conv")
            hw, cin = out_hw, 4 * width
    _classifier(g, x, hw, cin)
    return g.workload(f"resnet50-{granularity}", f"ResNet-50 (He et al. 2016), 224x224, batch {batch}, {precision}")


#: MobileNetV2 bottleneck sequences (Sandler et al. 2018, Table 2): (expansion t, channels c, repeats n, stride s).
MOBILENETV2_BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                      (6, 160, 3, 2), (6, 320, 1, 1))


def mobilenetv2(batch: int = 1, precision: str = "fp16", granularity: str = "layer") -> Workload:
    """MobileNetV2 1.0 at 224 x 224 (Sandler et al. 2018).

    ``layer``: 64 ops (stem, 17 inverted-residual blocks of expand / depthwise /
    project convs, 10 residual adds, 1x1 conv to 1280, average pool, fc);
    ``block``: 21 ops (stem, 17 blocks, last conv, average pool, fc).
    Raises :class:`SpecError` for a non-positive batch, an unknown precision or granularity.
    """
    _check(batch, precision, granularity)
    g = _Graph(precision, batch)
    x, hw = _conv(g, "stem", 3, 32, 3, 2, 224, [])
    cin = 32
    for i, (t, c, n, s) in enumerate(MOBILENETV2_BLOCKS):
        for r in range(n):
            first, pre = len(g.ops), f"block{i}_{r}"
            stride = s if r == 0 else 1
            h = x
            if t != 1:
                h, _ = _conv(g, f"{pre}.expand", cin, cin * t, 1, 1, hw, [h])
            h, out_hw = _conv(g, f"{pre}.dw", cin * t, cin * t, 3, stride, hw, [h], depthwise=True)
            h, _ = _conv(g, f"{pre}.project", cin * t, c, 1, 1, out_hw, [h])  # linear bottleneck
            if stride == 1 and cin == c:
                h = _add(g, f"{pre}.add", out_hw * out_hw * c, [h, x], relu=False)
            if granularity == "block":
                h = g.merge(pre, first, "conv")
            x, hw, cin = h, out_hw, c
    x, _ = _conv(g, "conv_last", cin, 1280, 1, 1, hw, [x])
    _classifier(g, x, hw, 1280)
    return g.workload(f"mobilenetv2-{granularity}",
                      f"MobileNetV2 1.0 (Sandler et al. 2018), 224x224, batch {batch}, {precision}")


#: BERT-base hyper-parameters (Devlin et al. 2019).
BERT_BASE = dict(hidden=768, heads=12, ffn=3072, vocab=30522, positions=512, segments=2)
#: BERT-large hyper-parameters (Devlin et al. 2019: L = 24, H = 1024, A = 16; the feed-forward size 4H).
BERT_LARGE = dict(hidden=1024, heads=16, ffn=4096, vocab=30522, positions=512, segments=2)


def bert_base(seq_len: int = 128, batch: int = 1, precision: str = "fp16", layers: int = 12,
              seq_len_mean: float | None = None, seq_len_std: float = 0.0) -> Workload:
    """BERT-base encoder (Devlin et al. 2019) on ``batch`` sequences of ``seq_len`` tokens.

    Ops: ``embeddings`` (token + position + segment lookups and LayerNorm), then
    per layer ``qkv`` (gemm), ``attention`` (QK^T, softmax, attention x V),
    ``out_proj`` (gemm), ``add_norm1``, ``ffn1`` (gemm, GELU folded), ``ffn2``
    (gemm), ``add_norm2``: ``1 + 7 * layers`` ops (85 for 12 layers). The
    pooler and task heads are not included.

    Variable sequence lengths: by default every sequence is padded to ``seq_len``. With
    ``seq_len_mean`` (and ``seq_len_std``, the standard deviation of the dataset's token lengths) the
    runtime is taken to run each sequence unpadded, and every figure is the expectation over the
    lengths: work linear in the length uses the mean ``E[s]``, the attention's score matrix (QK^T,
    softmax, attention x V) ``E[s^2] = mean^2 + std^2``; ``seq_len`` stays the longest sequence.

    Raises :class:`SpecError` for a non-positive size, ``seq_len`` > 512, a ``seq_len_mean`` outside
    (0, ``seq_len``], a negative ``seq_len_std``, more than :data:`~dse.model.workload.MAX_OPS` ops or an
    unknown precision.
    """
    return _bert("base", BERT_BASE, seq_len, batch, precision, layers, seq_len_mean, seq_len_std)


def bert_large(seq_len: int = 384, batch: int = 1, precision: str = "fp16", layers: int = 24,
               seq_len_mean: float | None = None, seq_len_std: float = 0.0) -> Workload:
    """BERT-large encoder (Devlin et al. 2019: 24 layers, hidden 1024, 16 heads, feed-forward 4096), the
    model of MLPerf Inference's BERT benchmark (SQuAD v1.1, at most 384 tokens). The ops, the
    variable-length rule (``seq_len_mean``, ``seq_len_std``) and the errors are :func:`bert_base`'s:
    ``1 + 7 * layers`` ops (169 for 24)."""
    return _bert("large", BERT_LARGE, seq_len, batch, precision, layers, seq_len_mean, seq_len_std)


def _bert(size: str, p: dict[str, int], seq_len: int, batch: int, precision: str, layers: int,
          seq_len_mean: float | None, seq_len_std: float) -> Workload:
    """The BERT encoder of hyper-parameters ``p`` (``size``: its name in messages and the workload's)."""
    _check(batch, precision)
    require_positive(seq_len=seq_len, layers=layers)
    require_size("layers", layers, 1 + 7 * layers, 9 * layers)
    h, a, ffn = p["hidden"], p["heads"], p["ffn"]
    if seq_len > p["positions"]:
        raise SpecError(SOURCE, "seq_len", seq_len, f"BERT-{size} has {p['positions']} positions")
    if seq_len_mean is not None and not 0 < seq_len_mean <= seq_len:
        raise SpecError(SOURCE, "seq_len_mean", seq_len_mean, f"must be in (0, seq_len = {seq_len}]")
    if seq_len_std < 0 or (seq_len_std > 0 and seq_len_mean is None):
        raise SpecError(SOURCE, "seq_len_std", seq_len_std, "must be >= 0, and given with seq_len_mean")
    s = float(seq_len) if seq_len_mean is None else float(seq_len_mean)  # E[s]
    s2 = s * s + seq_len_std ** 2  # E[s^2]
    g = _Graph(precision, batch)
    bpe = bytes_per_element(precision)
    table = (p["vocab"] + p["positions"] + p["segments"]) * h + 2 * h  # three tables + LayerNorm
    # two additions and LayerNorm (about 8 FLOPs) per element; reads 3 gathered rows per token,
    # int32 token and segment ids, LayerNorm parameters; writes s x h
    x = g.add("embeddings", "embedding", flops=10 * s * h, weights=table, in_elems=0, out_elems=s * h,
              inputs=[], bytes_moved=batch * (3 * s * h + s * h) * bpe + 2 * h * bpe + batch * 2 * s * 4)

    def add_norm(name: str, inputs: list[int]) -> int:  # residual add + LayerNorm: ~9 FLOPs per element
        return g.add(name, "norm", flops=9 * s * h, weights=2 * h, in_elems=2 * s * h, out_elems=s * h,
                     inputs=inputs)

    for layer in range(layers):
        pre = f"layer{layer}"
        qkv = g.add(f"{pre}.qkv", "gemm", flops=2 * s * h * 3 * h, weights=3 * h * h + 3 * h,
                    in_elems=s * h, out_elems=3 * s * h, inputs=[x])
        # QK^T and attention x V: 2 s^2 h MACs; softmax ~5 FLOPs per score; the a x s x s score
        # matrix is written once and read once through device memory
        att = g.add(f"{pre}.attention", "attention", flops=4 * s2 * h + 5 * a * s2, weights=0,
                    in_elems=3 * s * h, out_elems=s * h, inputs=[qkv],
                    bytes_moved=batch * (3 * s * h + s * h + 2 * a * s2) * bpe)
        out = g.add(f"{pre}.out_proj", "gemm", flops=2 * s * h * h, weights=h * h + h, in_elems=s * h,
                    out_elems=s * h, inputs=[att])
        n1 = add_norm(f"{pre}.add_norm1", [out, x])
        f1 = g.add(f"{pre}.ffn1", "gemm", flops=2 * s * h * ffn, weights=h * ffn + ffn, in_elems=s * h,
                   out_elems=s * ffn, inputs=[n1])
        f2 = g.add(f"{pre}.ffn2", "gemm", flops=2 * s * ffn * h, weights=ffn * h + h, in_elems=s * ffn,
                   out_elems=s * h, inputs=[f1])
        x = add_norm(f"{pre}.add_norm2", [f2, n1])
    lengths = f"seq {seq_len}" if seq_len_mean is None else (
        f"seq up to {seq_len}, mean {seq_len_mean:g}, std {seq_len_std:g} (unpadded)")
    name = f"bert-{size}-{layers}l-s{seq_len}" + ("" if seq_len_mean is None else f"-mean{seq_len_mean:g}")
    return g.workload(name, f"BERT-{size} encoder (Devlin et al. 2019), {layers} layers, {lengths}, "
                            f"batch {batch}, {precision}")
