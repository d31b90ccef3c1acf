"""What a serving simulation takes: GPU pools, the deployment of them, and the requests.

* :class:`Pool`: ``replicas`` identical engines of ``gpus`` GPUs each, their per-iteration limits (running
  sequences, a token budget for chunked prefill), role (``both``, ``prefill`` or ``decode``), timing
  functions, KV capacity and power;
* :class:`Deployment`: the pools and the bandwidth that carries a finished prefill's KV cache to a decode
  pool;
* :class:`Requests`: arrival times and input and output lengths, from a Poisson process
  (:func:`poisson`), all at once (:func:`offline`) or given (a trace: :mod:`dse.runtime.serving` reads
  one from a CSV file); :meth:`Requests.at_rate` replays the same requests at another rate;
* :class:`Lengths`: a token-length distribution to draw lengths from.

Invalid values raise :class:`~dse.errors.SpecError` naming the pool (or the requests) and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dse.errors import SpecError

#: The roles a pool can play: prefill and decode on the same engines, or one of the two.
ROLES = ("both", "prefill", "decode")
#: The kinds of :class:`Lengths`.
LENGTH_KINDS = ("fixed", "uniform", "choice")
#: How a request picks its replica: the one with the fewest unfinished requests (vLLM's rule between its
#: virtual engines), or one drawn uniformly at random (each replica then sees a Poisson stream when the
#: arrivals are Poisson).
ROUTINGS = ("least_unfinished", "random")

#: Seconds of one iteration's prefill of these chunks (token counts), or of one decode step of sequences
#: whose KV caches hold these lengths; called with an int64 array, never empty.
TimingFn = Callable[[np.ndarray], float]


@dataclass(frozen=True)
class Pool:
    """``replicas`` engines of ``gpus`` GPUs each, scheduled iteration by iteration.

    ``prefill_s(chunks)``: seconds to prefill chunks of these token counts in one iteration;
    ``decode_s(kv)``: seconds of one decode step of a batch whose sequences hold these KV lengths; an
    iteration with both takes their sum. ``kv_capacity_tokens``: KV-cache tokens one replica holds;
    ``max_batch``: sequences one replica runs at once; ``token_budget``: tokens per iteration (chunked
    prefill, decodes first, each one token) or None (whole prompts, prefill iterations first);
    ``max_prefill_tokens``: without a token budget, the prompt tokens one prefill iteration holds (whole
    prompts, at least one; TensorRT-LLM's ``max_num_tokens``, vLLM's ``max_num_batched_tokens``), None:
    no limit; ``busy_w`` and ``idle_w``: one GPU's power while its replica runs an iteration and while it waits;
    ``kv_bytes_per_token``: bytes of KV cache a prefill pool sends per prompt token to a decode pool.
    """

    name: str
    prefill_s: TimingFn = field(repr=False)
    decode_s: TimingFn = field(repr=False)
    kv_capacity_tokens: int
    gpus: int = 1
    replicas: int = 1
    max_batch: int = 256
    token_budget: int | None = None
    max_prefill_tokens: int | None = None
    role: str = "both"
    busy_w: float = 0.0
    idle_w: float = 0.0
    kv_bytes_per_token: float = 0.0

    def __post_init__(self) -> None:
        where = f"pool {self.name}"
        for name in ("kv_capacity_tokens", "gpus", "replicas", "max_batch"):
            value = getattr(self, name)
            if not isinstance(value, int | np.integer) or value < 1:
                raise SpecError(where, name, value, "must be an integer >= 1")
        if self.token_budget is not None and not (isinstance(self.token_budget, int | np.integer)
                                                  and self.token_budget >= self.max_batch):
            raise SpecError(where, "token_budget", self.token_budget,
                            f"must be an integer >= max_batch ({self.max_batch}): every running sequence decodes")
        if self.max_prefill_tokens is not None and not (isinstance(self.max_prefill_tokens, int | np.integer)
                                                        and self.max_prefill_tokens >= 1):
            raise SpecError(where, "max_prefill_tokens", self.max_prefill_tokens, "must be an integer >= 1 or none")
        if self.role not in ROLES:
            raise SpecError(where, "role", self.role, f"must be one of {', '.join(ROLES)}")
        for name in ("busy_w", "idle_w", "kv_bytes_per_token"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise SpecError(where, name, value, "must be a finite number >= 0")

    @property
    def prefills(self) -> bool:
        """Whether new requests are prefilled here (role ``both`` or ``prefill``)."""
        return self.role != "decode"


@dataclass(frozen=True)
class Deployment:
    """``pools`` serving one model; ``kv_link_gbps``: GB/s (1e9 bytes/s) that carry each finished prefill's
    KV cache from a ``prefill`` pool to a ``decode`` pool (each transfer at the full bandwidth);
    ``routing``: how a request picks its replica (:data:`ROUTINGS`), ``routing_seed`` the random one's
    seed (a run is deterministic either way)."""

    pools: tuple[Pool, ...]
    kv_link_gbps: float = 0.0
    routing: str = "least_unfinished"
    routing_seed: int = 0

    def __post_init__(self) -> None:
        if not self.pools:
            raise SpecError("deployment", "pools", [], "needs at least one pool")
        names = [p.name for p in self.pools]
        for k, name in enumerate(names):
            if name in names[:k]:
                raise SpecError("deployment", f"pools[{k}].name", name, "is used by another pool")
        roles = {p.role for p in self.pools}
        if "prefill" in roles and "decode" not in roles:
            raise SpecError("deployment", "pools", names, "a prefill pool needs a decode pool to hand its requests to")
        if "decode" in roles and "prefill" not in roles:
            raise SpecError("deployment", "pools", names, "a decode pool needs a prefill pool to receive requests from")
        if "prefill" in roles and not (np.isfinite(self.kv_link_gbps) and self.kv_link_gbps > 0):
            raise SpecError("deployment", "kv_link_gbps", self.kv_link_gbps,
                            "must be > 0 when prefill and decode pools are split")
        if self.routing not in ROUTINGS:
            raise SpecError("deployment", "routing", self.routing, f"must be one of {', '.join(ROUTINGS)}")
        if not (isinstance(self.routing_seed, int | np.integer) and self.routing_seed >= 0):
            raise SpecError("deployment", "routing_seed", self.routing_seed, "must be an integer >= 0")

    @property
    def disaggregated(self) -> bool:
        """Whether prefill and decode run on separate pools."""
        return any(p.role == "prefill" for p in self.pools)

    def transfer_s(self, pool: Pool, prompt_tokens: int) -> float:
        """Seconds to carry ``prompt_tokens`` tokens of ``pool``'s KV cache over the link."""
        return pool.kv_bytes_per_token * prompt_tokens / (self.kv_link_gbps * 1e9)


@dataclass(frozen=True)
class Lengths:
    """A distribution of token lengths: ``fixed`` (``values[0]``), ``uniform`` (integers from ``values[0]`` to
    ``values[1]``, both included) or ``choice`` (``values`` with ``weights``, equal when empty)."""

    kind: str
    values: tuple[int, ...]
    weights: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        where = "lengths"
        if self.kind not in LENGTH_KINDS:
            raise SpecError(where, "kind", self.kind, f"must be one of {', '.join(LENGTH_KINDS)}")
        needed = {"fixed": 1, "uniform": 2}.get(self.kind)
        if needed is not None and len(self.values) != needed:
            raise SpecError(where, "values", list(self.values), f"a {self.kind} distribution takes {needed}")
        if not self.values or any(int(v) != v or v < 1 for v in self.values):
            raise SpecError(where, "values", list(self.values), "must be integers >= 1")
        if self.kind == "uniform" and self.values[0] > self.values[1]:
            raise SpecError(where, "values", list(self.values), "the low end exceeds the high end")
        if self.weights and (len(self.weights) != len(self.values) or min(self.weights) < 0
                             or sum(self.weights) <= 0):
            raise SpecError(where, "weights", list(self.weights), "one weight >= 0 per value, not all zero")

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` lengths drawn with ``rng`` (int64)."""
        if self.kind == "fixed":
            return np.full(n, self.values[0], dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(self.values[0], self.values[1] + 1, size=n, dtype=np.int64)
        p = np.asarray(self.weights, dtype=float) if self.weights else np.ones(len(self.values))
        return np.asarray(self.values, dtype=np.int64)[rng.choice(len(self.values), size=n, p=p / p.sum())]

    @property
    def mean(self) -> float:
        """The distribution's mean length."""
        if self.kind == "fixed":
            return float(self.values[0])
        if self.kind == "uniform":
            return (self.values[0] + self.values[1]) / 2
        p = np.asarray(self.weights, dtype=float) if self.weights else np.ones(len(self.values))
        return float(np.dot(p / p.sum(), self.values))


def fixed(n: int) -> Lengths:
    """Every request ``n`` tokens long."""
    return Lengths("fixed", (n,))


def uniform(low: int, high: int) -> Lengths:
    """Lengths drawn uniformly from ``low`` to ``high`` tokens (both included)."""
    return Lengths("uniform", (low, high))


@dataclass(frozen=True, eq=False)
class Requests:
    """Requests by arrival: ``arrival_s`` (non-decreasing, >= 0), ``input_len`` and ``output_len`` (tokens,
    >= 1); ``source`` names where they came from (in errors). :func:`requests` builds validated ones."""

    arrival_s: np.ndarray
    input_len: np.ndarray
    output_len: np.ndarray
    source: str = "requests"

    def __len__(self) -> int:
        return len(self.arrival_s)

    def at_rate(self, factor: float) -> Requests:
        """The same requests arriving ``factor`` times as fast (arrival times divided by ``factor``)."""
        if not factor > 0:
            raise SpecError(self.source, "rate", factor, "must be > 0")
        return Requests(self.arrival_s / factor, self.input_len, self.output_len, self.source)


def requests(arrival_s: Sequence[float] | np.ndarray, input_len: Sequence[int] | np.ndarray,
             output_len: Sequence[int] | np.ndarray, source: str = "requests") -> Requests:
    """Validated :class:`Requests`; raises :class:`SpecError` naming ``source``, the column and the first
    bad row (lengths that differ, a negative or decreasing arrival time, a length below 1)."""
    arrival = np.asarray(arrival_s, dtype=float)
    inputs = np.asarray(input_len)
    outputs = np.asarray(output_len)
    if not len(arrival) == len(inputs) == len(outputs):
        raise SpecError(source, "rows", (len(arrival), len(inputs), len(outputs)), "columns differ in length")
    for name, column in (("input_len", inputs), ("output_len", outputs)):
        bad = np.flatnonzero(~np.isfinite(column.astype(float)) | (column.astype(float) < 1)
                             | (column.astype(float) != np.round(column.astype(float))))
        if len(bad):
            raise SpecError(source, f"{name}[{bad[0]}]", column[bad[0]].item(), "must be an integer >= 1")
    bad = np.flatnonzero(~np.isfinite(arrival) | (arrival < 0))
    if len(bad):
        raise SpecError(source, f"arrival_s[{bad[0]}]", float(arrival[bad[0]]), "must be a finite time >= 0")
    back = np.flatnonzero(np.diff(arrival) < 0)
    if len(back):
        raise SpecError(source, f"arrival_s[{back[0] + 1}]", float(arrival[back[0] + 1]),
                        f"is before the row above ({float(arrival[back[0]])}): sort the requests by arrival")
    return Requests(arrival, inputs.astype(np.int64), outputs.astype(np.int64), source)


def poisson(rate: float, n: int, input_len: Lengths, output_len: Lengths, seed: int = 0) -> Requests:
    """``n`` requests of a Poisson process of ``rate`` per second (exponential gaps, the first after one
    gap), lengths drawn from ``input_len`` and ``output_len``; the same for a seed. The gaps are drawn at
    rate 1 and divided by ``rate``, so two rates with one seed give the same requests, scaled in time."""
    if not (np.isfinite(rate) and rate > 0):
        raise SpecError("poisson", "rate", rate, "must be a finite rate > 0 per second")
    if n < 1:
        raise SpecError("poisson", "n", n, "must be >= 1")
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(1.0, n)) / rate
    return Requests(arrival, input_len.sample(rng, n), output_len.sample(rng, n), f"poisson rate {rate:g}/s")


def offline(n: int, input_len: Lengths, output_len: Lengths, seed: int = 0) -> Requests:
    """``n`` requests all arriving at time 0 (an offline batch), lengths drawn as in :func:`poisson`."""
    if n < 1:
        raise SpecError("offline", "n", n, "must be >= 1")
    rng = np.random.default_rng(seed)
    return Requests(np.zeros(n), input_len.sample(rng, n), output_len.sample(rng, n), "offline")
