"""The analytical per-pool table of the ``serving`` family: every pool option, costed once.

A pool option is a GPU type, TP and PP degrees, a batch limit, a role, a clock and a precision. For
each, from the ``llm`` builder costed by the roofline model on the GPU's device (with the runtime's
fitted mechanism values and one DVFS operating point per clock):

* ``s_pf``: one request's prefill (``input_tokens``) on one pipeline stage (the last: it holds the LM
  head, the first only the embedding lookup), and ``s_dec``: one decode step of a micro-batch of
  ``ceil(batch / pp)`` sequences at the mean KV length ``input + output / 2`` on that stage;
* ``t_step = pp x s_dec``: every stage works on the ``pp`` micro-batches in turn, so each sequence
  gets a token per ``pp`` stage passes (steady state, no bubble);
* by role, with ``O`` output tokens per request and ``B`` the batch limit (:func:`pool_figures`):

  ====== ============================== ================== ==========================
  role   requests/s per replica         TTFT               TPOT
  ====== ============================== ================== ==========================
  both   ``B / (O t_step + B s_pf)``    ``pp s_pf``        ``(O t_step + B s_pf) / O``
  prefill ``1 / s_pf``                  ``pp s_pf + kv``   (none)
  decode ``B / (O t_step)``             (none)             ``t_step``
  ====== ============================== ================== ==========================

  (``kv``: the seconds the prompt's KV cache, the whole model's bytes per token at the precision
  times ``input_tokens``, takes over ``tp`` links of the GPU, :func:`kv_link_gbps`; a pool that does
  both stalls its decode for each new request's prefill: ``B`` prefills per ``O`` steps); TTFT and TPOT are means, which the SLOs are checked against whatever their percentile;
* memory per GPU from :func:`dse.inputs.builders.llm_memory.memory_use`: weights, KV cache for
  ``B`` sequences of ``input + output`` tokens (a prefill pool: ``pp`` prompts), the activations of
  one prompt's prefill, the runtime reserve;
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
from functools import cached_property

import numpy as np

from dse.cost import RooflineCostModel
from dse.inputs.builders import build
from dse.inputs.builders.llm import Parallelism
from dse.inputs.builders.llm_memory import GIB, kv_bytes_per_token, memory_use
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


def pool_figures(s_pf: np.ndarray, s_dec: np.ndarray, pp: np.ndarray, batch: np.ndarray, output_tokens: int,
                 role: np.ndarray, kv_s: np.ndarray | float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(requests/s per replica, TTFT s, TPOT s)`` of pool options (arrays broadcast together) from the
    stage times ``s_pf`` and ``s_dec`` and, for a prefill pool, ``kv_s``, the seconds its prompt's KV cache
    takes to reach the decode pool (the module docstring's table; NaN where a role has no TTFT or TPOT)."""
    s_pf, s_dec = np.asarray(s_pf, dtype=float), np.asarray(s_dec, dtype=float)
    pp, batch, role = np.asarray(pp, dtype=float), np.asarray(batch, dtype=float), np.asarray(role)
    o = float(output_tokens)
    t_step = pp * s_dec
    cycle = o * t_step + batch * s_pf
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.select([role == 0, role == 1], [batch / cycle, 1.0 / s_pf], batch / (o * t_step))
    ttft = np.select([role == 0, role == 1], [pp * s_pf, pp * s_pf + kv_s], np.nan)
    tpot = np.select([role == 0, role == 1], [cycle / o, np.nan], t_step)
    return rate, ttft, tpot


@dataclass(frozen=True, eq=False)
class ServingTable:
    """Every pool option of a problem, flattened in the order ``(gpu, tp, pp, batch, role, clock, precision)``.

    Per option (arrays of ``n_options``): ``gpu`` (type index), ``role``, ``gpus`` per replica,
    ``rate`` (micro-requests/s per replica), ``power_mw`` per replica, ``reason`` (index into
    :data:`REASONS`; 0: usable), ``ttft_s``, ``tpot_s`` (NaN: not the role's), ``s_pf``, ``s_dec``,
    and ``memory`` (n_options, 4): bytes per GPU of weights, KV cache, activations, reserve.
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
                     price_per_hour: Sequence[float] | None = None) -> ServingTable:
    """The table of options from their stage times ``s_pf``, ``s_dec`` (seconds), power per GPU ``power_w``,
    memory bytes per GPU ``memory`` (…, 4), whether each can run (``structure_ok``) and a prefill pool's
    KV transfer ``kv_s`` (seconds per request), all shaped as the option grid :attr:`ServingTable.shape`
    (memory with a last axis of 4; ``kv_s`` broadcast to it); the SLOs mask the rest. ``price_per_hour``:
    per GPU type, one GPU-hour's price (default 1 each: the cost objective then counts GPU-hours)."""
    roles = ROLES if options.split else ROLES[:1]
    shape = (len(gpu_names), len(options.tp), len(options.pp), len(options.batch), len(roles),
             len(options.clocks), len(options.precisions))
    grid = np.indices(shape).reshape(len(shape), -1)
    g, t, p, b, r = grid[0], grid[1], grid[2], grid[3], grid[4]
    tp, pp, batch = np.array(options.tp)[t], np.array(options.pp)[p], np.array(options.batch)[b]
    s_pf, s_dec = np.asarray(s_pf, dtype=float).ravel(), np.asarray(s_dec, dtype=float).ravel()
    kv = np.broadcast_to(np.asarray(kv_s, dtype=float), shape).ravel()
    rate, ttft, tpot = pool_figures(s_pf, s_dec, pp, batch, output_tokens, r, kv)
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
                        ttft, tpot, s_pf, s_dec, memory, _price_milli(price_per_hour, len(gpu_names)))


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
    s_pf, s_dec, power = np.full(shape, np.inf), np.full(shape, np.inf), np.zeros(shape)
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
                seqs, context, prompt = {"both": (batch, i_len + o_len, i_len), "prefill": (pp, i_len, i_len),
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
            pf = _stage_seconds(cost, device, len(options.clocks), phase="prefill", batch=1, seq_len=i_len, **common)
            s_pf[g, t, p, :, :, :, q] = pf
            steps: dict[int, np.ndarray] = {}
            for b, batch in enumerate(options.batch):
                micro = math.ceil(batch / pp)
                if micro not in steps:
                    steps[micro] = _stage_seconds(cost, device, len(options.clocks), phase="decode", batch=micro,
                                                  seq_len=i_len + o_len // 2, **common)
                s_dec[g, t, p, b, :, :, q] = steps[micro]
    return table_from_times(fleet.names, [fg.count for fg in fleet.gpus], [fg.device.mem_gib for fg in fleet.gpus],
                            options, o_len, workload.arrival_rate, s_pf, s_dec, power, memory, ok,
                            workload.ttft_ms, workload.tpot_ms, kv_s, [fg.price_per_hour for fg in fleet.gpus])


def figures_at_load(s_pf: np.ndarray, s_dec: np.ndarray, pp: np.ndarray, role: np.ndarray,
                    kv_s: np.ndarray | float, arrival: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(TTFT s, TPOT s)``, means, of pool options whose replicas each get ``arrival`` requests/s
    (arrays broadcast together; NaN where a role has none): with ``rho = arrival x s_pf``, the share of
    each stage's time spent prefilling, the prefill waits as in an M/D/1 queue (``rho P / (2 (1 - rho))``
    for ``P = pp s_pf``) and a decode of a pool that does both runs ``1 - rho`` of the time
    (``t_step / (1 - rho)``; at the saturated rate this is :func:`pool_figures`' TPOT). Inf at or past
    saturation (``rho >= 1``)."""
    s_pf, s_dec = np.asarray(s_pf, dtype=float), np.asarray(s_dec, dtype=float)
    pp, role = np.asarray(pp, dtype=float), np.asarray(role)
    rho = np.asarray(arrival, dtype=float) * s_pf
    with np.errstate(divide="ignore", invalid="ignore"):
        free = np.where(rho < 1, 1 - rho, 0.0)
        wait = np.where(rho < 1, rho * pp * s_pf / (2 * free), np.inf)
        ttft = np.select([role == 0, role == 1], [pp * s_pf + wait, pp * s_pf + wait + kv_s], np.nan)
        tpot = np.select([role == 0, role == 1], [np.where(rho < 1, pp * s_dec / free, np.inf), np.nan],
                         pp * s_dec)
    return ttft, tpot
