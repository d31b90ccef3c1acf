"""The ``serving`` family: LLM serving deployments, throughput against energy per token under SLOs.

Genome: ``pools`` (K) pools of 8 genes each: GPU type, TP, PP (indices into the spec's lists), replicas
(0: the pool is unused), batch limit, role (both; prefill or decode where ``options.split``), clock and
precision. Each pool's option is a row of the :class:`~dse.mapping.serving.table.ServingTable`; a
population is scored by gathering rows (no loop per genome).

The request rate ``X`` (micro-requests/s) sums the replicas' rates of the pools that do both, plus the
smaller of the prefill pools' and the decode pools' rates. Objectives: ``throughput`` (output tokens/s
``= X x output_tokens``, held as ``bound - X``) and ``energy`` (J per output token: the deployment's
power over its token rate, every GPU counted busy at its clock's power). Constraints: pools use options
that can run (``options``), fit memory (``memory``) and meet the SLOs (``slo``); GPUs per type within
the fleet (``gpus``); power within the budget (``power``); a rate of at least the arrival rate, or
some throughput when offline (``serves``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from dse.cost import CostTables
from dse.errors import InfeasibleError, SpecError
from dse.inputs.builders.llm_memory import GIB, weight_bytes
from dse.mapping.base import DecodedMapping, Formulation, MappingProblem, Objective
from dse.mapping.constraints import Constraint, ModelContext
from dse.mapping.population import Population
from dse.mapping.registry import Family, Metric, ProblemInputs, register_family
from dse.mapping.serving.cpsat import build_serving_model
from dse.mapping.serving.inputs import (
    Fleet,
    ServingOptions,
    ServingWorkload,
    check_options,
    resolve_platform,
    resolve_workload,
)
from dse.mapping.serving.table import (
    MEMORY,
    OK,
    RATE_SCALE,
    STRUCTURE,
    TPOT,
    TTFT,
    ServingTable,
    table_from_times,
    tabulate,
)

SERVING_OBJECTIVES = ("throughput", "energy")
#: Objectives a spec may name: the two above and ``cost``, the price of the deployment's GPUs per hour.
SERVING_ALL_OBJECTIVES = (*SERVING_OBJECTIVES, "cost")
#: Genes per pool, in genome order.
POOL_GENES = ("gpu", "tp", "pp", "replicas", "batch", "role", "clock", "precision")
#: Columns of a pool's genes that index the table (all but replicas), in the table's order.
TABLE_GENES = (0, 1, 2, 4, 5, 6, 7)
#: Energy is held in micro-joules per output token: ``ceil(power_mw x ENERGY_SCALE / (X x output_tokens))``.
ENERGY_SCALE = 10**9


@dataclass(frozen=True)
class ServingCostTables(CostTables):
    """:class:`CostTables` with the family's inputs: ops ``prefill`` and ``decode``, one device per GPU type
    (the figures are the pool table's, built with the spec's search space)."""

    workload: ServingWorkload = field(default=None, kw_only=True)  # type: ignore[assignment]
    fleet: Fleet = field(default=None, kw_only=True)  # type: ignore[assignment]


def placeholder_tables(names: Sequence[str], mem_gib: Sequence[float] | np.ndarray, idle_w: Sequence[float],
                       workload: Any = None, fleet: Any = None) -> ServingCostTables:
    """The engine's generic view of a serving problem: two ops on the fleet's GPU types, no costs."""
    n = len(names)
    zeros = np.zeros((2, n), dtype=np.int64)
    return ServingCostTables(
        op_names=("prefill", "decode"), device_names=tuple(names), time=zeros, energy=zeros.copy(),
        mem=zeros.copy(), allowed=np.ones((2, n), dtype=bool), edges=np.zeros((0, 2), dtype=np.int64),
        edge_bytes=np.zeros(0, dtype=np.int64), transfer_time=np.zeros((0, n, n), dtype=np.int64),
        transfer_energy=np.zeros((0, n, n), dtype=np.int64),
        idle_power_mw=np.array([int(round(w * 1e3)) for w in idle_w], dtype=np.int64),
        mem_capacity=np.array([int(m * GIB) for m in mem_gib], dtype=np.int64),
        device_kinds=("gpu",) * n, op_classes=("gemm", "gemm"), workload=workload, fleet=fleet)


class ServingCostModel:
    """The family's cost model: the fleet and workload carried in the tables (the pool table is built with
    the spec's options by the family, :func:`~dse.mapping.serving.table.tabulate`)."""

    def tables(self, workload: ServingWorkload, platform: Fleet) -> ServingCostTables:
        if not isinstance(workload, ServingWorkload) or not isinstance(platform, Fleet):
            raise SpecError("problem", "cost_model", "serving", "takes a serving workload and fleet")
        return placeholder_tables(platform.names, [g.device.mem_gib for g in platform.gpus],
                                  [g.device.idle_w for g in platform.gpus], workload, platform)


# --------------------------------------------------------------------------- constraints


class _PoolConstraint(Constraint):
    """A constraint the exact model meets by construction (:mod:`dse.mapping.serving.cpsat` gives no
    variable to an option that breaks it, or adds its linear row itself)."""

    def add_to_model(self, ctx: ModelContext) -> None:
        """Nothing to add: ``build_serving_model`` models it (see the class docstring)."""


class MaskedOptions(_PoolConstraint):
    """Pools with replicas use options of one mask reason (``code``): the count of such pools."""

    code: ClassVar[int]
    unit: ClassVar[str] = "pools"
    relative: ClassVar[bool] = False

    def violation(self, population: Population) -> np.ndarray:
        return (population.values["reason"] == self.code).sum(axis=1).astype(float)


class RunnableOptions(MaskedOptions):
    code, name, description = STRUCTURE, "options", "pools use options that can run"


class MemoryFits(MaskedOptions):
    code, name, description = MEMORY, "memory", "weights, KV cache, activations and reserve fit each GPU"


class TtftSlo(MaskedOptions):
    code, name, description = TTFT, "ttft", "the prefill meets the TTFT SLO"


class TpotSlo(MaskedOptions):
    code, name, description = TPOT, "tpot", "the decode step meets the TPOT SLO"


@dataclass(frozen=True, eq=False)
class GpuCounts(_PoolConstraint):
    """GPUs per type within the fleet's counts (and the fleet limit): the largest share over."""

    counts: np.ndarray
    max_gpus: int | None
    name: ClassVar[str] = "gpus"
    unit: ClassVar[str] = "fraction over the count"
    description: ClassVar[str] = "GPUs per type <= the fleet's count"

    def violation(self, population: Population) -> np.ndarray:
        used = population.values["gpus_by_type"]
        over = ((used - self.counts) / self.counts).max(axis=1)
        if self.max_gpus is not None:
            over = np.maximum(over, (used.sum(axis=1) - self.max_gpus) / self.max_gpus)
        return over


@dataclass(frozen=True, eq=False)
class PowerBudget(_PoolConstraint):
    """The deployment's power within the budget (mW)."""

    budget_mw: int
    name: ClassVar[str] = "power"
    unit: ClassVar[str] = "fraction over the budget"
    description: ClassVar[str] = "power of every GPU at its clock <= the budget"

    @property
    def limit(self) -> float:
        return float(self.budget_mw)

    def violation(self, population: Population) -> np.ndarray:
        return (population.values["power_mw"] - self.budget_mw) / self.budget_mw


@dataclass(frozen=True, eq=False)
class Serves(_PoolConstraint):
    """A request rate of at least ``needed`` micro-requests/s (the arrival rate, or 1 when offline)."""

    needed: int
    name: ClassVar[str] = "serves"
    unit: ClassVar[str] = "fraction short of the rate"
    description: ClassVar[str] = "request rate >= the arrival rate (offline: some throughput)"

    def violation(self, population: Population) -> np.ndarray:
        return (self.needed - population.values["rate"]) / self.needed


# --------------------------------------------------------------------------- decoded mapping


@dataclass(frozen=True)
class ServingMapping(DecodedMapping):
    """One deployment: its pools (label, replicas, figures), throughput, energy and power."""

    pools: tuple[dict[str, Any], ...]
    tokens_per_s: float
    joules_per_token: float
    power_w: float
    gpus: int
    quantities: dict[str, int]
    roles: dict[str, str]
    constraint_slack: dict[str, float] = field(default_factory=dict)
    schedule: tuple[tuple[str, str, int, int], ...] = ()

    def values(self) -> dict[str, int]:
        return dict(self.quantities)

    def assignment(self) -> dict[str, str]:
        return dict(self.roles)

    def explain(self) -> str:
        lines = [f"{self.tokens_per_s:.6g} output tokens/s, {self.joules_per_token:.4g} J/token, "
                 f"{self.power_w:.6g} W on {self.gpus} GPUs"]
        for p in self.pools:
            mem = p["memory_gib"]
            lines.append(f"  {p['replicas']} x {p['option']}: {p['requests_per_s']:.4g} req/s, TTFT "
                         f"{p['ttft_ms']:.4g} ms, TPOT {p['tpot_ms']:.4g} ms, per GPU {sum(mem):.3g} GiB (weights "
                         f"{mem[0]:.3g}, KV {mem[1]:.3g}, activations {mem[2]:.3g}, reserve {mem[3]:.3g}); "
                         f"{p['status']}")
        lines += [f"  {name}: slack {slack:.4g}" for name, slack in self.constraint_slack.items()]
        return "\n".join(lines)


# --------------------------------------------------------------------------- problem


def _objective(name: str, table: ServingTable) -> Objective:
    if name == "throughput":
        bound, o_len = table.rate_bound, table.output_tokens
        return Objective("throughput", "tokens/s", "max", "throughput", "bound - micro-requests/s",
                         lambda v: (bound - np.asarray(v, dtype=float)) * o_len / RATE_SCALE)
    if name == "energy":
        return Objective("energy", "J/token", "min", "energy", "uJ/token", lambda v: np.asarray(v, dtype=float) * 1e-6)
    if name == "cost":  # the fleet's price per GPU-hour (1 each when it gives none: GPU-hours per hour)
        return Objective("cost", "price/h", "min", "cost", "thousandths of price/h",
                         lambda v: np.asarray(v, dtype=float) * 1e-3)
    raise SpecError("problem", "objectives", name, f"serving objectives are {', '.join(SERVING_ALL_OBJECTIVES)}")


class ServingProblem(MappingProblem):
    """Up to ``table.pools`` pools of serving replicas; raises :class:`SpecError` for an unknown objective."""

    family = "serving"

    def __init__(self, table: ServingTable, objectives: Sequence[str] = SERVING_OBJECTIVES, *,
                 power_cap_mw: int | None = None, tables: CostTables | None = None, name: str = "serving") -> None:
        self.name, self.table, self.power_cap_mw = name, table, power_cap_mw
        self.tables = tables if tables is not None else placeholder_tables(
            table.gpu_names, table.mem_capacity, [0.0] * len(table.gpu_names))
        self.objectives = tuple(_objective(o, table) for o in objectives)
        if not self.objectives:
            raise SpecError("problem", "objectives", list(objectives), "give some of throughput, energy, cost")
        rate = table.arrival_rate
        self.rate_needed = max(1, int(np.ceil(rate * RATE_SCALE - 1e-6))) if rate else 1
        self.energy_scale = ENERGY_SCALE
        cons: list[Constraint] = [
            RunnableOptions(), MemoryFits(), TtftSlo(), TpotSlo(),
            GpuCounts(table.counts, table.max_gpus)]
        if power_cap_mw is not None:
            cons.append(PowerBudget(power_cap_mw))
        cons.append(Serves(self.rate_needed))
        self.constraints = tuple(cons)

    @cached_property
    def power_bound(self) -> int:
        """No deployment within the GPU counts draws more (mW)."""
        t = self.table
        per_gpu = np.zeros(len(t.counts))
        np.maximum.at(per_gpu, t.gpu, t.power_mw / t.gpus)
        return int(np.ceil((per_gpu * t.counts).sum())) + 1

    @cached_property
    def energy_cap(self) -> int:
        """The energy value of a deployment that serves nothing, above every other's (uJ/token)."""
        return -(-self.power_bound * self.energy_scale // (self.table.output_tokens * self.rate_needed)) + 1

    # ------------------------------------------------------------------ genome
    @property
    def gene_names(self) -> tuple[str, ...]:
        return tuple(f"pool{k}.{g}" for k in range(self.table.pools) for g in POOL_GENES)

    @cached_property
    def _upper(self) -> np.ndarray:
        t = self.table
        shape = t.shape
        pool = [shape[0] - 1, shape[1] - 1, shape[2] - 1, t.replica_limit, shape[3] - 1, shape[4] - 1, shape[5] - 1,
                shape[6] - 1]
        return np.tile(np.array(pool, dtype=np.int64), t.pools)

    @property
    def lower(self) -> np.ndarray:
        return np.zeros(self.n_genes, dtype=np.int64)

    @property
    def upper(self) -> np.ndarray:
        return self._upper

    def pool_options(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(option, replicas)``, each (pop, pools), of genomes ``X`` (pop, n_genes)."""
        G = X.reshape(len(X), self.table.pools, len(POOL_GENES))
        return self.table.index(G[..., list(TABLE_GENES)]), G[..., 3]

    def genome_of(self, chosen: Sequence[tuple[int, int]]) -> np.ndarray:
        """The genome of ``(option, replicas)`` pairs, one pool each, the other pools unused (zeros)."""
        genome = np.zeros((self.table.pools, len(POOL_GENES)), dtype=np.int64)
        for k, (option, replicas) in enumerate(chosen):
            genes = self.table.genes(option)
            genome[k, list(TABLE_GENES)] = genes
            genome[k, 3] = replicas
        return genome.ravel()

    def option_replicas(self, genome: np.ndarray) -> dict[int, int]:
        """Replicas per option of one genome (pools of one option summed)."""
        options, replicas = self.pool_options(self.checked_genomes(genome))
        out: dict[int, int] = {}
        for o, r in zip(options[0].tolist(), replicas[0].tolist(), strict=True):
            if r > 0:
                out[o] = out.get(o, 0) + r
        return out

    # ------------------------------------------------------------------ evaluation
    def kernel(self, X: np.ndarray, metrics: bool) -> Population:
        """Rate, throughput, energy, power and GPUs of a chunk of genomes, gathered from the table."""
        t = self.table
        option, replicas = self.pool_options(X)
        used = replicas > 0
        flow = replicas * t.rate[option]
        role = t.role[option]
        both = np.where(role == 0, flow, 0).sum(axis=1)
        pre = np.where(role == 1, flow, 0).sum(axis=1)
        dec = np.where(role == 2, flow, 0).sum(axis=1)
        rate = both + np.minimum(pre, dec)
        power = (replicas * t.power_mw[option]).sum(axis=1)
        gpus = replicas * t.gpus[option]
        by_type = np.stack([np.where(t.gpu[option] == g, gpus, 0).sum(axis=1) for g in range(len(t.counts))], axis=1)
        tokens = rate * t.output_tokens
        energy = np.where(rate > 0, -(-power * self.energy_scale // np.maximum(tokens, 1)), self.energy_cap)
        P = Population(self.flat, np.zeros((2, len(X)), dtype=np.int64))
        P.values.update(rate=rate, throughput=t.rate_bound - rate, energy=energy.astype(np.int64), power_mw=power,
                        cost=(replicas * t.cost_milli[option]).sum(axis=1),
                        gpus_by_type=by_type, reason=np.where(used, t.reason[option], OK))
        if metrics:
            P.values.update(gpus=gpus.sum(axis=1))
        return P

    # ------------------------------------------------------------------ decoding
    def decode(self, x: np.ndarray) -> ServingMapping:
        x = self.checked_genomes(x)[0]
        ev = self.evaluate(x[None, :], metrics=True)
        t, m = self.table, ev.metrics
        option, replicas = self.pool_options(x[None, :])
        pools: list[dict[str, Any]] = []
        roles: dict[str, list[str]] = {"prefill": [], "decode": []}
        for o, r in zip(option[0].tolist(), replicas[0].tolist(), strict=True):
            if r <= 0:
                continue
            name = t.gpu_names[t.gpu[o]]
            for phase in ("prefill", "decode"):
                if t.roles[t.role[o]] in ("both", phase):
                    roles[phase].append(name)
            pools.append({"option": t.label(o), "replicas": r, "requests_per_s": r * t.rate[o] / RATE_SCALE,
                          "ttft_ms": t.ttft_s[o] * 1e3, "tpot_ms": t.tpot_s[o] * 1e3,
                          "memory_gib": tuple(float(v) / GIB for v in t.memory[o]),
                          "status": "usable" if t.reason[o] == OK else f"breaks {REASON_NAMES[int(t.reason[o])]}"})
        quantities = {"throughput": int(m["throughput"][0]), "energy": int(m["energy"][0]), "cost": int(m["cost"][0])}
        return ServingMapping(
            pools=tuple(pools), tokens_per_s=float(m["rate"][0]) * t.output_tokens / RATE_SCALE,
            joules_per_token=int(m["energy"][0]) * 1e-6, power_w=int(m["power_mw"][0]) * 1e-3,
            gpus=int(m["gpus"][0]), quantities=quantities,
            roles={k: "+".join(dict.fromkeys(v)) or "(none)" for k, v in roles.items()},
            constraint_slack=self.slack(ev.G[0]))

    def describe(self, genome: Sequence[int]) -> str:
        """``2 x h100_sxm tp4 pp1 b64 both 100% fp8 | ...`` (``unused`` when no pool has replicas)."""
        x = self.checked_genomes(genome)
        option, replicas = self.pool_options(x)
        parts = [f"{r} x {self.table.label(o)}" for o, r in zip(option[0].tolist(), replicas[0].tolist(), strict=True)
                 if r > 0]
        return " | ".join(parts) or "unused"

    # ------------------------------------------------------------------ exact model, references, checks
    def objective_lower_bounds(self, at_most: Sequence[int | None] | None = None) -> tuple[float, ...]:
        """Internal throughput is the table's rate bound minus the deployment's rate, and that bound is one
        more than the most any deployment can serve (:attr:`ServingTable.rate_bound`): every mapping's value
        is at least 1; energy (and cost) at least 0. A box whose throughput limit is below 1 holds nothing."""
        bounds = tuple(1.0 if o.name == "throughput" else 0.0 for o in self.objectives)
        if at_most is not None and any(a is not None and b > a for a, b in zip(at_most, bounds, strict=True)):
            return tuple(math.inf for _ in self.objectives)
        return bounds

    def cpsat(self, include: Sequence[str] | None = None, seeds: Sequence[np.ndarray] = (),
              deadline: float | None = None) -> Formulation:
        """The exact model over the option table (:mod:`dse.mapping.serving.cpsat`); every constraint is
        modelled whatever ``include`` names (the options that break one have no variables)."""
        return build_serving_model(self, deadline)

    def baselines(self) -> dict[str, np.ndarray]:
        """Per GPU type, its usable option of the highest rate per GPU, with every GPU of the type."""
        t = self.table
        out = {}
        for g, name in enumerate(t.gpu_names):
            mine = np.flatnonzero(t.usable & (t.gpu == g) & (t.max_replicas > 0))
            if len(mine):
                best = int(mine[np.argmax(t.rate[mine] / t.gpus[mine])])
                out[f"all {name}"] = self.genome_of([(best, int(t.max_replicas[best]))])
        return out

    def check_feasible(self) -> None:
        """:class:`InfeasibleError` naming the limit that no deployment meets, and by how much."""
        raise_if_infeasible(self)


REASON_NAMES = ("ok", "options", "memory", "ttft", "tpot")


def _cheapest(t: ServingTable, candidates: np.ndarray, key: np.ndarray) -> int:
    return int(candidates[np.argmin(key[candidates])])


def raise_if_infeasible(problem: ServingProblem) -> None:
    """Raise :class:`InfeasibleError` when no option can be used (saying whether memory, the TTFT or the TPOT
    SLO binds, and by how much at the closest option), when the power budget is below every replica's
    power, or when the arrival rate exceeds a bound on the fleet's rate."""
    t = problem.table
    runs = np.flatnonzero(t.reason != STRUCTURE)
    if not len(runs):
        raise InfeasibleError("options: no pool option can run (each TP must divide the heads and MLP width, "
                              "PP the layers, TP x PP GPUs must be in the fleet, the GPU must have a peak for "
                              "the precision, the batch limit must be at least PP)")
    fits = runs[t.reason[runs] != MEMORY]
    if not len(fits):
        capacity = t.mem_capacity[t.gpu[runs]] * GIB
        o = _cheapest(t, runs, t.memory.sum(axis=1) / np.maximum(capacity, 1))
        need, cap = t.memory[o].sum(), t.mem_capacity[t.gpu[o]] * GIB
        largest = float(t.mem_capacity.max())
        spec = getattr(problem, "spec", None)
        whole = ""
        if spec is not None:
            precision = t.precisions[t.genes(o)[6]]
            full = weight_bytes(spec.workload.config, precision) / 1e9
            whole = (f"{spec.workload.config.name} needs {full:.4g} GB of weights at {precision.upper()} and the "
                     f"largest fleet GPU holds {largest * GIB / 1e9:.4g} GB; ")
        raise InfeasibleError(f"memory: {whole}the closest option, {t.label(o)}, needs {need / GIB:.4g} GiB per GPU "
                              f"(weights {t.memory[o, 0] / GIB:.4g}, KV {t.memory[o, 1] / GIB:.4g}, reserve "
                              f"{t.memory[o, 3] / GIB:.4g}) of its {cap / GIB:.4g} GiB: {(need - cap) / GIB:.4g} GiB over")
    wl = getattr(getattr(problem, "spec", None), "workload", None)
    for code, times, slo_name, what in ((TTFT, t.ttft_s, "ttft_ms", "prefill"), (TPOT, t.tpot_s, "tpot_ms", "decode step")):
        if not (t.reason[fits] == OK).any() and (t.reason[fits] == code).any():
            mine = fits[np.isfinite(times[fits])]
            o = _cheapest(t, mine, times)
            slo = getattr(wl, slo_name, None)
            limit = f"{slo:.4g} ms" if slo is not None else "the SLO"
            raise InfeasibleError(f"slo: the {slo_name[:4].upper()} SLO of {limit} is below the fastest {what}, "
                                  f"{times[o] * 1e3:.4g} ms ({t.label(o)})")
    usable = np.flatnonzero(t.usable & (t.max_replicas > 0))
    if not len(usable):
        raise InfeasibleError("slo: no option meets both SLOs with the memory it needs")
    if problem.power_cap_mw is not None and t.power_mw[usable].min() > problem.power_cap_mw:
        o = _cheapest(t, usable, t.power_mw)
        raise InfeasibleError(f"power: the budget of {problem.power_cap_mw / 1e3:.6g} W is below the smallest replica's "
                              f"{t.power_mw[o] / 1e3:.6g} W ({t.label(o)}): {(t.power_mw[o] - problem.power_cap_mw) / 1e3:.6g}"
                              " W over")
    per_gpu = np.zeros(len(t.counts))
    np.maximum.at(per_gpu, t.gpu[usable], t.rate[usable] / t.gpus[usable])
    most = float((per_gpu * t.counts).sum())
    if problem.rate_needed > most:
        raise InfeasibleError(f"serves: the arrival rate of {problem.rate_needed / RATE_SCALE:.6g} requests/s exceeds "
                              f"the {most / RATE_SCALE:.6g} requests/s every GPU of the fleet could serve at its best "
                              f"option's rate per GPU, by {(problem.rate_needed - most) / RATE_SCALE:.6g}")


# --------------------------------------------------------------------------- registry entry


def _build(inputs: ProblemInputs) -> ServingProblem:
    tables = inputs.tables
    if not isinstance(tables, ServingCostTables) or tables.workload is None:
        raise SpecError("problem", "cost_model", type(tables).__name__, "the serving family needs its own cost model")
    options = inputs.options if isinstance(inputs.options, ServingOptions) else ServingOptions(**dict(inputs.options))
    check_options(options)
    table = tabulate(tables.workload, tables.fleet, options)
    return ServingProblem(table, inputs.objectives, power_cap_mw=inputs.power_cap_mw, tables=tables, name=inputs.name)


def example_problem(seed: int) -> ServingProblem:
    """A small seeded instance from synthetic stage times: one or two GPU types of 2 to 4 GPUs, TP 1 or 2,
    two batch limits, two clocks, split roles half the time, 2 pools; memory, an SLO or a power budget
    sometimes binding."""
    rng = np.random.default_rng(42_000 + seed)
    n_gpu = int(rng.integers(1, 3))
    split = bool(rng.random() < 0.5)
    options = ServingOptions(pools=2, tp=[1, 2], pp=[1], batch=[4, 16], precisions=["fp16"], clocks=[1.0, 0.7],
                             split=split)
    roles = 3 if split else 1
    shape = (n_gpu, 2, 1, 2, roles, 2, 1)
    g, t, _, b, _, c, _ = np.indices(shape)
    speed = rng.uniform(0.5, 2.0, n_gpu)[g]
    tp = np.array([1, 2])[t]
    clock = np.array([1.0, 0.7])[c]
    batch = np.array([4, 16])[b]
    s_pf = 0.05 / speed / tp / clock
    s_dec = (0.004 + 0.0004 * batch / clock) / speed / tp
    watts = rng.uniform(100, 500, n_gpu)[g] * clock**2.4
    mem_gib = rng.choice([16.0, 40.0, 80.0], n_gpu)
    memory = np.zeros((*shape, 4))
    memory[..., 0] = 28 * GIB / tp
    memory[..., 1] = 0.5 * GIB * batch
    counts = rng.integers(2, 5, n_gpu)
    ttft = float(rng.choice([1e6, 60.0])) if rng.random() < 0.3 else None
    table = table_from_times([f"gpu{i}" for i in range(n_gpu)], counts, mem_gib, options, 32,
                             float(rng.choice([0.5, 2.0])) if rng.random() < 0.2 else None, s_pf, s_dec, watts,
                             memory, np.ones(shape, dtype=bool), ttft_ms=ttft)
    power = int(rng.integers(300, 1500)) * 1000 if rng.random() < 0.3 else None
    objectives = SERVING_OBJECTIVES if rng.random() < 0.8 else ("throughput",)
    if rng.random() < 0.25:  # drawn last: the instances of earlier seeds keep their other draws
        objectives = (*objectives, "cost")
        table = replace(table, price_milli=rng.integers(500, 4000, n_gpu))
    return ServingProblem(table, objectives, power_cap_mw=power, name=f"serving_example_{seed}")


FAMILY = register_family(Family(
    name="serving",
    problem_class=ServingProblem,
    build=_build,
    objectives=SERVING_ALL_OBJECTIVES,
    default_objectives=SERVING_OBJECTIVES,
    examples=example_problem,
    options=ServingOptions,
    cost_model=lambda options: ("serving", {}),
    limits=frozenset({"power", "memory"}),
    metrics=(Metric("gpus", "gpus", "count", table=True, description="GPUs of the deployment"),
             Metric("power_mw", "power", "W", factor=lambda tables: 1e-3, table=True,
                    description="power of every GPU of the deployment at its clock")),
    description="LLM serving: pools of GPUs (type, TP, PP, replicas, batch, role, clock, precision), "
                "throughput vs energy per token under SLOs, memory and power",
    resolve_platform=resolve_platform,
    resolve_workload=resolve_workload,
    cost_models={"serving": ServingCostModel},
))
