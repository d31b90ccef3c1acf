"""CP-SAT model of the ``pipeline`` family, over the same integer tables as the evaluator, and its diagnosis.

Variables: ``x[i, d]`` (op i on device d), ``y[e, a, b]`` (edge e from device a
to device b, linked to ``x`` by transportation equalities, so it is exactly
the product), ``period = max(device loads, link loads)``, ``used[d]`` and the
idle term ``used[d] * idle[d] * period``; with a deadline or a latency
objective, start times with assignment-dependent transfer delays.

With DVFS levels (:mod:`dse.cost.dvfs`): ``z[d, l]`` (device d at level l, exactly
one per device with a frequency gene; level 0 when the device runs no op, as
``repair`` gives it, so one mapping has one genome) and ``w[i, d, l]`` (op i on
device d at level l: ``sum_l w[i, d, l] == x[i, d]`` and ``w[i, d, l] <= z[d, l]``,
so it is exactly the product); op times and energies are read from the level tables.

:func:`build_pipeline_model` reads as its phases, in the order they add to the model: the assignment
and level literals, the device loads, the edge routes and link loads, the period, the energy, the
latency and the constraint components.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.mapping.base import Formulation
from dse.mapping.constraints import ModelContext
from dse.mapping.cpsat_common import (
    ModelTooLarge,
    add_constraint_components,
    assigned_devices,
    check_build_time,
    costliest_total,
    fastest_times,
    hint_assignment,
    idle_term,
    modelled_constraints,
    objective_variables,
    sum_variable,
    used_literals,
    work_bound,
)
from dse.util.interrupt import interruptible, run_cpsat
from dse.util.limits import budget_from_env

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from dse.cost import CostTables, LevelTables
    from dse.mapping.pipeline.problem import PipelineProblem

#: Most literals a pipeline CP-SAT model may have (one per allowed op-device pair and one per edge and
#: allowed device pair), unless :data:`MODEL_BUDGET_ENV` says otherwise: a larger model is refused before
#: any of it is built (20,000 ops on 64 devices: 1.28 million assignment literals and up to 82
#: million edge-pair ones, where Python spends hundreds of bytes and microseconds on each).
MAX_MODEL_LITERALS = 2_000_000
#: The environment variable that raises (or lowers) :data:`MAX_MODEL_LITERALS`.
MODEL_BUDGET_ENV = "DSE_MAX_CPSAT_LITERALS"


@dataclass(frozen=True, eq=False)
class _LevelLiterals:
    """The DVFS literals (empty without levels): ``z[d, l]``, device ``d`` at level ``l``;
    ``w[i, d, l]``, op ``i`` on device ``d`` at level ``l`` (the product of ``x[i, d]`` and ``z[d, l]``)."""

    z: dict[tuple[int, int], cp_model.IntVar]
    w: dict[tuple[int, int, int], cp_model.IntVar]


@dataclass(frozen=True, eq=False)
class _OpCosts:
    """The ops' times and energies as linear terms of the assignment (and level) literals."""

    tables: CostTables
    levels: LevelTables | None
    x: dict[tuple[int, int], cp_model.IntVar]
    w: dict[tuple[int, int, int], cp_model.IntVar]

    def terms(self, i: int, d: int, what: str) -> list:
        """``time`` / ``energy`` of op i on device d as linear terms (level-dependent with DVFS)."""
        levels, x = self.levels, self.x
        if levels is None:
            return [int(getattr(self.tables, what)[i, d]) * x[i, d]]
        table = getattr(levels, what)
        if int(levels.count[d]) < 2:
            return [int(table[0, i, d]) * x[i, d]]
        return [int(table[level, i, d]) * self.w[i, d, level] for level in range(int(levels.count[d]))]


@dataclass(frozen=True, eq=False)
class _Routes:
    """Per edge ``y[e][a, b]`` (the edge from device a to device b: the product of ``x[src, a]`` and
    ``x[dst, b]``); per link (a != b) the transfer-time terms it carries; the transfer-energy terms."""

    y: list[dict[tuple[int, int], cp_model.IntVar]]
    link_terms: dict[tuple[int, int], list]
    energy_terms: list


@dataclass(frozen=True, eq=False)
class _AssignmentReading:
    """How a solved model reads as a genome and how a genome hints the model."""

    problem: PipelineProblem
    model: cp_model.CpModel
    x: dict[tuple[int, int], cp_model.IntVar]
    levels: _LevelLiterals
    y: list[dict[tuple[int, int], cp_model.IntVar]]

    def to_genome(self, solver: cp_model.CpSolver) -> np.ndarray:
        """The solver's devices per op, then (with DVFS) its level per DVFS device."""
        problem = self.problem
        devices = assigned_devices(solver, self.x, problem.tables.n_ops)
        if problem.levels is None:
            return devices
        chosen = [next(lv for (dd, lv), var in self.levels.z.items() if dd == int(d) and solver.boolean_value(var))
                  for d in problem.dvfs_devices]
        return np.concatenate([devices, np.asarray(chosen, dtype=np.int64)])

    def hint(self, genome: np.ndarray) -> None:
        """Replace the model's hints by ``genome``: assignment, level and edge-route literals."""
        model, n, edges = self.model, self.problem.tables.n_ops, self.problem.tables.edges
        model.clear_hints()
        genome = self.problem.canonical_levels(np.asarray(genome, dtype=np.int64))  # the model fixes idle levels
        hint_assignment(model, self.x, genome)
        if self.problem.levels is not None:
            level_of = {int(d): int(genome[n + k]) for k, d in enumerate(self.problem.dvfs_devices)}
            for (d, lv), var in self.levels.z.items():
                model.add_hint(var, int(level_of[d] == lv))
            for (i, d, lv), var in self.levels.w.items():
                model.add_hint(var, int(genome[i] == d and level_of[d] == lv))
        for e, pairs in enumerate(self.y):
            s, dst = edges[e]
            for (a, b), var in pairs.items():
                model.add_hint(var, int(genome[s] == a and genome[dst] == b))


def build_pipeline_model(problem: PipelineProblem, include: Sequence[str] | None = None,
                         deadline: float | None = None) -> Formulation:
    """Build the model; ``include`` names the constraints to model (default: all of the problem's).

    Raises :class:`ModelBuildTimeout` once ``time.monotonic()`` passes ``deadline``, and
    :class:`ModelTooLarge` (before building anything, or importing OR-Tools) past the literal budget
    (:func:`model_size_refusal`)."""
    refusal = model_size_refusal(problem.tables)
    if refusal is not None:
        raise ModelTooLarge(refusal)
    from ortools.sat.python import cp_model
    t = problem.tables
    names = modelled_constraints(problem, include)
    model = cp_model.CpModel()
    x = _assignment_literals(model, t)
    levels = _level_literals(model, problem, x)
    costs = _OpCosts(t, problem.levels, x, levels.w)
    big_time = _time_bound(problem)
    device_load = _device_loads(model, t, costs, big_time)
    routes = _edge_routes(model, t, x, deadline)
    link_load = _link_loads(model, routes, big_time)
    period_floor = _period_floor(problem)
    period = _period(model, period_floor, big_time, device_load, link_load)
    used = used_literals(model, x, t.n_ops, t.n_dev)
    _fix_idle_levels(model, problem, levels, used)
    energy = _energy(model, problem, costs, routes, used, period, period_floor, device_load, link_load, big_time)
    latency = (_latency(model, t, costs, routes, big_time)
               if "deadline" in names or any(o.name == "latency" for o in problem.objectives) else None)
    quantities = {"period": period, "energy": energy, "latency": latency}
    add_constraint_components(problem, names, ModelContext(model, t, x, quantities))

    values = {"throughput": period, "energy": energy, "latency": latency}
    reading = _AssignmentReading(problem, model, x, levels, routes.y)
    notes = [f"{len(x)} assignment vars, {sum(len(p) for p in routes.y)} edge-pair vars"
             + (f", {len(levels.z)} level vars" if levels.z else "")]
    return Formulation(model, objective_variables(problem, values), reading.to_genome, reading.hint, notes,
                       quantities)


def model_size_refusal(t: CostTables) -> str | None:
    """Why the model is not built (:class:`ModelTooLarge`'s reason, naming the model's size and the budget)
    when its assignment and edge-pair literals (counted from the allowed pairs, nothing built) exceed
    :data:`MAX_MODEL_LITERALS` or ``$DSE_MAX_CPSAT_LITERALS``; None otherwise."""
    per_op = t.allowed.sum(axis=1).astype(np.int64)
    assignment = int(per_op.sum())
    edge_pairs = int((per_op[t.edges[:, 0]] * per_op[t.edges[:, 1]]).sum()) if t.n_edges else 0
    budget = budget_from_env(MODEL_BUDGET_ENV, MAX_MODEL_LITERALS)
    if assignment + edge_pairs > budget:
        return (f"{assignment + edge_pairs:,} literals ({assignment:,} assignment, {edge_pairs:,} "
                f"edge-pair) exceed the budget of {budget:,.0f} ({MODEL_BUDGET_ENV} raises it); "
                "use nsga2 or memetic at this size")
    return None


def _assignment_literals(model: cp_model.CpModel, t: CostTables) -> dict[tuple[int, int], cp_model.IntVar]:
    """``x[i, d]`` per allowed (op, device) pair, exactly one per op."""
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for i in range(t.n_ops):
        for d in range(t.n_dev):
            if t.allowed[i, d]:
                x[i, d] = model.new_bool_var(f"x[{i},{d}]")
        model.add_exactly_one(x[i, d] for d in range(t.n_dev) if t.allowed[i, d])
    return x


def _level_literals(model: cp_model.CpModel, problem: PipelineProblem,
                    x: dict[tuple[int, int], cp_model.IntVar]) -> _LevelLiterals:
    """Per DVFS device one level literal per operating point (exactly one holds), and per op it may run
    the op-at-level literals (``sum_l w[i, d, l] == x[i, d]``, ``w[i, d, l] <= z[d, l]``)."""
    levels = problem.levels
    z: dict[tuple[int, int], cp_model.IntVar] = {}
    w: dict[tuple[int, int, int], cp_model.IntVar] = {}
    if levels is None:
        return _LevelLiterals(z, w)
    for device in problem.dvfs_devices:
        d = int(device)
        for level in range(int(levels.count[d])):
            z[d, level] = model.new_bool_var(f"z[{d},{level}]")
        model.add_exactly_one(z[d, level] for level in range(int(levels.count[d])))
        for i in range(problem.tables.n_ops):
            if (i, d) in x:
                for level in range(int(levels.count[d])):
                    w[i, d, level] = model.new_bool_var(f"w[{i},{d},{level}]")
                    model.add_implication(w[i, d, level], z[d, level])
                model.add(sum(w[i, d, level] for level in range(int(levels.count[d]))) == x[i, d])
    return _LevelLiterals(z, w)


def _fix_idle_levels(model: cp_model.CpModel, problem: PipelineProblem, levels: _LevelLiterals, used: list) -> None:
    """A DVFS device that runs no op is at level 0 (``not used[d] -> z[d, 0]``), as :meth:`PipelineProblem.repair`
    puts it: its level changes no cost (an idle device's power does not depend on its clock), so without this
    the solver would pick it arbitrarily and one mapping could come back with different level genes."""
    for device in problem.dvfs_devices:
        model.add_implication(used[int(device)].Not(), levels.z[int(device), 0])


def _time_bound(problem: PipelineProblem) -> int:
    """An upper bound of every load, the period and the latency: every op at its slowest level's
    largest time, every edge at the largest transfer time, plus one."""
    t = problem.tables
    op_time = t.time if problem.levels is None else problem.levels.time.max(axis=0)  # bounds only
    return int(op_time.max(initial=0)) * t.n_ops + int(t.transfer_time.max(initial=0)) * max(t.n_edges, 1) + 1


def _device_loads(model: cp_model.CpModel, t: CostTables, costs: _OpCosts,
                  big_time: int) -> dict[int, cp_model.IntVar]:
    """Per device that may run some op, its load: the sum of the times of the ops it runs."""
    device_load: dict[int, cp_model.IntVar] = {}
    for d in range(t.n_dev):
        terms = [term for i in range(t.n_ops) if (i, d) in costs.x for term in costs.terms(i, d, "time")]
        if terms:
            device_load[d] = sum_variable(model, terms, 0, big_time, f"load[{d}]")
    return device_load


def _edge_routes(model: cp_model.CpModel, t: CostTables, x: dict[tuple[int, int], cp_model.IntVar],
                 deadline: float | None) -> _Routes:
    """Per edge its route literals ``y[e][a, b]``, tied to ``x`` by transportation equalities (so each
    is exactly the product of its two assignment literals), and the transfer time and energy terms."""
    m = t.n_dev
    y: list[dict[tuple[int, int], cp_model.IntVar]] = []
    link_terms: dict[tuple[int, int], list] = {}
    energy_terms = []
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
                energy_terms.append(int(t.transfer_energy[e, a, b]) * var)
    return _Routes(y, link_terms, energy_terms)


def _link_loads(model: cp_model.CpModel, routes: _Routes, big_time: int) -> dict[tuple[int, int], cp_model.IntVar]:
    """Per link (a, b) that carries some transfer time, its load: the sum of the transfer times routed on it."""
    return {(a, b): sum_variable(model, terms, 0, big_time, f"link[{a},{b}]")
            for (a, b), terms in routes.link_terms.items()}


def _period_floor(problem: PipelineProblem) -> int:
    """The period's lower domain: the slowest op at its fastest device and level, and the work bound."""
    t = problem.tables
    least_time = t.time if problem.levels is None else problem.levels.time.min(axis=0)
    fastest = fastest_times(t.allowed, least_time)
    return int(max(fastest.max(initial=0), work_bound(fastest, t.n_dev)))


def _period(model: cp_model.CpModel, period_floor: int, big_time: int, device_load: dict[int, cp_model.IntVar],
            link_load: dict[tuple[int, int], cp_model.IntVar]) -> cp_model.IntVar:
    """The period in ``[period_floor, big_time]``: the largest load of a device or a link."""
    period = model.new_int_var(period_floor, big_time, "period")
    model.add_max_equality(period, [*device_load.values(), *link_load.values()])
    return period


def _energy(model: cp_model.CpModel, problem: PipelineProblem, costs: _OpCosts, routes: _Routes, used: list,
            period: cp_model.IntVar, period_floor: int, device_load: dict[int, cp_model.IntVar],
            link_load: dict[tuple[int, int], cp_model.IntVar], big_time: int) -> cp_model.IntVar:
    """The energy per item (pJ): the ops' energies, the transfers' and every used device idle over the
    period, with redundant linear cuts of the idle terms; bounded by the costliest mapping."""
    t = problem.tables
    op_energy_bound = t.energy if problem.levels is None else problem.levels.energy.max(axis=0)
    max_energy = (
        costliest_total(t.allowed, op_energy_bound)
        + int(t.transfer_energy.reshape(t.n_edges, t.n_dev * t.n_dev).max(axis=1, initial=0).sum())
        + int(t.idle_power_mw.sum()) * big_time
    )
    idle_terms = []
    for d in range(t.n_dev):
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
    op_energy_terms = [term for (i, d) in costs.x for term in costs.terms(i, d, "energy")]
    return sum_variable(model, [*op_energy_terms, *routes.energy_terms, *idle_terms], 0, max_energy, "energy")


def _latency(model: cp_model.CpModel, t: CostTables, costs: _OpCosts, routes: _Routes,
             big_time: int) -> cp_model.IntVar:
    """The latency of one item: per op a start and a finish (start + its time), each edge's consumer
    starting after its producer's finish plus the transfer time of its route; the latest sink finish."""
    n, m = t.n_ops, t.n_dev
    finish = []
    start = []
    for i in range(n):
        s_i = model.new_int_var(0, big_time, f"start[{i}]")
        f_i = model.new_int_var(0, big_time, f"finish[{i}]")
        model.add(f_i == s_i + sum(term for d in range(m) if (i, d) in costs.x for term in costs.terms(i, d, "time")))
        start.append(s_i)
        finish.append(f_i)
    for e, (s, dst) in enumerate(t.edges):
        delay = sum(int(t.transfer_time[e, a, b]) * var for (a, b), var in routes.y[e].items()
                    if t.transfer_time[e, a, b])
        model.add(start[int(dst)] >= finish[int(s)] + delay)
    latency = model.new_int_var(0, big_time, "latency")
    sinks = sorted(set(range(n)) - {int(s) for s in t.edges[:, 0]})
    model.add_max_equality(latency, [finish[i] for i in sinks])
    return latency


def diagnose_pipeline(problem: PipelineProblem, time_limit: float = 10.0) -> str:
    """Why no mapping is feasible: the first constraint that cannot be met and the best value reachable.

    Checks memory alone, then the deadline under memory, then the power cap
    under the others, each with CP-SAT. Returns a one-line message; raises
    :class:`~dse.errors.InfeasibleError` for what a static check already proves.
    """
    from ortools.sat.python import cp_model
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
    from ortools.sat.python import cp_model
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
