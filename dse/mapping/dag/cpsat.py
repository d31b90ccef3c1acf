"""CP-SAT flexible-job-shop model of the ``dag`` family, over the same integer tables as the decoder.

Per task a start time and, per allowed device, a presence literal ``x[i, d]`` with an optional
interval sharing that start; no overlap per device; precedence ``start[v] >= end[u]`` plus the
transfer delay of the device pair, enforced by the two presence literals; makespan = max end.
Redundant reasoning: the makespan starts at the work bound, at :mod:`dse.mapping.dag.bounds`'
communication bound and at :mod:`dse.mapping.dag.load_bound`'s windowed load bound, raised by the
destructive, chain and load bounds' refutations within a tenth of the time limit; per task and device
the earliest start and the shortest tail of those bounds (raised by the load of the task's ancestors
and descendants) enter linearly in the presence literals (start >= the chosen device's head, makespan
>= end + its tail), and a device whose head, time and tail exceed the horizon is not offered; a
horizon from the best heuristic schedule (when makespan is the only objective), a cumulative
relaxation when every device is identical, and symmetry breaking among identical devices (the task
at topological position k uses one of the first k + 1 of them). Memory, deadline and colocation come
from the problem's constraint components.

Under the TF paper's rules (``tensor_per_device``) the model follows the decoder exactly:
``r[u, b]`` is true when device ``b`` is remote to producer ``u`` and runs one of its consumers
(the tensor crosses once per such device); ``u``'s device stays busy for its compute plus
``send_time[dev u]`` per remote device (the no-overlap intervals end at that release time); the
tensor reaches device ``b`` at ``end[u] + (1 + #remote devices of u below b) * send_time[dev u]
+ transfer_time[edge, dev u, b]``; transfer energy is paid once per producer and remote device,
from the producer's first outgoing edge's table. Symmetry breaking is then off when sends cost
time, since the send order by device index tells identical devices apart.

:func:`build_dag_model` reads as its phases, in the order they add to the model: the horizon and the
lower bound, the task variables, the remote literals, the device occupation, the precedences, the
makespan, the cuts of identical devices, the energy, the constraint components and the hint.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.base import Formulation
from dse.mapping.constraints import ModelContext
from dse.mapping.cpsat_common import (
    ModelTooLarge,
    add_constraint_components,
    assigned_devices,
    best_feasible_seed,
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
from dse.mapping.dag.bounds import destructive_bound
from dse.mapping.dag.chain_bound import chain_bound
from dse.mapping.dag.load_bound import load_bound, load_task_device_bounds
from dse.util.jit import may_compile

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from dse.mapping.dag.problem import DagProblem


#: Largest number of (edge, producer device, consumer device) precedence constraints the model builds; past
#: it the model would not fit in memory or be built within any sensible time limit.
MAX_PAIR_CONSTRAINTS = 3_000_000
#: Share of the solve's time (and most seconds) spent refuting makespans before the search
#: (:func:`dse.mapping.dag.bounds.destructive_bound`, then :func:`dse.mapping.dag.chain_bound.chain_bound`
#: in what is left of it): their bound is the makespan's lower domain.
DESTRUCTIVE_SHARE = 0.1
DESTRUCTIVE_SECONDS = 30.0


def chain_bound_may_help(problem: DagProblem, longest_transfer: np.ndarray, send: np.ndarray) -> bool:
    """Whether :func:`~dse.mapping.dag.chain_bound.chain_bound` can raise the makespan floor above the
    communication and destructive bounds: only where moving between devices costs something (a transfer
    or a send) or the devices differ. On identical devices without transfer costs its blocks' least times
    are their critical paths, which the communication bound already counts, so it is not computed."""
    return bool(longest_transfer.any() or send.any() or len(identical_groups(problem)) > 1)


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


def _same_links(t, d: int, r: int, chunk: int = 4096) -> bool:
    """Swapping d and r leaves every transfer table unchanged (checked against all other devices, reading
    the tables through their per-edge accessor a chunk of edges at a time)."""
    others = [o for o in range(t.n_dev) if o not in (d, r)]
    for lo in range(0, t.n_edges, chunk):
        edges = np.arange(lo, min(lo + chunk, t.n_edges))
        for what in ("transfer_time", "transfer_energy"):
            x = t.transfer_block(edges, what)
            if not (np.array_equal(x[:, d, others], x[:, r, others]) and np.array_equal(x[:, others, d], x[:, others, r])
                    and np.array_equal(x[:, d, r], x[:, r, d])):
                return False
    return True


def _remote_literals(model: cp_model.CpModel, x: dict[tuple[int, int], cp_model.IntVar],
                     consumers: list[list[tuple[int, int]]], m: int,
                     deadline: float | None = None) -> dict[tuple[int, int], cp_model.IntVar]:
    """``r[u, b]``: true exactly when ``u`` is not on ``b`` and some consumer of ``u`` is (the TF send rule)."""
    r: dict[tuple[int, int], cp_model.IntVar] = {}
    for u, outs in enumerate(consumers):
        check_build_time(deadline, f"remote devices of task {u} of {len(consumers)}")
        for b in range(m):
            there = [x[v, b] for v in dict.fromkeys(v for v, _ in outs) if (v, b) in x]
            if not there:
                continue
            lit = model.new_bool_var(f"remote[{u},{b}]")
            for c in there:
                model.add_bool_or([c.Not(), lit] + ([x[u, b]] if (u, b) in x else []))
            model.add_bool_or(there).only_enforce_if(lit)
            if (u, b) in x:
                model.add_implication(lit, x[u, b].Not())
            r[u, b] = lit
    return r


@dataclass(frozen=True, eq=False)
class _TaskVariables:
    """Per task its start and end and, per device that may run it, its presence literal ``x[i, d]``;
    ``tails[i]``: the end of task ``i`` plus the shortest tail of its chosen device (a makespan floor)."""

    x: dict[tuple[int, int], cp_model.IntVar]
    start: list[cp_model.IntVar]
    end: list[cp_model.IntVar]
    tails: list[cp_model.LinearExpr]


@dataclass(frozen=True, eq=False)
class _ScheduleReading:
    """How a solved model reads as a genome and how a genome hints the model (its decoded schedule)."""

    problem: DagProblem
    model: cp_model.CpModel
    tasks: _TaskVariables
    release: dict[int, cp_model.IntVar]
    remote: dict[tuple[int, int], cp_model.IntVar]
    consumers: list[list[tuple[int, int]]]

    def to_genome(self, solver: cp_model.CpSolver) -> np.ndarray:
        """The genome of the solver's schedule: its devices and, as priorities, its start order."""
        dev = assigned_devices(solver, self.tasks.x, len(self.tasks.start))
        starts = np.array([solver.value(s) for s in self.tasks.start], dtype=np.int64)
        order = np.lexsort((self.problem.structure.topo_pos, starts))
        return self.problem.genome(dev, order)

    def hint(self, genome: np.ndarray) -> None:
        """Replace the model's hints by ``genome``'s decoded schedule: devices, starts, ends, release times
        and remote devices."""
        model, tasks = self.model, self.tasks
        model.clear_hints()
        sched = self.problem.schedule(genome, insertion=self.problem.insertion)
        hint_assignment(model, tasks.x, sched.device)
        for i in range(len(tasks.start)):
            model.add_hint(tasks.start[i], int(sched.start[i]))
            model.add_hint(tasks.end[i], int(sched.finish[i]))
        for i, rel in self.release.items():
            model.add_hint(rel, int(sched.release[i]))
        for (u, b), lit in self.remote.items():
            model.add_hint(lit, int(any(sched.device[v] == b for v, _ in self.consumers[u])
                                    and sched.device[u] != b))


def build_dag_model(problem: DagProblem, include: Sequence[str] | None = None,
                    seeds: Sequence[np.ndarray] = (), deadline: float | None = None) -> Formulation:
    """The model; ``include`` names the constraints to model (default: all of the problem's). The best
    feasible of ``seeds`` (by makespan) is the solution hint and, with makespan alone, bounds the horizon.
    Raises :class:`ModelBuildTimeout` once ``time.monotonic()`` passes ``deadline``, and
    :class:`ModelTooLarge` past :data:`MAX_PAIR_CONSTRAINTS` (before importing OR-Tools)."""
    refusal = model_size_refusal(problem)
    if refusal is not None:
        raise ModelTooLarge(refusal)
    from ortools.sat.python import cp_model
    t = problem.tables
    names = modelled_constraints(problem, include)
    tf = problem.tensor_per_device and t.n_edges > 0
    send = np.asarray(t.send_time, dtype=np.int64) if tf else np.zeros(t.n_dev, dtype=np.int64)
    check_build_time(deadline, "before the seeds")
    best = best_feasible_seed(problem, seeds)
    check_build_time(deadline, "the seeds evaluated")
    longest_transfer = t.transfer_over_pairs("transfer_time")[1]
    horizon = _horizon(problem, names, best, send, longest_transfer)
    bounds_end = _bounds_end(deadline)  # a tenth of the time; its first half for the raised heads and tails
    head, tail, reach, load_floor = load_task_device_bounds(
        problem, deadline=bounds_end if deadline is None else (time.monotonic() + bounds_end) / 2)
    check_build_time(deadline, "the task bounds computed")
    lower, notes = _makespan_lower_bound(problem, horizon, reach, send, longest_transfer, deadline, bounds_end,
                                         load_floor)
    horizon = max(horizon, lower)

    model = cp_model.CpModel()
    consumers = problem.structure.adjacency()[1]  # per task its (consumer, edge) pairs, in edge order
    tasks = _task_variables(model, problem, horizon, head, tail, reach, deadline)
    remote = _remote_literals(model, tasks.x, consumers, t.n_dev, deadline) if tf else {}
    release = _device_occupation(model, problem, tasks, remote, send, horizon, deadline)
    _precedences(model, problem, tasks, remote, send, deadline)
    makespan = _makespan(model, tasks, lower, horizon)
    check_build_time(deadline, "the precedences modelled")
    groups = identical_groups(problem)
    _identical_device_cuts(model, problem, tasks, groups, sends=bool(send.any()))
    check_build_time(deadline, "the device-class cuts modelled")
    used = used_literals(model, tasks.x, t.n_ops, t.n_dev)
    energy = (_energy(model, problem, tasks.x, remote, consumers, used, makespan, horizon, deadline)
              if any(o.name == "energy" for o in problem.objectives) else None)
    values = {"makespan": makespan, "energy": energy}
    check_build_time(deadline, "the energy modelled")
    add_constraint_components(problem, names, ModelContext(model, t, tasks.x, values))
    check_build_time(deadline, "the constraints modelled")

    reading = _ScheduleReading(problem, model, tasks, release, remote, consumers)
    rule = ", TF send rule" if tf else ""
    form = Formulation(model, objective_variables(problem, values), reading.to_genome, reading.hint,
                       [f"{len(tasks.x)} optional intervals, horizon {horizon}, lower bound {lower}, "
                        f"{len(groups)} device classes{rule}", *notes], values)
    if best is not None:
        reading.hint(best)
    return form


def _horizon(problem: DagProblem, names: set[str], best: np.ndarray | None, send: np.ndarray,
             longest_transfer: np.ndarray) -> int:
    """The makespan's upper domain: every task in sequence at its slowest time after every transfer and
    every send (no schedule needs longer), cut to the best seed's makespan when makespan is the only
    objective and to the deadline when it is modelled."""
    t = problem.tables
    n, m = t.n_ops, t.n_dev
    horizon = (costliest_total(t.allowed, t.time) + int(longest_transfer.sum())
               + (n + t.n_edges) * max(m - 1, 0) * int(send.max(initial=0)))
    if best is not None and len(problem.objectives) == 1:  # makespan alone: no need to look past a known schedule
        horizon = min(horizon, int(problem.evaluate(best[None, :]).F[0, 0]))
    if problem.deadline is not None and "deadline" in names:
        horizon = min(horizon, problem.deadline)
    return horizon


def _bounds_end(deadline: float | None) -> float:
    """When the lower bounds must stop: a tenth of the time left before ``deadline``
    (:data:`DESTRUCTIVE_SHARE`, :data:`DESTRUCTIVE_SECONDS` at most); no limit without a deadline."""
    if deadline is None:
        return math.inf
    return time.monotonic() + max(0.0, min(DESTRUCTIVE_SECONDS, DESTRUCTIVE_SHARE * (deadline - time.monotonic())))


def _makespan_lower_bound(problem: DagProblem, horizon: int, reach: np.ndarray, send: np.ndarray,
                          longest_transfer: np.ndarray, deadline: float | None, budget_end: float,
                          load_floor: int = 0) -> tuple[int, list[str]]:
    """The makespan's lower domain and a note when a bound was skipped: the communication bound (with
    the load-raised heads and tails of ``reach``), the work bound and ``load_floor`` (the windowed load
    bound, :mod:`dse.mapping.dag.load_bound`), raised (with a build ``deadline``) by the destructive,
    chain and load bounds' refutations until ``budget_end`` (:func:`_bounds_end`)."""
    lower = int(reach.min(axis=1).max(initial=0))  # the communication bound, its heads and tails raised by load
    t = problem.tables
    lower = max(lower, work_bound(fastest_times(t.allowed, t.time), t.n_dev), load_floor)
    notes: list[str] = []
    if deadline is not None and lower < horizon:  # a tenth of the time (30 s at most) to refute makespans
        if not may_compile():  # the bounds are worth their time only compiled (dse.util.jit)
            notes.append("lower bounds skipped: the kernels are being compiled for this environment")
        else:
            lower = destructive_bound(problem, upper=horizon, time_limit=budget_end - time.monotonic(), known=lower)
            if chain_bound_may_help(problem, longest_transfer, send):
                lower = chain_bound(problem, upper=horizon, time_limit=budget_end - time.monotonic(), known=lower)
            if time.monotonic() < budget_end:
                lower = load_bound(problem, upper=horizon, time_limit=budget_end - time.monotonic(), known=lower)
    return lower, notes


def model_size_refusal(problem: DagProblem) -> str | None:
    """Why the model is not built (:class:`ModelTooLarge`'s reason) when the precedences would need more than
    :data:`MAX_PAIR_CONSTRAINTS` (edge, producer device, consumer device) constraints, counted from the
    tables; None otherwise."""
    t = problem.tables
    per_task = t.allowed.sum(axis=1).astype(np.int64)
    pairs = int((per_task[t.edges[:, 0]] * per_task[t.edges[:, 1]]).sum()) if t.n_edges else 0
    if pairs > MAX_PAIR_CONSTRAINTS:
        return (f"{pairs:,} device-pair precedence constraints exceed {MAX_PAIR_CONSTRAINTS:,}; "
                "use nsga2 or memetic at this size")
    return None


def _task_variables(model: cp_model.CpModel, problem: DagProblem, horizon: int, head: np.ndarray,
                    tail: np.ndarray, reach: np.ndarray, deadline: float | None) -> _TaskVariables:
    """Per task a start, an end, one presence literal per device that may run it within the horizon
    (exactly one holds; it fixes the end to start + time there), the chosen device's earliest start as a
    floor of the start and its shortest tail after the end (returned as the task's tail)."""
    t = problem.tables
    n, m = t.n_ops, t.n_dev
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    start, end = [], []
    tails = []
    for i in range(n):
        check_build_time(deadline, f"task {i} of {n}")
        s = model.new_int_var(0, horizon, f"start[{i}]")
        e = model.new_int_var(0, horizon, f"end[{i}]")
        start.append(s)
        end.append(e)
        lits = []
        for d in range(m):
            if not t.allowed[i, d] or reach[i, d] > horizon:  # no schedule within the horizon runs i on d
                continue
            lit = model.new_bool_var(f"x[{i},{d}]")
            x[i, d] = lit
            lits.append(lit)
            model.add(e == s + int(t.time[i, d])).only_enforce_if(lit)
        model.add_exactly_one(lits)
        # linear in the presence literals (exactly one holds): the earliest start and the shortest tail
        # of the chosen device, a strong relaxation where transfers dominate
        model.add(s >= sum(int(head[i, d]) * x[i, d] for d in range(m) if (i, d) in x))
        tails.append(e + sum(int(tail[i, d]) * x[i, d] for d in range(m) if (i, d) in x))
    return _TaskVariables(x, start, end, tails)


def _device_occupation(model: cp_model.CpModel, problem: DagProblem, tasks: _TaskVariables,
                       remote: dict[tuple[int, int], cp_model.IntVar], send: np.ndarray, horizon: int,
                       deadline: float | None) -> dict[int, cp_model.IntVar]:
    """Per device one optional interval per task it may run, and no overlap among them. A task whose
    device sends (TF rule) holds it until its release, after one send per remote device; returns those
    release variables by task."""
    t = problem.tables
    n, m = t.n_ops, t.n_dev
    x = tasks.x
    per_device: list[list] = [[] for _ in range(m)]
    release: dict[int, cp_model.IntVar] = {}
    for i in range(n):
        check_build_time(deadline, f"device occupation of task {i} of {n}")
        remote_of_i = [remote[i, b] for b in range(m) if (i, b) in remote]
        busy_after = [d for d in range(m) if (i, d) in x and send[d] and remote_of_i]
        if busy_after:  # compute, then one send per remote device: the device is released later
            rel = model.new_int_var(0, horizon, f"release[{i}]")
            span = model.new_int_var(0, horizon, f"occupy[{i}]")
            release[i] = rel
            sent = sum(remote_of_i)
            for d in range(m):
                if (i, d) in x:
                    model.add(rel == tasks.end[i] + int(send[d]) * sent).only_enforce_if(x[i, d])
                    per_device[d].append(model.new_optional_interval_var(tasks.start[i], span, rel, x[i, d],
                                                                         f"iv[{i},{d}]"))
            continue
        for d in range(m):
            if (i, d) in x:
                per_device[d].append(model.new_optional_fixed_size_interval_var(
                    tasks.start[i], int(t.time[i, d]), x[i, d], f"iv[{i},{d}]"))
    for d in range(m):
        if len(per_device[d]) > 1:
            model.add_no_overlap(per_device[d])
    return release


def _precedences(model: cp_model.CpModel, problem: DagProblem, tasks: _TaskVariables,
                 remote: dict[tuple[int, int], cp_model.IntVar], send: np.ndarray, deadline: float | None) -> None:
    """Per edge ``start[v] >= end[u]``, and per pair of distinct devices of producer and consumer the
    transfer delay (after the producer's earlier sends under the TF rule), enforced by both literals."""
    t = problem.tables
    m = t.n_dev
    x, start, end = tasks.x, tasks.start, tasks.end
    for k, (u, v) in enumerate(t.edges):
        check_build_time(deadline, f"precedence of edge {k} of {t.n_edges}")
        u, v = int(u), int(v)
        model.add(start[v] >= end[u])
        delays = t.transfer_block(np.array([k]))[0]
        for a in range(m):
            if (u, a) not in x:
                continue
            for b in range(m):
                if a == b or (v, b) not in x:
                    continue
                delay = int(delays[a, b])
                if send[a]:  # the sends to the remote devices below b go first
                    before = [remote[u, c] for c in range(b) if (u, c) in remote]
                    model.add(start[v] >= end[u] + int(send[a]) * (1 + sum(before)) + delay).only_enforce_if(
                        [x[u, a], x[v, b]])
                elif delay > 0:
                    model.add(start[v] >= end[u] + delay).only_enforce_if([x[u, a], x[v, b]])


def _makespan(model: cp_model.CpModel, tasks: _TaskVariables, lower: int, horizon: int) -> cp_model.IntVar:
    """The makespan in ``[lower, horizon]``: the latest end, and at least every task's end plus its tail."""
    makespan = model.new_int_var(lower, horizon, "makespan")
    model.add_max_equality(makespan, tasks.end)
    for finish_and_tail in tasks.tails:
        model.add(makespan >= finish_and_tail)
    return makespan


def _identical_device_cuts(model: cp_model.CpModel, problem: DagProblem, tasks: _TaskVariables,
                           groups: list[list[int]], sends: bool) -> None:
    """Redundant constraints of interchangeable devices: a cumulative relaxation when every device is
    identical, and (unless sends cost time: their order by device index tells identical devices apart)
    the task at topological position k on one of the first k + 1 devices of its group."""
    t = problem.tables
    n, m = t.n_ops, t.n_dev
    if len(groups) == 1 and m > 1:  # all identical: cumulative relaxation over task intervals
        intervals = [model.new_interval_var(tasks.start[i], int(t.time[i, 0]), tasks.end[i], f"task[{i}]")
                     for i in range(n)]
        model.add_cumulative(intervals, [1] * n, m)
    order = problem.structure.topo
    for group in groups if not sends else []:
        if len(group) < 2:
            continue
        for k, task in enumerate(order):
            for j, d in enumerate(group):
                if j > k and (int(task), d) in tasks.x:
                    model.add(tasks.x[int(task), d] == 0)


def _energy(model: cp_model.CpModel, problem: DagProblem, x: dict[tuple[int, int], cp_model.IntVar],
            remote: dict[tuple[int, int], cp_model.IntVar], consumers: list[list[tuple[int, int]]],
            used: list, makespan: cp_model.IntVar, horizon: int, deadline: float | None) -> cp_model.IntVar:
    """The energy (pJ): the chosen devices' task energies, the transfers' energy and every used device
    idle over the makespan; bounded by the costliest devices, routes and idle power over the horizon."""
    t = problem.tables
    m = t.n_dev
    terms = [int(t.energy[i, d]) * lit for (i, d), lit in x.items() if t.energy[i, d]]
    terms += _transfer_energy_terms(problem, model, x, remote, consumers, deadline)
    for d in range(m):
        if t.idle_power_mw[d]:
            terms.append(idle_term(model, used[d], int(t.idle_power_mw[d]), makespan, horizon, f"idle[{d}]"))
    bound = int(costliest_total(t.allowed, t.energy)
                + t.transfer_over_pairs("transfer_energy")[1].sum() * max(m - 1, 1)
                + t.idle_power_mw.sum() * horizon)
    return sum_variable(model, terms, 0, bound, "energy")


def _transfer_energy_terms(problem: DagProblem, model: cp_model.CpModel, x: dict[tuple[int, int], cp_model.IntVar],
                           r: dict[tuple[int, int], cp_model.IntVar], consumers: list[list[tuple[int, int]]],
                           deadline: float | None) -> list:
    """Transfer energy: per crossing edge, or (TF rule, ``r`` given) once per producer and remote device."""
    t = problem.tables
    m = t.n_dev
    terms: list = []

    def both(a_lit: cp_model.IntVar, b_lit: cp_model.IntVar, name: str) -> cp_model.IntVar:
        lit = model.new_bool_var(name)
        model.add_bool_and([a_lit, b_lit]).only_enforce_if(lit)
        model.add_bool_or([a_lit.Not(), b_lit.Not(), lit])
        return lit

    if problem.tensor_per_device:
        for u, outs in enumerate(consumers):
            if not outs:
                continue
            check_build_time(deadline, f"transfer energy of task {u} of {t.n_ops}")
            table = t.transfer_block(np.array([outs[0][1]]), "transfer_energy")[0]  # the producer's first edge
            for b in range(m):
                for a in range(m):
                    cost = int(table[a, b])
                    if a != b and cost and (u, b) in r and (u, a) in x:
                        terms.append(cost * both(x[u, a], r[u, b], f"send[{u},{a},{b}]"))
        return terms
    for k, (u, v) in enumerate(t.edges.tolist()):
        check_build_time(deadline, f"transfer energy of edge {k} of {t.n_edges}")
        table = t.transfer_block(np.array([k]), "transfer_energy")[0]
        for a in range(m):
            for b in range(m):
                cost = int(table[a, b])
                if a != b and cost and (u, a) in x and (v, b) in x:
                    terms.append(cost * both(x[u, a], x[v, b], f"cross[{k},{a},{b}]"))
    return terms
