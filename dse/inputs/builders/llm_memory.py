"""What an LLM needs in each GPU's memory, and the largest batch and context that fit.

Per GPU of a ``tp`` x ``pp`` x ``ep`` group (:mod:`dse.inputs.builders.llm`'s sharding):

* weights: this GPU's share of every layer of its stage (attention heads and MLP width split by
  ``tp``, KV heads replicated where ``tp`` exceeds them, experts split by ``ep``), plus the embedding
  and LM head split by ``tp`` (with ``pp`` > 1 the larger of the two, held by the first or last stage);
* KV cache: ``2 x layers / pp x max(1, kv_heads / tp) x head_dim x bytes`` per token of context;
* activations: the largest live tensors of a prefill pass over ``prefill_tokens`` tokens (the
  residual stream, the MLP's widest intermediate and its input) and the logits of the last tokens;
* a runtime reserve: ``reserve_fraction`` of the memory (CUDA context, allocator, graphs), 0.10 by
  default as vLLM's default ``gpu_memory_utilization=0.9`` leaves.

:func:`max_batch` and :func:`max_context` search the largest batch and context with
:func:`memory_use` within the memory (0 when not even one fits).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dse.inputs.builders.llm import PRECISION_BYTES, Parallelism
from dse.inputs.builders.llm_config import LlmConfig

#: GiB in bytes.
GIB = float(1 << 30)
#: Share of a GPU's memory kept for the runtime (vLLM's default gpu_memory_utilization is 0.9).
RESERVE_FRACTION = 0.10
#: Tokens one prefill iteration holds when prompts are not chunked: TensorRT-LLM's default ``max_num_tokens``
#: (its in-flight batching scheduler packs whole prompts into an iteration up to it; vLLM's
#: ``max_num_batched_tokens`` plays the same part), the tokens whose activations a GPU keeps room for.
PREFILL_TOKENS = 8192


def prompts_per_prefill(input_tokens: int, max_prompts: int, tokens: int = PREFILL_TOKENS) -> int:
    """Whole prompts of ``input_tokens`` tokens one prefill iteration of at most ``tokens`` tokens holds,
    at most ``max_prompts`` (the sequences the batch may still admit) and at least one (a prompt longer
    than ``tokens`` runs alone)."""
    return max(1, min(tokens // max(1, input_tokens), max_prompts))


@dataclass(frozen=True)
class MemoryUse:
    """Bytes per GPU: ``weights``, ``kv_cache``, ``activations`` and the runtime ``reserve``."""

    weights: float
    kv_cache: float
    activations: float
    reserve: float

    @property
    def total(self) -> float:
        """All of it, in bytes."""
        return self.weights + self.kv_cache + self.activations + self.reserve


def weight_bytes(config: LlmConfig, weights: str = "fp16", par: Parallelism | None = None) -> float:
    """This GPU's weights in bytes (the module docstring's sharding)."""
    p = par or Parallelism()
    c, w = config, PRECISION_BYTES[weights]
    h, hd = c.hidden, c.head_dim
    attention = h * hd * (2 * c.heads // p.tp + 2 * max(1, c.kv_heads // p.tp))
    mlp = (c.experts // p.ep) * c.mlp_matrices * h * (c.intermediate // p.tp) + (h * c.experts if c.experts > 1 else 0)
    norms = (1 if c.parallel_attention else 2) * h
    table = c.vocab * h / p.tp
    ends = table * (1 if c.tied_embeddings else 2) if p.pp == 1 else table
    return (c.layers // p.pp * (attention + mlp + norms) + ends + h) * w


def kv_bytes_per_token(config: LlmConfig, kv_cache: str = "fp16", par: Parallelism | None = None) -> float:
    """KV-cache bytes per token of context on this GPU: ``2 x layers / pp x max(1, kv_heads / tp) x
    head_dim x bytes``."""
    p = par or Parallelism()
    return 2 * (config.layers // p.pp) * max(1, config.kv_heads // p.tp) * config.head_dim * PRECISION_BYTES[kv_cache]


def activation_bytes(config: LlmConfig, prefill_tokens: float, batch: int, activations: str = "fp16",
                     par: Parallelism | None = None) -> float:
    """Peak activation bytes of a prefill pass over ``prefill_tokens`` tokens of ``batch`` sequences:
    the residual stream, the MLP's input and widest intermediate, and the logits of the last tokens."""
    p = par or Parallelism()
    c, a = config, PRECISION_BYTES[activations]
    width = (2 if c.gated_mlp else 1) * c.intermediate // p.tp * (c.top_k if c.experts > 1 else 1)
    return (prefill_tokens * (2 * c.hidden + width) + batch * c.vocab / p.tp) * a


def memory_use(config: LlmConfig, batch: int, context: int, mem_gib: float, weights: str = "fp16",
               activations: str = "fp16", kv_cache: str = "fp16", par: Parallelism | None = None,
               prefill_tokens: float | None = None, reserve_fraction: float = RESERVE_FRACTION) -> MemoryUse:
    """Bytes per GPU for ``batch`` sequences of ``context`` tokens (prompt and output) on a GPU of
    ``mem_gib`` GiB; ``prefill_tokens`` defaults to ``batch x context`` (whole prompts in one pass)."""
    tokens = batch * context if prefill_tokens is None else prefill_tokens
    return MemoryUse(weight_bytes(config, weights, par), batch * context * kv_bytes_per_token(config, kv_cache, par),
                     activation_bytes(config, tokens, batch, activations, par), reserve_fraction * mem_gib * GIB)


def fits(config: LlmConfig, batch: int, context: int, mem_gib: float, **kwargs: Any) -> bool:
    """Whether :func:`memory_use` (same keywords) is within ``mem_gib``."""
    return memory_use(config, batch, context, mem_gib, **kwargs).total <= mem_gib * GIB


def _largest(ok: Callable[[int], bool], limit: int) -> int:
    """The largest ``n`` in [1, ``limit``] with ``ok(n)`` (``ok`` monotone: true up to some n), else 0."""
    if not ok(1):
        return 0
    lo, hi = 1, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def max_batch(config: LlmConfig, context: int, mem_gib: float, limit: int = 1 << 20, **kwargs: Any) -> int:
    """The largest batch of ``context``-token sequences that fits ``mem_gib`` GiB per GPU (0: none)."""
    return _largest(lambda b: fits(config, b, context, mem_gib, **kwargs), limit)


def max_context(config: LlmConfig, batch: int, mem_gib: float, limit: int = 1 << 24, **kwargs: Any) -> int:
    """The longest context (tokens) ``batch`` sequences can hold in ``mem_gib`` GiB per GPU (0: none)."""
    return _largest(lambda n: fits(config, batch, n, mem_gib, **kwargs), limit)
