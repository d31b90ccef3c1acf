"""CP-SAT model of the ``pipeline`` family, over the same integer tables as the evaluator.

Variables: ``x[i, d]`` (op i on device d), ``y[e, a, b]`` (edge e from device a
to device b, linked to ``x`` by transportation equalities, so it is exactly
the product), ``period = max(device loads, link loads)``, ``used[d]`` and the
idle term ``used[d] * idle[d] * period``; with a deadline or a latency
objective, start times with assignment-dependent transfer delays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from ortools.sat.python import cp_model

from dse.mapping.base import Formulation
from dse.mapping.cpsat_common import assigned_devices, idle_term, used_literals

if TYPE_CHECKING:
    from dse.mapping.pipeline import PipelineProblem


def build_pipeline_model(problem: PipelineProblem, include: Sequence[str] | None = None) -> Formulation:
    """Build the model; ``include`` names the constraints to model (default: all of the problem's)."""
    t = problem.tables
    names = {c.name for c in problem.constraints} if include is None else set(include)
    n, m = t.n_ops, t.n_dev
    model = cp_model.CpModel()
    allowed = t.allowed
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for i in range(n):
        for d in range(m):
            if allowed[i, d]:
                x[i, d] = model.new_bool_var(f"x[{i},{d}]")
        model.add_exactly_one(x[i, d] for d in range(m) if allowed[i, d])

    big_time = int(t.time.max(initial=0)) * n + int(t.transfer_time.max(initial=0)) * max(t.n_edges, 1) + 1
    loads = []
    device_load: dict[int, cp_model.IntVar] = {}
    for d in range(m):
        terms = [int(t.time[i, d]) * x[i, d] for i in range(n) if (i, d) in x]
        if terms:
            load = model.new_int_var(0, big_time, f"load[{d}]")
            model.add(load == sum(terms))
            loads.append(load)
            device_load[d] = load

    y: dict[tuple[int, int, int], cp_model.IntVar] = {}
    link_terms: dict[tuple[int, int], list] = {}
    xfer_energy_terms = []
    for e, (s, dst) in enumerate(t.edges):
        s, dst = int(s), int(dst)
        for a in range(m):
            for b in range(m):
                if (s, a) in x and (dst, b) in x:
                    y[e, a, b] = model.new_bool_var(f"y[{e},{a},{b}]")
        for a in range(m):
            if (s, a) in x:
                model.add(sum(y[e, a, b] for b in range(m) if (e, a, b) in y) == x[s, a])
        for b in range(m):
            if (dst, b) in x:
                model.add(sum(y[e, a, b] for a in range(m) if (e, a, b) in y) == x[dst, b])
        for (ee, a, b), var in ((k, v) for k, v in y.items() if k[0] == e):
            del ee
            if a != b and t.transfer_time[e, a, b] > 0:
                link_terms.setdefault((a, b), []).append(int(t.transfer_time[e, a, b]) * var)
            if t.transfer_energy[e, a, b] > 0:
                xfer_energy_terms.append(int(t.transfer_energy[e, a, b]) * var)
    link_load: dict[tuple[int, int], cp_model.IntVar] = {}
    for (a, b), terms in link_terms.items():
        load = model.new_int_var(0, big_time, f"link[{a},{b}]")
        model.add(load == sum(terms))
        loads.append(load)
        link_load[a, b] = load

    fastest = np.where(allowed, t.time, np.iinfo(np.int64).max).min(axis=1)
    period_floor = int(max(fastest.max(initial=0), -(-int(fastest.sum()) // m)))
    period = model.new_int_var(period_floor, big_time, "period")
    model.add_max_equality(period, loads)

    used = used_literals(model, x, n, m)

    max_energy = (
        int(np.where(allowed, t.energy, 0).max(axis=1).sum())
        + int(t.transfer_energy.reshape(t.n_edges, t.n_dev * t.n_dev).max(axis=1, initial=0).sum())
        + int(t.idle_power_mw.sum()) * big_time
    )
    idle_terms = []
    for d in range(m):
        if t.idle_power_mw[d] == 0:
            continue
        idle = int(t.idle_power_mw[d])
        term = idle_term(model, used[d], idle, period, big_time, f"idle[{d}]")
        # redundant linear cuts (the enforced equalities relax poorly): a used device idles for the
        # whole period, which is at least its own load and the load of every link touching it
        if d in device_load:
            model.add(term >= idle * device_load[d])
        model.add(term >= idle * period_floor * used[d])
        for (a, b), load in link_load.items():
            if d in (a, b):
                model.add(term >= idle * load)
        idle_terms.append(term)
    energy = model.new_int_var(0, max_energy, "energy")
    op_energy_terms = [int(t.energy[i, d]) * x[i, d] for (i, d) in x if t.energy[i, d]]
    model.add(energy == sum(op_energy_terms) + sum(xfer_energy_terms) + sum(idle_terms))

    latency = None
    if "deadline" in names or any(o.name == "latency" for o in problem.objectives):
        finish = []
        start = []
        for i in range(n):
            s_i = model.new_int_var(0, big_time, f"start[{i}]")
            f_i = model.new_int_var(0, big_time, f"finish[{i}]")
            model.add(f_i == s_i + sum(int(t.time[i, d]) * x[i, d] for d in range(m) if (i, d) in x))
            start.append(s_i)
            finish.append(f_i)
        for e, (s, dst) in enumerate(t.edges):
            delay = sum(int(t.transfer_time[e, a, b]) * var for (ee, a, b), var in y.items()
                        if ee == e and t.transfer_time[e, a, b])
            model.add(start[int(dst)] >= finish[int(s)] + delay)
        latency = model.new_int_var(0, big_time, "latency")
        sinks = sorted(set(range(n)) - {int(s) for s in t.edges[:, 0]})
        model.add_max_equality(latency, [finish[i] for i in sinks])

    if "memory" in names:
        for d in range(m):
            terms = [int(t.mem[i, d]) * x[i, d] for i in range(n) if (i, d) in x and t.mem[i, d]]
            if terms:
                model.add(sum(terms) <= int(t.mem_capacity[d]))
    if "power" in names and problem.power_cap_mw is not None:
        model.add(energy <= problem.power_cap_mw * period)
    if "deadline" in names and problem.deadline is not None:
        model.add(latency <= problem.deadline)

    values = {"throughput": period, "energy": energy, "latency": latency}
    objective_vars = [values[o.name] for o in problem.objectives]

    def to_genome(solver: cp_model.CpSolver) -> np.ndarray:
        return assigned_devices(solver, x, n)

    def hint(genome: np.ndarray) -> None:
        model.clear_hints()
        genome = np.asarray(genome, dtype=np.int64)
        for (i, d), var in x.items():
            model.add_hint(var, int(genome[i] == d))
        for (e, a, b), var in y.items():
            s, dst = t.edges[e]
            model.add_hint(var, int(genome[s] == a and genome[dst] == b))

    extra = {"period": period, "energy": energy, "latency": latency}
    notes = [f"{len(x)} assignment vars, {len(y)} edge-pair vars"]
    return Formulation(model, objective_vars, to_genome, hint, notes, extra)
