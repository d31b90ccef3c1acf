"""``dse simulate`` for the ``serving`` family: one deployment of the spec served request by request.

The spec's ``scenario`` names the deployment (a point of the exact front, solved now or read from a
``front.csv`` of ``dse solve``, or the pools written out) and the requests (a Poisson arrival rate, a
load as a fraction of the deployment's analytical rate, or a trace file; their number and seed).
:func:`~dse.runtime.serving_deploy.deployment_of` builds the simulator's deployment through the
family's table and :func:`dse.sim.serving.engine.simulate` plays it; the run's tables are written by
:func:`dse.runtime.serving.write_outputs` (``summary.csv``, ``trace.csv``, ``iterations.csv``, from which
the command draws ``trace.json``, one track per pool). A stop writes what was simulated with
``partial.json``. The module gives the family its scenario (:func:`dse.mapping.registry.register_scenario`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dse.errors import SpecError
from dse.mapping.registry import ProblemInputs, family, register_scenario
from dse.mapping.serving.inputs import LengthSpec, ServingOptions
from dse.mapping.serving.problem import ServingProblem
from dse.mapping.serving.table import RATE_SCALE
from dse.runtime.serving import read_trace, summary_table, write_outputs
from dse.runtime.serving_deploy import deployment_of
from dse.sim.serving.engine import simulate
from dse.sim.serving.inputs import Lengths, Requests, fixed, poisson, uniform
from dse.solvers import solve
from dse.util.interrupt import Interrupted

#: Requests simulated when the scenario does not say.
DEFAULT_REQUESTS = 500


class PoolGenes(BaseModel):
    """One pool written out: each value must be one of the spec's ``options``."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    gpu: str
    tp: int = 1
    pp: int = 1
    replicas: int = Field(default=1, ge=1)
    batch: int
    role: Literal["both", "prefill", "decode"] = "both"
    clock: float = 1.0
    precision: str


class ServingScenario(BaseModel):
    """The ``scenario`` of a serving spec: the deployment and the requests.

    Deployment: ``deployment`` (pools written out), else the exact front's point ``point`` (``throughput``:
    the most tokens/s, ``energy``: the fewest J/token, or an index by falling throughput) of ``front`` (a
    ``front.csv`` of ``dse solve``) or of the front solved now with the spec's solver time limit.
    Requests: ``trace`` (a CSV file, :func:`dse.runtime.serving.read_trace`), else ``requests`` Poisson
    arrivals at ``arrival_rate`` per second, else at ``load`` times the deployment's analytical rate, with
    the workload's length distributions (fixed or uniform) and ``seed`` (default: the command's)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    deployment: list[PoolGenes] | None = Field(default=None, min_length=1)
    point: Literal["throughput", "energy"] | int = "throughput"
    front: str | None = None
    trace: str | None = None
    arrival_rate: float | None = Field(default=None, gt=0, le=1e6)
    load: float = Field(default=0.7, gt=0, le=10)
    requests: int = Field(default=DEFAULT_REQUESTS, ge=1, le=1_000_000)
    seed: int | None = Field(default=None, ge=0)


def build_serving_problem(spec: Any) -> ServingProblem:
    """The family's problem of ``spec`` (its table built once)."""
    fam = family("serving")
    tables = spec.cost_model.tables(spec.workload, spec.platform)
    power = spec.constraints.power_w
    inputs = ProblemInputs(tables=tables, objectives=tuple(spec.objectives), options=ServingOptions(**spec.options),
                           name=spec.name, power_cap_mw=None if power is None else int(power * 1e3 + 1e-9))
    problem = fam.build(inputs)
    assert isinstance(problem, ServingProblem)
    return problem


def _index(values: tuple[Any, ...], value: Any, source: str, field: str) -> int:
    for i, v in enumerate(values):
        if v == value:
            return i
    raise SpecError(source, field, value, f"is not in the spec's options ({', '.join(map(str, values))})")


def written_genome(problem: ServingProblem, pools: list[PoolGenes], source: str) -> np.ndarray:
    """The genome of the pools written in ``scenario.deployment``; :class:`SpecError` naming the pool's field
    whose value the spec's options lack, or too many pools."""
    t = problem.table
    if len(pools) > t.pools:
        raise SpecError(source, "scenario.deployment", len(pools), f"more pools than options.pools ({t.pools})")
    chosen = []
    for k, p in enumerate(pools):
        where = f"scenario.deployment[{k}]"
        genes = (_index(t.gpu_names, p.gpu, source, f"{where}.gpu"), _index(t.tp, p.tp, source, f"{where}.tp"),
                 _index(t.pp, p.pp, source, f"{where}.pp"), _index(t.batch, p.batch, source, f"{where}.batch"),
                 _index(t.roles, p.role, source, f"{where}.role"), _index(t.clocks, p.clock, source, f"{where}.clock"),
                 _index(t.precisions, p.precision, source, f"{where}.precision"))
        chosen.append((int(t.index(np.array(genes))), p.replicas))
    return problem.genome_of(chosen)


def front_genome(problem: ServingProblem, scenario: ServingScenario, spec: Any, seed: int) -> np.ndarray:
    """The genome of ``scenario.point`` on the exact front (read from ``scenario.front`` or solved now);
    :class:`SpecError` naming ``scenario.point`` or ``scenario.front`` when it cannot be had."""
    names = [o.name for o in problem.objectives]
    if scenario.front is not None:
        import pandas as pd  # loaded by the command that runs

        path = spec.path(scenario.front) if hasattr(spec, "path") else Path(scenario.front)
        columns = {"throughput": ("throughput_tokens_per_s", -1.0), "energy": ("energy_j_per_token", 1.0)}
        try:
            table = pd.read_csv(path)
            genomes = np.array([[int(v) for v in str(g).split()] for g in table["genome"]], dtype=np.int64)
            F = np.column_stack([table[columns[n][0]].to_numpy(dtype=float) * columns[n][1] for n in names])
        except (OSError, KeyError, ValueError) as exc:
            raise SpecError(spec.source, "scenario.front", scenario.front,
                            f"is not a dse solve front.csv with genome and objective columns: {exc}") from None
    else:
        front = solve(problem, "cpsat", time_limit=spec.solver.time_limit_s, seed=seed, progress=False)
        genomes = np.array([list(p.genome) for p in front.points], dtype=np.int64).reshape(-1, problem.n_genes)
        F = np.array([p.internal for p in front.points], dtype=float).reshape(-1, len(names))
    # F: each objective to minimize (throughput negated or held as bound - rate)
    if not len(genomes):
        raise SpecError(spec.source, "scenario.point", scenario.point, "the front has no point")
    first = names.index("throughput") if "throughput" in names else 0
    order = np.lexsort((F[:, -1 - first], F[:, first]))  # by falling throughput, then energy
    if scenario.point == "throughput":
        return genomes[order[0]]
    if scenario.point == "energy":
        return genomes[order[-1]]
    if not 0 <= scenario.point < len(genomes):
        raise SpecError(spec.source, "scenario.point", scenario.point, f"the front has {len(genomes)} points")
    return genomes[order[scenario.point]]


def _lengths(spec: LengthSpec, source: str, field: str) -> Lengths:
    if spec.kind == "fixed":
        return fixed(spec.mean)
    if spec.kind == "uniform" and spec.low is not None and spec.high is not None:
        return uniform(spec.low, spec.high)
    raise SpecError(source, field, spec.kind, "the simulator draws fixed or uniform (low, high) lengths")


def scenario_requests(problem: ServingProblem, genome: np.ndarray, scenario: ServingScenario, spec: Any,
                      seed: int) -> Requests:
    """The requests of ``scenario``: its trace file, or Poisson arrivals at its rate (or load)."""
    if scenario.trace is not None:
        return read_trace(spec.path(scenario.trace) if hasattr(spec, "path") else scenario.trace)
    workload = problem.tables.workload  # type: ignore[attr-defined]
    rate = scenario.arrival_rate
    if rate is None:
        x = genome[None, :]
        analytical = float(problem.kernel(x, False).values["rate"][0]) / RATE_SCALE
        rate = scenario.load * analytical
    return poisson(rate, scenario.requests, _lengths(workload.input_spec, spec.source, "workload.input_tokens"),
                   _lengths(workload.output_spec, spec.source, "workload.output_tokens"), seed=seed)


def simulate_spec(spec: Any, out: Path | None, *, seed: int, quiet: bool) -> Any:
    """``dse simulate`` on a serving spec: the scenario's deployment serves its requests.

    Writes ``summary.csv``, ``trace.csv`` and ``iterations.csv`` into ``out`` when given
    (:func:`dse.runtime.serving.write_outputs`) and returns the summary, whose ``attrs["notes"]`` says the
    deployment and its analytical figures. A stop writes the requests simulated so far with
    ``partial.json`` and raises :class:`Interrupted` saying so. Raises :class:`SpecError` for a bad
    scenario field and :class:`~dse.errors.InfeasibleError` for a request no pool can hold."""
    scenario = spec.scenario if isinstance(spec.scenario, ServingScenario) else ServingScenario()
    seed = scenario.seed if scenario.seed is not None else seed
    problem = build_serving_problem(spec)
    genome = (written_genome(problem, scenario.deployment, spec.source) if scenario.deployment is not None
              else front_genome(problem, scenario, spec, seed))
    deployment = deployment_of(problem, genome)
    reqs = scenario_requests(problem, genome, scenario, spec, seed)
    try:
        result = simulate(deployment, reqs, trace=out is not None)
    except Interrupted as stop:
        partial = stop.partial
        if out is None or partial is None:
            raise stop.noted("no --out: nothing written") from None
        write_outputs(partial, deployment, out)
        done = int(partial.finished.sum())
        raise stop.noted(f"{done} of {len(reqs)} requests finished; written to {out} "
                         f"(partial, see {out}/partial.json)") from None
    if out is not None:
        write_outputs(result, deployment, out)
    summary = summary_table(result, deployment)
    mapping = problem.decode(genome)
    summary.attrs["notes"] = [f"deployment: {problem.describe(genome.tolist())}",
                              f"analytical: {mapping.tokens_per_s:.6g} output tokens/s at most, "
                              f"{mapping.joules_per_token:.4g} J/token; simulated {len(reqs)} requests "
                              f"({reqs.source})"]
    return summary


register_scenario("serving", ServingScenario, simulate_spec)
