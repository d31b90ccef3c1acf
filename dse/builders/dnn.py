"""DNN inference graphs computed from their architecture definitions.

* ResNet-50: He, Zhang, Ren, Sun, "Deep residual learning for image recognition", CVPR 2016
  (Table 1; stride on the 3x3 conv of each bottleneck, as in torchvision's v1.5);
* MobileNetV2: Sandler et al., "MobileNetV2: inverted residuals and linear bottlenecks", CVPR 2018 (Table 2);
* BERT-base: Devlin et al., "BERT: pre-training of deep bidirectional transformers", NAACL 2019
  (L=12, H=768, A=12, feed-forward 4H, WordPiece vocabulary 30,522, 512 positions).

Every op's FLOPs are 2 x multiply-accumulates, ``bytes_moved`` = weights + input + output activations
at the precision's width, ``resident_bytes`` = weights (batch-norm scale/shift folded into their
conv's weights count), ``output_bytes`` = output activation. With ``granularity="layer"`` every
conv/fc layer is an op and residual additions are ``elementwise`` ops with two inputs (a DAG);
with ``granularity="block"`` each residual block is one op (a chain of about 20 ops).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dse.builders.gcn import BYTES
from dse.errors import SpecError
from dse.workload import Op, Workload


@dataclass
class _Graph:
    """Accumulates ops and edges; ``add`` returns the new op's index."""

    bpe: int
    precision: str
    batch: int
    ops: list[Op] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)

    def add(self, name: str, op_class: str, macs: float, weights: float, in_elems: float, out_elems: float,
            inputs: list[int]) -> int:
        b = self.batch
        self.ops.append(Op(
            name=name, op_class=op_class, flops=2.0 * macs * b,
            bytes_moved=float((weights + b * (in_elems + out_elems)) * self.bpe),
            resident_bytes=float(weights * self.bpe), output_bytes=float(b * out_elems * self.bpe),
            precision=self.precision,
        ))
        idx = len(self.ops) - 1
        self.edges += [(i, idx) for i in inputs]
        return idx

    def merge(self, name: str, first: int, op_class: str) -> None:
        """Collapse ops[first:] into one op (block granularity), keeping edges into and out of the block."""
        block = self.ops[first:]
        merged = Op(name=name, op_class=op_class, flops=sum(o.flops for o in block),
                    bytes_moved=sum(o.bytes_moved for o in block),
                    resident_bytes=sum(o.resident_bytes for o in block),
                    output_bytes=block[-1].output_bytes, precision=self.precision)
        inside = set(range(first, len(self.ops)))
        outer = sorted({s for s, d in self.edges if d in inside and s not in inside})
        self.edges = [(s, d) for s, d in self.edges if d not in inside] + [(s, first) for s in outer]
        self.ops = self.ops[:first] + [merged]

    def workload(self, name: str, description: str) -> Workload:
        return Workload(name, tuple(self.ops), tuple(sorted(set(self.edges))), description=description)


def _check(batch: int, precision: str, granularity: str | None = None) -> int:
    if batch < 1:
        raise SpecError("workload", "batch", batch, "must be >= 1")
    if precision not in BYTES:
        raise SpecError("workload", "precision", precision, f"one of {', '.join(BYTES)}")
    if granularity is not None and granularity not in ("layer", "block"):
        raise SpecError("workload", "granularity", granularity, "layer or block")
    return BYTES[precision]


def _conv(g: _Graph, name: str, cin: int, cout: int, k: int, stride: int, hw: int, inputs: list[int],
          depthwise: bool = False) -> tuple[int, int]:
    out_hw = (hw + stride - 1) // stride
    if depthwise:
        macs, weights = out_hw * out_hw * cin * k * k, cin * k * k + 2 * cin
        cls = "dwconv"
    else:
        macs, weights = out_hw * out_hw * cout * cin * k * k, cin * cout * k * k + 2 * cout
        cls = "conv"
    return g.add(name, cls, macs, weights, hw * hw * cin, out_hw * out_hw * cout, inputs), out_hw


def resnet50(batch: int = 1, precision: str = "fp16", granularity: str = "layer") -> Workload:
    """ResNet-50 at 224x224: 53 convs, 16 residual additions, pools and the classifier."""
    g = _Graph(_check(batch, precision, granularity), precision, batch)
    x, hw = _conv(g, "conv1", 3, 64, 7, 2, 224, [])
    x = g.add("maxpool", "pool", (hw // 2) ** 2 * 64 * 9, 0, hw * hw * 64, (hw // 2) ** 2 * 64, [x])
    hw, cin = hw // 2, 64
    for stage, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512), strict=True), start=2):
        for b in range(blocks):
            first = len(g.ops)
            stride = 2 if b == 0 and stage > 2 else 1
            pre = f"conv{stage}_{b + 1}"
            a, _ = _conv(g, f"{pre}.a", cin, width, 1, 1, hw, [x])
            m, out_hw = _conv(g, f"{pre}.b", width, width, 3, stride, hw, [a])
            c, _ = _conv(g, f"{pre}.c", width, 4 * width, 1, 1, out_hw, [m])
            short = x
            if b == 0:
                short, _ = _conv(g, f"{pre}.proj", cin, 4 * width, 1, stride, hw, [x])
            elems = out_hw * out_hw * 4 * width
            x = g.add(f"{pre}.add", "elementwise", elems, 0, 2 * elems, elems, [c, short])
            if granularity == "block":
                g.merge(pre, first, "conv")
                x = len(g.ops) - 1
            hw, cin = out_hw, 4 * width
    x = g.add("avgpool", "pool", hw * hw * cin, 0, hw * hw * cin, cin, [x])
    g.add("fc", "gemm", cin * 1000, cin * 1000 + 1000, cin, 1000, [x])
    return g.workload(f"resnet50-{granularity}", "ResNet-50 (He et al. 2016), 224x224")


MOBILENETV2_BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                      (6, 320, 1, 1))  # (expansion t, channels c, repeats n, first stride s): Sandler et al. Table 2


def mobilenetv2(batch: int = 1, precision: str = "fp16", granularity: str = "layer") -> Workload:
    """MobileNetV2 1.0 at 224x224: stem, 17 inverted-residual blocks, 1x1 conv to 1280, classifier."""
    g = _Graph(_check(batch, precision, granularity), precision, batch)
    x, hw = _conv(g, "stem", 3, 32, 3, 2, 224, [])
    cin = 32
    for i, (t, c, n, s) in enumerate(MOBILENETV2_BLOCKS):
        for r in range(n):
            first = len(g.ops)
            stride = s if r == 0 else 1
            pre = f"block{i}_{r}"
            h = x
            if t != 1:
                h, _ = _conv(g, f"{pre}.expand", cin, cin * t, 1, 1, hw, [h])
            h, out_hw = _conv(g, f"{pre}.dw", cin * t, cin * t, 3, stride, hw, [h], depthwise=True)
            h, _ = _conv(g, f"{pre}.project", cin * t, c, 1, 1, out_hw, [h])
            if stride == 1 and cin == c:
                elems = out_hw * out_hw * c
                h = g.add(f"{pre}.add", "elementwise", elems, 0, 2 * elems, elems, [h, x])
            if granularity == "block":
                g.merge(pre, first, "conv")
                h = len(g.ops) - 1
            x, hw, cin = h, out_hw, c
    x, _ = _conv(g, "conv_last", cin, 1280, 1, 1, hw, [x])
    x = g.add("avgpool", "pool", hw * hw * 1280, 0, hw * hw * 1280, 1280, [x])
    g.add("fc", "gemm", 1280 * 1000, 1280 * 1000 + 1000, 1280, 1000, [x])
    return g.workload(f"mobilenetv2-{granularity}", "MobileNetV2 1.0 (Sandler et al. 2018), 224x224")


def bert_base(seq_len: int = 128, batch: int = 1, precision: str = "fp16", layers: int = 12) -> Workload:
    """BERT-base encoder: embeddings, then per layer QKV, attention, output projection, add & norm,
    FFN1 (GELU folded), FFN2, add & norm. Parameters: 110 M with 12 layers (Devlin et al. 2019)."""
    _check(batch, precision)
    if seq_len < 1 or layers < 1:
        raise SpecError("workload", "seq_len" if seq_len < 1 else "layers", min(seq_len, layers), "must be >= 1")
    g = _Graph(BYTES[precision], precision, batch)
    s, h, ffn, vocab = seq_len, 768, 3072, 30522
    x = g.add("embeddings", "embedding", s * h * 3, (vocab + 512 + 2) * h + 2 * h, s * 3, s * h, [])
    for layer in range(layers):
        p = f"layer{layer}"
        qkv = g.add(f"{p}.qkv", "gemm", s * h * 3 * h, 3 * h * h + 3 * h, s * h, 3 * s * h, [x])
        att = g.add(f"{p}.attention", "attention", 2 * s * s * h, 0, 3 * s * h, s * h, [qkv])
        out = g.add(f"{p}.out_proj", "gemm", s * h * h, h * h + h, s * h, s * h, [att])
        n1 = g.add(f"{p}.add_norm1", "norm", 8 * s * h, 2 * h, 2 * s * h, s * h, [out, x])
        f1 = g.add(f"{p}.ffn1", "gemm", s * h * ffn, h * ffn + ffn, s * h, s * ffn, [n1])
        f2 = g.add(f"{p}.ffn2", "gemm", s * ffn * h, ffn * h + h, s * ffn, s * h, [f1])
        x = g.add(f"{p}.add_norm2", "norm", 8 * s * h, 2 * h, 2 * s * h, s * h, [f2, n1])
    return g.workload(f"bert-base-{layers}l-s{seq_len}", "BERT-base encoder (Devlin et al. 2019)")
