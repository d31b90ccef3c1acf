"""CP-SAT flexible-job-shop model of the ``dag`` family, over the same integer tables as the decoder.

Per task a start time and, per allowed device, a presence literal ``x[i, d]`` with an optional
fixed-size interval sharing that start; no overlap per device; precedence ``start[v] >= end[u]``
plus the transfer delay of the device pair, enforced by the two presence literals; makespan =
max end. Redundant reasoning: the critical-path and work lower bounds on the makespan, a
horizon from the best heuristic schedule (when makespan is the only objective), a cumulative relaxation when every device is
identical, and symmetry breaking among identical devices (the task at topological position k
uses one of the first k + 1 of them). Memory, deadline and colocation come from the problem's
constraint components.

The TF paper's per-device send occupancy is not modelled: ``DagProblem.cpsat`` refuses such
problems (``exact_unsupported`` says why; use NSGA-II or the heuristics).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from ortools.sat.python import cp_model

from dse.mapping.base import Formulation
from dse.mapping.constraints import ModelContext
from dse.mapping.cpsat_common import assigned_devices, check_build_time, idle_term, used_literals

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem


def identical_groups(problem: DagProblem) -> list[list[int]]:
    """Devices that are interchangeable (same columns of every table, same capacity and idle power)."""
    t = problem.tables
    groups: list[list[int]] = []
    for d in range(t.n_dev):
        for g in groups:
            r = g[0]
            if (np.array_equal(t.time[:, d], t.time[:, r]) and np.array_equal(t.energy[:, d], t.energy[:, r])
                    and np.array_equal(t.mem[:, d], t.mem[:, r]) and np.array_equal(t.allowed[:, d], t.allowed[:, r])
                    and t.mem_capacity[d] == t.mem_capacity[r] and t.idle_power_mw[d] == t.idle_power_mw[r]
                    and t.send_time[d] == t.send_time[r] and _same_links(t, d, r)):
                g.append(d)
                break
        else:
            groups.append([d])
    return groups


def _same_links(t, d: int, r: int) -> bool:
    """Swapping d and r leaves every transfer table unchanged (checked against all other devices)."""
    others = [o for o in range(t.n_dev) if o not in (d, r)]
    tt, te = t.transfer_time, t.transfer_energy
    return (np.array_equal(tt[:, d, others], tt[:, r, others]) and np.array_equal(tt[:, others, d], tt[:, others, r])
            and np.array_equal(tt[:, d, r], tt[:, r, d]) and np.array_equal(te[:, d, others], te[:, r, others])
            and np.array_equal(te[:, others, d], te[:, others, r]) and np.array_equal(te[:, d, r], te[:, r, d]))


def build_dag_model(problem: DagProblem, include: Sequence[str] | None = None,
                    seeds: Sequence[np.ndarray] = (), deadline: float | None = None) -> Formulation:
    """The model; ``include`` names the constraints to model (default: all of the problem's). The best
    feasible of ``seeds`` (by makespan) is the solution hint and, with makespan alone, bounds the horizon.
    Raises :class:`ModelBuildTimeout` once ``time.monotonic()`` passes ``deadline``."""
    t = problem.tables
    names = {c.name for c in problem.constraints} if include is None else set(include)
    n, m = t.n_ops, t.n_dev
    model = cp_model.CpModel()
    best = None
    if len(seeds):
        X = np.array(seeds, dtype=np.int64)
        ev = problem.evaluate(X)
        ok = np.flatnonzero(ev.feasible)
        if len(ok):
            best = X[ok[np.argmin(ev.F[ok, 0])]]
    # every task in sequence at its slowest time after every transfer: no schedule needs longer
    serial = int(np.where(t.allowed, t.time, 0).max(axis=1).sum()
                 + t.transfer_time.reshape(t.n_edges, -1).max(axis=1, initial=0).sum())
    horizon = serial
    if best is not None and len(problem.objectives) == 1:  # makespan alone: no need to look past a known schedule
        horizon = min(horizon, int(problem.evaluate(best[None, :]).F[0, 0]))
    if problem.deadline is not None and "deadline" in names:
        horizon = min(horizon, problem.deadline)
    lower = problem.critical_path_bound()
    fastest = np.where(t.allowed, t.time, np.iinfo(np.int64).max).min(axis=1)
    lower = max(lower, -(-int(fastest.sum()) // m))
    horizon = max(horizon, lower)

    x: dict[tuple[int, int], cp_model.IntVar] = {}
    start, end = [], []
    per_device: list[list] = [[] for _ in range(m)]
    for i in range(n):
        check_build_time(deadline, f"task {i} of {n}")
        s = model.new_int_var(0, horizon, f"start[{i}]")
        e = model.new_int_var(0, horizon, f"end[{i}]")
        start.append(s)
        end.append(e)
        lits = []
        for d in range(m):
            if not t.allowed[i, d]:
                continue
            lit = model.new_bool_var(f"x[{i},{d}]")
            x[i, d] = lit
            lits.append(lit)
            per_device[d].append(model.new_optional_fixed_size_interval_var(s, int(t.time[i, d]), lit, f"iv[{i},{d}]"))
            model.add(e == s + int(t.time[i, d])).only_enforce_if(lit)
        model.add_exactly_one(lits)
    for d in range(m):
        if len(per_device[d]) > 1:
            model.add_no_overlap(per_device[d])

    for k, (u, v) in enumerate(t.edges):
        check_build_time(deadline, f"precedence of edge {k} of {t.n_edges}")
        u, v = int(u), int(v)
        model.add(start[v] >= end[u])
        for a in range(m):
            for b in range(m):
                delay = int(t.transfer_time[k, a, b])
                if a != b and delay > 0 and (u, a) in x and (v, b) in x:
                    model.add(start[v] >= end[u] + delay).only_enforce_if([x[u, a], x[v, b]])

    makespan = model.new_int_var(lower, horizon, "makespan")
    model.add_max_equality(makespan, end)

    groups = identical_groups(problem)
    if len(groups) == 1 and m > 1:  # all identical: cumulative relaxation over task intervals
        intervals = [model.new_interval_var(start[i], int(t.time[i, 0]), end[i], f"task[{i}]") for i in range(n)]
        model.add_cumulative(intervals, [1] * n, m)
    order = problem.structure.topo
    for group in groups:
        if len(group) < 2:
            continue
        for k, task in enumerate(order):
            for j, d in enumerate(group):
                if j > k and (int(task), d) in x:
                    model.add(x[int(task), d] == 0)

    used = used_literals(model, x, n, m)

    energy = None
    if any(o.name == "energy" for o in problem.objectives):
        terms = [int(t.energy[i, d]) * lit for (i, d), lit in x.items() if t.energy[i, d]]
        for k, (u, v) in enumerate(t.edges):
            check_build_time(deadline, f"transfer energy of edge {k} of {t.n_edges}")
            for a in range(m):
                for b in range(m):
                    cost = int(t.transfer_energy[k, a, b])
                    if a != b and cost and (int(u), a) in x and (int(v), b) in x:
                        both = model.new_bool_var(f"cross[{k},{a},{b}]")
                        model.add_bool_and([x[int(u), a], x[int(v), b]]).only_enforce_if(both)
                        model.add_bool_or([x[int(u), a].Not(), x[int(v), b].Not(), both])
                        terms.append(cost * both)
        for d in range(m):
            if t.idle_power_mw[d]:
                terms.append(idle_term(model, used[d], int(t.idle_power_mw[d]), makespan, horizon, f"idle[{d}]"))
        bound = int(np.where(t.allowed, t.energy, 0).max(axis=1).sum()
                    + t.transfer_energy.reshape(t.n_edges, -1).max(axis=1, initial=0).sum()
                    + t.idle_power_mw.sum() * horizon)
        energy = model.new_int_var(0, bound, "energy")
        model.add(energy == sum(terms))

    ctx = ModelContext(model, t, x, {"makespan": makespan, "energy": energy})
    for constraint in problem.constraints:
        if constraint.name in names:
            constraint.add_to_model(ctx)

    values = {"makespan": makespan, "energy": energy}
    objective_vars = [values[o.name] for o in problem.objectives]

    def to_genome(solver: cp_model.CpSolver) -> np.ndarray:
        dev = assigned_devices(solver, x, n)
        starts = np.array([solver.value(s) for s in start], dtype=np.int64)
        order_ = np.lexsort((problem.structure.topo_pos, starts))
        return problem.genome(dev, order_)

    def hint(genome: np.ndarray) -> None:
        model.clear_hints()
        sched = problem.schedule(genome, insertion=problem.insertion)
        for (i, d), lit in x.items():
            model.add_hint(lit, int(sched.device[i] == d))
        for i in range(n):
            model.add_hint(start[i], int(sched.start[i]))
            model.add_hint(end[i], int(sched.finish[i]))

    form = Formulation(model, objective_vars, to_genome, hint,
                       [f"{len(x)} optional intervals, horizon {horizon}, lower bound {lower}, "
                        f"{len(groups)} device classes"], values)
    if best is not None:
        hint(best)
    return form
