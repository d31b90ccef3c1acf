"""Serving pools costed by the ``llm`` builder and a cost model, as ``dse accuracy`` costs an LLM row.

:class:`LlmTiming` gives a pool's timing functions: one iteration of ``b`` sequences is one GPU's share of
the ``llm`` builder's ``prefill`` (``b`` prompts of the chunks' mean length) or ``decode`` (``b`` sequences
at the KV caches' mean length) costed on the pool's device alone (the sum of the cost tables' op times,
the period of the one-device mapping ``dse accuracy`` decodes), times ``pp`` for a pipeline of ``pp``
stages with one micro-batch (:func:`~dse.inputs.builders.llm.pipeline_seconds`; every stage costed as
stage 0). Batch and length are costed on powers of two, each cost built once, and interpolated linearly
in between: exact at the powers of two, and along the length exact wherever the costs are linear in it
(decode attention is; docs/llm.md). :func:`llm_pool` builds a :class:`~dse.sim.serving.inputs.Pool` with
them, its KV capacity from :mod:`~dse.inputs.builders.llm_memory` and its device's power.
"""

from __future__ import annotations

import math

import numpy as np

from dse.cost.roofline import RooflineCostModel
from dse.cost.tables import CostModel
from dse.errors import InfeasibleError
from dse.inputs.builders import build
from dse.inputs.builders.llm import Parallelism, pipeline_seconds
from dse.inputs.builders.llm_config import load_model
from dse.inputs.builders.llm_memory import (
    GIB,
    PREFILL_TOKENS,
    RESERVE_FRACTION,
    activation_bytes,
    kv_bytes_per_token,
    weight_bytes,
)
from dse.model.platform import Device, Platform
from dse.sim.serving.inputs import Pool

#: Prefill tokens one iteration of a pool without a token budget holds, and whose activations it keeps room
#: for (:data:`~dse.inputs.builders.llm_memory.PREFILL_TOKENS`, TensorRT-LLM's default ``max_num_tokens``).
DEFAULT_PREFILL_TOKENS = PREFILL_TOKENS


class LlmTiming:
    """The timing functions of ``model`` on ``device`` at ``tp`` x ``pp`` (the module docstring's rule);
    ``settings``: the builder's precision keywords (``weights``, ``activations``, ``kv_cache``) and
    ``gpus_per_node``, ``allreduce``. Costs are cached per (phase, batch, length) on the grid."""

    def __init__(self, device: Device, model: str, *, tp: int = 1, pp: int = 1, cost_model: CostModel | None = None,
                 **settings: object) -> None:
        self.device = device
        self.model = model
        self.tp = tp
        self.pp = pp
        self.settings = settings
        self.cost_model: CostModel = cost_model if cost_model is not None else RooflineCostModel()
        self.platform = Platform(device.name, (device,))
        self._cache: dict[tuple[str, int, int], float] = {}

    def seconds(self, phase: str, batch: int, length: int) -> float:
        """Seconds of one iteration of ``phase`` for ``batch`` sequences of ``length`` tokens (prompt or KV),
        costed once; raises :class:`~dse.errors.InfeasibleError` when the cost model cannot run an op of it
        on the device."""
        key = (phase, batch, length)
        if key not in self._cache:
            workload = build("llm", model=self.model, phase=phase, batch=batch, seq_len=length, tp=self.tp,
                             pp=self.pp, **self.settings)
            tables = self.cost_model.tables(workload, self.platform)
            if not tables.allowed.all():
                op = tables.op_names[int(np.argmin(tables.allowed[:, 0]))]
                raise InfeasibleError(f"device {self.device.name} cannot run op {op!r} of {workload.name}")
            stage = float(tables.time[:, 0].sum()) * tables.seconds_per_time_unit
            self._cache[key] = pipeline_seconds(stage, self.pp, 1)
        return self._cache[key]

    def interpolated(self, phase: str, batch: int, length: float) -> float:
        """:meth:`seconds` at ``batch`` and ``length``, interpolated linearly between the powers of two
        around each (exact at a power of two)."""
        def around(x: float) -> tuple[int, int, float]:
            low = 1 << max(0, math.floor(math.log2(max(x, 1.0))))
            if low >= x:
                return low, low, 0.0
            return low, 2 * low, (x - low) / low

        b0, b1, wb = around(batch)
        s0, s1, ws = around(length)

        def along(b: int) -> float:
            low = self.seconds(phase, b, s0)
            return low if ws == 0 else low + ws * (self.seconds(phase, b, s1) - low)

        low = along(b0)
        return low if wb == 0 else low + wb * (along(b1) - low)

    def prefill_s(self, chunks: np.ndarray) -> float:
        """Seconds to prefill ``chunks`` (token counts) in one iteration: a batch of their mean length."""
        return self.interpolated("prefill", len(chunks), float(np.mean(chunks)))

    def decode_s(self, kv: np.ndarray) -> float:
        """Seconds of one decode step of sequences at KV lengths ``kv``: a batch at their mean length."""
        return self.interpolated("decode", len(kv), float(np.mean(kv)))


def llm_pool(name: str, device: Device, model: str, *, tp: int = 1, pp: int = 1, replicas: int = 1,
             max_batch: int = 256, token_budget: int | None = None, role: str = "both", weights: str = "fp16",
             activations: str = "fp16", kv_cache: str = "fp16", gpus_per_node: int = 8,
             reserve_fraction: float = RESERVE_FRACTION, cost_model: CostModel | None = None) -> Pool:
    """A :class:`~dse.sim.serving.inputs.Pool` of ``replicas`` x ``tp`` x ``pp`` ``device`` GPUs serving
    ``model``: :class:`LlmTiming`'s timing functions; KV capacity per replica, the tokens whose cache fits
    one GPU's memory after its weights, the activations of a prefill of ``token_budget`` tokens
    (:data:`DEFAULT_PREFILL_TOKENS` without one, which then bounds a prefill iteration's whole prompts,
    ``max_prefill_tokens``) and the reserve; the device's ``active_w`` busy and ``idle_w`` idle; the whole
    model's KV bytes per token for a transfer.

    Raises :class:`~dse.errors.SpecError` for a degree that does not divide the model and
    :class:`~dse.errors.InfeasibleError` when not one token of KV cache fits, saying by how much.
    """
    config = load_model(model)
    par = Parallelism(tp, pp, 1, 0, gpus_per_node)
    par.check(config)
    memory = device.mem_gib * GIB
    weights_b = weight_bytes(config, weights, par)
    act = activation_bytes(config, token_budget or DEFAULT_PREFILL_TOKENS, 1, activations, par)
    free = memory * (1 - reserve_fraction) - weights_b - act
    per_token = kv_bytes_per_token(config, kv_cache, par)
    tokens = math.floor(free / per_token) if free > 0 else 0
    if tokens < 1:
        raise InfeasibleError(f"memory: {config.name} at TP {tp} x PP {pp} needs {weights_b / GIB:.1f} GiB of "
                              f"{weights} weights and {act / GIB:.1f} GiB of activations per GPU beside a "
                              f"{reserve_fraction:.0%} reserve; {device.name} has {device.mem_gib:g} GiB: "
                              f"{max(-free, per_token) / GIB:.2f} GiB short of one token of KV cache")
    timing = LlmTiming(device, model, tp=tp, pp=pp, cost_model=cost_model, weights=weights,
                       activations=activations, kv_cache=kv_cache, gpus_per_node=gpus_per_node)
    return Pool(name, timing.prefill_s, timing.decode_s, tokens, gpus=tp * pp, replicas=replicas,
                max_batch=max_batch, token_budget=token_budget,
                max_prefill_tokens=None if token_budget else DEFAULT_PREFILL_TOKENS, role=role, busy_w=device.active_w,
                idle_w=device.idle_w, kv_bytes_per_token=kv_bytes_per_token(config, kv_cache, Parallelism()))
