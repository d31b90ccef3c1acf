"""The ``multimodel`` family (DREAM): real-time multi-model scheduling on a multi-accelerator system.

Ops are ``(model, layer block)`` pairs, devices the accelerators (:class:`~dse.cost.accelerator.MultiModelTables`).
The genome is an accelerator per op followed by a priority per model (0 = highest); a genome is
scored by simulating the scenario with the ``mapped`` scheduler (:mod:`dse.sim.schedulers`)
for ``options.search_duration_s`` seconds. Objectives: ``uxcost`` (against FCFS on the same
scenario and system) and ``energy`` (J over the run). No exact formulation: solve with NSGA-II.

The spec's ``scenario`` (:class:`ScenarioSettings`) sets the models joining and leaving; ``dse simulate``
runs it under every scheduler (:mod:`dse.runtime.xr_scenario`, which gives the family its scenario).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dse.cost import CostTables
from dse.cost.accelerator import AcceleratorCostModel, MultiModelTables
from dse.errors import SpecError
from dse.mapping.base import Breakdown, DecodedMapping, DeviceCost, MappingProblem, Objective
from dse.mapping.multimodel.inputs import resolve_scenario, resolve_system
from dse.mapping.population import Population
from dse.mapping.registry import Family, Metric, ProblemInputs, register_family
from dse.model.accelerators import Accelerator, Layer, Model, Scenario, System
from dse.sim.realtime import SimResult, SimSetup, setup, simulate
from dse.sim.schedulers import FCFS, SCHEDULERS, Mapped, herald_assignment, static_partition

MULTIMODEL_OBJECTIVES = ("uxcost", "energy")
#: Internal UXCost unit: millionths.
UX_SCALE = 1_000_000


class MultiModelOptions(BaseModel):
    """Family options: simulated seconds per scored genome, priority levels, the scenario seed of the search."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    search_duration_s: float = Field(default=1.0, gt=0, le=3600, allow_inf_nan=False)
    priority_levels: int = Field(default=4, ge=1, le=64)
    seed: int = Field(default=0, ge=0, le=2**31 - 1)


class TimelineEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    join_s: float = Field(default=0.0, ge=0, le=1e6, allow_inf_nan=False)
    leave_s: float | None = Field(default=None, gt=0, le=1e6, allow_inf_nan=False)


class ScenarioSettings(BaseModel):
    """The spec's ``scenario``: seconds of frame arrivals, schedulers to compare, models joining and leaving."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    duration_s: float = Field(default=10.0, gt=0, le=3600, allow_inf_nan=False)
    schedulers: list[str] = Field(default_factory=lambda: list(SCHEDULERS), min_length=1)
    timeline: list[TimelineEntry] = Field(default_factory=list)
    seed: int | None = Field(default=None, ge=0, le=2**31 - 1)
    plot_window_s: float = Field(default=1.0, gt=0, le=3600, allow_inf_nan=False)


def apply_timeline(scenario: Scenario, settings: ScenarioSettings | None, source: str) -> Scenario:
    """``scenario`` with the settings' joins and leaves; SpecError for an unknown model or leave before join."""
    if settings is None or not settings.timeline:
        return scenario
    names = [m.name for m in scenario.models]
    changes: dict[str, tuple[float, float | None]] = {}
    for i, entry in enumerate(settings.timeline):
        if entry.model not in names:
            raise SpecError(source, f"scenario.timeline[{i}].model", entry.model,
                            f"unknown model; models: {', '.join(names)}")
        if entry.leave_s is not None and entry.leave_s <= entry.join_s:
            raise SpecError(source, f"scenario.timeline[{i}].leave_s", entry.leave_s,
                            f"must be after join_s = {entry.join_s}")
        changes[entry.model] = (entry.join_s, entry.leave_s)
    return scenario.with_timeline(changes)


def _objective(name: str) -> Objective:
    if name == "uxcost":
        return Objective("uxcost", "x", "min", "uxcost", "1e-6", lambda v: np.asarray(v, dtype=float) / UX_SCALE)
    if name == "energy":
        return Objective("energy", "J", "min", "energy", "pJ", lambda v: np.asarray(v, dtype=float) * 1e-12)
    raise SpecError("problem", "objectives", name, f"multimodel objectives are {', '.join(MULTIMODEL_OBJECTIVES)}")


@dataclass(frozen=True)
class MultiModelMapping(DecodedMapping):
    """One decoded genome: the accelerator of every block, model priorities and the simulated outcome."""

    device_of_op: dict[str, str]
    priority: dict[str, int]
    result: SimResult
    reference: SimResult
    uxcost: int
    model_names: tuple[str, ...]
    costs: Breakdown
    constraint_slack: dict[str, float] = field(default_factory=dict)
    schedule: list[tuple[str, str, int, int]] = field(default_factory=list)

    def assignment(self) -> dict[str, str]:
        return dict(self.device_of_op)

    def breakdown(self) -> Breakdown:
        return self.costs

    def values(self) -> dict[str, int]:
        return {"uxcost": self.uxcost, "energy": self.result.energy_pj}

    def explain(self) -> str:
        """The run's UXCost against FCFS, each accelerator's share (from :meth:`breakdown`) and each model's
        priority, blocks and missed frames."""
        r, ref, costs = self.result, self.reference, self.costs

        def joules(value: int) -> float:
            return costs.millijoules(value) * 1e-3

        lines = [f"UXCost {self.uxcost / UX_SCALE:.4g} (energy {r.energy_j:.4g} J vs FCFS {ref.energy_j:.4g} J; "
                 f"missed {r.missed} vs FCFS {ref.missed} of {int(r.frames.sum())} frames)",
                 f"energy over the {costs.display_time(r.horizon_ns):.4g} {costs.display_time_unit} run: "
                 f"blocks {joules(costs.dynamic_energy):.4g} J, idle {joules(costs.idle_energy):.4g} J"]
        for dev in costs.devices:
            lines.append(f"  {dev.name}: {dev.ops} blocks mapped, busy {costs.display_time(dev.busy):.4g} "
                         f"{costs.display_time_unit}, energy {joules(dev.dynamic_energy):.4g} J + idle "
                         f"{joules(dev.idle_energy):.4g} J")
        for m, name in enumerate(self.model_names):
            blocks = [dev for op, dev in self.device_of_op.items() if op.startswith(f"{name}/")]
            lines.append(f"  {name}: priority {self.priority[name]}, blocks on {', '.join(blocks)}; "
                         f"dropped {int(r.dropped[m])}/{int(r.frames[m])}, late {int(r.late[m])}")
        return "\n".join(lines)


class MultiModelProblem(MappingProblem):
    """Accelerator per (model, block) + priority per model, scored by simulating ``search_duration_s`` seconds."""

    family = "multimodel"
    tables: MultiModelTables
    memos = ("_cache",)

    def __init__(self, tables: MultiModelTables, objectives: Sequence[str] = ("uxcost", "energy"),
                 options: MultiModelOptions | None = None, name: str = "multimodel") -> None:
        if tables.scenario is None:
            raise SpecError("problem", "cost_model", "?", "the multimodel family needs the accelerator cost model")
        self.tables = tables
        self.name = name
        self.options = options or MultiModelOptions()
        self.objectives = tuple(_objective(o) for o in objectives)
        self.constraints = ()
        self.n_models = len(tables.scenario.models)
        self.chunk_size = 64

    @property
    def gene_names(self) -> tuple[str, ...]:
        return tuple(self.tables.op_names) + tuple(f"priority:{m.name}" for m in self._scenario.models)

    @property
    def lower(self) -> np.ndarray:
        return np.zeros(self.tables.n_ops + self.n_models, dtype=np.int64)

    @property
    def upper(self) -> np.ndarray:
        return np.array([self.tables.n_dev - 1] * self.tables.n_ops
                        + [self.options.priority_levels - 1] * self.n_models, dtype=np.int64)

    @cached_property
    def _scenario(self) -> Scenario:
        """The tables' scenario with the spec's timeline, when the problem came from a spec with one."""
        assert self.tables.scenario is not None
        spec = getattr(self, "spec", None)
        settings = getattr(spec, "scenario", None)
        return apply_timeline(self.tables.scenario, settings, getattr(spec, "source", "problem"))

    @cached_property
    def _setup(self) -> SimSetup:
        return setup(self.tables, self._scenario)

    @cached_property
    def reference(self) -> SimResult:
        """FCFS over the search window: the UXCost reference."""
        return simulate(self._setup, FCFS(), duration_s=self.options.search_duration_s, seed=self.options.seed)

    #: Simulated genomes remembered (a run is deterministic for a genome; NSGA-II re-proposes many).
    CACHE_SIZE = 20_000

    @cached_property
    def _cache(self) -> dict[bytes, SimResult]:
        return {}

    def run(self, x: np.ndarray, trace: bool = False) -> SimResult:
        """Simulate genome ``x`` over the search window (without ``trace``, remembered per genome)."""
        x = np.asarray(x, dtype=np.int64)
        key = x.tobytes()
        if not trace and key in self._cache:
            return self._cache[key]
        n = self.tables.n_ops
        result = simulate(self._setup, Mapped(x[:n].tolist(), x[n:].tolist()),
                          duration_s=self.options.search_duration_s, seed=self.options.seed, trace=trace)
        if not trace:
            if len(self._cache) >= self.CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = result
        return result

    def _ux(self, r: SimResult) -> int:
        ref = self.reference
        return int(round(UX_SCALE * (r.energy_pj / max(ref.energy_pj, 1)) * (r.missed + 1) / (ref.missed + 1)))

    def kernel(self, X: np.ndarray, metrics: bool) -> Population:
        n = self.tables.n_ops
        population = Population.from_genomes(self.flat, np.ascontiguousarray(X[:, :n]))
        results = [self.run(x) for x in X]
        population.values["uxcost"] = np.array([self._ux(r) for r in results], dtype=np.int64)
        population.values["energy"] = np.array([r.energy_pj for r in results], dtype=np.int64)
        if metrics:
            population.values["drop_rate"] = np.array(
                [round(UX_SCALE * r.dropped.sum() / max(int(r.frames.sum()), 1)) for r in results], dtype=np.int64)
            population.values["missed"] = np.array([r.missed for r in results], dtype=np.int64)
        return population

    def decode(self, x: np.ndarray) -> MultiModelMapping:
        x = self.checked_genomes(x)[0]
        n = self.tables.n_ops
        result = self.run(x)
        uxcost = self._ux(result)
        return MultiModelMapping(
            device_of_op={op: self.tables.device_names[int(d)] for op, d in zip(self.tables.op_names, x[:n], strict=True)},
            priority={m.name: int(p) for m, p in zip(self._scenario.models, x[n:], strict=True)},
            result=result, reference=self.reference, uxcost=uxcost,
            model_names=tuple(m.name for m in self._scenario.models),
            costs=self._breakdown(x[:n], result, uxcost))

    def _breakdown(self, devices: np.ndarray, result: SimResult, uxcost: int) -> Breakdown:
        """The simulated run's costs per accelerator: the blocks mapped to it (``devices``: the genome's
        accelerator genes), its busy time, what its executed blocks spent and its idle energy over the
        horizon, as the simulator booked them; no links, ops or transfers (a block runs once per frame: the
        simulated frames are the run's timeline)."""
        t = self.tables
        mapped = np.bincount(devices, minlength=t.n_dev)
        costs = tuple(DeviceCost(name, int(mapped[d]), int(result.busy_ns[d]), int(result.block_energy_pj[d]),
                                 int(result.acc_energy_pj[d] - result.block_energy_pj[d]))
                      for d, name in enumerate(t.device_names))
        return Breakdown(costs, (), (), (), {"uxcost": uxcost, "energy": result.energy_pj}, t.time_unit,
                         t.display_time_unit, t.display_per_time_unit, "run")

    def baselines(self) -> dict[str, np.ndarray]:
        """The static whole-model partition, Herald-style layer-block assignment and every accelerator alone
        (equal priorities)."""
        n, zeros = self.tables.n_ops, [0] * self.n_models
        per_model = static_partition(self._setup)
        out = {"static": np.array([per_model[m] for m in self.tables.model_of_op] + zeros, dtype=np.int64),
               "herald": np.array(herald_assignment(self._setup) + zeros, dtype=np.int64)}
        for d, name in enumerate(self.tables.device_names):
            out[f"all on {name}"] = np.array([d] * n + zeros, dtype=np.int64)
        return out


def _build(inputs: ProblemInputs) -> MultiModelProblem:
    if not isinstance(inputs.tables, MultiModelTables):
        raise SpecError("problem", "cost_model", "?", "the multimodel family needs the accelerator cost model")
    options = inputs.options if isinstance(inputs.options, MultiModelOptions) else MultiModelOptions()
    return MultiModelProblem(inputs.tables, inputs.objectives, options, inputs.name)


# --------------------------------------------------------------------------- examples and registry


def example_scenario(seed: int) -> tuple[Scenario, System]:
    """A small seeded scenario (2-3 models of 2-4 layers, one possibly triggered) on 2 accelerators."""
    rng = np.random.default_rng(20_000 + seed)
    models = []
    for m in range(int(rng.integers(2, 4))):
        layers = tuple(Layer(f"l{j}", str(rng.choice(["CONV", "DSCONV", "GEMM"])), 1, int(rng.choice([16, 32, 64])),
                             int(rng.choice([8, 16, 32])), int(rng.choice([8, 16, 28])), int(rng.choice([8, 16, 28])),
                             3, 3) for j in range(int(rng.integers(2, 5))))
        layers = tuple(la if la.type != "GEMM" else Layer(la.name, "GEMM", 1, la.k, la.c, la.y, 1, 1, 1) for la in layers)
        depends = "m0" if m == 2 and rng.random() < 0.5 else None
        models.append(Model(f"m{m}", float(rng.choice([30.0, 60.0, 120.0])), layers, depends,
                            0.5 if depends else 1.0))
    accs = (Accelerator("big", int(rng.choice([256, 512])), str(rng.choice(["ws", "os"])), 64.0, 16.0, 0.03, 0.3),
            Accelerator("little", 64, str(rng.choice(["ws", "rs"])), 32.0, 8.0, 0.005, 0.04))
    return Scenario(f"example{seed}", tuple(models)), System("pair", accs, 16.0)


def example_problem(seed: int) -> MultiModelProblem:
    """A small seeded instance scored over 0.05 s of frames (2 blocks per model)."""
    scenario, system = example_scenario(seed)
    tables = AcceleratorCostModel(blocks_per_model=2).tables(scenario, system)
    return MultiModelProblem(tables, ("uxcost", "energy"), MultiModelOptions(search_duration_s=0.05, priority_levels=2))


def _ppm_to_pct(tables: CostTables) -> float:
    return 1e-4


FAMILY = register_family(Family(
    name="multimodel",
    problem_class=MultiModelProblem,
    build=_build,
    objectives=MULTIMODEL_OBJECTIVES,
    default_objectives=("uxcost", "energy"),
    examples=example_problem,
    options=MultiModelOptions,
    cost_model=lambda options: ("accelerator", {}),
    limits=frozenset(),
    metrics=(
        Metric("drop_rate", "drop_rate", "pct", _ppm_to_pct, table=True, description="dropped / triggered frames"),
        Metric("missed", "missed", "frames", description="frames dropped or completed late"),
    ),
    gantt=False,
    description="DREAM: accelerator per (model, layer block) + model priorities, scored by simulation "
                "(UXCost vs energy)",
    resolve_platform=resolve_system,
    resolve_workload=resolve_scenario,
    cost_models={"accelerator": AcceleratorCostModel},
))
