"""The ``split`` family (POAS): one GEMM's rows cut into chunks that run at once on several devices.

Genome: chunks per device (``chunks[dev]`` in ``[0, total]``), summing to the
total; device ``d`` takes the rows after those of devices ``0..d-1``
(row-major contiguity). Semantics, over the per-part integer tables of
:mod:`dse.mapping.split.model` (``time[d, c]``, ``link[d, c]``, ``energy[d, c]``,
``mem[d, c]``):

* time (makespan) = max over devices of their busy time (copies included)
  and over memory pools (devices of one chip: a GPU's CUDA and tensor cores)
  of the summed host-link time of their devices, which share one link and
  one copy of ``B`` (sent once when any device of the pool takes rows);
* energy = dynamic energy of every part (compute and copies, ``B`` once per
  used pool) + every device's idle power over the makespan;
* constraints: the chunks sum to the total (``chunks``); resident bytes of each
  pool's parts <= its capacity (``memory``; parts too large stream through in pieces).

Internal units: ns, pJ, bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from dse.cost import CostTables
from dse.errors import InfeasibleError, SpecError
from dse.mapping.base import (
    Activity,
    Breakdown,
    DecodedMapping,
    DeviceCost,
    Formulation,
    LinkCost,
    MappingProblem,
    Objective,
)
from dse.mapping.constraints import Constraint, ModelContext, describe_slack, readable_bytes
from dse.mapping.population import Population
from dse.mapping.registry import Family, Metric, ProblemInputs, register_family
from dse.mapping.split.bounds import lower_bounds
from dse.mapping.split.model import (
    AnalyticSplitModel,
    CalibratedSplitModel,
    SplitCostTables,
    SplitDevice,
    SplitParts,
    SplitPlatform,
    gemm_workload,
    resolve_platform,
    resolve_workload,
    split_tables,
)

SPLIT_OBJECTIVES = ("time", "energy")


def _objective(name: str) -> Objective:
    if name == "time":
        return Objective("time", "ms", "min", "makespan", "ns", lambda v: np.asarray(v, dtype=float) * 1e-6)
    if name == "energy":
        return Objective("energy", "J", "min", "energy", "pJ", lambda v: np.asarray(v, dtype=float) * 1e-12)
    raise SpecError("problem", "objectives", name, f"split objectives are {', '.join(SPLIT_OBJECTIVES)}")


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.4g} GiB ({int(n_bytes):,} bytes)"


# --------------------------------------------------------------------------- constraints


@dataclass(frozen=True)
class ChunkTotal(Constraint):
    """The chunks per device sum to ``total`` (repair keeps every genome on it; exhaustive search does not)."""

    total: int
    name: ClassVar[str] = "chunks"
    unit: ClassVar[str] = "fraction of the total"
    description: ClassVar[str] = "chunks per device sum to the total"

    def violation(self, population: Population) -> np.ndarray:
        return np.abs(population.values["chunk_sum"] - self.total) / max(self.total, 1)

    def add_to_model(self, ctx: ModelContext) -> None:
        ctx.model.add(ctx.quantities["chunk_sum"] == self.total)


@dataclass(frozen=True, eq=False)
class PoolMemory(Constraint):
    """Resident bytes of the parts in each memory pool <= the pool's capacity."""

    parts: SplitParts
    name: ClassVar[str] = "memory"
    unit: ClassVar[str] = "fraction over capacity"
    description: ClassVar[str] = "resident bytes <= capacity in every memory pool"

    def violation(self, population: Population) -> np.ndarray:
        cap = self.parts.pool_capacity.astype(float)
        used = population.values["pool_mem"]  # (pop, n_pool)
        return ((used - cap) / np.maximum(cap, 1)).max(axis=1)

    def add_to_model(self, ctx: ModelContext) -> None:
        for p, cap in enumerate(self.parts.pool_capacity):
            ctx.model.add(ctx.quantities[f"pool_mem[{p}]"] <= int(cap))

    def check(self, tables: CostTables) -> None:
        """Infeasible when the devices, each filled alone up to its pool's capacity, cannot hold every chunk;
        names the device and the bytes one chunk needs there."""
        parts = self.parts
        most = []
        for d in range(len(parts.devices)):
            cap = parts.pool_capacity[parts.pool[d]]
            fits = np.flatnonzero(parts.mem[d] <= cap)
            most.append(int(fits.max()) if len(fits) else 0)
        if sum(most) >= parts.total:
            return
        w = parts.workload
        worst = ", ".join(
            f"{dev.name} holds {c} of {parts.total} chunks (one chunk needs {_gib(parts.mem[d, min(1, parts.total)])}, "
            f"capacity {_gib(parts.pool_capacity[parts.pool[d]])})"
            for d, (dev, c) in enumerate(zip(parts.devices, most, strict=True)))
        raise InfeasibleError(f"memory: the {w.m}x{w.n}x{w.k} {w.dtype} GEMM fits in no device's memory: {worst}")


def _round_to_total(Y: np.ndarray, total: int) -> np.ndarray:
    """Rows of non-negative weights ``Y`` -> integers summing to ``total`` in proportion (largest remainders
    take the rounding, ties to the first device; an all-zero row is split evenly)."""
    Y = np.array(Y, dtype=float)
    Y[Y.sum(axis=1) == 0] = 1.0
    share = Y * total / Y.sum(axis=1, keepdims=True)
    base = np.floor(share + 1e-9).astype(np.int64)
    left = total - base.sum(axis=1)
    order = np.argsort(-(share - base), axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(Y.shape[1]), Y.shape).copy(), axis=1)
    return base + (rank < left[:, None])


# --------------------------------------------------------------------------- decoded mapping


@dataclass(frozen=True)
class SplitMapping(DecodedMapping):
    """One split: chunks, rows, predicted busy/link time and memory per device, what binds, and where the
    split's time and energy go (``costs``)."""

    counts: dict[str, int]
    rows: dict[str, tuple[int, int]]
    device_time: dict[str, int]
    pool_link: dict[str, int]
    pieces: dict[str, int]
    makespan: int
    energy: int
    best_single: int
    bottleneck: str
    chunk_names: tuple[str, ...]
    costs: Breakdown
    constraint_slack: dict[str, float] = field(default_factory=dict)
    schedule: list[tuple[str, str, int, int]] = field(default_factory=list)

    def values(self) -> dict[str, int]:
        return {"makespan": self.makespan, "energy": self.energy}

    def breakdown(self) -> Breakdown:
        return self.costs

    def assignment(self) -> dict[str, str]:
        out: dict[str, str] = {}
        names = iter(self.chunk_names)
        for dev, c in self.counts.items():
            for _ in range(c):
                name = next(names, None)
                if name is not None:
                    out[name] = dev
        for name in names:  # a genome off the total: unassigned chunks
            out[name] = "(none)"
        return out

    def explain(self) -> str:
        """A readable multi-line account of the split (energies from :meth:`breakdown`)."""
        costs = self.costs

        def joules(value: int) -> float:
            return costs.millijoules(value) * 1e-3

        speedup = self.best_single / self.makespan if self.makespan else float("inf")
        lines = [f"time {self.makespan * 1e-6:.4g} ms, energy {joules(self.energy):.4g} J "
                 f"(parts {joules(costs.dynamic_energy):.3g} J, B copies {joules(costs.transfer_energy):.3g} J, "
                 f"idle {joules(costs.idle_energy):.3g} J), "
                 f"speed-up {speedup:.3g}x over the best single device ({self.best_single * 1e-6:.4g} ms), "
                 f"bottleneck {self.bottleneck}"]
        for dev in costs.devices:
            a, b = self.rows[dev.name]
            stream = f", streamed in {self.pieces[dev.name]} pieces" if self.pieces[dev.name] > 1 else ""
            lines.append(f"  {dev.name}: {self.counts[dev.name]} chunks, rows {a}:{b}, busy {dev.busy * 1e-6:.4g} ms, "
                         f"energy {joules(dev.dynamic_energy):.3g} J + idle {joules(dev.idle_energy):.3g} J, "
                         f"memory {readable_bytes(dev.memory or 0)} of {readable_bytes(dev.capacity or 0)}{stream}")
        for link in costs.links:
            lines.append(f"  {link.name}: {link.busy * 1e-6:.4g} ms, B copy {joules(link.energy):.3g} J")
        for name, slack in self.constraint_slack.items():
            lines.append(describe_slack(name, slack))
        return "\n".join(lines)


# --------------------------------------------------------------------------- problem


class SplitProblem(MappingProblem):
    """Chunks of one GEMM per device: time (makespan) and energy, under the chunk total and pool memory.

    ``tables`` come from :func:`~dse.mapping.split.model.split_tables`; ``objectives``
    one or both of ``time``, ``energy``; ``memory`` enforces pool capacities.
    Raises :class:`SpecError` for unknown objectives or tables without per-part costs.
    """

    family = "split"

    def __init__(self, tables: CostTables, objectives: Sequence[str] = SPLIT_OBJECTIVES, *,
                 memory: bool = True, name: str = "split") -> None:
        parts = getattr(tables, "parts", None)
        if not isinstance(tables, SplitCostTables) or parts is None:
            raise SpecError("problem", "cost_model", type(tables).__name__,
                            "the split family needs per-part tables (cost models analytic or calibrated)")
        self.name = name
        self.tables = tables
        self.parts: SplitParts = parts
        self.objectives = tuple(_objective(o) for o in objectives)
        if not self.objectives:
            raise SpecError("problem", "objectives", list(objectives), "give time, energy or both")
        self.memory = memory
        cons: list[Constraint] = [ChunkTotal(parts.total)]
        if memory:
            cons.append(PoolMemory(parts))
        self.constraints = tuple(cons)
        n_dev = len(parts.devices)
        self._dev = np.arange(n_dev)
        self._pool_onehot = (parts.pool[:, None] == np.arange(len(parts.pool_names))[None, :]).astype(np.int64)
        self.best_single = int(parts.time[:, parts.total].min()) if parts.total else 0

    # ------------------------------------------------------------------ genome
    @property
    def gene_names(self) -> tuple[str, ...]:
        return tuple(f"chunks[{d}]" for d in self.tables.device_names)

    @property
    def lower(self) -> np.ndarray:
        return np.zeros(len(self.parts.devices), dtype=np.int64)

    @property
    def upper(self) -> np.ndarray:
        return np.full(len(self.parts.devices), self.parts.total, dtype=np.int64)

    def repair(self, X: np.ndarray) -> np.ndarray:
        """Clip to ``[0, total]`` and rescale each row to sum to the total (largest remainders get the rounding;
        an all-zero row becomes an even split). Rows already on the total are returned unchanged."""
        X = np.clip(self.integer_genomes(X), 0, self.parts.total)
        T = self.parts.total
        s = X.sum(axis=1)
        bad = s != T
        if not bad.any():
            return X
        X = X.copy()
        X[bad] = _round_to_total(X[bad].astype(float), T)
        return X

    # ------------------------------------------------------------------ evaluation
    def kernel(self, X: np.ndarray, metrics: bool) -> Population:
        """Makespan, energy and pool memory of a chunk of genomes (genes clipped into the tables)."""
        p = self.parts
        C = np.clip(X, 0, p.total)
        busy = p.time[self._dev, C]  # (pop, n_dev)
        pool_used = ((C > 0).astype(np.int64) @ self._pool_onehot) > 0  # (pop, n_pool)
        pool_link = p.link[self._dev, C] @ self._pool_onehot + pool_used * p.pool_b_link
        makespan = np.maximum(busy.max(axis=1), pool_link.max(axis=1))
        energy = (p.energy[self._dev, C].sum(axis=1) + (pool_used * p.pool_b_energy).sum(axis=1)
                  + p.idle_mw_total * makespan)
        pool_mem = p.mem[self._dev, C] @ self._pool_onehot
        P = Population(self.flat, np.ascontiguousarray(C.T))
        P.values.update(makespan=makespan, energy=energy, chunk_sum=X.sum(axis=1), pool_mem=pool_mem)
        if metrics:
            P.values.update(device_time=busy, pool_link=pool_link,
                            speedup=self.best_single / np.maximum(makespan, 1))
        return P

    # ------------------------------------------------------------------ decoding
    def assignment(self, genome: Sequence[int]) -> dict[str, str]:
        return self.decode(np.asarray(genome, dtype=np.int64)).assignment()

    def describe(self, genome: Sequence[int]) -> str:
        """``dev: c chunks (rows a:b) | ...``."""
        x = self.checked_genomes(genome)[0]
        bounds = self.parts.boundaries(x)
        return " | ".join(f"{name}: {int(c)} chunks (rows {a}:{b})"
                          for name, c, (a, b) in zip(self.tables.device_names, x, bounds, strict=True))

    def decode(self, x: np.ndarray) -> SplitMapping:
        p = self.parts
        x = self.checked_genomes(x)[0]
        ev = self.evaluate(x[None, :], metrics=True)
        m = ev.metrics
        names = self.tables.device_names
        C = np.clip(x, 0, p.total)
        busy = {names[d]: int(m["device_time"][0, d]) for d in range(len(names))}
        links = {pool: int(m["pool_link"][0, j]) for j, pool in enumerate(p.pool_names)}
        makespan = int(m["makespan"][0])
        candidates = [(v, f"device {k}") for k, v in busy.items()] + [(v, f"host link of {k}") for k, v in links.items()]
        bounds = p.boundaries(C)
        costs = self._breakdown(C, bounds, makespan, int(m["energy"][0]), m["pool_link"][0])
        return SplitMapping(
            counts={names[d]: int(x[d]) for d in range(len(names))},
            rows={names[d]: bounds[d] for d in range(len(names))},
            device_time=busy,
            pool_link=links,
            pieces={names[d]: int(p.pieces[d, C[d]]) for d in range(len(names))},
            makespan=makespan,
            energy=int(m["energy"][0]),
            best_single=self.best_single,
            bottleneck=max(candidates)[1],
            chunk_names=self.tables.op_names,
            costs=costs,
            constraint_slack=self.slack(ev.G[0]),
            schedule=[(a.name, a.where, a.start, a.finish) for a in costs.ops],
        )

    def _breakdown(self, C: np.ndarray, bounds: list[tuple[int, int]], makespan: int, energy: int,
                   pool_link: np.ndarray) -> Breakdown:
        """The costs of chunk counts ``C`` (clipped to the tables; ``makespan``, ``energy`` and the pools'
        ``pool_link`` times the evaluator's): per device its part (from time 0: every device computes at
        once) with its dynamic energy (compute and its rows' copies) and its idle power over the makespan
        (every device idles, used or not); per memory pool its host link, whose energy is the one copy of
        ``B`` it sends when a device of the pool takes rows."""
        p = self.parts
        names = self.tables.device_names
        dev = np.arange(len(names))
        busy, dynamic = p.time[dev, C], p.energy[dev, C]
        idle = self._idle_shares() * makespan
        devices = tuple(DeviceCost(names[d], int(C[d]), int(busy[d]), int(dynamic[d]), int(idle[d]),
                                   int(p.mem[d, C[d]]), int(p.pool_capacity[p.pool[d]])) for d in dev)
        ops = tuple(Activity(f"rows {bounds[d][0]}:{bounds[d][1]}", names[d], 0, int(busy[d]), int(dynamic[d]))
                    for d in dev if C[d] > 0)
        used = [bool((C[p.pool == j] > 0).any()) for j in range(len(p.pool_names))]
        links = tuple(LinkCost(f"host link {pool}", int(pool_link[j]), int(p.pool_b_energy[j]) if used[j] else 0)
                      for j, pool in enumerate(p.pool_names) if pool_link[j] > 0 or used[j] and p.pool_b_energy[j])
        transfers = tuple(Activity(f"{link.name.removeprefix('host link ')} transfers", link.name, 0, link.busy,
                                   link.energy) for link in links)
        t = self.tables
        return Breakdown(devices, links, ops, transfers, {"makespan": makespan, "energy": energy}, t.time_unit,
                         t.display_time_unit, t.display_per_time_unit, "split")

    def _idle_shares(self) -> np.ndarray:
        """Each device's idle power (mW): the tables' per-device figures, the first device's adjusted by the
        rounding difference (at most a few mW) so that they sum to the family's ``idle_mw_total``."""
        shares = np.array(self.tables.idle_power_mw, dtype=np.int64)
        if len(shares):
            shares[0] += self.parts.idle_mw_total - int(shares.sum())
        return shares

    # ------------------------------------------------------------------ baselines and exact model
    def baselines(self) -> dict[str, np.ndarray]:
        """Each device alone, the even split, and the split proportional to each device's speed alone."""
        p = self.parts
        n_dev = len(p.devices)
        out: dict[str, np.ndarray] = {}
        for d, dev in enumerate(p.devices):
            g = np.zeros(n_dev, dtype=np.int64)
            g[d] = p.total
            out[f"only {dev.name}"] = g
        out["even"] = self.repair(np.ones((1, n_dev), dtype=np.int64))[0]
        speed = 1.0 / np.maximum(p.time[:, p.total].astype(float), 1.0)
        out["proportional"] = _round_to_total(speed[None, :], p.total)[0]
        return out

    def objective_lower_bounds(self, at_most: Sequence[int | None] | None = None) -> tuple[float, ...]:
        """Least makespan and energy of every feasible split within ``at_most``: dynamic programmes over the
        devices' chunk counts (:mod:`dse.mapping.split.bounds`)."""
        return lower_bounds(self, at_most)

    def cpsat(self, include: Sequence[str] | None = None, seeds: Sequence[np.ndarray] = (),
              deadline: float | None = None) -> Formulation:
        """CP-SAT model over the same per-part tables; objective variables equal the evaluator's F exactly."""
        from dse.mapping.split.cpsat import build_split_model

        return build_split_model(self, include, deadline)


# --------------------------------------------------------------------------- registry entry


def _build(inputs: ProblemInputs) -> SplitProblem:
    return SplitProblem(inputs.tables, inputs.objectives, memory=inputs.memory, name=inputs.name)


def example_problem(seed: int) -> SplitProblem:
    """A small seeded instance: 2-3 devices (host CPU groups, sometimes a GPU and its tensor cores sharing
    memory and link), 3-9 chunks, linear compute rates with fixed overheads; memory sometimes too tight."""
    rng = np.random.default_rng(20_000 + seed)
    chunks = int(rng.integers(3, 10))
    workload = gemm_workload(int(chunks * rng.integers(8, 64)), int(rng.integers(64, 512)),
                             int(rng.integers(64, 512)), "fp32", chunks=chunks)
    n_dev = int(rng.integers(2, 4))
    gpu_mem = int(rng.integers(1, 6)) * workload.k * workload.n * 4 if rng.random() < 0.5 else 2**34
    devices = []
    for d in range(n_dev):
        accel = d > 0 and rng.random() < 0.5
        devices.append(SplitDevice(
            name=f"dev{d}", kind="gpu" if accel else "cpu", fit_device="cuda" if accel else "cpu",
            mem_bytes=gpu_mem if accel else 2**34, pool="gpu" if accel else "host",
            active_w=float(rng.integers(20, 300)), idle_w=float(rng.integers(0, 40)),
            link_gbps=float(rng.integers(5, 30)) if accel else None, link_latency_us=float(rng.integers(0, 20)),
            link_pj_per_byte=float(rng.integers(0, 50)) if accel else 0.0))
    rates = rng.uniform(5e9, 2e11, size=n_dev)
    overhead = rng.uniform(0, 5e-5, size=n_dev)

    def predict(dev: SplitDevice, w, rows: np.ndarray) -> np.ndarray:
        d = int(dev.name[3:])
        return 2.0 * rows * w.n * w.k / rates[d] + overhead[d]

    tables = split_tables(workload, SplitPlatform(f"example{seed}", tuple(devices)), predict, cost_model="example")
    objectives = ("time", "energy") if rng.random() < 0.8 else ("time",)
    return SplitProblem(tables, objectives, memory=bool(rng.random() < 0.8), name=f"split_example_{seed}")


FAMILY = register_family(Family(
    name="split",
    problem_class=SplitProblem,
    build=_build,
    objectives=SPLIT_OBJECTIVES,
    default_objectives=SPLIT_OBJECTIVES,
    examples=example_problem,
    cost_model=lambda options: ("analytic", {}),
    limits=frozenset({"memory"}),
    metrics=(
        Metric("speedup", "speedup", "x", table=True,
               description="predicted time of the best single device / predicted time of the split"),
    ),
    gantt=True,
    description="POAS: one GEMM's rows split over CPU groups, CUDA and tensor cores (time vs energy)",
    resolve_platform=resolve_platform,
    resolve_workload=resolve_workload,
    cost_models={"analytic": AnalyticSplitModel, "calibrated": CalibratedSplitModel},
))
