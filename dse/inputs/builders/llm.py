"""LLM inference as a workload: prefill, one decode step, or a whole generation, per GPU of a
tensor-, pipeline- and expert-parallel group.

The model comes from a Hugging Face style config (:mod:`dse.inputs.builders.llm_config`: the catalog
``models/llm`` or a file). Each precision is given per part: ``weights`` (fp16, bf16, fp8, int8 or
int4: the bytes read per weight), ``activations`` (fp16, bf16, fp8, int8: the GEMMs' input and
output width and the rate they run at, the device's ``peak_tflops`` of that precision) and
``kv_cache`` (fp16, bf16, fp8, int8).

Phases (``phase``):

* ``prefill``: ``batch`` prompts of ``seq_len`` tokens (``T = batch x seq_len`` token rows through
  every GEMM); the LM head runs on the last token of each prompt (the first output token);
* ``decode``: one step of ``batch`` sequences whose KV cache holds ``seq_len`` tokens (the new one
  included): ``T = batch`` rows, and attention reads the whole cache;
* ``generate``: the prefill, then the ``output_len - 1`` decode steps that produce the rest of the
  output (the first token comes from the prefill). Step ``t`` attends over ``seq_len + t`` tokens.
  Decode attention is linear in the KV length, and every other op of a step does not depend on it,
  so the sum of the steps equals ``output_len - 1`` steps at the mean length ``seq_len +
  output_len / 2``: the decode ops are one step's at that length, repeated (their FLOPs, bytes and
  launches times the step count; ``tests/inputs/test_llm.py`` checks it against the explicit sum).

Ops per layer, as the kernels of an inference runtime run them (TensorRT-LLM, vLLM):
``attn_norm`` (RMSNorm or LayerNorm with the residual addition fused in, ``norm``), ``qkv`` (one GEMM
for the query, key and value projections, ``gemm``), ``attention`` (``attention``: in prefill a
FlashAttention-style fused kernel, Dao et al. 2022: ``QK^T`` and ``PV`` FLOPs over the causal half,
Q, K, V read and O written once, no score matrix in memory; the new keys and values written to the
cache. In decode the kernel reads the whole KV cache and is memory-bound), ``o_proj`` (``gemm``), with
tensor parallelism an ``attn_allreduce`` (``collective``), ``mlp_norm`` (left out when attention and
MLP run in parallel, GPT-J and Falcon), the MLP (``gate_up`` GEMM, ``act`` the gated product,
``elementwise``, and ``down``; or ``up`` with the GELU in its epilogue and ``down``) and an
``mlp_allreduce``. A mixture of experts adds a ``router`` GEMM, runs the experts as grouped GEMMs
over ``T x top_k`` token rows and, in decode, reads the weights of the experts the batch touches
(``E x (1 - (1 - k / E)^T)`` of ``E`` experts, in expectation over uniform routing); with expert
parallelism ``dispatch`` and ``combine`` all-to-alls. Before the layers an ``embedding`` lookup,
after them the ``final_norm``, the ``lm_head`` GEMM (vocabulary split by TP) and, with TP, the
logits' ``all_gather``.

Parallelism: ``tp`` shards every GEMM's output or reduction dimension and the attention heads
(KV heads replicated when ``tp`` exceeds them) and adds two all-reduces of ``T x hidden`` activations
per layer; ``pp`` gives this GPU ``layers / pp`` layers of stage ``stage`` (the first holds the
embedding, the last the LM head; every stage but the last ends with a ``send`` of its activations;
the bubble is :func:`pipeline_seconds`, a function of the stage's costed time, since a per-op table
cannot hold a term proportional to the other ops' time); ``ep`` spreads the experts over ``ep`` GPUs.
A group spans ``ceil(size / gpus_per_node)`` nodes (TP innermost, then EP, then PP); the collectives'
time comes from the device's link figures (:mod:`dse.cost.mechanisms.collective`), ``allreduce``
ring or tree.

Raises :class:`~dse.errors.SpecError` naming the parameter for an unknown model, phase, precision or
algorithm, a non-positive size, a degree that does not divide what it splits, or too many ops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dse.errors import SpecError
from dse.inputs.builders.gemm import SOURCE, require_positive, require_size
from dse.inputs.builders.llm_config import LlmConfig, load_model
from dse.model.collectives import ALGORITHMS, COLLECTIVES
from dse.model.workload import Op, Workload

PHASES = ("prefill", "decode", "generate")
#: Bytes per element of each precision a part of an LLM may use (int4: weights only).
PRECISION_BYTES: dict[str, float] = {"fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
#: Precisions of activations and the KV cache (the weight-only int4 is not one).
ACTIVATION_PRECISIONS = ("fp16", "bf16", "fp8", "int8")
#: FLOPs per element of a norm with its residual addition (mean of squares, scale, add) and of the
#: gated MLP's product (SiLU about 4, the multiplication 1); softmax FLOPs per attention score.
NORM_FLOPS, GATE_FLOPS, SOFTMAX_FLOPS = 5, 5, 5


def _precision(name: str, value: str, allowed: tuple[str, ...]) -> float:
    if value not in allowed:
        raise SpecError(SOURCE, name, value, f"must be one of {', '.join(allowed)}")
    return PRECISION_BYTES[value]


@dataclass(frozen=True)
class Parallelism:
    """Degrees of tensor, pipeline and expert parallelism, this GPU's pipeline stage, GPUs per node."""

    tp: int = 1
    pp: int = 1
    ep: int = 1
    stage: int = 0
    gpus_per_node: int = 8

    def nodes(self, size: int) -> int:
        """Nodes a group of the ``size`` innermost ranks spans."""
        return max(1, math.ceil(size / self.gpus_per_node))

    def check(self, config: LlmConfig) -> None:
        """Raise :class:`SpecError` naming the degree that does not divide what it splits."""
        require_positive(tp=self.tp, pp=self.pp, ep=self.ep, gpus_per_node=self.gpus_per_node)
        if config.heads % self.tp:
            raise SpecError(SOURCE, "tp", self.tp, f"must divide the {config.heads} attention heads of {config.name}")
        if config.intermediate % self.tp:
            raise SpecError(SOURCE, "tp", self.tp, f"must divide the MLP width {config.intermediate}")
        if config.layers % self.pp:
            raise SpecError(SOURCE, "pp", self.pp, f"must divide the {config.layers} layers of {config.name}")
        if config.experts % self.ep:
            raise SpecError(SOURCE, "ep", self.ep, f"must divide the {config.experts} experts of {config.name}")
        if not 0 <= self.stage < self.pp:
            raise SpecError(SOURCE, "stage", self.stage, f"must be in [0, pp = {self.pp})")


@dataclass(frozen=True)
class Precisions:
    """Bytes per weight, activation and KV-cache element, and the compute precision (the activations')."""

    weights: float
    activations: float
    kv: float
    compute: str


@dataclass
class _Builder:
    """Accumulates one phase's ops (a chain with residual edges); ``repeat`` scales the work of every op
    (decode steps), not its output tensor."""

    config: LlmConfig
    par: Parallelism
    bytes: Precisions
    allreduce: int
    ops: list[Op] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)

    def add(self, name: str, op_class: str, flops: float, moved: float, out: float, inputs: list[int],
            repeat: float, resident: float = 0.0, kernels: float = 1.0, **features: float) -> int:
        """Append an op whose work is ``repeat`` times one call's (its output tensor one call's); returns its index."""
        self.ops.append(Op(name=name, op_class=op_class, flops=float(flops * repeat),
                           bytes_moved=float(moved * repeat), resident_bytes=float(resident),
                           output_bytes=float(out), precision=self.bytes.compute,
                           features={"kernels": kernels * repeat, **features}))
        index = len(self.ops) - 1
        self.edges += [(i, index) for i in inputs if i >= 0]
        return index

    def gemm(self, name: str, m: float, n: float, k: float, inputs: list[int], repeat: float) -> int:
        """``[m, k] x [k, n]`` with ``k x n`` weights: reads the weights and ``A``, writes ``C``."""
        b = self.bytes
        weights = k * n * b.weights
        return self.add(name, "gemm", 2 * m * n * k, weights + (m * k + m * n) * b.activations,
                        m * n * b.activations, inputs, repeat, resident=weights)

    def collective(self, name: str, kind: str, message: float, ranks: int, inputs: list[int],
                   repeat: float) -> int:
        """A ``kind`` collective of ``message`` bytes over the ``ranks`` innermost GPUs."""
        if ranks <= 1:
            return inputs[0]
        return self.add(name, "collective", 0.0, 0.0, message, inputs, 1.0, kernels=repeat,
                        collective=COLLECTIVES.index(kind), ranks=ranks, nodes=self.par.nodes(ranks),
                        algorithm=self.allreduce, calls=repeat)

    def norm(self, name: str, tokens: float, inputs: list[int], repeat: float) -> int:
        h, a = self.config.hidden, self.bytes.activations
        return self.add(name, "norm", NORM_FLOPS * tokens * h, (3 * tokens * h + h) * a, tokens * h * a,
                        inputs, repeat, resident=h * a)


def _layer(g: _Builder, pre: str, x: int, residual: int, batch: int, seq: float, kv_len: float,
           prefill: bool, repeat: float) -> tuple[int, int]:
    """One decoder layer on this GPU; returns (its output op, the residual stream's op)."""
    c, tp, b = g.config, g.par.tp, g.bytes
    h, hd = c.hidden, c.head_dim
    heads, kv_heads = c.heads // tp, max(1, c.kv_heads // tp)
    tokens = batch * seq
    n1 = g.norm(f"{pre}.attn_norm", tokens, [x, residual], repeat)
    qkv = g.gemm(f"{pre}.qkv", tokens, (heads + 2 * kv_heads) * hd, h, [n1], repeat)
    kv_write = tokens * 2 * kv_heads * hd * b.kv
    if prefill:  # causal: each of the seq queries sees on average (seq + 1) / 2 keys
        pairs = batch * seq * (seq + 1) / 2
        moved = tokens * (heads + 2 * kv_heads) * hd * b.activations + tokens * heads * hd * b.activations
    else:  # one query per sequence against the kv_len cached keys and values
        pairs = batch * kv_len
        moved = batch * kv_len * 2 * kv_heads * hd * b.kv + 2 * tokens * heads * hd * b.activations
    att = g.add(f"{pre}.attention", "attention", 4 * pairs * heads * hd + SOFTMAX_FLOPS * pairs * heads,
                moved + kv_write, tokens * heads * hd * b.activations, [qkv], repeat)
    o = g.gemm(f"{pre}.o_proj", tokens, h, heads * hd, [att], repeat)
    o = g.collective(f"{pre}.attn_allreduce", "all_reduce", tokens * h * b.activations, tp, [o], repeat)
    if c.parallel_attention:  # the MLP reads the attention's input; it runs after the attention on the
        mlp_in, residual_out = n1, o  # same stream, so the attention's last op feeds it too (an edge)
    else:
        mlp_in = g.norm(f"{pre}.mlp_norm", tokens, [o, residual], repeat)
        residual_out = mlp_in
    y = _mlp(g, pre, mlp_in, tokens, repeat, after=o if c.parallel_attention else mlp_in)
    y = g.collective(f"{pre}.mlp_allreduce", "all_reduce", tokens * h * b.activations, tp, [y], repeat)
    return y, residual_out


def _mlp(g: _Builder, pre: str, x: int, tokens: float, repeat: float, after: int) -> int:
    """The MLP (dense or mixture of experts) on this GPU, its first op fed by ``x`` and ``after``;
    returns its last op."""
    c, par, b = g.config, g.par, g.bytes
    h, width = c.hidden, c.intermediate // par.tp
    up_name, up_n = ("gate_up", 2 * width) if c.gated_mlp else ("up", width)
    if c.experts == 1:
        rows = tokens
        up = g.gemm(f"{pre}.{up_name}", rows, up_n, h, [x, after], repeat)
    else:
        router = g.gemm(f"{pre}.router", tokens, c.experts, h, [x, after], repeat)
        x = g.collective(f"{pre}.dispatch", "all_to_all", tokens * c.top_k * h * b.activations, par.ep,
                         [router], repeat)
        local = c.experts // par.ep
        rows = tokens * c.top_k / par.ep  # token rows this GPU's experts run (balanced routing)
        touched = 1 - (1 - c.top_k / c.experts) ** tokens  # share of the experts the batch activates
        up = _expert_gemm(g, f"{pre}.{up_name}", rows, up_n, h, local, touched, [x], repeat)
    if c.gated_mlp:
        up = g.add(f"{pre}.act", "elementwise", GATE_FLOPS * rows * width, 3 * rows * width * b.activations,
                   rows * width * b.activations, [up], repeat)
    if c.experts == 1:
        return g.gemm(f"{pre}.down", rows, h, width, [up], repeat)
    down = _expert_gemm(g, f"{pre}.down", rows, h, width, local, touched, [up], repeat)
    return g.collective(f"{pre}.combine", "all_to_all", tokens * c.top_k * h * b.activations, par.ep,
                        [down], repeat)


def _expert_gemm(g: _Builder, name: str, rows: float, n: float, k: float, experts: int, share: float,
                 inputs: list[int], repeat: float) -> int:
    """A grouped GEMM over ``experts`` local experts of ``k x n`` weights each (``share`` of them read)."""
    b = g.bytes
    weights = experts * k * n * b.weights
    moved = weights * share + (rows * k + rows * n) * b.activations
    return g.add(name, "gemm", 2 * rows * n * k, moved, rows * n * b.activations, inputs, repeat,
                 resident=weights)


def _phase(g: _Builder, tag: str, batch: int, seq: float, kv_len: float, prefill: bool, repeat: float,
           start: int) -> int:
    """Append one phase's ops (this GPU's stage); returns its last op. ``start``: the op feeding it (-1)."""
    c, par, b = g.config, g.par, g.bytes
    h = c.hidden
    tokens = batch * seq
    x = start
    if par.stage == 0:  # token-id gather: int32 ids, one row of the table per token
        table = c.vocab * h * b.weights
        x = g.add(f"{tag}.embedding", "embedding", 0.0, tokens * (4 + h * b.weights + h * b.activations),
                  tokens * h * b.activations, [start], repeat, resident=table)
    residual = x
    for layer in range(c.layers // par.pp):
        x, residual = _layer(g, f"{tag}.layer{par.stage * (c.layers // par.pp) + layer}", x, residual,
                             batch, seq, kv_len, prefill, repeat)
    if par.stage < par.pp - 1:
        return g.collective(f"{tag}.send", "send", tokens * h * b.activations, 2, [x], repeat)
    x = g.norm(f"{tag}.final_norm", batch, [x, residual], repeat)  # the last token of each sequence
    vocab = c.vocab / par.tp
    x = g.gemm(f"{tag}.lm_head", batch, vocab, h, [x], repeat)
    return g.collective(f"{tag}.logits_gather", "all_gather", batch * c.vocab * b.activations, par.tp, [x],
                        repeat)


def ops_per_layer(config: LlmConfig, tp: int, ep: int) -> int:
    """Ops of one layer: two norms, qkv, attention, o_proj, gate_up, the gated product, down (8); two
    all-reduces with TP; a router for experts, and their two all-to-alls with EP; one norm fewer when
    attention and MLP run in parallel, no gated product for a plain MLP."""
    return (8 + (2 if tp > 1 else 0) + (1 if config.experts > 1 else 0) + (2 if ep > 1 else 0)
            - (1 if config.parallel_attention else 0) - (0 if config.gated_mlp else 1))


def llm(model: str = "llama2_7b", phase: str = "prefill", batch: int = 1, seq_len: int = 128,
        output_len: int = 128, weights: str = "fp16", activations: str = "fp16", kv_cache: str = "fp16",
        tp: int = 1, pp: int = 1, ep: int = 1, stage: int = 0, gpus_per_node: int = 8,
        allreduce: str = "ring") -> Workload:
    """One GPU's share of an LLM's prefill, decode step or whole generation (Hugging Face config).

    ``model``: a catalog LLM (``models/llm``: llama2_7b, llama2_70b, mixtral_8x7b, ...) or a config
    file; ``phase``: ``prefill``, ``decode`` or ``generate``; ``seq_len``: prompt tokens (prefill,
    generate) or the KV-cache length of the step (decode); ``output_len``: tokens generated
    (generate); ``weights``, ``activations``, ``kv_cache``: each part's precision (fp16, bf16, fp8,
    int8; int4 for weights only); ``tp``, ``pp``, ``ep``: tensor, pipeline and expert parallel
    degrees; ``stage``: this GPU's pipeline stage; ``gpus_per_node``: GPUs per node (a group larger
    than it crosses the network); ``allreduce``: ``ring`` or ``tree``. Returns a workload of
    ``embedding + ops per layer x layers / pp + 3`` ops per phase (the module docstring lists them).
    Raises :class:`SpecError` naming the parameter that is unknown or out of range.
    """
    config = load_model(model)
    if phase not in PHASES:
        raise SpecError(SOURCE, "phase", phase, f"must be one of {', '.join(PHASES)}")
    require_positive(batch=batch, seq_len=seq_len, output_len=output_len)
    if allreduce not in ALGORITHMS:
        raise SpecError(SOURCE, "allreduce", allreduce, f"must be one of {', '.join(ALGORITHMS)}")
    par = Parallelism(tp, pp, ep, stage, gpus_per_node)
    par.check(config)
    precisions = Precisions(_precision("weights", weights, tuple(PRECISION_BYTES)),
                            _precision("activations", activations, ACTIVATION_PRECISIONS),
                            _precision("kv_cache", kv_cache, ACTIVATION_PRECISIONS), activations)
    phases = 2 if phase == "generate" else 1
    require_size("batch", batch, phases * (4 + ops_per_layer(config, tp, ep) * config.layers // pp))
    g = _Builder(config, par, precisions, ALGORITHMS.index(allreduce))
    if phase == "decode":
        _phase(g, "decode", batch, 1.0, float(seq_len), False, 1.0, -1)
    else:
        last = _phase(g, "prefill", batch, float(seq_len), float(seq_len), True, 1.0, -1)
        if phase == "generate" and output_len > 1:
            _phase(g, "decode", batch, 1.0, seq_len + output_len / 2, False, float(output_len - 1), last)
    shape = f"batch {batch}, {'KV length' if phase == 'decode' else 'input'} {seq_len}" + (
        f", output {output_len}" if phase == "generate" else "")
    parallel = f"TP {tp}, PP {pp} (stage {stage}), EP {ep}"
    return Workload(f"{config.name}-{phase}-b{batch}-s{seq_len}" + (f"-o{output_len}" if phase == "generate" else "")
                    + f"-tp{tp}-pp{pp}-ep{ep}", tuple(g.ops), tuple(sorted(set(g.edges))),
                    description=f"{config.name} {phase}, {shape}, weights {weights}, activations {activations}, "
                                f"KV cache {kv_cache}, {parallel}: one GPU's share")


def pipeline_seconds(stage_seconds: float, pp: int, microbatches: int) -> float:
    """Seconds a ``pp``-stage pipeline takes for a batch split in ``microbatches`` when one stage takes
    ``stage_seconds`` for the whole batch: ``(m + p - 1) / m`` of it; the idle share, the bubble, is
    ``(p - 1) / (m + p - 1)`` (GPipe, Huang et al. 2019). Raises ``ValueError`` for a degree below 1."""
    if pp < 1 or microbatches < 1:
        raise ValueError("pp and microbatches must be >= 1")
    return stage_seconds * (microbatches + pp - 1) / microbatches
