"""The ``pipeline`` family (DyPe): device per op, items streaming through.

Semantics (DESIGN.md): every device works on a different item at once.

* period = max over devices of the summed op times and over directed device
  pairs of the summed transfer times; throughput = 1 / period;
* latency of one item = longest path through the mapped DAG, transfers included;
* energy per item = dynamic op and transfer energy + idle power of every used
  device over one period;
* power cap: energy per item <= P_cap x period; memory: resident bytes per
  device <= capacity; deadline: latency <= D.

Internal units: time in the tables' unit (ns for the roofline model), energy
in pJ, power in mW (mW x ns = pJ).

DVFS: when the tables carry operating points (:func:`dse.cost.dvfs.levels_of`: a
platform device with two or more ``dvfs`` levels), the genome gains one
frequency gene per such device, after the device genes; op times and energies
are then read from the level tables at the level of the op's device.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dse.cost import CostTables
from dse.cost.dvfs import LevelTables, attach_levels, levels_of, scaled_levels
from dse.errors import SpecError
from dse.mapping.base import (
    DecodedMapping,
    Formulation,
    MappingProblem,
    Objective,
    leading_device_genes,
)
from dse.mapping.constraints import (
    AllowedDevices,
    Constraint,
    Deadline,
    MemoryCapacity,
    PowerCap,
    describe_slack,
    readable_bytes,
)
from dse.mapping.pipeline.bounds import lower_bounds
from dse.mapping.population import Population
from dse.mapping.registry import Family, Metric, ProblemInputs, register_family

PIPELINE_OBJECTIVES = ("throughput", "energy", "latency")


def _objective(name: str, tables: CostTables) -> Objective:
    sec = tables.seconds_per_time_unit

    def items_per_s(v: np.ndarray) -> np.ndarray:
        return 1.0 / np.maximum(np.asarray(v, dtype=float) * sec, 1e-300)

    def mj(v: np.ndarray) -> np.ndarray:
        return np.asarray(v, dtype=float) * 1e-9

    def ms(v: np.ndarray) -> np.ndarray:
        return np.asarray(v, dtype=float) * sec * 1e3

    if name == "throughput":
        return Objective("throughput", "items/s", "max", "period", tables.time_unit, items_per_s)
    if name == "energy":
        return Objective("energy", "mJ/item", "min", "energy", "pJ", mj)
    if name == "latency":
        return Objective("latency", "ms", "min", "latency", tables.time_unit, ms)
    raise SpecError("problem", "objectives", name, f"pipeline objectives are {', '.join(PIPELINE_OBJECTIVES)}")


@dataclass(frozen=True)
class PipelineMapping(DecodedMapping):
    """One decoded pipeline mapping: per-device and per-link costs, and what binds.

    ``schedule``: one item's ``(op, device, start, finish)`` rows, ops in topological order.
    """

    device_of_op: dict[str, str]
    device_load: dict[str, int]
    device_memory: dict[str, tuple[int, int]]
    link_load: dict[tuple[str, str], int]
    period: int
    latency: int
    energy: int
    energy_breakdown: dict[str, int]
    time_unit: str
    seconds_per_time_unit: float
    bottleneck: str
    constraint_slack: dict[str, float] = field(default_factory=dict)
    schedule: list[tuple[str, str, int, int]] = field(default_factory=list)
    device_level: dict[str, str] = field(default_factory=dict)

    def assignment(self) -> dict[str, str]:
        return dict(self.device_of_op)

    def values(self) -> dict[str, int]:
        return {"period": self.period, "energy": self.energy, "latency": self.latency}

    def explain(self) -> str:
        """A readable multi-line account of the mapping."""
        s = self.seconds_per_time_unit
        lines = [
            f"period {self.period * s * 1e3:.4g} ms (throughput {1 / max(self.period * s, 1e-300):.4g} items/s), "
            f"bottleneck {self.bottleneck}",
            f"latency {self.latency * s * 1e3:.4g} ms; energy {self.energy * 1e-9:.4g} mJ/item "
            + "(" + ", ".join(f"{k} {v * 1e-9:.3g} mJ" for k, v in self.energy_breakdown.items()) + ")",
        ]
        for dev, load in self.device_load.items():
            ops = [op for op, d in self.device_of_op.items() if d == dev]
            used, cap = self.device_memory[dev]
            share = load / self.period if self.period else 0.0
            level = f" at {self.device_level[dev]}" if dev in self.device_level else ""
            lines.append(
                f"  {dev}{level}: {len(ops)} ops, busy {load * s * 1e3:.4g} ms/item ({share:.0%} of period), "
                f"memory {readable_bytes(used)} of {readable_bytes(cap)}" + (f": {', '.join(ops)}" if ops else "")
            )
        for (a, b), load in self.link_load.items():
            lines.append(f"  link {a} -> {b}: {load * s * 1e3:.4g} ms/item")
        for name, slack in self.constraint_slack.items():
            lines.append(describe_slack(name, slack))
        return "\n".join(lines)


class PipelineProblem(MappingProblem):
    """Device per op under memory, power-cap and deadline constraints.

    Parameters: ``tables``; ``objectives`` (two or more of ``throughput``,
    ``energy``, ``latency``); ``deadline`` and ``power_cap_mw`` in internal
    units (time unit, mW) or ``None``; ``memory`` enforces capacities.
    Raises :class:`SpecError` for unknown objectives.
    """

    family = "pipeline"

    def __init__(
        self,
        tables: CostTables,
        objectives: Sequence[str] = ("throughput", "energy"),
        *,
        deadline: int | None = None,
        power_cap_mw: int | None = None,
        memory: bool = True,
        name: str = "pipeline",
    ) -> None:
        self.name = name
        self.tables = tables
        self.objectives = tuple(_objective(o, tables) for o in objectives)
        if len(self.objectives) < 2:
            raise SpecError("problem", "objectives", list(objectives), "give at least two objectives")
        self.deadline = None if deadline is None else int(deadline)
        self.power_cap_mw = None if power_cap_mw is None else int(power_cap_mw)
        self.memory = memory
        sec = tables.seconds_per_time_unit
        cons: list[Constraint] = []
        if memory:
            cons.append(MemoryCapacity("op"))
        if self.power_cap_mw is not None:
            cons.append(PowerCap(self.power_cap_mw))
        if self.deadline is not None:
            cons.append(Deadline(self.deadline, "latency", tables.time_unit, "ms", sec * 1e3))
        if not tables.allowed.all():
            cons.append(AllowedDevices("op"))
        self.constraints = tuple(cons)
        self._need_latency = self.deadline is not None or any(o.name == "latency" for o in self.objectives)
        #: operating-point tables (None without DVFS) and the devices that have a frequency gene
        self.levels: LevelTables | None = levels_of(tables)
        self.dvfs_devices = self.levels.devices if self.levels is not None else np.zeros(0, dtype=np.int64)
        self._prepare()

    # ------------------------------------------------------------------ genome
    @property
    def gene_names(self) -> tuple[str, ...]:
        names = tuple(f"device[{n}]" for n in self.tables.op_names)
        return names + tuple(f"level[{self.tables.device_names[d]}]" for d in self.dvfs_devices)

    @property
    def lower(self) -> np.ndarray:
        return np.zeros(self.tables.n_ops + len(self.dvfs_devices), dtype=np.int64)

    @property
    def upper(self) -> np.ndarray:
        ops = np.full(self.tables.n_ops, self.tables.n_dev - 1, dtype=np.int64)
        if self.levels is None:
            return ops
        return np.concatenate([ops, self.levels.count[self.dvfs_devices] - 1])

    def repair(self, X: np.ndarray) -> np.ndarray:
        """Clip to bounds and move ops off devices that cannot run them (to their fastest allowed device)."""
        n = self.tables.n_ops
        X = np.clip(self.integer_genomes(X), self.lower, self.upper)
        devices = X[..., :n]
        bad = ~self.tables.allowed[np.arange(n), devices]
        if bad.any():
            X = X.copy()
            fixed = X[..., :n]
            fixed[bad] = np.broadcast_to(self._fastest, devices.shape)[bad]
        return X

    def level_matrix(self, X: np.ndarray) -> np.ndarray:
        """Level of every device per genome, ``(n_dev, pop)`` (0 for devices without a frequency gene)."""
        X = np.atleast_2d(np.asarray(X, dtype=np.int64))
        levels = np.zeros((self.tables.n_dev, len(X)), dtype=np.int64)
        levels[self.dvfs_devices] = X[:, self.tables.n_ops:].T
        return levels

    def fastest_levels(self) -> np.ndarray:
        """Per DVFS device the level with the smallest summed op time (the default of baselines)."""
        if self.levels is None:
            return np.zeros(0, dtype=np.int64)
        t = self.levels.time.astype(np.float64) * self.tables.allowed[None]
        return np.asarray([int(t[: self.levels.count[d], :, d].sum(axis=1).argmin()) for d in self.dvfs_devices],
                          dtype=np.int64)

    def with_levels(self, devices: np.ndarray, levels: np.ndarray | None = None) -> np.ndarray:
        """A full genome from device genes ``devices`` and DVFS genes ``levels`` (default: fastest levels)."""
        lv = self.fastest_levels() if levels is None else np.asarray(levels, dtype=np.int64)
        return np.concatenate([np.asarray(devices, dtype=np.int64), lv])

    # ------------------------------------------------------------------ evaluation
    def _prepare(self) -> None:
        t = self.tables
        masked = np.where(t.allowed, t.time, np.iinfo(np.int64).max)
        self._fastest = masked.argmin(axis=1)
        self._src = t.edges[:, 0].copy()
        self._dst = t.edges[:, 1].copy()
        # topological levels for the vectorized longest path
        level = np.zeros(t.n_ops, dtype=np.int64)
        for op in t.topological_order():
            preds = self._src[self._dst == op]
            if len(preds):
                level[op] = level[preds].max() + 1
        self._level0 = np.flatnonzero(level == 0)
        self._levels = []
        for lv in range(1, int(level.max(initial=0)) + 1):
            ops = np.flatnonzero(level == lv)
            edges = np.flatnonzero(np.isin(self._dst, ops))
            edges = edges[np.argsort(self._dst[edges], kind="stable")]
            dsts, starts = np.unique(self._dst[edges], return_index=True)
            self._levels.append((edges, starts, dsts))
        self._sinks = np.setdiff1d(np.arange(t.n_ops), self._src)
        m = t.n_dev
        self._edge_base = (np.arange(t.n_edges) * m * m)[:, None]
        self._xfer_time_flat = t.transfer_time.ravel()
        self._xfer_time_float = self._xfer_time_flat.astype(np.float64)
        self._xfer_energy_flat = t.transfer_energy.ravel()
        self._positive_times = bool((t.time[t.allowed] > 0).all())

    def _latency(self, T: np.ndarray, XT: np.ndarray, finish: np.ndarray) -> np.ndarray:
        """Longest path per genome; ``T`` (n_ops, pop) op times, ``XT`` (n_edges, pop) transfer times,
        ``finish`` a scratch array shaped like ``T``."""
        finish[self._level0] = T[self._level0]
        for edges, starts, dsts in self._levels:
            arrival = finish[self._src[edges]] + XT[edges]
            finish[dsts] = np.maximum.reduceat(arrival, starts, axis=0) + T[dsts]
        return finish[self._sinks].max(axis=0)

    def kernel(self, X: np.ndarray, metrics: bool) -> Population:
        """Period, energy and (when needed) latency of a chunk, genomes in columns (every array is
        (ops or edges or devices, pop) with contiguous rows; large ones are workspace buffers)."""
        t = self.tables
        pop, m = len(X), t.n_dev
        P = Population.from_genomes(self.flat, X[:, : t.n_ops] if self.levels is not None else X)
        T_level: np.ndarray | None = None
        index = np.zeros(0, dtype=np.int64)
        if self.levels is not None:
            level_of_op = np.take_along_axis(self.level_matrix(X), P.devices, axis=0)
            index = level_of_op * (t.n_ops * m) + P.cell
            T_level = self.levels.time.ravel()[index]
            dev_load = np.bincount(P.slot.ravel(), weights=T_level.ravel().astype(np.float64),
                                   minlength=m * pop).reshape(m, pop)
            used = P.device_count() > 0
        else:
            dev_load = P.device_sum("time")
            used = dev_load > 0 if self._positive_times else P.device_count() > 0
        period = dev_load.max(axis=0).astype(np.int64)
        n_e = t.n_edges
        link_load: np.ndarray  # float: bincount with weights (numpy's stubs say intp)
        if n_e:
            Xc = P.devices
            pair = np.take(Xc, self._src, axis=0, out=P.scratch("pair", n_e), mode="clip")  # (e, pop): src device * m + dst
            pair *= m
            pair += np.take(Xc, self._dst, axis=0, out=P.scratch("dst", n_e), mode="clip")
            edge_cell = np.add(pair, self._edge_base, out=P.scratch("edge_cell", n_e))
            XT_float = np.take(self._xfer_time_float, edge_cell, out=P.scratch("xfer_time_float", n_e, np.float64),
                               mode="clip")
            link_slot = np.multiply(pair, pop, out=pair)
            link_slot += np.arange(pop)
            link_load = np.bincount(link_slot.ravel(), weights=XT_float.ravel(),
                                    minlength=m * m * pop).reshape(m * m, pop)
            period = np.maximum(period, link_load.max(axis=0).astype(np.int64))
            xfer_energy = np.take(self._xfer_energy_flat, edge_cell, out=P.scratch("xfer_energy", n_e), mode="clip").sum(axis=0)
        else:
            link_load = np.zeros((m * m, pop))
            xfer_energy = np.zeros(pop, dtype=np.int64)
        op_energy = (self.levels.energy.ravel()[index].sum(axis=0) if self.levels is not None
                      else P.per_op("energy").sum(axis=0))
        idle_mw = (used * t.idle_power_mw[:, None]).sum(axis=0)
        energy = op_energy + xfer_energy + idle_mw * period
        P.values.update(period=period, energy=energy)
        if metrics or self._need_latency:
            T = T_level if T_level is not None else P.per_op("time")
            XT = (np.take(self._xfer_time_flat, edge_cell, out=P.scratch("xfer_time", n_e), mode="clip") if n_e
                  else np.zeros((0, pop), dtype=np.int64))
            P.values["latency"] = self._latency(T, XT, P.scratch("finish", t.n_ops))
        if metrics:
            P.values.update(
                op_energy=op_energy,
                transfer_energy=xfer_energy,
                idle_energy=idle_mw * period,
                device_load=dev_load.T.astype(np.int64),
                link_load=link_load.T.astype(np.int64),
            )
        return P

    def assignment(self, genome: Sequence[int]) -> dict[str, str]:
        """Op name -> device name: the first ``n_ops`` genes are device indices."""
        return leading_device_genes(self.tables, self.checked_genomes(genome)[0])

    def describe(self, genome: Sequence[int]) -> str:
        """Where the ops go, then each DVFS device's frequency (``... @ gpu 765 MHz``)."""
        text = super().describe(genome)
        if self.levels is None:
            return text
        n, names = self.tables.n_ops, self.tables.device_names
        levels = ", ".join(f"{names[d]} {self.levels.label(int(d), int(genome[n + k]))}"
                           for k, d in enumerate(self.dvfs_devices))
        return f"{text} @ {levels}"

    # ------------------------------------------------------------------ decoding
    def decode(self, x: np.ndarray) -> PipelineMapping:
        t = self.tables
        x = self.checked_genomes(x)[0]
        ev = self.evaluate(x[None, :], metrics=True)
        m = ev.metrics
        names = t.device_names
        loads = {names[d]: int(m["device_load"][0, d]) for d in range(t.n_dev)}
        mem_used = np.zeros(t.n_dev, dtype=np.int64)
        np.add.at(mem_used, x[: t.n_ops], t.mem[np.arange(t.n_ops), x[: t.n_ops]])
        link = m["link_load"][0].reshape(t.n_dev, t.n_dev)
        links = {(names[a], names[b]): int(link[a, b]) for a in range(t.n_dev) for b in range(t.n_dev) if link[a, b] > 0}
        period = int(m["period"][0])
        candidates = [(v, f"device {k}") for k, v in loads.items()] + [(v, f"link {a}->{b}") for (a, b), v in links.items()]
        bottleneck = max(candidates)[1] if candidates else "none"
        slack = self.slack(ev.G[0])
        op_time = t.time[np.arange(t.n_ops), x[: t.n_ops]]
        device_level: dict[str, str] = {}
        if self.levels is not None:
            level = self.level_matrix(x)[:, 0]
            op_time = self.levels.time[level[x[: t.n_ops]], np.arange(t.n_ops), x[: t.n_ops]]
            device_level = {names[d]: self.levels.label(int(d), int(level[d])) for d in self.dvfs_devices}
        schedule, cursor = [], dict.fromkeys(names, 0)
        for op in t.topological_order():
            dev = names[x[op]]
            schedule.append((t.op_names[op], dev, cursor[dev], cursor[dev] + int(op_time[op])))
            cursor[dev] += int(op_time[op])
        return PipelineMapping(
            device_of_op={t.op_names[i]: names[x[i]] for i in range(t.n_ops)},
            device_level=device_level,
            device_load=loads,
            device_memory={names[d]: (int(mem_used[d]), int(t.mem_capacity[d])) for d in range(t.n_dev)},
            link_load=links,
            period=period,
            latency=int(m["latency"][0]),
            energy=int(m["energy"][0]),
            energy_breakdown={
                "ops": int(m["op_energy"][0]),
                "transfers": int(m["transfer_energy"][0]),
                "idle": int(m["idle_energy"][0]),
            },
            time_unit=t.time_unit,
            seconds_per_time_unit=t.seconds_per_time_unit,
            bottleneck=bottleneck,
            constraint_slack=slack,
            schedule=schedule,
        )

    # ------------------------------------------------------------------ baselines
    def baselines(self) -> dict[str, np.ndarray]:
        """Each device alone (where it can run every op) and the static per-class partition."""
        t = self.tables
        out: dict[str, np.ndarray] = {}
        for d, name in enumerate(t.device_names):
            if t.allowed[:, d].all():
                out[f"only {name}"] = self.with_levels(np.full(t.n_ops, d, dtype=np.int64))
        out["static"] = self.with_levels(self.static_partition())
        return out

    def static_partition(self) -> np.ndarray:
        """Each op class on the device kind that is fastest for it, summed over the workload's ops of that class.

        Within the chosen kind the first device is used. Ops that kind cannot run go to their fastest device.
        Returns the device genes only (see :meth:`with_levels` for a full genome with DVFS genes).
        """
        t = self.tables
        kinds = t.device_kinds or t.device_names
        classes = t.op_classes or ("generic",) * t.n_ops
        genome = self._fastest.copy()
        for cls in set(classes):
            ops = [i for i in range(t.n_ops) if classes[i] == cls]
            best_kind, best_time = None, None
            for kind in dict.fromkeys(kinds):
                devs = [d for d in range(t.n_dev) if kinds[d] == kind]
                dev = devs[0]
                if not t.allowed[ops, dev].all():
                    continue
                total = int(t.time[ops, dev].sum())
                if best_time is None or total < best_time:
                    best_kind, best_time = dev, total
            if best_kind is not None:
                genome[ops] = best_kind
        return genome

    # ------------------------------------------------------------------ exact
    def objective_lower_bounds(self, at_most: Sequence[int | None] | None = None) -> tuple[float, ...]:
        """Least period (greatest throughput), energy and latency of every feasible mapping within ``at_most``:
        the assignment's linear relaxation and the fastest path (:mod:`dse.mapping.pipeline.bounds`)."""
        return lower_bounds(self, at_most)

    def diagnose(self, time_limit: float = 10.0, candidates: Sequence[np.ndarray] = (), proven: bool = False) -> str:
        """One line naming the constraint that cannot be met and the best reachable value (CP-SAT proves it
        itself; ``candidates`` and ``proven`` are not needed)."""
        from dse.mapping.pipeline.cpsat import diagnose_pipeline

        return diagnose_pipeline(self, time_limit)

    def cpsat(self, include: Sequence[str] | None = None, seeds: Sequence[np.ndarray] = (),
              deadline: float | None = None) -> Formulation:
        """CP-SAT model over the same integer tables; objective vars equal the evaluator's F exactly.

        ``include`` restricts which constraints are modelled (default: all of the problem's);
        ``seeds`` are not used (the solver hints its own best seed); ``deadline`` bounds the build.
        """
        from dse.mapping.pipeline.cpsat import build_pipeline_model

        return build_pipeline_model(self, include, deadline)


# --------------------------------------------------------------------------- registry entry


def _build(inputs: ProblemInputs) -> PipelineProblem:
    return PipelineProblem(inputs.tables, inputs.objectives, deadline=inputs.deadline,
                           power_cap_mw=inputs.power_cap_mw, memory=inputs.memory, name=inputs.name)


def example_problem(seed: int) -> PipelineProblem:
    """A small seeded instance (2-8 ops, 2-3 devices, random deadline / power cap / memory; some infeasible).

    Every third seed (``seed % 3 == 2``) adds DVFS: 2-3 operating points on some devices (frequency genes).
    """
    from dse.cost.synthetic import random_tables

    rng = np.random.default_rng(10_000 + seed)
    tables = random_tables(seed, n_ops=min(6, int(rng.integers(2, 7))) if seed % 3 == 2 else None)
    if seed % 3 == 2:
        lv = np.random.default_rng(20_000 + seed)
        m = tables.n_dev
        time_scale = np.full((m, 3), np.nan)
        power_scale = np.full((m, 3), np.nan)
        for d in range(m):
            k = int(lv.integers(1, 4)) if d else 3  # device 0 always has three levels
            time_scale[d, :k] = np.sort(lv.uniform(1.0, 2.5, k))
            time_scale[d, 0] = 1.0
            power_scale[d, :k] = 1.0 / time_scale[d, :k] ** lv.uniform(1.5, 2.5)
        tables = attach_levels(tables, scaled_levels(tables, time_scale, power_scale))
    deadline = int(rng.integers(20, 300)) if rng.random() < 0.5 else None
    power = int(rng.integers(1, 30)) if rng.random() < 0.4 else None
    objectives = ("throughput", "energy") if rng.random() < 0.75 else ("latency", "energy")
    return PipelineProblem(tables, objectives, deadline=deadline, power_cap_mw=power, memory=bool(rng.random() < 0.8))


def _ms(tables: CostTables) -> float:
    return tables.seconds_per_time_unit * 1e3


FAMILY = register_family(Family(
    name="pipeline",
    problem_class=PipelineProblem,
    build=_build,
    objectives=PIPELINE_OBJECTIVES,
    default_objectives=("throughput", "energy"),
    examples=example_problem,
    cost_model=lambda options: ("roofline", {}),
    limits=frozenset({"memory", "deadline", "power"}),
    metrics=(
        Metric("latency", "latency", "ms", _ms, table=True, description="one item through the mapped DAG"),
        Metric("period", "period", "ms", _ms, description="time between items (1 / throughput)"),
    ),
    gantt=True,
    description="DyPe: device per op, items streaming through a pipeline (throughput vs energy)",
))
