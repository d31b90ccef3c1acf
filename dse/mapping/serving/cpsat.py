"""CP-SAT model of the ``serving`` family over its table of pool options.

Pools are interchangeable, so the model holds one replica count ``r[o]`` per usable option ``o`` (an
option that cannot run, does not fit memory or misses an SLO gets none) and a literal ``u[o]`` (the
option is some pool's), at most ``pools`` of them true. Two pools of one option are one pool with their
replicas summed, which the GPU counts allow whenever they allow the two, so the model's values are the
evaluator's. Then, all linear in ``r``: GPUs per type ``<=`` its count (and the fleet limit), power
``<=`` the budget, the request rate ``X = sum_both rate r + min(sum_prefill rate r, sum_decode rate r)``
``>=`` the arrival rate (at least 1), throughput ``= bound - X``, and energy per token ``E = ceil(N / D)``
with ``N = 1e9 x power`` and ``D = output_tokens x X``: ``E x D >= N`` and ``E x D <= N + D - 1``;
cost ``= sum price of an option's GPUs per hour x r``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.base import Formulation
from dse.mapping.cpsat_common import check_build_time, objective_variables

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from dse.mapping.serving.problem import ServingProblem


def build_serving_model(problem: ServingProblem, deadline: float | None = None) -> Formulation:
    """The exact model of ``problem``; raises :class:`~dse.mapping.cpsat_common.ModelBuildTimeout` past
    ``deadline``."""
    from ortools.sat.python import cp_model
    t = problem.table
    model = cp_model.CpModel()
    options = [int(o) for o in np.flatnonzero(t.usable & (t.max_replicas > 0))]
    r = {o: model.new_int_var(0, int(t.max_replicas[o]), f"r[{t.label(o)}]") for o in options}
    u = {o: model.new_bool_var(f"u[{o}]") for o in options}
    for o in options:
        model.add(r[o] <= int(t.max_replicas[o]) * u[o])
        model.add(r[o] >= u[o])
    model.add(sum(u.values()) <= t.pools)
    check_build_time(deadline, f"{len(options)} pool options")
    for g, count in enumerate(t.counts):
        mine = [o for o in options if t.gpu[o] == g]
        if mine:
            model.add(sum(int(t.gpus[o]) * r[o] for o in mine) <= int(count))
    if t.max_gpus is not None:
        model.add(sum(int(t.gpus[o]) * r[o] for o in options) <= t.max_gpus)
    p_max = problem.power_bound
    power = model.new_int_var(0, p_max, "power_mw")
    model.add(power == sum(int(t.power_mw[o]) * r[o] for o in options))
    if problem.power_cap_mw is not None:
        model.add(power <= problem.power_cap_mw)
    bound = t.rate_bound

    def rate_sum(role: int, name: str) -> cp_model.IntVar:
        var = model.new_int_var(0, bound, name)
        model.add(var == sum(int(t.rate[o]) * r[o] for o in options if t.role[o] == role))
        return var

    both, pre, dec = rate_sum(0, "rate_both"), rate_sum(1, "rate_prefill"), rate_sum(2, "rate_decode")
    paired = model.new_int_var(0, bound, "rate_split")
    model.add_min_equality(paired, [pre, dec])
    rate = model.new_int_var(problem.rate_needed, bound, "rate")
    model.add(rate == both + paired)
    throughput = model.new_int_var(0, bound, "throughput")
    model.add(throughput == bound - rate)
    o_len = t.output_tokens
    energy = model.new_int_var(0, problem.energy_cap, "energy")
    denominator = model.new_int_var(o_len * problem.rate_needed, o_len * bound, "tokens")
    model.add(denominator == o_len * rate)
    product = model.new_int_var(0, p_max * problem.energy_scale + o_len * bound, "energy_x_tokens")
    model.add_multiplication_equality(product, [energy, denominator])
    model.add(product >= power * problem.energy_scale)
    model.add(product <= power * problem.energy_scale + denominator - 1)
    cost = model.new_int_var(0, int((t.price_milli * t.counts).sum()), "cost")
    model.add(cost == sum(int(t.cost_milli[o]) * r[o] for o in options))
    values = {"throughput": throughput, "energy": energy, "cost": cost}
    objective_vars = objective_variables(problem, values)

    def to_genome(solver: cp_model.CpSolver) -> np.ndarray:
        chosen = [(o, solver.value(r[o])) for o in options if solver.value(r[o]) > 0]
        return problem.genome_of(chosen)

    def hint(genome: np.ndarray) -> None:
        model.clear_hints()
        counts = problem.option_replicas(genome)
        for o in options:
            model.add_hint(r[o], counts.get(o, 0))
            model.add_hint(u[o], int(counts.get(o, 0) > 0))

    notes = [f"{len(options)} usable pool options of {t.n_options}, at most {t.pools} pools"]
    return Formulation(model, objective_vars, to_genome, hint, notes,
                       {"power_mw": power, "rate": rate, "throughput": throughput, "energy": energy})

