"""The serving family's analytical figures against its simulator, one deployment at a time.

:func:`check_point` compares a genome's

* throughput: the family's rate (output tokens/s) against the simulator's capacity: with SLOs, the
  highest Poisson rate meeting them at their percentile (:func:`dse.sim.serving.capacity.capacity`,
  Vidur-Search's bisection); offline, the steady completion rate of a backlog (the requests finished
  between the first wave and the last, over that time), each pool alone and summed when all do both;
* TTFT and TPOT, means, at 70% of that capacity (``load``): the simulator's against the family's
  no-queue figures (the table's) and its figures at that arrival rate
  (:func:`~dse.mapping.serving.table.figures_at_load`: the gated batched-prefill queue and the decode
  batch the load holds), the arrival rate split over pools in proportion to their rates.

Every run holds at least :data:`RUN_SLOTS` requests per decoding slot of the deployment (its engines'
batch limits summed): a run starts empty and fills its slots within about one request's time in the
system, so the first ``slots`` requests (the initial transient) are left out of the SLO percentiles
and of the means, and the last ``slots`` (the arrivals end, and the queue drains) out of the means
(initial-transient deletion: Law, Simulation Modeling and Analysis, 5th ed., 2015, 9.5.1).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from dse.mapping.serving.problem import ServingProblem
from dse.mapping.serving.table import RATE_SCALE, figures_at_load
from dse.runtime.serving_deploy import deployment_of
from dse.sim.serving.capacity import Slo, capacity
from dse.sim.serving.engine import simulate
from dse.sim.serving.inputs import Deployment, Lengths, fixed, offline, poisson

#: Relative error above which a figure is flagged.
TOLERANCE = 0.10
#: Requests per decoding slot of the deployment a run holds at least (the module docstring's rule).
RUN_SLOTS = 6
#: An SLO the problem leaves out, in seconds (never binds).
NO_LIMIT_S = 1e9


@dataclass(frozen=True)
class PointCheck:
    """One deployment's figures (tokens/s, seconds), analytical (``model``: the family's table; ``load``:
    at the checked arrival rate) and simulated (``sim``), with the arrival rate checked (requests/s)."""

    point: str
    capacity_by: str
    model_tok_s: float
    sim_tok_s: float
    rate: float
    ttft_model_s: float
    ttft_load_s: float
    ttft_sim_s: float
    tpot_model_s: float
    tpot_load_s: float
    tpot_sim_s: float

    def errors(self) -> dict[str, float]:
        """Relative errors of the analytical figures against the simulated ones (NaN where none)."""
        def err(model: float, sim: float) -> float:
            return (model - sim) / sim if np.isfinite(model) and np.isfinite(sim) and sim > 0 else float("nan")
        return {"throughput": err(self.model_tok_s, self.sim_tok_s),
                "ttft_model": err(self.ttft_model_s, self.ttft_sim_s), "ttft_load": err(self.ttft_load_s, self.ttft_sim_s),
                "tpot_model": err(self.tpot_model_s, self.tpot_sim_s), "tpot_load": err(self.tpot_load_s, self.tpot_sim_s)}


def _weighted(values: np.ndarray, weights: np.ndarray) -> float:
    keep = np.isfinite(values) | np.isinf(values)
    keep &= ~np.isnan(values)
    if not keep.any():
        return float("nan")
    return float(np.dot(values[keep], weights[keep]) / weights[keep].sum())


def figures_at_rate(problem: ServingProblem, genome: np.ndarray, rate: float) -> tuple[float, float, float, float]:
    """``(TTFT, TTFT at rate, TPOT, TPOT at rate)`` (means, s) of ``genome`` at ``rate`` requests/s: each
    prefilling pool gets the rate in proportion to its analytical rate, and so each decoding pool."""
    t = problem.table
    options, replicas = problem.pool_options(problem.checked_genomes(genome))
    used = replicas[0] > 0
    o, r = options[0][used], replicas[0][used]
    role = t.role[o]
    pool_rate = r * t.rate[o] / RATE_SCALE
    genes = np.array([t.genes(int(k)) for k in o]).reshape(len(o), -1)
    pp, batch = np.array(t.pp)[genes[:, 2]], np.array(t.batch)[genes[:, 3]]
    prefilling, decoding = role != 2, role != 1
    share = np.zeros(len(o))
    share[prefilling] = pool_rate[prefilling] / pool_rate[prefilling].sum()
    share_d = np.zeros(len(o))
    share_d[decoding] = pool_rate[decoding] / pool_rate[decoding].sum()
    per_replica = rate * np.where(role == 2, share_d, share) / r
    ttft, tpot = figures_at_load(t.s_pf[o], t.s_dec[o], t.s_dec_one[o], pp, batch, role, t.kv_s[o], per_replica,
                                 t.output_tokens, (t.step_batches[o], t.step_seconds[o]))
    return (_weighted(t.ttft_s[o], share), _weighted(ttft, share), _weighted(t.tpot_s[o], share_d),
            _weighted(tpot, share_d))


def decode_slots(deployment: Deployment) -> int:
    """Sequences the deployment's decoding engines run at once (replicas x batch limit, summed)."""
    return sum(p.replicas * p.max_batch for p in deployment.pools if p.role != "prefill")


def _steady_mean(values: np.ndarray, slots: int) -> float:
    """The mean of ``values`` (by arrival) less the first and last ``slots`` (all when that leaves none)."""
    kept = values[slots: len(values) - slots] if len(values) > 2 * slots else values
    return float(np.nanmean(kept))


def _lengths(problem: ServingProblem) -> tuple[Lengths, Lengths, float]:
    workload = problem.tables.workload  # type: ignore[attr-defined]
    return fixed(workload.input_tokens), fixed(workload.output_tokens), float(workload.output_tokens)


def backlog_rate(deployment: Deployment, requests: int, inputs: Lengths, outputs: Lengths, seed: int) -> float:
    """Requests/s ``deployment`` completes from a backlog (all arriving at 0; at least :data:`RUN_SLOTS`
    batches of every decoding replica): those finished after the first wave and before the last, over
    that time."""
    slots = decode_slots(deployment)
    n = max(requests, RUN_SLOTS * slots)
    finish = np.sort(simulate(deployment, offline(n, inputs, outputs, seed=seed)).finish_s)
    first, last = finish[min(slots, n // 3)], finish[max(n - slots, 2 * n // 3)]
    return float(np.count_nonzero((finish > first) & (finish <= last)) / (last - first))


def simulated_capacity(problem: ServingProblem, genome: np.ndarray, *, requests: int = 400, seed: int = 0,
                       rel_tol: float = 0.02) -> tuple[float, str]:
    """``(requests/s, how)``: the simulator's capacity of ``genome`` as :func:`check_point` finds it (the
    module docstring's rules), at least ``requests`` requests a run."""
    genome = np.asarray(genome, dtype=np.int64)
    deployment = deployment_of(problem, genome)
    inputs, outputs, _ = _lengths(problem)
    workload = problem.tables.workload  # type: ignore[attr-defined]
    if workload.ttft_ms is None and workload.tpot_ms is None:
        # pools that do both run alone (a backlog routed at time 0 would split evenly over unequal pools)
        alone = ([dataclasses.replace(deployment, pools=(p,)) for p in deployment.pools]
                 if all(p.role == "both" for p in deployment.pools) else [deployment])
        return sum(backlog_rate(d, requests, inputs, outputs, seed) for d in alone), "offline backlog"
    slots = decode_slots(deployment)
    n = max(requests, RUN_SLOTS * slots)
    model_rate = float(problem.kernel(genome[None, :], False).values["rate"][0]) / RATE_SCALE
    slo = Slo((workload.ttft_ms or NO_LIMIT_S * 1e3) / 1e3, (workload.tpot_ms or NO_LIMIT_S * 1e3) / 1e3,
              workload.percentile)
    base = poisson(1.0, n, inputs, outputs, seed=seed)
    cap = capacity(deployment, base, slo, start=model_rate, rel_tol=rel_tol, warmup=min(slots, n // 2))
    return cap.rate, f"SLO p{workload.percentile:g} bisection"


def check_point(problem: ServingProblem, genome: np.ndarray, *, requests: int = 400, load: float = 0.7,
                seed: int = 0, rel_tol: float = 0.02, routing: str = "least_unfinished") -> PointCheck:
    """The :class:`PointCheck` of ``genome`` (the module docstring's rules), at least ``requests`` requests
    a run; the run at ``load`` routes each request by ``routing`` (:data:`~dse.sim.serving.inputs.ROUTINGS`;
    ``random`` feeds every engine a Poisson stream, as :func:`~dse.mapping.serving.table.figures_at_load`
    assumes), the capacity is the simulator's default routing's."""
    genome = np.asarray(genome, dtype=np.int64)
    sim_rate, how = simulated_capacity(problem, genome, requests=requests, seed=seed, rel_tol=rel_tol)
    deployment = dataclasses.replace(deployment_of(problem, genome), routing=routing, routing_seed=seed)
    inputs, outputs, o_len = _lengths(problem)
    slots = decode_slots(deployment)
    n = max(requests, RUN_SLOTS * slots)
    model_rate = float(problem.kernel(genome[None, :], False).values["rate"][0]) / RATE_SCALE
    rate = load * sim_rate
    run = simulate(deployment, poisson(rate, n, inputs, outputs, seed=seed))
    ttft, ttft_load, tpot, tpot_load = figures_at_rate(problem, genome, rate)
    return PointCheck(problem.describe(genome.tolist()), how, model_rate * o_len, sim_rate * o_len, rate,
                      ttft, ttft_load, _steady_mean(run.ttft_s, slots), tpot, tpot_load,
                      _steady_mean(run.tpot_s, slots))
