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

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dse.cost import CostTables
from dse.errors import InfeasibleError, SpecError
from dse.mapping.base import Constraint, Evaluation, Formulation, MappingProblem, Objective

DAG_OBJECTIVES = ("makespan", "energy")


def _objective(name: str, tables: CostTables) -> Objective:
    if name == "makespan":
        factor = tables.display_per_time_unit
        return Objective("makespan", tables.display_time_unit, "min", "makespan", tables.time_unit,
                         lambda v, f=factor: np.asarray(v, dtype=float) * f)
    if name == "energy":
        return Objective("energy", "mJ", "min", "energy", "pJ", lambda v: np.asarray(v, dtype=float) * 1e-9)
    raise SpecError("problem", "objectives", name, f"dag objectives are {', '.join(DAG_OBJECTIVES)}")


@dataclass(frozen=True)
class DagSchedule:
    """A decoded schedule: per task its device, start, compute finish and device-release time."""

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
    constraint_slack: dict[str, float] = field(default_factory=dict)

    @property
    def schedule(self) -> list[tuple[str, str, int, int]]:
        """``(task, device, start, finish)`` rows for Gantt charts, in start order."""
        rows = [(self.task_names[i], self.device_names[self.device[i]], int(self.start[i]), int(self.finish[i]))
                for i in range(len(self.task_names))]
        return sorted(rows, key=lambda r: (r[2], r[1]))

    def explain(self) -> str:
        lines = [f"makespan {self.makespan} {self.time_unit}, energy {self.energy * 1e-9:.4g} mJ"]
        for d, name in enumerate(self.device_names):
            mine = self.device == d
            busy = int((self.release[mine] - self.start[mine]).sum())
            lines.append(f"  {name}: {int(mine.sum())} tasks, busy {busy} {self.time_unit} "
                         f"({busy / max(self.makespan, 1):.0%})")
        for name, slack in self.constraint_slack.items():
            lines.append(f"  constraint {name}: {'slack' if slack >= 0 else 'VIOLATED by'} {abs(slack):.3g}")
        return "\n".join(lines)


class DagProblem(MappingProblem):
    """Partition and schedule one iteration of a task DAG.

    ``objectives``: ``("makespan",)`` or ``("makespan", "energy")``;
    ``deadline`` (time units) bounds the makespan; ``memory`` enforces device
    capacities on the summed resident bytes; ``insertion`` selects the
    insertion-based decoder (evaluated one genome at a time);
    ``tensor_per_device`` applies the TF paper's transfer rules.
    """

    family = "dag"

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
        cons = []
        if self.memory:
            cons.append(Constraint("memory", 0.0, "fraction over capacity", "resident bytes <= capacity"))
        if self.deadline is not None:
            cons.append(Constraint("deadline", self.deadline, tables.time_unit, "makespan <= deadline"))
        if not tables.allowed.all():
            cons.append(Constraint("allowed", 0.0, "tasks", "every task on a device that may run it"))
        self.constraints = tuple(cons)
        self._prepare()

    # ------------------------------------------------------------------ genome
    @property
    def n_tasks(self) -> int:
        return self.tables.n_ops

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
        X = np.clip(np.asarray(X, dtype=np.int64), self.lower, self.upper)
        n = self.n_tasks
        dev = X[..., :n]
        bad = ~self.tables.allowed[np.arange(n), dev]
        if bad.any():
            X = X.copy()
            dev = X[..., :n]
            dev[bad] = np.broadcast_to(self._fastest, dev.shape)[bad]
        if self._coloc_members is not None:
            X = X.copy() if X.base is not None else X
            X[..., self._coloc_members] = X[..., self._coloc_leaders]
        return X

    def genome(self, devices: Sequence[int], order: Sequence[int] | None = None) -> np.ndarray:
        """A genome from a device per task and an optional task order (first runs first)."""
        n = self.n_tasks
        prio = np.zeros(n, dtype=np.int64)
        if order is None:
            prio[self._topo] = np.arange(n)
        else:
            prio[np.asarray(order, dtype=np.int64)] = np.arange(n)
        return np.concatenate([np.asarray(devices, dtype=np.int64), prio])

    # ------------------------------------------------------------------ preparation
    def _prepare(self) -> None:
        t = self.tables
        n, m = t.n_ops, t.n_dev
        masked = np.where(t.allowed, t.time, np.iinfo(np.int64).max)
        self._fastest = masked.argmin(axis=1)
        self._topo = t.topological_order()
        self._topo_pos = np.empty(n, dtype=np.int64)
        self._topo_pos[self._topo] = np.arange(n)
        src, dst = t.edges[:, 0], t.edges[:, 1]
        self._src, self._dst = src, dst
        indeg = np.bincount(dst, minlength=n)
        maxdeg = max(int(indeg.max(initial=0)), 1)
        self._pred_task = np.full((n, maxdeg), n, dtype=np.int64)  # sentinel task n: finish 0
        self._pred_edge = np.full((n, maxdeg), t.n_edges, dtype=np.int64)  # sentinel edge: no transfer
        fill = np.zeros(n, dtype=np.int64)
        for e in np.argsort(dst, kind="stable"):
            d = dst[e]
            self._pred_task[d, fill[d]] = src[e]
            self._pred_edge[d, fill[d]] = e
            fill[d] += 1
        self._tt = np.concatenate([t.transfer_time, np.zeros((1, m, m), dtype=np.int64)])
        # levels for the precedence-consistent priority keys
        level = np.zeros(n, dtype=np.int64)
        for v in self._topo:
            preds = self._pred_task[v][self._pred_task[v] < n]
            if len(preds):
                level[v] = level[preds].max() + 1
        self._levels = []
        for lv in range(1, int(level.max(initial=0)) + 1):
            tasks = np.flatnonzero(level == lv)
            self._levels.append((tasks, self._pred_task[tasks]))
        # first outgoing edge per producer (its tensor, for the per-device transfer rule)
        self._first_out = np.full(n, t.n_edges, dtype=np.int64)
        for e in range(t.n_edges - 1, -1, -1):
            self._first_out[src[e]] = e
        # colocation groups: members follow their group's first task
        self._coloc_members = self._coloc_leaders = None
        if t.colocation and any(t.colocation):
            leader: dict[str, int] = {}
            members, leaders = [], []
            for i, group in enumerate(t.colocation):
                if group is None:
                    continue
                if group in leader:
                    members.append(i)
                    leaders.append(leader[group])
                else:
                    leader[group] = i
            if members:
                self._coloc_members = np.asarray(members, dtype=np.int64)
                self._coloc_leaders = np.asarray(leaders, dtype=np.int64)

    # ------------------------------------------------------------------ decoding helpers
    def orders(self, keys: np.ndarray) -> np.ndarray:
        """Scheduling order per genome: tasks sorted by precedence-consistent key, then topological position."""
        keys = np.atleast_2d(np.asarray(keys, dtype=np.int64))
        n = self.n_tasks
        k = np.concatenate([keys, np.full((len(keys), 1), -1, dtype=np.int64)], axis=1)
        for tasks, preds in self._levels:
            k[:, tasks] = np.maximum(k[:, tasks], k[:, preds].max(axis=2))
        return np.argsort(k[:, :n] * n + self._topo_pos, axis=1, kind="stable")

    def _remote_rank(self, dev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per genome and producer: which remote devices get its tensor (bool (pop, n+1, m)) and each one's rank."""
        pop, n, m = len(dev), self.n_tasks, self.tables.n_dev
        remote = np.zeros((pop, n + 1, m), dtype=bool)
        if self.tables.n_edges:
            dd = dev[:, self._dst]
            r, e = np.nonzero(dev[:, self._src] != dd)
            remote[r, self._src[e], dd[r, e]] = True
        rank = np.cumsum(remote, axis=2) - remote
        return remote, rank

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, X: np.ndarray, metrics: bool = False) -> Evaluation:
        X = np.atleast_2d(np.asarray(X, dtype=np.int64))
        t = self.tables
        n, m = self.n_tasks, t.n_dev
        dev, keys = X[:, :n], X[:, n:]
        if self.insertion:
            scheds = [self.schedule(x) for x in X]
            makespan = np.array([s.makespan for s in scheds], dtype=np.int64)
        else:
            makespan, _, _, _ = self._schedule_population(dev, keys)
        pop = len(X)
        op_energy = t.energy[np.arange(n), dev].sum(axis=1)
        xfer_energy = self._transfer_energy(dev)
        counts = np.zeros((pop, m), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(pop), n), dev.ravel()), 1)
        energy = op_energy + xfer_energy + ((counts > 0) * t.idle_power_mw).sum(axis=1) * makespan
        values = {"makespan": makespan, "energy": energy}
        F = np.column_stack([values[o.name] for o in self.objectives]).astype(np.int64)
        G = self._constraint_values(dev, makespan)
        out = {"makespan": makespan, "energy": energy} if metrics else {}
        return Evaluation(F, G, out)

    def _constraint_values(self, dev: np.ndarray, makespan: np.ndarray) -> np.ndarray:
        """G (pop, n_constraints), feasible iff <= 0, for devices (pop, n) and makespans (pop,)."""
        t = self.tables
        pop, n, m = len(dev), self.n_tasks, t.n_dev
        G = []
        for c in self.constraints:
            if c.name == "memory":
                flat = (np.arange(pop)[:, None] * m + dev).ravel()
                mem = np.bincount(flat, weights=t.mem[np.arange(n), dev].ravel(), minlength=pop * m).reshape(pop, m)
                G.append(((mem - t.mem_capacity) / np.maximum(t.mem_capacity, 1)).max(axis=1))
            elif c.name == "deadline":
                G.append((makespan - self.deadline) / max(self.deadline, 1))
            elif c.name == "allowed":
                G.append((~t.allowed[np.arange(n), dev]).sum(axis=1).astype(float))
        return np.column_stack(G) if G else np.zeros((pop, 0))

    def _transfer_energy(self, dev: np.ndarray) -> np.ndarray:
        t = self.tables
        if not t.n_edges:
            return np.zeros(len(dev), dtype=np.int64)
        if not self.tensor_per_device:
            return t.transfer_energy[np.arange(t.n_edges), dev[:, self._src], dev[:, self._dst]].sum(axis=1)
        remote, _ = self._remote_rank(dev)
        producers = np.flatnonzero(self._first_out < t.n_edges)
        te = t.transfer_energy[self._first_out[producers]]  # (p, m, m)
        per = te[np.arange(len(producers))[None, :], dev[:, producers]]  # (pop, p, m)
        return (per * remote[:, producers]).sum(axis=(1, 2))

    def _schedule_population(self, dev: np.ndarray, keys: np.ndarray):
        """Non-insertion list scheduling of a whole population, one task position at a time."""
        t = self.tables
        pop, n, m = len(dev), self.n_tasks, t.n_dev
        rows = np.arange(pop)
        order = self.orders(keys)
        dev_ext = np.concatenate([dev, np.zeros((pop, 1), dtype=np.int64)], axis=1)
        T = t.time[np.arange(n), dev]
        finish = np.zeros((pop, n + 1), dtype=np.int64)
        start = np.zeros((pop, n), dtype=np.int64)
        release = np.zeros((pop, n), dtype=np.int64)
        avail = np.zeros((pop, m), dtype=np.int64)
        tf = self.tensor_per_device and t.n_edges > 0
        if tf:
            remote, rank = self._remote_rank(dev)
            n_remote = remote.sum(axis=2)[:, :n]
            extra = n_remote * t.send_time[dev]
            send = t.send_time
        for k in range(n):
            task = order[:, k]
            d = dev[rows, task]
            pt = self._pred_task[task]
            pe = self._pred_edge[task]
            pd = dev_ext[rows[:, None], pt]
            xt = self._tt[pe, pd, d[:, None]]
            if tf:
                crossing = (pd != d[:, None]) & (pt < n)
                xt = xt + np.where(crossing, (rank[rows[:, None], pt, d[:, None]] + 1) * send[pd], 0)
            ready = (finish[rows[:, None], pt] + xt).max(axis=1)
            s = np.maximum(ready, avail[rows, d])
            f = s + T[rows, task]
            start[rows, task] = s
            finish[rows, task] = f
            rel = f + extra[rows, task] if tf else f
            release[rows, task] = rel
            avail[rows, d] = rel
        return finish[:, :n].max(axis=1), start, finish[:, :n], release

    def schedule(self, x: np.ndarray, insertion: bool | None = None) -> DagSchedule:
        """Decode one genome into a :class:`DagSchedule` (insertion per the problem unless given)."""
        t = self.tables
        x = np.asarray(x, dtype=np.int64).reshape(-1)
        n, m = self.n_tasks, t.n_dev
        insertion = self.insertion if insertion is None else insertion
        dev, keys = x[:n], x[n:]
        order = self.orders(keys[None, :])[0]
        remote, rank = self._remote_rank(dev[None, :])
        remote, rank = remote[0], rank[0]
        start = np.zeros(n, dtype=np.int64)
        finish = np.zeros(n + 1, dtype=np.int64)
        release = np.zeros(n, dtype=np.int64)
        busy: list[list[tuple[int, int]]] = [[] for _ in range(m)]
        tf = self.tensor_per_device and t.n_edges > 0
        for v in order:
            d = int(dev[v])
            ready = 0
            for u, e in zip(self._pred_task[v], self._pred_edge[v], strict=True):
                if u >= n:
                    continue
                a = int(dev[u])
                arrival = int(finish[u]) + int(self._tt[e, a, d])
                if tf and a != d:
                    arrival += (int(rank[u, d]) + 1) * int(t.send_time[a])
                ready = max(ready, arrival)
            occupy = int(t.time[v, d]) + (int(remote[v].sum()) * int(t.send_time[d]) if tf else 0)
            if insertion:
                s = _earliest_gap(busy[d], ready, occupy)
            else:
                s = max(ready, busy[d][-1][1] if busy[d] else 0)
            bisect.insort(busy[d], (s, s + occupy))
            start[v], finish[v], release[v] = s, s + int(t.time[v, d]), s + occupy
        makespan = int(finish[:n].max(initial=0))
        return self._wrap(x, order, start, finish[:n], release, makespan)

    def _wrap(self, x, order, start, finish, release, makespan) -> DagSchedule:
        t = self.tables
        n = self.n_tasks
        energy = self._energy_of(x[:n], makespan)
        G = self._constraint_values(x[None, :n], np.array([makespan]))
        slack = {c.name: float(-G[0, j]) for j, c in enumerate(self.constraints)}
        return DagSchedule(t.op_names, t.device_names, x[:n].copy(), np.asarray(start), np.asarray(finish),
                           np.asarray(release), np.asarray(order), makespan, energy, t.time_unit, slack)

    def _energy_of(self, dev: np.ndarray, makespan: int) -> int:
        t = self.tables
        n = self.n_tasks
        used = np.zeros(t.n_dev, dtype=bool)
        used[dev] = True
        return int(t.energy[np.arange(n), dev].sum() + self._transfer_energy(dev[None, :])[0]
                   + (used * t.idle_power_mw).sum() * makespan)

    def decode(self, x: np.ndarray) -> DagSchedule:
        return self.schedule(x)

    # ------------------------------------------------------------------ baselines and checks
    def baselines(self) -> dict[str, np.ndarray]:
        """Each device alone (where it may run every task), tasks in topological order."""
        out = {}
        for d, name in enumerate(self.tables.device_names):
            if self.tables.allowed[:, d].all():
                out[f"only {name}"] = self.genome(np.full(self.n_tasks, d))
        return out

    def heuristic_seeds(self) -> list[np.ndarray]:
        """Genomes of the classic heuristics (HEFT, CPOP, PEFT, partitioner+scheduler pairs) where available."""
        try:
            from dse.heuristics import seed_genomes
        except ImportError:
            return list(self.baselines().values())
        return seed_genomes(self) + list(self.baselines().values())

    def check_feasible(self) -> None:
        t = self.tables
        for i in range(t.n_ops):
            if not t.allowed[i].any():
                raise InfeasibleError(f"task {t.op_names[i]} may not run on any device")
        if self.memory:
            for i in range(t.n_ops):
                ok = t.allowed[i] & (t.mem[i] <= t.mem_capacity)
                if not ok.any():
                    raise InfeasibleError(
                        f"memory: task {t.op_names[i]} needs {t.mem[i][t.allowed[i]].min()} bytes, the largest "
                        f"device that may run it holds {t.mem_capacity[t.allowed[i]].max()}")
        if self.deadline is not None:
            lb = self.critical_path_bound()
            if lb > self.deadline:
                raise InfeasibleError(f"deadline {self.deadline} {t.time_unit} cannot be met: the critical path "
                                      f"alone takes at least {lb} {t.time_unit}")

    def critical_path_bound(self) -> int:
        """Longest path with each task at its fastest allowed time and free transfers: a makespan lower bound."""
        t = self.tables
        fastest = np.where(t.allowed, t.time, np.iinfo(np.int64).max).min(axis=1)
        finish = np.zeros(self.n_tasks + 1, dtype=np.int64)
        for v in self._topo:
            finish[v] = finish[self._pred_task[v]].max() + fastest[v]
        return int(finish[: self.n_tasks].max(initial=0))

    def cpsat(self, include: Sequence[str] | None = None) -> Formulation:
        """Flexible-job-shop CP-SAT model (see :mod:`dse.mapping.dag_cpsat`)."""
        from dse.mapping.dag_cpsat import build_dag_model

        return build_dag_model(self, include)


def _earliest_gap(intervals: list[tuple[int, int]], ready: int, length: int) -> int:
    """Earliest start >= ready of a gap of ``length`` among sorted busy ``intervals``."""
    candidate = ready
    for s, e in intervals:
        if e <= candidate:
            continue
        if s >= candidate + length:
            break
        candidate = max(candidate, e)
    return candidate
