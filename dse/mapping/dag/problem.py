"""The ``dag`` family (TF partitioning and scheduling): device and priority per task.

Genome: ``device[i]`` for every task, then ``priority[i]`` (a sort key; lower
runs earlier). Decoding is non-preemptive list scheduling:

1. *order*: keys are made consistent with precedence (``key'[v] = max(key[v],
   key'[u])`` over predecessors ``u``) and tasks are sorted by ``(key', topological
   position)``, which is always a topological order;
2. *placement*: in that order each task starts on its device at the earliest
   time when all its inputs have arrived and the device is free: after the
   device's last task (non-insertion) or in the earliest idle gap that fits
   (insertion).

An input from the same device arrives when the producer finishes; from another
device it arrives ``transfer_time[edge, a, b]`` later. With
``tensor_per_device`` (the TF paper's rules) a producer's output crosses to
each remote device once, however many consumers it has there; the producer's
device then spends ``send_time[a]`` per remote device after the task, in
device-index order, and the tensor arrives ``transfer_time`` after its send ends.
Links have no contention. Energy = dynamic op energy + transfer energy + idle
power of every used device over the makespan.

Both decoders (vectorized over a population, and one genome at a time with
insertion) share this order and these rules; tests check that they agree.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, StrictBool

from dse.cost import CostTables
from dse.errors import InfeasibleError, SpecError
from dse.mapping.base import (
    Activity,
    Breakdown,
    DecodedMapping,
    DeviceCost,
    Evaluation,
    Formulation,
    LinkCost,
    MappingProblem,
    Objective,
    leading_device_genes,
)
from dse.mapping.constraints import (
    AllowedDevices,
    Colocation,
    Constraint,
    Deadline,
    MemoryCapacity,
    describe_slack,
)
from dse.mapping.dag.objective_bounds import lower_bounds
from dse.mapping.dag.structure import DagStructure, list_schedule_population
from dse.mapping.population import Population
from dse.mapping.registry import Family, Metric, ProblemInputs, register_family

DAG_OBJECTIVES = ("makespan", "energy")


def _objective(name: str, tables: CostTables) -> Objective:
    if name == "makespan":
        factor = tables.display_per_time_unit

        def display_time(v: np.ndarray) -> np.ndarray:
            return np.asarray(v, dtype=float) * factor

        return Objective("makespan", tables.display_time_unit, "min", "makespan", tables.time_unit,
                         display_time)
    if name == "energy":

        def mj(v: np.ndarray) -> np.ndarray:
            return np.asarray(v, dtype=float) * 1e-9

        return Objective("energy", "mJ", "min", "energy", "pJ", mj)
    raise SpecError("problem", "objectives", name, f"dag objectives are {', '.join(DAG_OBJECTIVES)}")


@dataclass(frozen=True)
class DagSchedule(DecodedMapping):
    """A decoded schedule: per task its device, start, compute finish and device-release time, and where
    its time and energy go (``costs``)."""

    task_names: tuple[str, ...]
    device_names: tuple[str, ...]
    device: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    release: np.ndarray
    order: np.ndarray
    makespan: int
    energy: int
    time_unit: str
    costs: Breakdown
    constraint_slack: dict[str, float] = field(default_factory=dict)

    @property
    def schedule(self) -> list[tuple[str, str, int, int]]:  # type: ignore[override]
        """``(task, device, start, finish)`` rows for Gantt charts, in start order."""
        rows = [(self.task_names[i], self.device_names[self.device[i]], int(self.start[i]), int(self.finish[i]))
                for i in range(len(self.task_names))]
        return sorted(rows, key=lambda r: (r[2], r[1]))

    def values(self) -> dict[str, int]:
        return {"makespan": self.makespan, "energy": self.energy}

    def assignment(self) -> dict[str, str]:
        return {name: self.device_names[d] for name, d in zip(self.task_names, self.device.tolist(), strict=True)}

    def breakdown(self) -> Breakdown:
        return self.costs

    def explain(self) -> str:
        """A readable multi-line account of the schedule (per-device and per-link figures from
        :meth:`breakdown`)."""
        costs = self.costs
        mj = costs.millijoules
        lines = [f"makespan {self.makespan} {self.time_unit}, energy {mj(self.energy):.4g} mJ "
                 f"(ops {mj(costs.dynamic_energy):.3g} mJ, transfers {mj(costs.transfer_energy):.3g} mJ, "
                 f"idle {mj(costs.idle_energy):.3g} mJ)"]
        for dev in costs.devices:
            energy = (f", energy {mj(dev.dynamic_energy):.3g} mJ + idle {mj(dev.idle_energy):.3g} mJ"
                      if dev.ops else "")
            lines.append(f"  {dev.name}: {dev.ops} tasks, busy {dev.busy} {self.time_unit} "
                         f"({dev.busy / max(self.makespan, 1):.0%}){energy}")
        for link in costs.links:
            lines.append(f"  {link.name}: {len([a for a in costs.transfers if a.where == link.name])} transfers, "
                         f"{link.busy} {self.time_unit} in all, energy {mj(link.energy):.3g} mJ")
        for name, slack in self.constraint_slack.items():
            lines.append(describe_slack(name, slack))
        rows = self.schedule
        lines.append(f"schedule (start - finish, {self.time_unit}), in start order:")
        lines += [f"  {task} on {device}: {start} - {finish}" for task, device, start, finish in rows[:EXPLAIN_ROWS]]
        if len(rows) > EXPLAIN_ROWS:
            lines.append(f"  ... {len(rows) - EXPLAIN_ROWS} more tasks (dse solve --gantt or trace.json shows them all)")
        return "\n".join(lines)


#: Most schedule rows ``explain()`` prints.
EXPLAIN_ROWS = 60


class DagProblem(MappingProblem):
    """Partition and schedule one iteration of a task DAG.

    ``objectives``: ``("makespan",)`` or ``("makespan", "energy")``;
    ``deadline`` (time units) bounds the makespan; ``memory`` enforces device
    capacities on the summed resident bytes; ``insertion`` selects the
    insertion-based decoder (searching each device's sorted free gaps);
    ``tensor_per_device`` applies the TF paper's transfer rules.
    """

    family = "dag"
    _RECENT = 4  # genomes whose makespan :meth:`schedule` remembers

    def __init__(
        self,
        tables: CostTables,
        objectives: Sequence[str] = ("makespan", "energy"),
        *,
        deadline: int | None = None,
        memory: bool = True,
        insertion: bool = False,
        tensor_per_device: bool = False,
        name: str = "dag",
    ) -> None:
        self.name = name
        self.tables = tables
        self.objectives = tuple(_objective(o, tables) for o in objectives)
        if not self.objectives or self.objectives[0].name != "makespan":
            raise SpecError("problem", "objectives", list(objectives), "the dag family's first objective is makespan")
        self.deadline = None if deadline is None else int(deadline)
        self.memory = memory and bool((tables.mem > 0).any())
        self.insertion = insertion
        self.tensor_per_device = tensor_per_device
        self.structure = DagStructure.of(tables)
        self.colocation = Colocation.of(tables)
        cons: list[Constraint] = []
        if self.memory:
            cons.append(MemoryCapacity("task"))
        if self.deadline is not None:
            cons.append(Deadline(self.deadline, "makespan", tables.time_unit, tables.time_unit, 1.0))
        if not tables.allowed.all():
            cons.append(AllowedDevices("task"))
        if self.colocation is not None:
            cons.append(self.colocation)
        self.constraints = tuple(cons)
        masked = np.where(tables.allowed, tables.time, np.iinfo(np.int64).max)
        self._fastest = masked.argmin(axis=1)
        # whether a genome with every task on one device decodes to the sum of its times (transfers on one
        # device are free: always with per-pair rates, checked for explicit tables)
        diagonal = np.arange(tables.n_dev)
        self._serial_on_one_device = not tables.transfer_is_explicit("transfer_time") or not (
            tables.n_edges and tables.transfer_time[:, diagonal, diagonal].any())
        # the makespans of the last few genomes decoded one at a time (:meth:`schedule`), so that evaluating
        # a mapping just decoded (a heuristic's result, an explained point) does not decode it again
        self._recent_makespans: dict[tuple[bytes, bool], int] = {}

    # ------------------------------------------------------------------ genome
    @property
    def n_tasks(self) -> int:
        return self.tables.n_ops

    @property
    def n_genes(self) -> int:
        """A device and a priority gene per task (without building the names)."""
        return 2 * self.n_tasks

    @property
    def gene_names(self) -> tuple[str, ...]:
        names = self.tables.op_names
        return tuple(f"device[{n}]" for n in names) + tuple(f"priority[{n}]" for n in names)

    @property
    def lower(self) -> np.ndarray:
        return np.zeros(2 * self.n_tasks, dtype=np.int64)

    @property
    def upper(self) -> np.ndarray:
        n = self.n_tasks
        return np.concatenate([np.full(n, self.tables.n_dev - 1), np.full(n, n - 1)]).astype(np.int64)

    def repair(self, X: np.ndarray) -> np.ndarray:
        """Clip, move tasks off devices that may not run them, and put colocated tasks with their group's first task."""
        X = np.clip(self.integer_genomes(X), self.lower, self.upper)
        n = self.n_tasks
        dev = X[..., :n]
        bad = ~self.tables.allowed[np.arange(n), dev]
        if bad.any():
            X = X.copy()
            dev = X[..., :n]
            dev[bad] = np.broadcast_to(self._fastest, dev.shape)[bad]
        if self.colocation is not None:
            X = X.copy() if X.base is not None else X
            X[..., self.colocation.members] = X[..., self.colocation.leaders]
        return X

    @property
    def repair_device(self) -> np.ndarray:
        """Per task the device :meth:`repair` puts it on when its gene names one it may not use: its fastest
        allowed device."""
        return self._fastest

    def genome(self, devices: Sequence[int] | np.ndarray,
               order: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """A genome from a device per task and an optional task order (first runs first)."""
        n = self.n_tasks
        if order is None:
            prio = self._topological_priority
        else:
            prio = np.zeros(n, dtype=np.int64)
            prio[np.asarray(order, dtype=np.int64)] = np.arange(n)
        return np.concatenate([np.asarray(devices, dtype=np.int64), prio])

    @functools.cached_property
    def _topological_priority(self) -> np.ndarray:
        """Priority genes that schedule in topological order (read-only, computed once)."""
        prio = np.zeros(self.n_tasks, dtype=np.int64)
        prio[self.structure.topo] = np.arange(self.n_tasks)
        prio.setflags(write=False)
        return prio

    # ------------------------------------------------------------------ evaluation
    def kernel(self, X: np.ndarray, metrics: bool) -> Population:
        """Makespan (the compiled list-scheduling kernel over the chunk; a genome with every task on one
        device is the sum of its times) and energy of a chunk."""
        t = self.tables
        n = self.n_tasks
        dev, keys = X[:, :n], X[:, n:]
        makespan = np.zeros(len(X), dtype=np.int64)
        single = (dev == dev[:, :1]).all(axis=1) if n else np.ones(len(X), dtype=bool)
        if self._serial_on_one_device:  # one device: no transfer, no gap, the tasks run back to back
            makespan[single] = t.time[np.arange(n)[None, :], dev[single]].sum(axis=1)
        else:
            single[:] = False
        recent = self._recent_makespans
        if len(X) <= 16 and recent:  # a heuristic's mapping with the baselines, an explained point
            for k in np.flatnonzero(~single):
                known = recent.get((X[k].tobytes(), self.insertion))
                if known is not None:
                    makespan[k], single[k] = known, True
        if not single.all():
            makespan[~single] = self.schedule_population(dev[~single], keys[~single], self.insertion)[0]
        return self._population(dev, makespan)

    def evaluate_scheduled(self, X: np.ndarray, makespan: np.ndarray) -> Evaluation:
        """:meth:`evaluate` of genomes ``X`` whose makespans :meth:`schedule_population` already gave (with the
        problem's decoder): energy and constraints without decoding again."""
        X = np.asarray(X, dtype=np.int64)
        return self._evaluation(self._population(X[:, : self.n_tasks], np.asarray(makespan, dtype=np.int64)),
                                len(X), False)

    def _population(self, dev: np.ndarray, makespan: np.ndarray) -> Population:
        """The population of device assignments ``dev`` with their makespans: energy and the constraints' inputs."""
        t = self.tables
        P = Population.from_genomes(self.flat, dev)
        used = P.device_count() > 0
        energy = (P.per_op("energy").sum(axis=0) + self._transfer_energy(dev)
                  + (used * t.idle_power_mw[:, None]).sum(axis=0) * makespan)
        P.values.update(makespan=makespan, energy=energy)
        return P

    def _transfer_energy(self, dev: np.ndarray) -> np.ndarray:
        """Transfer energy per genome of ``dev`` (pop, n): the sum of :meth:`edge_transfer_energies`."""
        if not self.tables.n_edges or not self.tables.has_transfer_energy:
            return np.zeros(len(dev), dtype=np.int64)
        return self.edge_transfer_energies(dev).sum(axis=1)

    def edge_transfer_energies(self, dev: np.ndarray) -> np.ndarray:
        """Per genome of ``dev`` (pop, n) and edge, the energy its transfer spends (pop, n_edges), read through
        the tables' per-edge accessor. Under the TF rules (``tensor_per_device``) a producer's tensor crosses
        to each remote device once: that send's energy is on the first edge (in edge order) from the producer
        to that device, the producer's other edges to it spend nothing."""
        t = self.tables
        st = self.structure
        if not t.n_edges or not t.has_transfer_energy:
            return np.zeros((len(dev), t.n_edges), dtype=np.int64)
        if not self.tensor_per_device:
            return t.edge_transfer_energy(np.arange(t.n_edges)[None, :], dev[:, st.src], dev[:, st.dst])
        remote = dev[:, st.dst]
        rows, edges = np.nonzero(dev[:, st.src] != remote)  # crossing edges, by genome then edge
        _, first = np.unique((rows * self.n_tasks + st.src[edges]) * t.n_dev + remote[rows, edges], return_index=True)
        rows, edges = rows[first], edges[first]  # one per (genome, producer, remote device): its first edge
        producers = st.src[edges]
        out = np.zeros((len(dev), t.n_edges), dtype=np.int64)
        out[rows, edges] = t.edge_transfer_energy(st.first_out[producers], dev[rows, producers], remote[rows, edges])
        return out

    def schedule_population(self, dev: np.ndarray, keys: np.ndarray, insertion: bool = False):
        """List scheduling of a whole population (compiled kernel, one genome after another):
        ``(makespan, start, finish, release, order)``.

        ``dev`` and ``keys`` are the genomes' device and priority halves. A family that provides this
        method (device and priority genes decoded by list scheduling) can be searched by the memetic
        solver, whose moves read the finish times."""
        order, start, finish, release, makespan = list_schedule_population(
            self.structure, self.tables, keys, dev, insertion, self.tensor_per_device)
        return makespan, start, finish, release, order

    def schedule(self, x: np.ndarray, insertion: bool | None = None) -> DagSchedule:
        """Decode one genome into a :class:`DagSchedule` (insertion per the problem unless given)."""
        t = self.tables
        n = self.n_tasks
        x = self.checked_genomes(x)[0]
        order, start, finish, release, makespan = self._place(x, self.insertion if insertion is None else insertion)
        scored = self._population(x[None, :n], np.array([makespan], dtype=np.int64))
        G = np.array([c.violation(scored)[0] for c in self.constraints])
        energy = int(scored.values["energy"][0])
        costs = self._breakdown(x[:n], start, finish, release, makespan, energy)
        return DagSchedule(t.op_names, t.device_names, x[:n].copy(), start, finish, release, order, makespan,
                           energy, t.time_unit, costs, self.slack(G))

    def _breakdown(self, dev: np.ndarray, start: np.ndarray, finish: np.ndarray, release: np.ndarray,
                   makespan: int, energy: int) -> Breakdown:
        """The costs of one schedule (device per task ``dev``, placed at ``start``/``finish``/``release``;
        ``makespan`` and ``energy`` the evaluator's):
        per task its energy on its device; per device its tasks' busy time (sends included) and energy, and
        its idle power over the makespan when it runs a task; per transfer (an edge whose data takes time or
        energy to move) the time from its producer's finish to its arrival and its energy
        (:meth:`edge_transfer_energies`); per link the sum of its transfers."""
        t = self.tables
        n, names = self.n_tasks, t.device_names
        op_energy = t.energy[np.arange(n), dev]
        ops = tuple(Activity(t.op_names[i], names[dev[i]], int(start[i]), int(finish[i]), int(op_energy[i]))
                    for i in range(n))
        delay, _ = self.structure.send_delays(dev, t, self.tensor_per_device)
        edge_energy = self.edge_transfer_energies(dev[None, :])[0]
        transfers = []
        for e, (s, d) in enumerate(np.asarray(t.edges).tolist()):
            a, b = int(dev[s]), int(dev[d])
            if delay[e] or edge_energy[e]:  # data that takes time or energy to move
                begin = int(finish[s])
                transfers.append(Activity(f"{t.op_names[s]}->{t.op_names[d]}", f"link {names[a]}->{names[b]}", begin,
                                          begin + int(delay[e]), int(edge_energy[e])))
        count = np.bincount(dev, minlength=t.n_dev)
        busy, dynamic, memory = (np.zeros(t.n_dev, dtype=np.int64) for _ in range(3))
        np.add.at(busy, dev, release - start)
        np.add.at(dynamic, dev, op_energy)
        np.add.at(memory, dev, t.mem[np.arange(n), dev])
        devices = tuple(DeviceCost(names[k], int(count[k]), int(busy[k]), int(dynamic[k]),
                                   int(t.idle_power_mw[k]) * makespan if count[k] else 0, int(memory[k]),
                                   int(t.mem_capacity[k])) for k in range(t.n_dev))
        links: dict[str, list[int]] = {}
        for move in transfers:
            link = links.setdefault(move.where, [0, 0])
            link[0] += move.finish - move.start
            link[1] += move.energy
        return Breakdown(devices, tuple(LinkCost(name, busy_, spent) for name, (busy_, spent) in links.items()), ops,
                         tuple(transfers), {"makespan": makespan, "energy": energy}, t.time_unit,
                         t.display_time_unit, t.display_per_time_unit, "schedule")

    def _place(self, x: np.ndarray, insertion: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
        """List-schedule one genome: ``(order, start, finish, release, makespan)``, nothing else computed."""
        n = self.n_tasks
        dev, keys = x[None, :n], x[None, n:]
        makespan, start, finish, release, order = self.schedule_population(dev, keys, insertion)
        kept = list(self._recent_makespans.items())[1 - self._RECENT:]  # a new dict, never changed in place:
        self._recent_makespans = dict([*kept, ((x.tobytes(), insertion), int(makespan[0]))])  # safe across threads
        return order[0], start[0], finish[0], release[0], int(makespan[0])

    def assignment(self, genome: Sequence[int]) -> dict[str, str]:
        """Op name -> device name: the first ``n_ops`` genes are device indices."""
        return leading_device_genes(self.tables, self.checked_genomes(genome)[0])

    def decode(self, x: np.ndarray) -> DagSchedule:
        return self.schedule(x)

    # ------------------------------------------------------------------ baselines and checks
    def baselines(self) -> dict[str, np.ndarray]:
        """Each device alone (where it may run every task), tasks in topological order (read-only genomes,
        built once per problem)."""
        return dict(self._baseline_genomes)

    def baseline_classes(self) -> dict[str, str]:
        """Each device alone: its class is the device's kind (of one kind and alike in every figure, they are
        reported as one)."""
        t = self.tables
        kinds = t.device_kinds or t.device_names
        return {f"only {t.device_names[d]}": f"only a {kinds[d]}" for d in range(t.n_dev) if t.allowed[:, d].all()}

    @functools.cached_property
    def _baseline_genomes(self) -> dict[str, np.ndarray]:
        out = {}
        for d, name in enumerate(self.tables.device_names):
            if self.tables.allowed[:, d].all():
                genome = self.genome(np.full(self.n_tasks, d))
                genome.setflags(write=False)
                out[f"only {name}"] = genome
        return out

    def check_feasible(self) -> None:
        """The constraints' own checks, then the deadline against the critical path."""
        super().check_feasible()
        if self.deadline is not None:
            lb = self.critical_path_bound()
            unit = self.tables.time_unit
            if lb > self.deadline:
                raise InfeasibleError(f"deadline {self.deadline} {unit} cannot be met: the critical path "
                                      f"alone takes at least {lb} {unit}")

    def diagnose(self, time_limit: float = 10.0, candidates: Sequence[np.ndarray] = (), proven: bool = False) -> str:
        """Why no schedule is feasible: the static checks, then the deadline against the best of ``candidates``
        that meets the other constraints and the critical path (e.g. "deadline 50 tu cannot be met: the best
        schedule found takes 80 tu; the critical path alone takes 61 tu")."""
        self.check_feasible()
        if self.deadline is not None and len(candidates):
            ev = self.evaluate(np.asarray(candidates, dtype=np.int64))
            others = [j for j, c in enumerate(self.constraints) if c.name != "deadline"]
            ok = (ev.G[:, others] <= 0).all(axis=1) if others else np.ones(len(ev.F), dtype=bool)
            if ok.any():
                best = int(ev.F[ok, 0].min())
                unit = self.tables.time_unit
                if best > self.deadline:
                    return (f"deadline {self.deadline} {unit} cannot be met: the best schedule found takes {best} "
                            f"{unit}; the critical path alone takes {self.critical_path_bound()} {unit}"
                            + (" (no schedule meets it: proven by the exact solver)" if proven
                               else " (infeasibility not proven)"))
        return super().diagnose(time_limit, candidates, proven)

    def quantity_bounds(self) -> dict[str, float]:
        """Every schedule's ``makespan`` at most: every task one after another at its slowest allowed time,
        after every transfer at its slowest device pair and, under the TF paper's send rule, every send (the
        CP-SAT model's horizon, :mod:`dse.mapping.dag.cpsat`, counts the same; a device's transfers to itself
        count too where the tables give them)."""
        t = self.tables
        n, m = t.n_ops, t.n_dev
        longest = t.transfer_over_pairs("transfer_time")[1]
        if t.n_edges and t.transfer_is_explicit("transfer_time"):
            diagonal = np.arange(m)
            longest = np.maximum(longest, t.transfer_time[:, diagonal, diagonal].max(axis=1))
        send = int(np.max(t.send_time, initial=0)) if self.tensor_per_device and t.n_edges else 0
        slowest = int(np.where(t.allowed, t.time, 0).max(axis=1).sum())
        return {"makespan": float(slowest + int(longest.sum()) + (n + t.n_edges) * max(m - 1, 0) * send)}

    def critical_path_bound(self) -> int:
        """Longest path with each task at its fastest allowed time and free transfers: a makespan lower bound."""
        t = self.tables
        st = self.structure
        fastest = np.where(t.allowed, t.time, np.iinfo(np.int64).max).min(axis=1)
        finish = np.zeros(self.n_tasks, dtype=np.int64)
        for level in st.pred_levels:
            finish[level.tasks] = level.max(finish[level.task], 0) + fastest[level.tasks]
        return int(finish.max(initial=0))

    def lower_bound(self) -> int:
        """The best makespan lower bound the family computes without search:
        :func:`dse.mapping.dag.bounds.communication_bound`, never below :meth:`critical_path_bound` (each
        task's bound is at least its fastest time after its producers' bounds)."""
        from dse.mapping.dag.bounds import communication_bound

        return communication_bound(self)

    def objective_lower_bounds(self, at_most: Sequence[int | None] | None = None) -> tuple[float, ...]:
        """Least makespan and energy of every feasible schedule within ``at_most``: the critical path and the
        assignment's linear relaxation (:mod:`dse.mapping.dag.objective_bounds`)."""
        return lower_bounds(self, at_most)

    def exact_unsupported(self) -> str | None:
        """None: the CP-SAT model covers every dag problem, the TF paper's send rules included."""
        return None

    def pinned(self, genome: np.ndarray, free: np.ndarray) -> DagProblem:
        """The same problem with every task outside ``free`` (a boolean mask over tasks) kept on its device
        in ``genome``: a neighbourhood for exact re-solving (:mod:`dse.solvers.lns`)."""
        n = self.n_tasks
        dev = np.asarray(genome, dtype=np.int64)[:n]
        kept = np.flatnonzero(~np.asarray(free, dtype=bool))
        allowed = self.tables.allowed.copy()
        allowed[kept] = False
        allowed[kept, dev[kept]] = True
        return DagProblem(self.tables.replaced(allowed=allowed), [o.name for o in self.objectives],
                          deadline=self.deadline, memory=self.memory, insertion=self.insertion,
                          tensor_per_device=self.tensor_per_device, name=self.name)

    def exact_model_too_large(self) -> str | None:
        """Past :data:`dse.mapping.dag.cpsat.MAX_PAIR_CONSTRAINTS` device-pair precedences: why."""
        from dse.mapping.dag.cpsat import model_size_refusal

        return model_size_refusal(self)

    def cpsat(self, include: Sequence[str] | None = None, seeds: Sequence[np.ndarray] = (),
              deadline: float | None = None) -> Formulation:
        """Flexible-job-shop CP-SAT model (see :mod:`dse.mapping.dag.cpsat`), the TF send rules included;
        ``seeds`` give the hint and, with makespan alone, the horizon."""
        from dse.mapping.dag.cpsat import build_dag_model

        return build_dag_model(self, include, seeds, deadline)


# --------------------------------------------------------------------------- registry entry


class DagOptions(BaseModel):
    """Options of the ``dag`` family.

    ``insertion``: decode with insertion into idle gaps (one genome at a time);
    ``tensor_per_device``: the TF paper's rules (a producer's tensor crosses to
    each remote device once; sends occupy the producer's device), on by default
    with a TF-paper device file.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    insertion: StrictBool = False
    tensor_per_device: StrictBool = False


def _build(inputs: ProblemInputs) -> DagProblem:
    options: Any = inputs.options
    return DagProblem(inputs.tables, inputs.objectives, deadline=inputs.deadline, memory=inputs.memory,
                      insertion=options.insertion, tensor_per_device=options.tensor_per_device, name=inputs.name)


def _cost_model(options: Any) -> tuple[str, dict[str, Any]]:
    """Table costs (``work / speed``); under the TF rules a send costs 10 operations and times are kept
    in thousandths of the paper's unit, so rounding loses almost nothing."""
    if options.tensor_per_device:
        return "table", {"send_ops": 10.0, "scale": 1000.0}
    return "table", {}


def example_problem(seed: int) -> DagProblem:
    """A small seeded instance: 3-4 tasks on 2-3 devices, makespan and energy, sometimes a deadline,
    memory, a colocation pair or the TF paper's send rules (small enough for exhaustive search over
    devices x priorities)."""

    from dse.cost.synthetic import random_tables

    rng = np.random.default_rng(20_000 + seed)
    tables = random_tables(seed, n_ops=int(rng.integers(3, 5)), n_dev=int(rng.integers(2, 4)), disallow=0.15)
    if rng.random() < 0.3:
        coloc: list[str | None] = [None] * tables.n_ops
        coloc[0] = coloc[-1] = "g"
        tables = tables.replaced(colocation=tuple(coloc))
    objectives = ("makespan", "energy") if rng.random() < 0.7 else ("makespan",)
    deadline = int(rng.integers(60, 250)) if rng.random() < 0.4 else None
    memory = bool(rng.random() < 0.5)
    tf = bool(rng.random() < 0.4)  # the TF paper's rules: sends occupy the producer, one tensor per remote device
    if tf:
        tables = tables.replaced(send_time=rng.integers(1, 12, size=tables.n_dev).astype(np.int64))
    return DagProblem(tables, objectives, deadline=deadline, memory=memory, tensor_per_device=tf)


FAMILY = register_family(Family(
    name="dag",
    problem_class=DagProblem,
    build=_build,
    objectives=DAG_OBJECTIVES,
    default_objectives=("makespan", "energy"),
    examples=example_problem,
    options=DagOptions,
    platform_options={"tfcsv": {"tensor_per_device": True}},
    cost_model=_cost_model,
    limits=frozenset({"memory", "deadline"}),
    metrics=(Metric("makespan", "makespan", "{time_unit}", description="schedule length in the workload's unit"),),
    gantt=True,
    compiled_kernels=True,
    description="TF partitioning and scheduling: device and priority per task, list-scheduled (makespan vs energy)",
))
