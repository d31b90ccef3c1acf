"""CP-SAT model of the ``pipeline`` family, over the same integer tables as the evaluator, and its diagnosis.

Variables: ``x[i, d]`` (op i on device d), ``y[e, a, b]`` (edge e from device a
to device b, linked to ``x`` by transportation equalities, so it is exactly
the product), ``period = max(device loads, link loads)``, ``used[d]`` and the
idle term ``used[d] * idle[d] * period``; with a deadline or a latency
objective, start times with assignment-dependent transfer delays.

With DVFS levels (:mod:`dse.cost.dvfs`): ``z[d, l]`` (device d at level l, exactly
one per device with a frequency gene) and ``w[i, d, l]`` (op i on device d at
level l: ``sum_l w[i, d, l] == x[i, d]`` and ``w[i, d, l] <= z[d, l]``, so it
is exactly the product); op times and energies are read from the level tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from ortools.sat.python import cp_model

from dse.mapping.base import Formulation
from dse.mapping.constraints import ModelContext
from dse.mapping.cpsat_common import assigned_devices, check_build_time, idle_term, used_literals
from dse.util.interrupt import interruptible, run_cpsat

if TYPE_CHECKING:
    from dse.mapping.pipeline.problem import PipelineProblem


def build_pipeline_model(problem: PipelineProblem, include: Sequence[str] | None = None,
                         deadline: float | None = None) -> Formulation:
    """Build the model; ``include`` names the constraints to model (default: all of the problem's).

    Raises :class:`ModelBuildTimeout` once ``time.monotonic()`` passes ``deadline``."""
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

    levels = problem.levels
    op_time = t.time if levels is None else levels.time.max(axis=0)  # bounds only
    z: dict[tuple[int, int], cp_model.IntVar] = {}
    w: dict[tuple[int, int, int], cp_model.IntVar] = {}
    if levels is not None:
        for device in problem.dvfs_devices:
            d = int(device)
            for level in range(int(levels.count[d])):
                z[d, level] = model.new_bool_var(f"z[{d},{level}]")
            model.add_exactly_one(z[d, level] for level in range(int(levels.count[d])))
            for i in range(n):
                if (i, d) in x:
                    for level in range(int(levels.count[d])):
                        w[i, d, level] = model.new_bool_var(f"w[{i},{d},{level}]")
                        model.add_implication(w[i, d, level], z[d, level])
                    model.add(sum(w[i, d, level] for level in range(int(levels.count[d]))) == x[i, d])

    def cost_terms(i: int, d: int, what: str) -> list:
        """``time`` / ``energy`` of op i on device d as linear terms (level-dependent with DVFS)."""
        if levels is None:
            return [int(getattr(t, what)[i, d]) * x[i, d]]
        table = getattr(levels, what)
        if int(levels.count[d]) < 2:
            return [int(table[0, i, d]) * x[i, d]]
        return [int(table[level, i, d]) * w[i, d, level] for level in range(int(levels.count[d]))]

    big_time = int(op_time.max(initial=0)) * n + int(t.transfer_time.max(initial=0)) * max(t.n_edges, 1) + 1
    loads = []
    device_load: dict[int, cp_model.IntVar] = {}
    for d in range(m):
        terms = [term for i in range(n) if (i, d) in x for term in cost_terms(i, d, "time")]
        if terms:
            load = model.new_int_var(0, big_time, f"load[{d}]")
            model.add(load == sum(terms))
            loads.append(load)
            device_load[d] = load

    # y[e][a, b]: edge e from device a to device b, the product of x[src, a] and x[dst, b]
    y: list[dict[tuple[int, int], cp_model.IntVar]] = []
    link_terms: dict[tuple[int, int], list] = {}
    xfer_energy_terms = []
    for e, (s, dst) in enumerate(t.edges):
        check_build_time(deadline, f"edge {e} of {t.n_edges}")
        s, dst = int(s), int(dst)
        pairs = {(a, b): model.new_bool_var(f"y[{e},{a},{b}]")
                 for a in range(m) if (s, a) in x for b in range(m) if (dst, b) in x}
        y.append(pairs)
        for a in range(m):
            if (s, a) in x:
                model.add(sum(v for (aa, _), v in pairs.items() if aa == a) == x[s, a])
        for b in range(m):
            if (dst, b) in x:
                model.add(sum(v for (_, bb), v in pairs.items() if bb == b) == x[dst, b])
        for (a, b), var in pairs.items():
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

    least_time = t.time if levels is None else levels.time.min(axis=0)
    fastest = np.where(allowed, least_time, np.iinfo(np.int64).max).min(axis=1)
    period_floor = int(max(fastest.max(initial=0), -(-int(fastest.sum()) // m)))
    period = model.new_int_var(period_floor, big_time, "period")
    model.add_max_equality(period, loads)

    used = used_literals(model, x, n, m)

    op_energy_bound = t.energy if levels is None else levels.energy.max(axis=0)
    max_energy = (
        int(np.where(allowed, op_energy_bound, 0).max(axis=1).sum())
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
    op_energy_terms = [term for (i, d) in x for term in cost_terms(i, d, "energy")]
    model.add(energy == sum(op_energy_terms) + sum(xfer_energy_terms) + sum(idle_terms))

    latency = None
    if "deadline" in names or any(o.name == "latency" for o in problem.objectives):
        finish = []
        start = []
        for i in range(n):
            s_i = model.new_int_var(0, big_time, f"start[{i}]")
            f_i = model.new_int_var(0, big_time, f"finish[{i}]")
            model.add(f_i == s_i + sum(term for d in range(m) if (i, d) in x for term in cost_terms(i, d, "time")))
            start.append(s_i)
            finish.append(f_i)
        for e, (s, dst) in enumerate(t.edges):
            delay = sum(int(t.transfer_time[e, a, b]) * var for (a, b), var in y[e].items()
                        if t.transfer_time[e, a, b])
            model.add(start[int(dst)] >= finish[int(s)] + delay)
        latency = model.new_int_var(0, big_time, "latency")
        sinks = sorted(set(range(n)) - {int(s) for s in t.edges[:, 0]})
        model.add_max_equality(latency, [finish[i] for i in sinks])

    ctx = ModelContext(model, t, x, {"period": period, "energy": energy, "latency": latency})
    for constraint in problem.constraints:
        if constraint.name in names:
            constraint.add_to_model(ctx)

    values = {"throughput": period, "energy": energy, "latency": latency}
    objective_vars = [values[o.name] for o in problem.objectives]

    def to_genome(solver: cp_model.CpSolver) -> np.ndarray:
        devices = assigned_devices(solver, x, n)
        if levels is None:
            return devices
        chosen = [next(lv for (dd, lv), var in z.items() if dd == int(d) and solver.boolean_value(var))
                  for d in problem.dvfs_devices]
        return np.concatenate([devices, np.asarray(chosen, dtype=np.int64)])

    def hint(genome: np.ndarray) -> None:
        model.clear_hints()
        genome = np.asarray(genome, dtype=np.int64)
        for (i, d), var in x.items():
            model.add_hint(var, int(genome[i] == d))
        if levels is not None:
            level_of = {int(d): int(genome[n + k]) for k, d in enumerate(problem.dvfs_devices)}
            for (d, lv), var in z.items():
                model.add_hint(var, int(level_of[d] == lv))
            for (i, d, lv), var in w.items():
                model.add_hint(var, int(genome[i] == d and level_of[d] == lv))
        for e, pairs in enumerate(y):
            s, dst = t.edges[e]
            for (a, b), var in pairs.items():
                model.add_hint(var, int(genome[s] == a and genome[dst] == b))

    extra = {"period": period, "energy": energy, "latency": latency}
    notes = [f"{len(x)} assignment vars, {sum(len(p) for p in y)} edge-pair vars"
             + (f", {len(z)} level vars" if z else "")]
    return Formulation(model, objective_vars, to_genome, hint, notes, extra)


def diagnose_pipeline(problem: PipelineProblem, time_limit: float = 10.0) -> str:
    """Why no mapping is feasible: the first constraint that cannot be met and the best value reachable.

    Checks memory alone, then the deadline under memory, then the power cap
    under the others, each with CP-SAT. Returns a one-line message; raises
    :class:`~dse.errors.InfeasibleError` for what a static check already proves.
    """
    problem.check_feasible()
    by_name = {c.name: c for c in problem.constraints}

    def solve(form: Formulation) -> tuple[cp_model.CpSolverStatus, cp_model.CpSolver]:
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = time_limit
        return solver.solve(form.model), solver

    if "memory" in by_name and solve(problem.cpsat(include=["memory"]))[0] == cp_model.INFEASIBLE:
        t = problem.tables
        fastest = np.where(t.allowed, t.time, np.iinfo(np.int64).max).argmin(axis=1)
        need = t.mem[np.arange(t.n_ops), fastest].sum()
        return (f"memory: the ops' resident data ({need / 2**30:.3g} GiB on their fastest devices) "
                f"cannot be spread over the devices' capacities ({t.mem_capacity.sum() / 2**30:.3g} GiB in all)")
    base = [c for c in by_name if c in ("memory", "allowed")]
    if "deadline" in by_name:
        # the same family's problem on latency alone (type(problem): no import back up to the family)
        probe = type(problem)(problem.tables, ("latency", "energy"), memory=problem.memory, name=problem.name)
        form = probe.cpsat(include=base)
        form.model.minimize(form.named_vars["latency"])
        status, solver = solve(form)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            message = by_name["deadline"].unmet(solver.value(form.named_vars["latency"]), status == cp_model.OPTIMAL)
            if message:
                return message
        base = base + ["deadline"]
    if "power" in by_name:
        watts = _min_average_power(problem, base, time_limit)
        message = None if watts is None else by_name["power"].unmet(watts)
        if message:
            return message
    return "no feasible mapping was found within the time limit (infeasibility not proven)"


def _solve_interruptibly(solver: cp_model.CpSolver, model: cp_model.CpModel) -> Any:
    """``solver.solve(model)``; Ctrl-C or SIGTERM stops it (then raises ``KeyboardInterrupt``)."""
    with interruptible() as token:
        status = run_cpsat(solver, model, token)
    if token.stopped:
        raise KeyboardInterrupt
    return status


def _min_average_power(problem: PipelineProblem, include: list[str], time_limit: float) -> float | None:
    """min over mappings of energy / period (W), by Dinkelbach iterations on CP-SAT."""
    ratio = None
    for _ in range(30):
        form = problem.cpsat(include=include)
        energy, period = form.named_vars["energy"], form.named_vars["period"]
        if ratio is None:
            form.model.minimize(energy)
        else:
            frac = Fraction(ratio).limit_denominator(10_000)
            form.model.minimize(frac.denominator * energy - frac.numerator * period)
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = time_limit
        status = _solve_interruptibly(solver, form.model)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        e, p = solver.value(energy), max(solver.value(period), 1)
        new = e / p
        if ratio is not None and new >= ratio - 1e-9:
            break
        ratio = new
    return None if ratio is None else ratio * 1e-3
