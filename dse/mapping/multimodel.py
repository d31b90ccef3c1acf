"""The ``multimodel`` family (DREAM): real-time multi-model scheduling on a multi-accelerator system.

Ops are ``(model, layer block)`` pairs, devices the accelerators (:class:`~dse.accelerator_cost.MultiModelTables`).
The genome is an accelerator per op followed by a priority per model (0 = highest); a genome is
scored by simulating the scenario with the ``mapped`` scheduler (:mod:`dse.runtime.schedulers`)
for ``options.search_duration_s`` seconds. Objectives: ``uxcost`` (against FCFS on the same
scenario and system) and ``energy`` (J over the run). No exact formulation: solve with NSGA-II.

``dse simulate`` runs the spec's ``scenario`` under every scheduler and writes ``summary.csv``,
``trace.csv`` and ``timeline.png`` (see :func:`simulate_spec`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dse import catalog, figures  # figures.close is looked up at each call
from dse.accelerator_cost import PODS, AcceleratorCostModel, MultiModelTables
from dse.accelerators import (
    Accelerator,
    Layer,
    Model,
    Scenario,
    System,
    load_scenario,
    load_system,
    scenario_from_dict,
    system_from_dict,
)
from dse.cost import CostTables
from dse.errors import SpecError
from dse.files import clear_partial, mark_partial, replace_atomically
from dse.importers.maestro import read_maestro_hardware, read_maestro_network
from dse.interrupt import Interrupted, active_token
from dse.mapping.base import DecodedMapping, MappingProblem, Objective
from dse.mapping.population import Population
from dse.mapping.registry import Family, Metric, ProblemInputs, register_family
from dse.progress import Progress
from dse.runtime import xr_metrics
from dse.runtime.realtime import TRACE_COLUMNS, SimResult, SimSetup, setup, simulate
from dse.runtime.schedulers import (
    FCFS,
    SCHEDULERS,
    Mapped,
    herald_assignment,
    make_scheduler,
    static_partition,
)
from dse.runtime.ux_bound import UXBound, ux_bound

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
            raise SpecError(source, f"scenario.timeline[{i}].leave_s", entry.leave_s, f"must be after join_s = {entry.join_s}")
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
    constraint_slack: dict[str, float] = field(default_factory=dict)
    schedule: list[tuple[str, str, int, int]] = field(default_factory=list)

    def assignment(self) -> dict[str, str]:
        return dict(self.device_of_op)

    def values(self) -> dict[str, int]:
        return {"uxcost": self.uxcost, "energy": self.result.energy_pj}

    def explain(self) -> str:
        r, ref = self.result, self.reference
        lines = [f"UXCost {self.uxcost / UX_SCALE:.4g} (energy {r.energy_j:.4g} J vs FCFS {ref.energy_j:.4g} J; "
                 f"missed {r.missed} vs FCFS {ref.missed} of {int(r.frames.sum())} frames)"]
        for m, name in enumerate(self.model_names):
            blocks = [dev for op, dev in self.device_of_op.items() if op.startswith(f"{name}/")]
            lines.append(f"  {name}: priority {self.priority[name]}, blocks on {', '.join(blocks)}; "
                         f"dropped {int(r.dropped[m])}/{int(r.frames[m])}, late {int(r.late[m])}")
        return "\n".join(lines)


class MultiModelProblem(MappingProblem):
    """Accelerator per (model, block) + priority per model, scored by simulating ``search_duration_s`` seconds."""

    family = "multimodel"
    tables: MultiModelTables

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
        return MultiModelMapping(
            device_of_op={op: self.tables.device_names[int(d)] for op, d in zip(self.tables.op_names, x[:n], strict=True)},
            priority={m.name: int(p) for m, p in zip(self._scenario.models, x[n:], strict=True)},
            result=result, reference=self.reference, uxcost=self._ux(result),
            model_names=tuple(m.name for m in self._scenario.models))

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


# --------------------------------------------------------------------------- spec hooks


def _resolve(ref: Any, source: str, base: Path, kind: str) -> Any:

    field_name = "platform" if kind == "systems" else "workload"
    from_dict = system_from_dict if kind == "systems" else scenario_from_dict
    if isinstance(ref, Mapping):
        if "format" in ref:
            fmt = str(ref["format"]).lower()
            if fmt not in ("maestro", "yaml"):
                raise SpecError(source, f"{field_name}.format", ref["format"], "choose maestro or yaml")
            path = _find(str(ref.get("path", "")), source, base, kind, f"{field_name}.path")
            options = {k: v for k, v in ref.items() if k not in ("format", "path")}
            if fmt == "yaml":
                return (load_system if kind == "systems" else load_scenario)(path)
            if kind == "systems":
                try:
                    return read_maestro_hardware(path, **options)
                except TypeError as exc:
                    raise SpecError(source, field_name, dict(options), str(exc)) from None
            if options:
                raise SpecError(source, f"{field_name}.{next(iter(options))}", next(iter(options.values())),
                                "the maestro network reader takes no options")
            return read_maestro_network(path)
        return from_dict(dict(ref), f"{source} ({field_name})")
    path = _find(str(ref), source, base, kind, field_name)
    if path.suffix == ".m":
        return read_maestro_hardware(path) if kind == "systems" else read_maestro_network(path)
    return load_system(path) if kind == "systems" else load_scenario(path)


def _find(ref: str, source: str, base: Path, kind: str, field_name: str) -> Path:
    found = catalog.find(kind, ref, base) if ref else None
    if found is None:
        names = catalog.systems() if kind == "systems" else catalog.scenarios()
        raise SpecError(source, field_name, ref, f"no such file or catalog {kind[:-1]}; catalog {kind}: "
                        + (", ".join(names) or "none"))
    return found


def resolve_system(ref: Any, source: str, base: Path) -> System:
    """The spec's ``platform``: a catalog system, a ``.yaml``/``.m`` path, ``{format: maestro, path, dataflow}``
    or an inline mapping."""
    return _resolve(ref, source, Path(base), "systems")


def resolve_scenario(ref: Any, source: str, base: Path) -> Scenario:
    """The spec's ``workload``: a catalog scenario, a ``.yaml``/``.m`` path, ``{format: maestro, path}`` or inline."""
    return _resolve(ref, source, Path(base), "scenarios")


def floor_note(bound: UXBound, ref: SimResult) -> str:
    """One line on ``bound`` as a UXCost against ``ref``."""
    n = bound.forced_misses
    forced = f"the {n} frame{'s' * (n != 1)} that cannot make {'their deadlines' if n != 1 else 'its deadline'} even alone"
    if math.isinf(bound.energy_all_kept_pj):
        return ("floor: the frames do not fit in the accelerators' time, so every schedule misses "
                + (f"more than {forced}" if n else "some"))
    return (f"floor: no schedule on whole accelerators goes below UXCost "
            f"{bound.uxcost_kept(ref.energy_j, ref.missed):.5g} while missing " + (f"only {forced}" if n else "no frame"))


def simulate_spec(spec: Any, out: Path | None, *, seed: int, quiet: bool) -> Any:
    """``dse simulate``: every scheduler of ``spec.scenario`` on its scenario and system.

    Writes ``summary.csv`` (``scheduler, uxcost, edp, energy_j, drop_rate, xrbench_score``), ``trace.csv`` and
    ``timeline.png`` into ``out`` when given; returns the summary DataFrame, whose ``attrs["notes"]`` holds
    one line on the UXCost floor of the run (:mod:`dse.runtime.ux_bound`). Raises SpecError for an
    unknown scheduler or model.
    """
    import pandas as pd


    settings = spec.scenario if isinstance(spec.scenario, ScenarioSettings) else ScenarioSettings()
    for i, name in enumerate(settings.schedulers):
        if name not in SCHEDULERS:
            raise SpecError(spec.source, f"scenario.schedulers[{i}]", name, f"known schedulers: {', '.join(SCHEDULERS)}")
    scenario = apply_timeline(spec.workload, settings, spec.source)
    tables = spec.cost_model.tables(scenario, spec.platform)
    sim = setup(tables, scenario)
    seed = settings.seed if settings.seed is not None else seed
    progress = Progress("simulate", enabled=None if not quiet else False)
    names = ["fcfs"] + [s for s in settings.schedulers if s != "fcfs"]
    results = {}
    stop: Interrupted | None = None
    for k, name in enumerate(names):
        progress.update(f"{name} ({k + 1}/{len(names)})", force=True)
        try:
            results[name] = simulate(sim, make_scheduler(name), duration_s=settings.duration_s, seed=seed,
                                     trace=True, stoppable=True)
        except Interrupted as exc:  # keep the schedulers that finished (fcfs, the reference, runs first)
            stop = exc
            break
    if stop is not None and "fcfs" not in results:
        raise stop.noted("no scheduler had finished (fcfs, the reference, runs first); nothing written")
    finished = [name for name in settings.schedulers if name in results]
    trace = pd.DataFrame([row for r in results.values() for row in r.rows], columns=list(_trace_columns()))
    frames = xr_metrics.frame_table(trace)
    ref = results["fcfs"]
    rows = []
    for name in finished:
        r = results[name]
        mine = frames[frames["scheduler"] == name]
        rows.append({"scheduler": name,
                     "uxcost": xr_metrics.uxcost(r.energy_j, r.missed, ref.energy_j, ref.missed),
                     "edp": xr_metrics.edp(r.energy_j, mine),
                     "energy_j": r.energy_j,
                     "drop_rate": float(r.dropped.sum() / max(int(r.frames.sum()), 1)),
                     "xrbench_score": xr_metrics.xrbench_score(mine)})
    summary = pd.DataFrame(rows, columns=["scheduler", "uxcost", "edp", "energy_j", "drop_rate", "xrbench_score"])
    summary.attrs["notes"] = [floor_note(ux_bound(sim, settings.duration_s, seed), ref)]
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        shown = trace[trace["scheduler"].isin(finished)]
        replace_atomically(out / "summary.csv", lambda tmp: summary.to_csv(tmp, index=False))
        replace_atomically(out / "trace.csv", lambda tmp: shown.to_csv(tmp, index=False))
        token = active_token()
        if stop is None and token is not None and token.stopped:  # stopped as the last scheduler ended
            stop = Interrupted(token.signum)
        if stop is None:  # the plot takes seconds: a stopped run leaves it out
            replace_atomically(out / "timeline.png", lambda tmp: plot_timeline(
                shown, tables.device_names, [m.name for m in scenario.models], Path(tmp),
                window_ms=settings.plot_window_s * 1e3))
        if stop is None:
            clear_partial(out)
    if stop is not None:
        missing = [name for name in settings.schedulers if name not in results]
        where = "no --out: nothing written"
        if out is not None:
            mark_partial(out, {"signal": stop.signum, "schedulers_finished": finished, "schedulers_missing": missing,
                               "timeline_png": "not drawn"})
            where = f"written to {out} (partial, see {out}/partial.json)"
        raise stop.noted(f"{len(finished)} of {len(settings.schedulers)} schedulers finished "
                         f"({', '.join(finished) or 'only the fcfs reference'}); {where}")
    return summary


def _trace_columns() -> tuple[str, ...]:

    return TRACE_COLUMNS


def plot_timeline(trace: Any, accelerators: Sequence[str], models: Sequence[str], path: Path,
                  window_ms: float = 1000.0) -> None:
    """``timeline.png``: one panel per scheduler, one row per accelerator, blocks colored by model, drops as x."""
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle


    schedulers = list(dict.fromkeys(trace["scheduler"]))
    height = 1.0 + 0.55 * (len(accelerators) + 1) * len(schedulers)
    fig, axes = figures.new_figure(len(schedulers), 1, figsize=(11, height), squeeze=False, sharex=True)
    colors = {m: colormaps["tab10"](k % 10) for k, m in enumerate(models)}
    shown = trace[trace["start_ms"] < window_ms]
    for ax, name in zip(axes[:, 0], schedulers, strict=True):
        mine = shown[shown["scheduler"] == name]
        executed = mine[mine["accelerator"].fillna("") != ""]
        base = executed["accelerator"].str.split("[").str[0]
        for row, acc in enumerate(accelerators):
            for label, blocks in executed[base == acc].groupby("accelerator"):
                low, height = _lane(str(label), row)
                for model, g in blocks.groupby("model"):
                    ax.broken_barh(list(zip(g["start_ms"], g["end_ms"] - g["start_ms"], strict=True)), (low, height),
                                   color=colors[str(model)])
        drops = mine[mine["accelerator"].fillna("") == ""]
        ax.scatter(drops["end_ms"], [len(accelerators)] * len(drops), marker="x", color="black", s=18)
        ax.set_yticks(range(len(accelerators) + 1), list(accelerators) + ["dropped"])
        ax.set_title(name, fontsize=9, loc="left")
    axes[-1, 0].set_xlabel(f"time (ms), first {window_ms:g} ms")
    axes[-1, 0].set_xlim(0, window_ms)
    present = [m for m in colors if m in set(shown["model"].astype(str))]  # models seen in the window only
    handles = [Rectangle((0, 0), 1, 1, color=colors[m]) for m in present]
    fig.legend(handles, present, loc="upper right", fontsize=7, ncol=max(min(len(present), 4), 1))
    height = fig.get_figheight()  # fixed margins in inches (tight_layout costs seconds on long traces)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.55 / height, top=1 - 0.5 / height, hspace=0.35)
    fig.savefig(path, dpi=110)
    figures.close(fig)


def _lane(label: str, row: int) -> tuple[float, float]:
    """Vertical extent of a trace's accelerator label in row ``row``: ``ACC`` the whole row, ``ACC[i,j]``
    the band of its sub-arrays (of :data:`~dse.accelerator_cost.PODS`)."""

    if "[" not in label:
        return row - 0.4, 0.8
    held = [int(p) for p in label[label.index("[") + 1:-1].split(",")]
    lane = 0.8 / PODS
    return row - 0.4 + lane * min(held), lane * (max(held) - min(held) + 1)


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
    exact=False,
    gantt=False,
    description="DREAM: accelerator per (model, layer block) + model priorities, scored by simulation "
                "(UXCost vs energy)",
    resolve_platform=resolve_system,
    resolve_workload=resolve_scenario,
    cost_models={"accelerator": AcceleratorCostModel},
    scenario=ScenarioSettings,
    simulate=simulate_spec,
))
