"""The serving simulation: requests on a :class:`~dse.sim.serving.inputs.Deployment`, iteration by iteration.

Semantics (``docs/serving-simulator.md``):

* a request arrives and joins the waiting queue of the prefilling replica (of a ``both`` or ``prefill``
  pool) with the fewest unfinished requests (ties: the first pool, the first replica), or, with the
  deployment's ``routing`` ``random``, of one drawn uniformly (seeded);
* a replica runs one iteration at a time (continuous batching as in Orca and vLLM: the batch is formed
  anew every iteration). With a ``token_budget`` (chunked prefill, as Sarathi-Serve and vLLM): every
  running sequence that has its first token decodes (one token of the budget each), then the partly
  prefilled ones continue and waiting ones are admitted, first come first served, with chunks that fit
  the rest of the budget and the KV cache. Without one: a prefill iteration of the waiting requests
  that fit (whole prompts, first come first served, within the pool's ``max_prefill_tokens`` and at
  least one) when any does, else a decode iteration (vLLM's default scheduler);
* KV cache: a sequence holds one token of cache per token processed; a decode step needs one more per
  sequence. When they do not fit, the newest running sequence is preempted (vLLM's recompute policy):
  its cache is freed and it goes back to the front of the waiting queue, to prefill its prompt and the
  tokens generated so far again, which produces its next token;
* a prefill produces the request's first token at the end of its iteration; on a ``prefill`` pool the
  request then leaves, its prompt's KV cache (``kv_bytes_per_token x input_len``) crosses the link at
  ``kv_link_gbps`` and it joins the least-loaded ``decode`` replica, which admits it with that cache:
  its first token counts from the transfer's end;
* per request: TTFT (first token less arrival), TPOT (the rest of the tokens' time divided by their
  number, output length less one) and end-to-end latency; per pool: busy time (iterations) and energy
  (``busy_w`` while busy and ``idle_w`` otherwise, per GPU, over the run).

Times are integer nanoseconds on an :class:`~dse.sim.core.IntEventQueue` (an iteration of ``t`` s takes
``ceil(t x 1e9)`` ns, at least 1); a run is deterministic. :class:`ServingRun` holds a run's state and
its steps; :func:`simulate` builds and plays one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from dse.errors import InfeasibleError
from dse.sim.core import IntEventQueue, energy_j
from dse.sim.serving.inputs import Deployment, Pool, Requests
from dse.util.interrupt import stop_point
from dse.util.rounding import ceil_int

#: Events between two checks for a stop request (a power of two minus one: a bit mask).
STOP_EVERY = 4095
#: Columns of :attr:`ServingResult.iterations` (one row per iteration of a replica).
ITERATION_COLUMNS = ("pool", "replica", "start_s", "end_s", "prefill_tokens", "prefills", "decodes", "kv_tokens")


class _Request:
    """One request's state while it runs (mutable)."""

    __slots__ = ("id", "arrival", "input", "output", "generated", "target", "done", "kv", "first", "finish",
                 "preemptions", "prefill_pool", "decode_pool", "replica", "kv_ready")

    def __init__(self, k: int, arrival: int, input_len: int, output_len: int) -> None:
        self.id = k
        self.arrival = arrival
        self.input = input_len
        self.output = output_len
        self.generated = 0  # tokens produced
        self.target = input_len  # tokens to prefill (the prompt, or all tokens so far after a preemption)
        self.done = 0  # of target, prefilled
        self.kv = 0  # KV-cache tokens held on its replica
        self.first = -1  # ns of the first token
        self.finish = -1
        self.preemptions = 0
        self.prefill_pool = -1
        self.decode_pool = -1
        self.replica: _Replica | None = None
        self.kv_ready = 0  # KV tokens it brings to a decode replica (0: it prefills there)

    @property
    def decoding(self) -> bool:
        return self.done == self.target and self.kv_ready == 0


class _Replica:
    """One engine of a pool: its queues, KV use and time booked."""

    __slots__ = ("pool", "index", "spec", "waiting", "running", "used", "busy", "busy_ns", "load", "batch")

    def __init__(self, pool: int, index: int, spec: Pool) -> None:
        self.pool = pool
        self.index = index
        self.spec = spec
        self.waiting: deque[_Request] = deque()
        self.running: list[_Request] = []
        self.used = 0  # KV tokens held
        self.busy = False
        self.busy_ns = 0
        self.load = 0  # unfinished requests routed here
        self.batch: tuple[list[tuple[_Request, int]], list[_Request]] = ([], [])


@dataclass(frozen=True, eq=False)
class ServingResult:
    """A run's outcome. Per request (arrays in arrival order): ``ttft_s``, ``tpot_s`` (NaN for one output
    token), ``e2e_s``, ``finish_s`` (NaN when it did not finish), ``preemptions``, ``prefill_pool`` and
    ``decode_pool`` (pool indices, -1 where none). Per pool: ``busy_s`` (summed over replicas),
    ``energy_j``, ``output_tokens`` (of the requests that finished there). ``horizon_s``: from 0 to the last event played; ``mean_in_system``:
    the time-average number of requests arrived and not finished; ``complete``: False when a stop cut the
    run short; ``iterations``: rows of :data:`ITERATION_COLUMNS` (empty unless asked for)."""

    pool_names: tuple[str, ...]
    requests: Requests
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    e2e_s: np.ndarray
    finish_s: np.ndarray
    preemptions: np.ndarray
    prefill_pool: np.ndarray
    decode_pool: np.ndarray
    busy_s: np.ndarray
    energy_j: np.ndarray
    output_tokens: np.ndarray
    horizon_s: float
    mean_in_system: float
    complete: bool
    iterations: tuple[tuple[object, ...], ...] = ()

    @property
    def finished(self) -> np.ndarray:
        """Whether each request finished (bool array)."""
        return np.isfinite(self.finish_s)

    def percentile(self, metric: str, q: float) -> float:
        """The ``q``-th percentile (numpy's linear rule) of ``ttft_s``, ``tpot_s`` or ``e2e_s`` over the
        requests with a value; NaN when none has one."""
        values = getattr(self, metric)
        values = values[np.isfinite(values)]
        return float(np.percentile(values, q)) if len(values) else float("nan")

    @property
    def throughput_tok_s(self) -> float:
        """Output tokens of the finished requests per second of the run."""
        done = self.requests.output_len[self.finished].sum()
        return float(done / self.horizon_s) if self.horizon_s > 0 else 0.0


class ServingRun:
    """One run of ``requests`` on ``deployment``: the simulation's state and its steps.

    :func:`simulate` builds one and plays it with :meth:`run`, once. Raises
    :class:`~dse.errors.InfeasibleError` when a request's context (input and output less one token)
    exceeds the KV capacity of a pool it can land on: it could never finish.
    """

    def __init__(self, deployment: Deployment, requests: Requests, *, trace: bool = False) -> None:
        self.deployment = deployment
        self.requests = requests
        self.trace = trace
        self.replicas = [[_Replica(p, r, pool) for r in range(pool.replicas)] for p, pool in enumerate(deployment.pools)]
        self.prefillers = [r for reps in self.replicas for r in reps if r.spec.prefills]
        self.decoders = [r for reps in self.replicas for r in reps if r.spec.role == "decode"]
        arrivals = [ceil_int(t * 1e9) for t in requests.arrival_s.tolist()]
        self.reqs = [_Request(k, a, int(i), int(o)) for k, (a, i, o) in
                     enumerate(zip(arrivals, requests.input_len.tolist(), requests.output_len.tolist(), strict=True))]
        self._check_capacity()
        self.queue = IntEventQueue()
        self.rng = np.random.default_rng(deployment.routing_seed) if deployment.routing == "random" else None
        self.rows: list[tuple[object, ...]] = []
        self.in_system = 0
        self.area_ns = 0  # integral of the number in system over time, request x ns
        self.last_ns = 0
        self.played = False

    def _check_capacity(self) -> None:
        if not self.reqs:
            return
        context = self.requests.input_len + self.requests.output_len - 1
        for pool in self.deployment.pools:
            needs = context if pool.role != "prefill" else self.requests.input_len
            k = int(np.argmax(needs))
            own = int(needs[k])
            if own > pool.kv_capacity_tokens:
                raise InfeasibleError(f"KV capacity: request {k} needs {own} tokens of KV cache, pool {pool.name} "
                                      f"holds {pool.kv_capacity_tokens} per replica ({own - pool.kv_capacity_tokens} "
                                      "over): it could never finish")

    # ------------------------------------------------------------------ the loop

    def run(self, stoppable: bool = True) -> ServingResult:
        """Play every arrival, iteration end and transfer in time order; idle replicas with work start an
        iteration after the last event of each instant. Returns the :class:`ServingResult`.

        Raises ``RuntimeError`` when this run was already played and, when ``stoppable``,
        :class:`~dse.util.interrupt.Interrupted` once a stop is requested (checked at the first event and
        every ``STOP_EVERY + 1`` after it), with the partial result (``complete`` False) as ``partial``.
        """
        if self.played:
            raise RuntimeError("a ServingRun plays once; build a new one")
        self.played = True
        queue = self.queue
        for req in self.reqs:
            queue.push(req.arrival, "arrive", req)
        events = 0
        touched: set[_Replica] = set()
        while queue:
            events += 1
            if stoppable and (events & STOP_EVERY) == 1:
                stop_point(lambda: self.result(complete=False))
            event = queue.pop()
            now = event.time
            self.area_ns += self.in_system * (now - self.last_ns)
            self.last_ns = now
            if event.kind == "arrive":
                self.in_system += 1
                touched.add(self.route(event.item, self.prefillers))
            elif event.kind == "end":
                touched.update(self.end_iteration(event.item, now))
            else:  # "transfer": the KV cache reached the decode pool
                req = event.item
                req.first = now
                touched.add(self.route(req, self.decoders))
            if not queue or queue.peek_time() > now:
                for rep in sorted(touched, key=lambda r: (r.pool, r.index)):
                    if not rep.busy:
                        self.start_iteration(rep, now)
                touched.clear()
        return self.result(complete=True)

    def route(self, req: _Request, candidates: list[_Replica]) -> _Replica:
        """Queue ``req`` at the candidate with the fewest unfinished requests (the first on ties), or at
        one drawn uniformly when the deployment routes at random."""
        if self.rng is not None:
            rep = candidates[int(self.rng.integers(len(candidates)))]
        else:
            rep = min(candidates, key=lambda r: (r.load, r.pool, r.index))
        rep.load += 1
        req.replica = rep
        if rep.spec.role == "decode":
            req.decode_pool = rep.pool
        else:
            req.prefill_pool = rep.pool
            if rep.spec.role == "both":
                req.decode_pool = rep.pool
        rep.waiting.append(req)
        return rep

    # ------------------------------------------------------------------ scheduling

    def preempt(self, rep: _Replica, req: _Request) -> None:
        """Free ``req``'s cache on ``rep`` and put it first in the waiting queue, to prefill every token so
        far again (vLLM's recompute)."""
        rep.running.remove(req)
        rep.used -= req.kv
        req.kv = 0
        req.kv_ready = 0
        req.target = req.input + req.generated
        req.done = 0
        req.preemptions += 1
        rep.waiting.appendleft(req)

    def admit_ready(self, rep: _Replica) -> None:
        """Admit the requests at the head of the waiting queue that bring their KV cache (a decode pool's),
        while the batch limit and the cache (with a token to decode) allow."""
        spec = rep.spec
        while rep.waiting and rep.waiting[0].kv_ready and len(rep.running) < spec.max_batch:
            req = rep.waiting[0]
            if rep.used + req.kv_ready + 1 > spec.kv_capacity_tokens:
                break
            rep.waiting.popleft()
            rep.used += req.kv_ready
            req.kv = req.kv_ready
            req.kv_ready = 0
            rep.running.append(req)

    def decodes(self, rep: _Replica) -> list[_Request]:
        """The running sequences that decode this iteration, the newest preempted until their next
        tokens' cache fits."""
        capacity = rep.spec.kv_capacity_tokens
        while True:
            batch = [r for r in rep.running if r.decoding]
            if not batch or rep.used + len(batch) <= capacity:
                return batch
            self.preempt(rep, rep.running[-1])

    def prefill_chunks(self, rep: _Replica, budget: int | None) -> list[tuple[_Request, int]]:
        """The prefill chunks of this iteration: the partly prefilled running requests first, then the
        waiting ones in order while the batch limit, the ``budget`` (None: whole prompts, as many as the
        pool's ``max_prefill_tokens`` holds, at least one) and the cache allow; their cache is reserved."""
        spec = rep.spec
        chunks: list[tuple[_Request, int]] = []
        left = budget
        whole_left = spec.max_prefill_tokens if budget is None else None  # prompt tokens still allowed

        def take(req: _Request) -> int:
            size = req.target - req.done
            if left is not None:
                size = min(size, left)
            room = spec.kv_capacity_tokens - rep.used
            if budget is None and size > room:
                return 0  # a whole prompt or nothing
            return max(0, min(size, room))

        for req in rep.running:
            if left == 0:
                break
            if req.done < req.target and req.kv_ready == 0:
                size = take(req)
                if size:
                    chunks.append((req, size))
                    rep.used += size
                    req.kv += size
                    left = None if left is None else left - size
        while rep.waiting and len(rep.running) < spec.max_batch and left != 0:
            req = rep.waiting[0]
            if req.kv_ready:
                break
            size = take(req)
            if not size or (whole_left is not None and chunks and size > whole_left):
                break
            if whole_left is not None:
                whole_left -= size
            rep.waiting.popleft()
            rep.running.append(req)
            chunks.append((req, size))
            rep.used += size
            req.kv += size
            left = None if left is None else left - size
        return chunks

    def start_iteration(self, rep: _Replica, now: int) -> None:
        """Form ``rep``'s next batch and queue its end; nothing when there is no work."""
        spec = rep.spec
        self.admit_ready(rep)
        if spec.token_budget is None:
            chunks = self.prefill_chunks(rep, None)
            batch = [] if chunks else self.decodes(rep)
        else:
            batch = self.decodes(rep)
            chunks = self.prefill_chunks(rep, spec.token_budget - len(batch))
        if not chunks and not batch:
            return
        seconds = 0.0
        if chunks:
            seconds += spec.prefill_s(np.array([size for _, size in chunks], dtype=np.int64))
        if batch:
            seconds += spec.decode_s(np.array([r.kv for r in batch], dtype=np.int64))
            rep.used += len(batch)
            for r in batch:
                r.kv += 1
        took = max(1, ceil_int(seconds * 1e9))
        rep.busy = True
        rep.batch = (chunks, batch)
        if self.trace:
            self.rows.append((spec.name, rep.index, now * 1e-9, (now + took) * 1e-9,
                              sum(size for _, size in chunks), len(chunks), len(batch), rep.used))
        self.queue.push(now + took, "end", (rep, now))

    def end_iteration(self, item: tuple[_Replica, int], now: int) -> list[_Replica]:
        """``rep``'s iteration ends at ``now``: tokens produced, requests finished or sent on; returns the
        replicas that may start work."""
        rep, started = item
        rep.busy = False
        rep.busy_ns += now - started
        chunks, batch = rep.batch
        rep.batch = ([], [])
        produced = list(batch)
        for req, size in chunks:
            req.done += size
            if req.done == req.target:
                produced.append(req)
        touched = [rep]
        for req in produced:
            req.generated += 1
            if req.first < 0 and rep.spec.role != "prefill":
                req.first = now
            if req.generated >= req.output:
                self.leave(rep, req)
                req.finish = now
                if req.first < 0:
                    req.first = now
                self.in_system -= 1
            elif rep.spec.role == "prefill":
                self.leave(rep, req)
                req.kv_ready = req.input + req.generated - 1
                self.queue.push(now + ceil_int(self.deployment.transfer_s(rep.spec, req.input) * 1e9), "transfer", req)
        return touched

    def leave(self, rep: _Replica, req: _Request) -> None:
        """``req`` leaves ``rep``: its cache freed, no longer counted in its load."""
        rep.running.remove(req)
        rep.used -= req.kv
        req.kv = 0
        rep.load -= 1

    # ------------------------------------------------------------------ totals

    def result(self, complete: bool) -> ServingResult:
        """The :class:`ServingResult` of what has happened so far."""
        n = len(self.reqs)
        arrival = np.array([r.arrival for r in self.reqs], dtype=np.int64)
        first = np.array([r.first for r in self.reqs], dtype=np.int64)
        finish = np.array([r.finish for r in self.reqs], dtype=np.int64)
        out = np.array([r.output for r in self.reqs], dtype=np.int64)
        done = finish >= 0
        nan = np.full(n, np.nan)
        ttft = np.where(first >= 0, (first - arrival) * 1e-9, nan)
        e2e = np.where(done, (finish - arrival) * 1e-9, nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            tpot = np.where(done & (out > 1), (finish - first) * 1e-9 / np.maximum(out - 1, 1), nan)
        horizon = self.last_ns * 1e-9
        pools = self.deployment.pools
        busy = np.zeros(len(pools))
        energy = np.zeros(len(pools))
        tokens = np.zeros(len(pools), dtype=np.int64)
        for p, (pool, reps) in enumerate(zip(pools, self.replicas, strict=True)):
            per = np.array([r.busy_ns * 1e-9 for r in reps])
            busy[p] = per.sum()
            energy[p] = energy_j(per, np.full(len(per), pool.busy_w * pool.gpus),
                                 np.full(len(per), pool.idle_w * pool.gpus), horizon).sum()
        decode_pool = np.array([r.decode_pool for r in self.reqs], dtype=np.int64)
        prefill_pool = np.array([r.prefill_pool for r in self.reqs], dtype=np.int64)
        np.add.at(tokens, np.where(decode_pool >= 0, decode_pool, prefill_pool)[done], out[done])
        return ServingResult(tuple(p.name for p in pools), self.requests, ttft, tpot, e2e,
                             np.where(done, finish * 1e-9, nan), np.array([r.preemptions for r in self.reqs]),
                             prefill_pool, decode_pool,
                             busy, energy, tokens, horizon,
                             self.area_ns / self.last_ns if self.last_ns else 0.0, complete, tuple(self.rows))


def simulate(deployment: Deployment, requests: Requests, *, trace: bool = False,
             stoppable: bool = True) -> ServingResult:
    """Serve ``requests`` on ``deployment`` (a :class:`ServingRun`); returns its :class:`ServingResult` (with
    ``trace``, one row per iteration). Deterministic. Raises :class:`~dse.errors.InfeasibleError` for a
    request no pool's KV cache can hold and, when ``stoppable``, :class:`~dse.util.interrupt.Interrupted`
    with the partial result once a stop is requested (checked every few thousand events)."""
    return ServingRun(deployment, requests, trace=trace).run(stoppable)
