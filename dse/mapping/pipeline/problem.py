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
    Activity,
    Breakdown,
    DecodedMapping,
    DeviceCost,
    Formulation,
    LinkCost,
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
    """One decoded pipeline mapping: what binds, and where one item's time and energy go (``costs``).

    ``schedule``: one item's ``(op, device, start, finish)`` rows, ops in topological order;
    ``link_load``: the transfer time per directed device pair that carries data.
    """

    device_of_op: dict[str, str]
    link_load: dict[tuple[str, str], int]
    period: int
    latency: int
    energy: int
    seconds_per_time_unit: float
    bottleneck: str
    costs: Breakdown
    constraint_slack: dict[str, float] = field(default_factory=dict)
    schedule: list[tuple[str, str, int, int]] = field(default_factory=list)

    def assignment(self) -> dict[str, str]:
        return dict(self.device_of_op)

    def values(self) -> dict[str, int]:
        return {"period": self.period, "energy": self.energy, "latency": self.latency}

    def breakdown(self) -> Breakdown:
        return self.costs

    @property
    def device_level(self) -> dict[str, str]:
        """The operating point of every DVFS device that runs an op (``{"gpu": "765 MHz"}``)."""
        return {d.name: d.level for d in self.costs.devices if d.level is not None}

    def explain(self) -> str:
        """A readable multi-line account of the mapping (every figure from :meth:`breakdown`)."""
        s = self.seconds_per_time_unit
        costs = self.costs
        mj = costs.millijoules
        lines = [
            f"period {self.period * s * 1e3:.4g} ms (throughput {1 / max(self.period * s, 1e-300):.4g} items/s), "
            f"bottleneck {self.bottleneck}",
            f"latency {self.latency * s * 1e3:.4g} ms; energy {mj(self.energy):.4g} mJ/item "
            f"(ops {mj(costs.dynamic_energy):.3g} mJ, transfers {mj(costs.transfer_energy):.3g} mJ, "
            f"idle {mj(costs.idle_energy):.3g} mJ)",
        ]
        for dev in costs.devices:
            ops = [op for op, d in self.device_of_op.items() if d == dev.name]
            share = dev.busy / self.period if self.period else 0.0
            level = f" at {dev.level}" if dev.level is not None else ""
            energy = (f", energy {mj(dev.dynamic_energy):.3g} mJ + idle {mj(dev.idle_energy):.3g} mJ"
                      if dev.ops else "")
            lines.append(
                f"  {dev.name}{level}: {dev.ops} ops, busy {dev.busy * s * 1e3:.4g} ms/item ({share:.0%} of period)"
                f"{energy}, memory {readable_bytes(dev.memory or 0)} of {readable_bytes(dev.capacity or 0)}"
                + (f": {', '.join(ops)}" if ops else "")
            )
        for link in costs.links:
            lines.append(f"  {link.name}: {link.busy * s * 1e3:.4g} ms/item, energy {mj(link.energy):.3g} mJ")
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
        """Clip to bounds, move ops off devices that cannot run them (to their fastest allowed device) and
        give every DVFS device that runs no op level 0 (:meth:`canonical_levels`)."""
        n = self.tables.n_ops
        X = np.clip(self.integer_genomes(X), self.lower, self.upper)
        devices = X[..., :n]
        bad = ~self.tables.allowed[np.arange(n), devices]
        if bad.any():
            X = X.copy()
            fixed = X[..., :n]
            fixed[bad] = np.broadcast_to(self._fastest, devices.shape)[bad]
        return self.canonical_levels(X)

    def canonical_levels(self, X: np.ndarray) -> np.ndarray:
        """``X`` (one genome or a population) with the level gene of every DVFS device that runs no op set
        to 0: such a gene changes no cost (an idle device's power does not depend on its clock), so one
        mapping has one genome. Returns ``X`` itself when nothing changes."""
        if not len(self.dvfs_devices):
            return X
        n = self.tables.n_ops
        idle = ~(X[..., :n, None] == self.dvfs_devices).any(axis=-2)  # (..., dvfs devices)
        if not (idle & (X[..., n:] != 0)).any():
            return X
        X = X.copy()
        X[..., n:][idle] = 0
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
        """A full genome from device genes ``devices`` and DVFS genes ``levels`` (default: fastest levels),
        the levels of devices that run no op set to 0 (:meth:`canonical_levels`)."""
        lv = self.fastest_levels() if levels is None else np.asarray(levels, dtype=np.int64)
        return self.canonical_levels(np.concatenate([np.asarray(devices, dtype=np.int64), lv]))

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
        """Where the ops go, then the frequency of each DVFS device that runs an op (``... @ gpu 765 MHz``)."""
        text = super().describe(genome)
        if self.levels is None:
            return text
        x = self.checked_genomes(genome)[0]
        n, names = self.tables.n_ops, self.tables.device_names
        used = set(x[:n].tolist())
        levels = ", ".join(f"{names[d]} {self.levels.label(int(d), int(x[n + k]))}"
                           for k, d in enumerate(self.dvfs_devices) if int(d) in used)
        return f"{text} @ {levels}" if levels else text

    # ------------------------------------------------------------------ decoding
    def decode(self, x: np.ndarray) -> PipelineMapping:
        """The mapping of genome ``x``: its evaluated loads, what binds and its :meth:`_breakdown`."""
        t = self.tables
        x = self.checked_genomes(x)[0]
        ev = self.evaluate(x[None, :], metrics=True)
        m = ev.metrics
        names = t.device_names
        period = int(m["period"][0])
        link = m["link_load"][0].reshape(t.n_dev, t.n_dev)
        links = {(names[a], names[b]): int(link[a, b]) for a in range(t.n_dev) for b in range(t.n_dev) if link[a, b] > 0}
        costs = self._breakdown(x, period, int(m["latency"][0]), int(m["energy"][0]), m["device_load"][0], link)
        candidates = ([(d.busy, f"device {d.name}") for d in costs.devices]
                      + [(v, f"link {a}->{b}") for (a, b), v in links.items()])
        return PipelineMapping(
            device_of_op={t.op_names[i]: names[x[i]] for i in range(t.n_ops)},
            link_load=links,
            period=period,
            latency=costs.totals["latency"],
            energy=costs.totals["energy"],
            seconds_per_time_unit=t.seconds_per_time_unit,
            bottleneck=max(candidates)[1] if candidates else "none",
            costs=costs,
            constraint_slack=self.slack(ev.G[0]),
            schedule=[(a.name, a.where, a.start, a.finish) for a in costs.ops],
        )

    def op_costs(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per op of one checked genome ``x``, its time and dynamic energy on its device at the level the
        genome gives that device (the tables' costs without DVFS): two ``(n_ops,)`` int64 arrays."""
        t = self.tables
        ops, dev = np.arange(t.n_ops), x[: t.n_ops]
        if self.levels is None:
            return t.time[ops, dev], t.energy[ops, dev]
        level = self.level_matrix(x)[dev, 0]
        return self.levels.time[level, ops, dev], self.levels.energy[level, ops, dev]

    def _level_label(self, x: np.ndarray, device: int) -> str | None:
        """The operating point genome ``x`` gives ``device`` (``"765 MHz"``); None for a device without a
        frequency gene."""
        if self.levels is None or device not in self.dvfs_devices:
            return None
        return self.levels.label(device, int(self.level_matrix(x)[device, 0]))

    def _breakdown(self, x: np.ndarray, period: int, latency: int, energy: int, device_load: np.ndarray,
                   link_load: np.ndarray) -> Breakdown:
        """One item's costs of checked genome ``x``: per device (its ops' time and energy at its level, its
        idle power over the period when it runs an op), per link and per transfer (laid back to back on its
        link in edge order, as in one steady-state period), per op (each device's ops back to back in
        topological order); ``device_load`` and ``link_load`` are the evaluator's loads."""
        t = self.tables
        names, dev = t.device_names, x[: t.n_ops]
        op_time, op_energy = self.op_costs(x)
        ops, cursor = [], [0] * t.n_dev
        for op in t.topological_order():
            d = int(dev[op])
            ops.append(Activity(t.op_names[op], names[d], cursor[d], cursor[d] + int(op_time[op]), int(op_energy[op])))
            cursor[d] += int(op_time[op])
        transfers, link_cursor = [], dict[tuple[int, int], int]()
        link_energy = np.zeros((t.n_dev, t.n_dev), dtype=np.int64)
        for e, (s, dst) in enumerate(np.asarray(t.edges).tolist()):
            a, b = int(dev[s]), int(dev[dst])
            duration, spent = int(t.edge_transfer_time(e, a, b)), int(t.edge_transfer_energy(e, a, b))
            if not duration and not spent:
                continue
            start = link_cursor.get((a, b), 0)
            link_cursor[a, b] = start + duration
            link_energy[a, b] += spent
            transfers.append(Activity(f"{t.op_names[s]}->{t.op_names[dst]}", f"link {names[a]}->{names[b]}", start,
                                      start + duration, spent))
        count = np.bincount(dev, minlength=t.n_dev)
        dynamic, memory = np.zeros(t.n_dev, dtype=np.int64), np.zeros(t.n_dev, dtype=np.int64)
        np.add.at(dynamic, dev, op_energy)
        np.add.at(memory, dev, t.mem[np.arange(t.n_ops), dev])
        devices = tuple(DeviceCost(names[d], int(count[d]), int(device_load[d]), int(dynamic[d]),
                                   int(t.idle_power_mw[d]) * period if count[d] else 0, int(memory[d]),
                                   int(t.mem_capacity[d]), self._level_label(x, d) if count[d] else None)
                        for d in range(t.n_dev))
        links = tuple(LinkCost(f"link {names[a]}->{names[b]}", int(link_load[a, b]), int(link_energy[a, b]))
                      for a in range(t.n_dev) for b in range(t.n_dev) if link_load[a, b] > 0 or link_energy[a, b])
        return Breakdown(devices, links, tuple(ops), tuple(transfers),
                         {"period": period, "energy": energy, "latency": latency}, t.time_unit,
                         t.display_time_unit, t.display_per_time_unit, "item")

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

    def baseline_classes(self) -> dict[str, str]:
        """Each device alone: its class is the device's kind (of one kind and alike in every figure, they are
        reported as one); the static partition: a class of its own."""
        t = self.tables
        kinds = t.device_kinds or t.device_names
        alone = [d for d in range(t.n_dev) if t.allowed[:, d].all()]  # the devices with a baseline
        return {**{f"only {t.device_names[d]}": f"only a {kinds[d]}" for d in alone}, "static": "static"}

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

    # ------------------------------------------------------------------ bounds
    def quantity_bounds(self) -> dict[str, float]:
        """Every mapping's ``latency`` at most (the longest path with each op at its slowest allowed device
        and level and each transfer at its slowest device pair) and average power at most in mW
        (``power_mw``: per device the largest energy / time of an op it can run at any level, since its ops'
        summed time is within the period; per device pair the same for transfers; every device's idle power).
        ``power_mw`` is left out when an op or a transfer spends energy in no time."""
        t = self.tables
        if self.levels is not None:
            time, energy = self.levels.time, self.levels.energy  # (levels, ops, devices); the last level repeats
        else:
            time, energy = t.time[None], t.energy[None]
        allowed = np.broadcast_to(t.allowed[None], time.shape)
        slowest = np.where(allowed, time, 0).max(axis=(0, 2))
        m, n_e = t.n_dev, t.n_edges
        transfer_time = self._xfer_time_flat.reshape(n_e, m * m)
        bounds: dict[str, float] = {
            "latency": float(self._latency(slowest[:, None], transfer_time.max(axis=1, initial=0)[:, None],
                                           np.zeros((t.n_ops, 1), dtype=np.int64))[0])}
        op_power = _largest_ratio(np.where(allowed, energy, 0), np.where(allowed, time, 0), axis=(0, 1))
        link_power = _largest_ratio(self._xfer_energy_flat.reshape(n_e, m * m), transfer_time, axis=0)
        power = float(op_power.sum() + link_power.sum() + t.idle_power_mw.sum())
        if np.isfinite(power):
            bounds["power_mw"] = power
        return bounds

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

    def exact_model_too_large(self) -> str | None:
        """Past the model's literal budget (:func:`dse.mapping.pipeline.cpsat.model_size_refusal`): why."""
        from dse.mapping.pipeline.cpsat import model_size_refusal

        return model_size_refusal(self.tables)

    def cpsat(self, include: Sequence[str] | None = None, seeds: Sequence[np.ndarray] = (),
              deadline: float | None = None) -> Formulation:
        """CP-SAT model over the same integer tables; objective vars equal the evaluator's F exactly.

        ``include`` restricts which constraints are modelled (default: all of the problem's);
        ``seeds`` are not used (the solver hints its own best seed); ``deadline`` bounds the build.
        """
        from dse.mapping.pipeline.cpsat import build_pipeline_model

        return build_pipeline_model(self, include, deadline)


def _largest_ratio(energy: np.ndarray, time: np.ndarray, axis: int | tuple[int, ...]) -> np.ndarray:
    """The largest ``energy / time`` along ``axis`` (0 where both are 0, infinite where energy is spent in no
    time): a bound on the average power of any subset of those entries run one after another."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(time > 0, energy / np.maximum(time, 1), np.where(energy > 0, np.inf, 0.0))
    return ratio.max(axis=axis, initial=0.0)


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
