"""The analytical per-pool table of the ``serving`` family: every pool option, costed once.

A pool option is a GPU type, TP and PP degrees, a batch limit, a role, a clock and a precision. For
each, from the ``llm`` builder costed by the roofline model on the GPU's device (with the runtime's
fitted mechanism values and one DVFS operating point per clock):

* ``s_pf``: one request's prefill (``input_tokens``) on one pipeline stage (the last: it holds the LM
  head, the first only the embedding lookup); ``s_pf_batched``: a request's share of a full prefill
  iteration, ``k`` prompts prefilled together costed as one pass over ``k x input_tokens`` tokens, over
  ``k``, where ``k`` is the whole prompts one iteration holds
  (:func:`~dse.inputs.builders.llm_memory.prompts_per_prefill`: 8,192 tokens, TensorRT-LLM's default
  ``max_num_tokens``, at most ``ceil(batch / pp)``): a saturated pool always has prompts waiting, so
  its runtime packs them (in-flight batching) and the iteration's fixed costs (kernel launches, the
  all-reduces' latency, the weight reads) are paid once per ``k`` prompts;
* ``s_dec``: one decode step of a micro-batch of ``ceil(batch / pp)`` sequences at the mean KV length
  ``input + output / 2`` on that stage, ``s_dec_one`` the same of one sequence, and the step at 1, 2,
  4, ... sequences up to the micro-batch (``step_seconds``; :func:`figures_at_load` needs the step at
  a batch the load sets, and interpolates between these as the simulator does);
* ``t_step = pp x s_dec``: every stage works on the ``pp`` micro-batches in turn, so each sequence
  gets a token per ``pp`` stage passes (steady state, no bubble);
* by role, with ``s_pfb = s_pf_batched``, ``D = output - 1`` decode steps per request (the prefill
  gives the first token; at least one step) and ``B`` the batch limit (:func:`pool_figures`):

  ======= ============================== ================== ==========================
  role    requests/s per replica         TTFT               TPOT
  ======= ============================== ================== ==========================
  both    ``B / (D t_step + B s_pfb)``   ``pp s_pf``        ``(D t_step + B s_pfb) / D``
  prefill ``1 / s_pfb``                  ``pp s_pf + kv``   (none)
  decode  ``B / (D t_step)``             (none)             ``t_step``
  ======= ============================== ================== ==========================

  (``kv``: the seconds the prompt's KV cache, the whole model's bytes per token at the precision
  times ``input_tokens``, takes over ``tp`` links of the GPU, :func:`kv_link_gbps`; a pool that does
  both stalls its decode for each new request's prefill: ``B`` prefills per ``D`` steps); TTFT is a
  lone request's and TPOT the saturated pool's, means, which the SLOs are checked against whatever
  their percentile (:func:`figures_at_load` gives both at an arrival rate below saturation);
* memory per GPU from :func:`dse.inputs.builders.llm_memory.memory_use`: weights, KV cache for
  ``B`` sequences of ``input + output`` tokens (a prefill pool: ``pp x k`` prompts), the activations
  of a prefill iteration of ``k`` prompts (a decode pool: of a step of ``B`` tokens), the runtime
  reserve;
* power per replica: ``tp x pp`` GPUs at ``idle + (active - idle) x clock^2.4`` W (the roofline's
  dynamic power at the operating point; every GPU of a deployment counted busy).

Options that cannot run (a degree that does not divide the model, a group larger than the GPU
type's count, a precision the GPU has no peak for, a batch below ``pp``), do not fit memory, or miss
an SLO are masked (``reason``). Rates are integers in micro-requests per second, power in mW.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial

import numpy as np

from dse.cost import RooflineCostModel
from dse.inputs.builders import build
from dse.inputs.builders.llm import Parallelism
from dse.inputs.builders.llm_memory import GIB, kv_bytes_per_token, memory_use, prompts_per_prefill
from dse.inputs.llm_runtime import runtime_fields
from dse.mapping.serving.inputs import ROLES, Fleet, ServingOptions, ServingWorkload
from dse.model.platform import Device, OperatingPoint, Platform

#: Exponent of the dynamic power in the clock (``P ~ f^2.4``: the DVFS estimate the catalog platforms use).
POWER_EXPONENT = 2.4
#: Why an option is masked: index into this tuple (0: usable).
REASONS = ("ok", "structure", "memory", "ttft", "tpot")
OK, STRUCTURE, MEMORY, TTFT, TPOT = range(len(REASONS))
#: Rates are held in micro-requests per second.
RATE_SCALE = 1_000_000


def kv_link_gbps(device: Device, tp: int) -> float:
    """GB/s that carry a prefill replica's KV cache to a decode pool: each of its ``tp`` GPUs sends its
    shard on its own link (the node's ``intra_node_gbps``, else ``inter_node_gbps``; 0: none)."""
    return tp * (device.intra_node_gbps or device.inter_node_gbps)


def decode_steps(output_tokens: int) -> int:
    """Decode steps a request of ``output_tokens`` tokens takes: the prefill gives the first token, each
    step one more (at least one: a request of one token is costed as if it had two)."""
    return max(1, int(output_tokens) - 1)


def pool_figures(s_pf: np.ndarray, s_dec: np.ndarray, pp: np.ndarray, batch: np.ndarray, output_tokens: int,
                 role: np.ndarray, kv_s: np.ndarray | float = 0.0,
                 s_pf_batched: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(requests/s per replica, TTFT s, TPOT s)`` of pool options (arrays broadcast together) from the
    stage times ``s_pf``, ``s_dec`` and ``s_pf_batched`` (default ``s_pf``: prompts prefilled one at a
    time) and, for a prefill pool, ``kv_s``, the seconds its prompt's KV cache takes to reach the decode
    pool (the module docstring's table; NaN where a role has no TTFT or TPOT)."""
    s_pf, s_dec = np.asarray(s_pf, dtype=float), np.asarray(s_dec, dtype=float)
    s_pfb = s_pf if s_pf_batched is None else np.asarray(s_pf_batched, dtype=float)
    pp, batch, role = np.asarray(pp, dtype=float), np.asarray(batch, dtype=float), np.asarray(role)
    steps = float(decode_steps(output_tokens))
    t_step = pp * s_dec
    cycle = steps * t_step + batch * s_pfb
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.select([role == 0, role == 1], [batch / cycle, 1.0 / s_pfb], batch / (steps * t_step))
    ttft = np.select([role == 0, role == 1], [pp * s_pf, pp * s_pf + kv_s], np.nan)
    tpot = np.select([role == 0, role == 1], [cycle / steps, np.nan], t_step)
    return rate, ttft, tpot


@dataclass(frozen=True, eq=False)
class ServingTable:
    """Every pool option of a problem, flattened in the order ``(gpu, tp, pp, batch, role, clock, precision)``.

    Per option (arrays of ``n_options``): ``gpu`` (type index), ``role``, ``gpus`` per replica,
    ``rate`` (micro-requests/s per replica), ``power_mw`` per replica, ``reason`` (index into
    :data:`REASONS`; 0: usable), ``ttft_s``, ``tpot_s`` (NaN: not the role's), the stage times
    ``s_pf``, ``s_pf_batched``, ``s_dec`` and ``s_dec_one`` (the module docstring's), ``kv_s`` (a
    prefill pool's KV transfer per request, s; 0 for the other roles), ``memory`` (n_options, 4):
    bytes per GPU of weights, KV cache, activations, reserve, and ``step_batches``, ``step_seconds``
    (n_options, samples): a decode step's seconds on one stage at 1, 2, 4, ... sequences up to
    ``ceil(batch / pp)`` (the last repeated to pad; :func:`figures_at_load`'s ``step_samples``).
    ``counts``: GPUs per type; ``max_gpus``: the fleet limit (None: the counts alone); ``price_milli``: per
    type, the price of one GPU-hour in thousandths (1,000 per GPU-hour when the fleet gives no price).
    """

    gpu_names: tuple[str, ...]
    tp: tuple[int, ...]
    pp: tuple[int, ...]
    batch: tuple[int, ...]
    roles: tuple[str, ...]
    clocks: tuple[float, ...]
    precisions: tuple[str, ...]
    counts: np.ndarray
    mem_capacity: np.ndarray
    output_tokens: int
    pools: int
    max_gpus: int | None
    arrival_rate: float | None
    gpu: np.ndarray
    role: np.ndarray
    gpus: np.ndarray
    rate: np.ndarray
    power_mw: np.ndarray
    reason: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    s_pf: np.ndarray
    s_dec: np.ndarray
    memory: np.ndarray
    price_milli: np.ndarray
    s_pf_batched: np.ndarray
    s_dec_one: np.ndarray
    kv_s: np.ndarray
    step_batches: np.ndarray
    step_seconds: np.ndarray

    @cached_property
    def cost_milli(self) -> np.ndarray:
        """Per option, the price of one replica's GPUs for an hour, in thousandths."""
        return self.gpus * self.price_milli[self.gpu]

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.gpu_names), len(self.tp), len(self.pp), len(self.batch), len(self.roles),
                len(self.clocks), len(self.precisions))

    @property
    def n_options(self) -> int:
        return int(np.prod(self.shape))

    @cached_property
    def usable(self) -> np.ndarray:
        """Whether each option can be given replicas."""
        return self.reason == OK

    @cached_property
    def max_replicas(self) -> np.ndarray:
        """Most replicas of each option the fleet holds (its type's count, and the GPU limit, over its size)."""
        cap = self.counts[self.gpu]
        if self.max_gpus is not None:
            cap = np.minimum(cap, self.max_gpus)
        return cap // self.gpus

    @cached_property
    def replica_limit(self) -> int:
        """The replica gene's upper bound: the most replicas any option can take."""
        return int(self.max_replicas.max(initial=0))

    @cached_property
    def rate_bound(self) -> int:
        """An upper bound on a deployment's request rate (micro-requests/s): each usable option at its most
        replicas, summed over the ``pools`` best; the throughput objective is held as this bound minus
        the rate (a non-negative integer to minimize)."""
        best = np.sort(np.where(self.usable, self.rate * self.max_replicas, 0))[::-1]
        return int(best[: self.pools].sum()) + 1

    def index(self, genes: np.ndarray) -> np.ndarray:
        """Option index of gene arrays ``(..., 7)`` in the order (gpu, tp, pp, batch, role, clock, precision)."""
        return np.ravel_multi_index(tuple(np.moveaxis(genes, -1, 0)), self.shape)

    def genes(self, option: int) -> tuple[int, ...]:
        """The gene values of ``option`` (the inverse of :meth:`index`)."""
        return tuple(int(v) for v in np.unravel_index(option, self.shape))

    def label(self, option: int) -> str:
        """``h100_sxm tp4 pp1 b64 both 100% fp8``."""
        g, t, p, b, r, c, q = self.genes(option)
        return (f"{self.gpu_names[g]} tp{self.tp[t]} pp{self.pp[p]} b{self.batch[b]} {self.roles[r]} "
                f"{self.clocks[c]:.0%} {self.precisions[q]}")


def table_from_times(gpu_names: Sequence[str], counts: Sequence[int] | np.ndarray, mem_gib: Sequence[float] | np.ndarray,
                     options: ServingOptions, output_tokens: int, arrival_rate: float | None,
                     s_pf: np.ndarray, s_dec: np.ndarray, power_w: np.ndarray, memory: np.ndarray,
                     structure_ok: np.ndarray, ttft_ms: float | None = None,
                     tpot_ms: float | None = None, kv_s: np.ndarray | float = 0.0,
                     price_per_hour: Sequence[float] | None = None, s_pf_batched: np.ndarray | None = None,
                     s_dec_one: np.ndarray | None = None,
                     step_samples: tuple[np.ndarray, np.ndarray] | None = None) -> ServingTable:
    """The table of options from their stage times ``s_pf``, ``s_dec`` (seconds), power per GPU ``power_w``,
    memory bytes per GPU ``memory`` (…, 4), whether each can run (``structure_ok``) and a prefill pool's
    KV transfer ``kv_s`` (seconds per request), all shaped as the option grid :attr:`ServingTable.shape`
    (memory with a last axis of 4; ``kv_s`` broadcast to it); the SLOs mask the rest. ``price_per_hour``:
    per GPU type, one GPU-hour's price (default 1 each: the cost objective then counts GPU-hours).
    ``s_pf_batched`` (default ``s_pf``: prompts prefilled one at a time) and ``s_dec_one`` (default
    ``s_dec``: a step whatever its batch) as the module docstring says; ``step_samples``: the decode step's
    ``(batches, seconds)`` with a last axis of samples (default: ``(1, s_dec_one)`` and ``(ceil(batch /
    pp), s_dec)``)."""
    roles = ROLES if options.split else ROLES[:1]
    shape = (len(gpu_names), len(options.tp), len(options.pp), len(options.batch), len(roles),
             len(options.clocks), len(options.precisions))
    grid = np.indices(shape).reshape(len(shape), -1)
    g, t, p, b, r = grid[0], grid[1], grid[2], grid[3], grid[4]
    tp, pp, batch = np.array(options.tp)[t], np.array(options.pp)[p], np.array(options.batch)[b]
    s_pf, s_dec = np.asarray(s_pf, dtype=float).ravel(), np.asarray(s_dec, dtype=float).ravel()
    s_pfb = s_pf if s_pf_batched is None else np.asarray(s_pf_batched, dtype=float).ravel()
    s_one = s_dec if s_dec_one is None else np.asarray(s_dec_one, dtype=float).ravel()
    kv = np.broadcast_to(np.asarray(kv_s, dtype=float), shape).ravel()
    step_b, step_s = (np.asarray(a, dtype=float).reshape(len(g), -1)
                      for a in step_samples or line_samples(np.ceil(batch / pp), s_one, s_dec))
    rate, ttft, tpot = pool_figures(s_pf, s_dec, pp, batch, output_tokens, r, kv, s_pfb)
    memory = np.asarray(memory, dtype=float).reshape(-1, 4)
    capacity = np.asarray(mem_gib, dtype=float)[g] * GIB
    reason = np.full(len(g), OK, dtype=np.int64)
    checks = [(TPOT, (tpot_ms is not None) & (tpot * 1e3 > (tpot_ms or 0))),
              (TTFT, (ttft_ms is not None) & (ttft * 1e3 > (ttft_ms or 0))),
              (MEMORY, memory.sum(axis=1) > capacity),
              (STRUCTURE, ~np.asarray(structure_ok, dtype=bool).ravel() | ((r == 1) & ~np.isfinite(kv)))]
    for code, bad in checks:  # the last that applies wins: structure, then memory, then the SLOs
        reason[np.asarray(bad, dtype=bool)] = code
    usable = reason == OK
    rate_int = np.where(usable, np.floor(np.nan_to_num(rate) * RATE_SCALE + 1e-9), 0).astype(np.int64)
    reason[usable & (rate_int <= 0)] = STRUCTURE
    gpus = (tp * pp).astype(np.int64)
    power = np.ceil(np.asarray(power_w, dtype=float).ravel() * gpus * 1e3 - 1e-6).astype(np.int64)
    return ServingTable(tuple(gpu_names), tuple(options.tp), tuple(options.pp), tuple(options.batch), roles,
                        tuple(options.clocks), tuple(options.precisions), np.asarray(counts, dtype=np.int64),
                        np.asarray(mem_gib, dtype=float), int(output_tokens), options.pools, options.max_gpus,
                        arrival_rate, g.astype(np.int64), r.astype(np.int64), gpus, rate_int, power, reason,
                        ttft, tpot, s_pf, s_dec, memory, _price_milli(price_per_hour, len(gpu_names)), s_pfb, s_one,
                        np.where(r == 1, kv, 0.0), step_b, step_s)


def _price_milli(price_per_hour: Sequence[float] | None, n_types: int) -> np.ndarray:
    """Per GPU type, one GPU-hour's price in thousandths (rounded; 1,000 each when no prices are given)."""
    if price_per_hour is None:
        return np.full(n_types, 1000, dtype=np.int64)
    return np.rint(np.asarray(price_per_hour, dtype=float) * 1000).astype(np.int64)


# --------------------------------------------------------------------------- costing with the llm builder


def serving_device(device: Device, clocks: Sequence[float], runtime: str | None) -> Device:
    """``device`` with the runtime's fitted mechanism fields and one operating point per clock fraction
    (compute-bound time ``/ f``, dynamic power ``x f^2.4``)."""
    fields = runtime_fields(runtime) if runtime else {}
    fields = {k: v for k, v in fields.items() if getattr(device, k) in (None, 0.0, {}, ())}
    points = tuple(OperatingPoint(1000.0 * f, 1.0 / f, f**POWER_EXPONENT) for f in clocks)
    return dataclasses.replace(device, dvfs=points if len(points) >= 2 else (), **fields)


def _stage_seconds(cost: RooflineCostModel, device: Device, n_clocks: int, **params: object) -> np.ndarray:
    """Seconds of one llm builder workload (``params``) on ``device``, per clock level."""
    tables = cost.tables(build("llm", **params), Platform(device.name, (device,)))
    if tables.levels is not None and n_clocks >= 2:
        return tables.levels.time[:n_clocks, :, 0].sum(axis=1) * tables.seconds_per_time_unit
    return np.full(n_clocks, tables.time[:, 0].sum() * tables.seconds_per_time_unit)


def tabulate(workload: ServingWorkload, fleet: Fleet, options: ServingOptions,
             progress: Callable[[str], None] | None = None) -> ServingTable:
    """The :class:`ServingTable` of ``workload`` on ``fleet`` over the search space ``options``."""
    config = workload.config
    roles = ROLES if options.split else ROLES[:1]
    shape = (len(fleet.gpus), len(options.tp), len(options.pp), len(options.batch), len(roles),
             len(options.clocks), len(options.precisions))
    s_pf, s_pfb, s_dec, s_one = (np.full(shape, np.inf) for _ in range(4))
    n_samples = len(step_batches(max(options.batch)))
    step_b, step_s = np.ones((*shape, n_samples)), np.full((*shape, n_samples), np.inf)
    power = np.zeros(shape)
    memory = np.zeros((*shape, 4))
    kv_s = np.zeros(shape)
    ok = np.zeros(shape, dtype=bool)
    cost = RooflineCostModel()
    i_len, o_len = workload.input_tokens, workload.output_tokens
    limit = options.max_gpus or 1 << 30
    for g, fg in enumerate(fleet.gpus):
        device = serving_device(fg.device, options.clocks, workload.runtime)
        for c, f in enumerate(options.clocks):
            power[g, ..., c, :] = device.idle_w + (device.active_w - device.idle_w) * f**POWER_EXPONENT
        for (t, tp), (p, pp), (q, prec) in ((a, b, d) for a in enumerate(options.tp) for b in enumerate(options.pp)
                                            for d in enumerate(options.precisions)):
            if (config.heads % tp or config.intermediate % tp or config.layers % pp or tp * pp > min(fg.count, limit)
                    or prec not in fg.device.peak_tflops):
                continue
            par = Parallelism(tp, pp, 1, 0, fg.gpus_per_node)
            link = kv_link_gbps(fg.device, tp)
            kv_s[g, t, p, :, :, :, q] = (kv_bytes_per_token(config, prec, Parallelism()) * i_len / (link * 1e9)
                                         if link > 0 else np.inf)
            for (b, batch), (r, role) in ((x, y) for x in enumerate(options.batch) for y in enumerate(roles)):
                k = prompts_per_prefill(i_len, math.ceil(batch / pp))
                seqs, context, prompt = {"both": (batch, i_len + o_len, k * i_len),
                                         "prefill": (pp * k, i_len, k * i_len),
                                         "decode": (batch, i_len + o_len, batch)}[role]
                use = memory_use(config, seqs, context, fg.device.mem_gib, weights=prec, activations=prec,
                                 kv_cache=prec, par=par, prefill_tokens=prompt)
                memory[g, t, p, b, r, :, q] = (use.weights, use.kv_cache, use.activations, use.reserve)
                ok[g, t, p, b, r, :, q] = batch >= pp
            if not (memory[g, t, p, :, :, 0, q].sum(axis=-1) <= fg.device.mem_gib * GIB).any():
                continue  # no batch fits: nothing to cost
            if progress is not None:
                progress(f"{fg.name} tp{tp} pp{pp} {prec}")
            common = {"model": config.name, "tp": tp, "pp": pp, "stage": pp - 1, "gpus_per_node": fg.gpus_per_node,
                      "weights": prec, "activations": prec, "kv_cache": prec}
            prefill = partial(_stage_seconds, cost, device, len(options.clocks), phase="prefill", seq_len=i_len,
                              **common)
            decode = partial(_stage_seconds, cost, device, len(options.clocks), phase="decode",
                             seq_len=i_len + o_len // 2, **common)
            prefills: dict[int, np.ndarray] = {1: prefill(batch=1)}
            steps: dict[int, np.ndarray] = {1: decode(batch=1)}
            s_pf[g, t, p, :, :, :, q] = prefills[1]
            s_one[g, t, p, :, :, :, q] = steps[1]
            for b, batch in enumerate(options.batch):
                micro = math.ceil(batch / pp)
                k = prompts_per_prefill(i_len, micro)
                if k not in prefills:
                    prefills[k] = prefill(batch=k)
                samples = step_batches(micro)
                samples += [micro] * (n_samples - len(samples))
                for n in samples:
                    if n not in steps:
                        steps[n] = decode(batch=n)
                s_pfb[g, t, p, b, :, :, q] = prefills[k] / k
                s_dec[g, t, p, b, :, :, q] = steps[micro]
                step_b[g, t, p, b, :, :, q] = samples
                step_s[g, t, p, b, :, :, q] = np.stack([steps[n] for n in samples], axis=-1)
    return table_from_times(fleet.names, [fg.count for fg in fleet.gpus], [fg.device.mem_gib for fg in fleet.gpus],
                            options, o_len, workload.arrival_rate, s_pf, s_dec, power, memory, ok,
                            workload.ttft_ms, workload.tpot_ms, kv_s, [fg.price_per_hour for fg in fleet.gpus],
                            s_pfb, s_one, (step_b, step_s))


def step_batches(micro: int) -> list[int]:
    """The batches a decode step is costed at for a micro-batch limit ``micro``: the powers of two below it,
    then ``micro`` (the simulator's grid, :class:`dse.sim.serving.llm.LlmTiming`)."""
    return [1 << i for i in range(max(0, math.ceil(math.log2(micro))))] + [micro] if micro > 1 else [1]


def figures_at_load(s_pf: np.ndarray, s_dec: np.ndarray, s_dec_one: np.ndarray, pp: np.ndarray,
                    batch: np.ndarray, role: np.ndarray, kv_s: np.ndarray | float, arrival: np.ndarray,
                    output_tokens: int,
                    step_samples: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(TTFT s, TPOT s)``, means, of pool options whose replicas each get ``arrival`` requests/s, Poisson
    (arrays broadcast together; NaN where a role has none; inf where the load saturates the pool).

    A replica is ``pp`` engines (:mod:`dse.runtime.serving_deploy`), each fed ``lam = arrival / pp``
    (a Poisson stream split at random stays Poisson). On an engine a prompt's prefill takes
    ``P = pp s_pf``, ``k`` prompts ``k P``; a decode iteration of ``n`` sequences takes ``V(n) = pp
    (c0 + c1 n)`` on the segment of the decode step's samples ``step_samples = (batches, seconds)`` (last
    axis; :func:`step_segments`) that holds ``n``: piecewise linear, as the simulator interpolates
    between the powers of two it costs (a mixture of experts' step is far from one line: a batch of 8
    already reads 90% of Mixtral's experts). The default samples are ``s_dec_one`` (one sequence) and
    ``s_dec`` (``m = ceil(batch / pp)``): one line, ``c1 = (s_dec - s_dec_one) / (m - 1)`` (0 when ``m =
    1``), ``c0 = s_dec_one - c1``. Every formula below holds on one segment, its ``n`` from the solution;
    the first segment whose solution lies on it is taken (the fixed point an empty engine reaches).
    The scheduler (vLLM's default, the simulator's): at each iteration's end, when prompts wait, one
    prefill iteration of all of them (gated: a prompt arriving during it waits for the next), else a
    decode iteration of the running sequences. ``rho = lam P = arrival s_pf`` is the share of time the
    engine prefills, ``D = output - 1`` the decode steps (:func:`decode_steps`).

    * **TTFT** (role both): the engine never idles (it decodes whenever no prompt waits). A prompt
      arriving during an iteration of length ``L`` waits its residual, ``L / 2`` on average, then its own
      batch: itself and the ``Poisson(lam L)`` prompts arriving during ``L``, ``P (1 + lam L)``. Averaged
      over the iteration it lands in, sampled by length (Kleinrock, Queueing Systems Vol. 1, 1975, 5.2:
      ``Lbar = E[L^2] / E[L]`` per unit time), ``TTFT = P + (1/2 + rho) Lbar``. For ``Lbar``, a cycle
      is one decode iteration ``V`` and the prefill batches it sets off: ``Z0 ~ Poisson(lam V)`` prompts,
      then ``Z(j+1) ~ Poisson(rho Zj)`` (those arriving during the batch ``Zj P``) until none, a
      Galton-Watson process with Poisson(``rho``) offspring, the busy period of a gated batch-service
      queue with multiple vacations (Takagi, Queueing Analysis Vol. 1: Vacation and Priority Systems,
      1991, 2.2-2.3). With ``a = lam V``, ``sum E[Zj] = a / (1 - rho)`` and, from ``E[Z(j+1)^2] = rho
      E[Zj] + rho^2 E[Zj^2]``, ``sum E[Zj^2] = (a / (1 - rho) + a^2) / (1 - rho^2)``; the cycle lasts
      ``V / (1 - rho)`` and holds ``V^2 + P^2 sum E[Zj^2]`` of squared length, so
      ``Lbar = V / (1 + rho) + rho P / (1 - rho^2)``.
    * **TPOT** (role both): a sequence's ``D`` steps run from the end of its prefill batch, of length
      ``Lb = P (1 + lam Lbar) = P / (1 - rho^2) + rho V / (1 + rho)``, to its last step, ``T = D TPOT``
      later; every prompt arriving from that batch's start to its end, ``lam (Lb + T)``, is prefilled in
      between: ``T = D V + rho (Lb + T)``. Little's law (Little 1961) puts ``n = lam T`` sequences in
      the decode batch, so ``V = pp c0 + g TPOT`` with ``g = c1 arrival D``, and with
      ``b = 1 + rho^2 / ((1 + rho) D)``: ``TPOT = (b pp c0 + rho P / ((1 - rho^2) D)) / (1 - rho - b g)``.
    * **prefill** pools have no decode: the engine idles when no prompt waits, and an idle cycle
      (mean ``1 / lam``) with the busy period one prompt sets off gives ``Lbar = rho P / (1 - rho^2)``
      (the limit ``V -> 0`` above); ``TTFT = P + (1/2 + rho) Lbar + kv_s``.
    * **decode** pools have no prefill: ``TPOT = V(n)`` with ``n = lam D TPOT``:
      ``TPOT = pp c0 / (1 - g)``.

    Inf past saturation: ``rho >= 1``, a denominator at or below 0, or a decode batch ``n`` above ``m``
    (the batch limit binds: prompts then wait for a free slot, which this model leaves out).
    """
    s_pf = np.asarray(s_pf, dtype=float)
    pp, batch, role = np.asarray(pp, dtype=float), np.asarray(batch, dtype=float), np.asarray(role)
    arrival = np.asarray(arrival, dtype=float)
    steps = float(decode_steps(output_tokens))
    micro = np.ceil(batch / pp)
    c0, c1, low, high = step_segments(*(step_samples or line_samples(micro, s_dec_one, s_dec)))
    # per option, then per segment of the decode step (the last axis)
    s_pf_, pp_, role_, arrival_ = (a[..., None] for a in np.broadcast_arrays(s_pf, pp, role, arrival))
    with np.errstate(divide="ignore", invalid="ignore"):
        lam, prefill = arrival_ / pp_, pp_ * s_pf_
        rho = arrival_ * s_pf_
        g = c1 * arrival_ * steps
        b = 1 + rho**2 / ((1 + rho) * steps)
        spread = rho * prefill / (1 - rho**2)  # rho P / (1 - rho^2)
        both_free = 1 - rho - b * g
        tpot_both = (b * pp_ * c0 + spread / steps) / both_free
        tpot_decode = pp_ * c0 / (1 - g)
        tpot_all = np.where(role_ == 0, tpot_both, tpot_decode)
        free_all = np.where(role_ == 0, both_free, 1 - g)
        n = lam * steps * tpot_all  # the decode batch the load holds, on each segment's line
        index, last = np.arange(c0.shape[-1]), c0.shape[-1] - 1  # n on the segment, to rounding; the first
        fits = (free_all > 0) & (tpot_all > 0) & ((n >= low * (1 - 1e-9)) | (index == 0)) & \
            ((n <= high * (1 + 1e-9)) | (index == last))  # also holds fewer, the last more
        seg = np.argmax(fits, axis=-1)[..., None]  # the first segment whose line holds its own solution
        found = _pick(seg, fits, fits.shape)
        tpot_both, tpot_decode, g, c0 = (_pick(seg, v, fits.shape) for v in (tpot_both, tpot_decode, g, c0))
        rho, spread, prefill = (_pick(seg, v, fits.shape) for v in (rho, spread, prefill))
        step_both = pp * c0 + g * tpot_both  # V at the load's batch
        ttft_both = prefill + (0.5 + rho) * (step_both / (1 + rho) + spread)
        ttft_prefill = prefill + (0.5 + rho) * spread + np.asarray(kv_s, dtype=float)
        tpot = np.select([role == 0, role == 1], [tpot_both, np.nan], tpot_decode)
        ttft = np.select([role == 0, role == 1], [ttft_both, ttft_prefill], np.nan)
        full = (role != 1) & (arrival / pp * steps * tpot > micro)
    saturated = (rho >= 1) & (role != 2) | ((role != 1) & ~found) | full
    return np.where(saturated & ~np.isnan(ttft), np.inf, ttft), np.where(saturated & ~np.isnan(tpot), np.inf, tpot)


def _pick(segment: np.ndarray, values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``values`` (broadcast to ``shape``: …, segments) at each option's ``segment`` (…, 1)."""
    return np.take_along_axis(np.broadcast_to(values, shape), segment, axis=-1)[..., 0]


def line_samples(micro: np.ndarray, s_dec_one: np.ndarray, s_dec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The decode step's samples ``(batches, seconds)`` when only its ends are known: one sequence
    (``s_dec_one``) and the micro-batch ``micro`` (``s_dec``), arrays broadcast together: one line."""
    ends = np.broadcast_arrays(np.ones_like(micro, dtype=float), np.asarray(micro, dtype=float),
                               np.asarray(s_dec_one, dtype=float), np.asarray(s_dec, dtype=float))
    return np.stack(ends[:2], axis=-1), np.stack(ends[2:], axis=-1)


def step_segments(batches: np.ndarray, seconds: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(c0, c1, low, high)`` (…, samples - 1): the lines ``c0 + c1 n`` through consecutive samples of a
    decode step's seconds at ``batches`` sequences (…, samples; ascending, the last repeated to pad),
    between ``low`` and ``high`` sequences (a padded segment repeats the one before it)."""
    batches, seconds = np.broadcast_arrays(np.asarray(batches, dtype=float), np.asarray(seconds, dtype=float))
    if batches.shape[-1] == 1:
        return seconds, np.zeros_like(seconds), batches, batches
    low, high = batches[..., :-1].copy(), batches[..., 1:].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        c1 = np.where(high > low, (seconds[..., 1:] - seconds[..., :-1]) / (high - low), np.nan)
    for k in range(1, c1.shape[-1]):  # padding: carry the segment before it
        pad = np.isnan(c1[..., k])
        c1[..., k] = np.where(pad, c1[..., k - 1], c1[..., k])
        low[..., k] = np.where(pad, low[..., k - 1], low[..., k])
        high[..., k] = np.where(pad, high[..., k - 1], high[..., k])
    c1 = np.nan_to_num(c1)  # one sample only: a flat step
    c0 = seconds[..., :-1] - c1 * batches[..., :-1]
    c0 = np.where(np.isnan(c0), seconds[..., :1], c0)
    return c0, c1, low, high
