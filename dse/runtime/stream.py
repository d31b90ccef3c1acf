"""Discrete-event simulation of a data-aware input stream on a pipeline mapping (DyPe's online part).

A stream is a sequence of inputs (graphs or sparse matrices) whose features
change: ``phases`` (blocks of inputs, repeated), ``drift`` (a synthetic input
whose density and skew move step by step) or ``mix`` (a seeded random mix).
Each input carries ``items_per_input`` items (e.g. inference requests on that
graph) through the mapped pipeline, so it runs for ``items x period`` and
spends ``items x energy per item`` (steady state: the pipeline's fill overlaps
the previous input's drain).

Per policy (:mod:`dse.runtime.policies`) the simulator pops one event per
input from an :class:`~dse.sim.core.EventQueue`, asks the policy for a
configuration and, when it differs from the installed one and the policy
charges switches, first re-maps at the cost :mod:`dse.runtime.switching` counts.
One trace row per run and per switch; :func:`summarize` derives every summary
figure from the trace. The ``scenario:`` mapping it runs is
:class:`~dse.runtime.stream_spec.ScenarioSpec`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.cost import RooflineCostModel
from dse.errors import InfeasibleError, SpecError
from dse.inputs.builders import build
from dse.inputs.datasets import InputFeatures, input_features
from dse.mapping.pipeline import PipelineProblem
from dse.mapping.registry import register_scenario
from dse.model.workload import validate_workload
from dse.runtime.library import ConfigLibrary, build_library, load_library, save_library
from dse.runtime.policies import (
    Decision,
    Figures,
    InputView,
    Limits,
    Policy,
    Preference,
    Selection,
    analyzer_policy,
    constant_policy,
    gpu_genome,
    select,
)
from dse.runtime.stream_spec import ScenarioSpec
from dse.runtime.switching import SwitchCost, switch_cost, switch_costs
from dse.sim.core import EventQueue, Trace
from dse.util.files import check_writable_file, clear_partial, mark_partial, replace_atomically
from dse.util.interrupt import Interrupted, stop_point
from dse.util.limits import MAX_DEADLINE_TU
from dse.util.progress import Progress
from dse.viz.figures import save
from dse.viz.streams import plot_stream_timeline

if TYPE_CHECKING:
    import pandas as pd


TRACE_COLUMNS = ("policy", "input", "input_name", "regime", "config", "kind", "start_s", "end_s", "items",
                 "energy_j", "optimal", "feasible")


# --------------------------------------------------------------------------- stream and problems


@dataclass(frozen=True)
class StreamInput:
    """One input of the stream: its position, key (distinct inputs share it), phase label and features."""

    index: int
    key: str
    phase: str
    features: InputFeatures


def make_stream(scenario: ScenarioSpec, source: str = "scenario", seed: int = 0) -> list[StreamInput]:
    """The stream's inputs, features analysed once per distinct input.

    Raises :class:`SpecError` naming ``scenario.inputs.NAME`` for an unknown dataset or bad synthetic
    parameters, and ``scenario.stream`` for a stream with no inputs; :class:`Interrupted` once a stop was
    requested (checked before each input's features and each drift step's graph).
    """
    named = {}
    for name, ref in scenario.inputs.items():  # a dataset read or a graph generated per input: seconds each
        stop_point()
        named[name] = input_features(ref, source, f"scenario.inputs.{name}", seed=seed)
    s = scenario.stream
    out: list[StreamInput] = []
    if s.kind == "phases":
        for _ in range(s.repeat):
            for phase in s.phases:
                out += [StreamInput(len(out) + k, phase.input, phase.input, named[phase.input])
                        for k in range(phase.length)]
    elif s.kind == "mix":
        names = list(s.mix)
        weights = np.asarray([s.mix[n] for n in names], dtype=float)
        picks = np.random.default_rng(seed).choice(len(names), size=s.length, p=weights / weights.sum())
        out = [StreamInput(k, names[p], names[p], named[names[p]]) for k, p in enumerate(picks)]
    else:
        d = s.drift
        assert d is not None
        from dse.inputs.datasets import synthetic_features

        steps = []
        for j in range(d.steps):
            stop_point()  # one generated graph per step
            frac = j / (d.steps - 1)
            density = math.exp(math.log(d.density_from) * (1 - frac) + math.log(d.density_to) * frac)
            degree = d.degree_from if frac < 0.5 else d.degree_to
            steps.append(synthetic_features(d.rows, float(f"{density:.4g}"), degree, d.width, seed=seed + j))
        for k in range(s.length):
            j = min(d.steps - 1, k * d.steps // s.length)
            out.append(StreamInput(k, f"drift{j}", f"drift{j}", steps[j]))
    if not out:
        raise SpecError(source, "scenario.stream", s.kind, "the stream has no inputs")
    return out


def workload_for(params: Mapping[str, Any], features: InputFeatures) -> Any:
    """The scenario's workload (builder ``params``) on an input with ``features``; raises :class:`SpecError`."""

    p = {k: v for k, v in params.items() if k != "builder"}
    builder = str(params["builder"])
    if builder == "gcn":
        data = dict(dataset="custom", nodes=features.rows, edges=min(features.nnz, features.rows * (features.rows - 1)),
                    features=features.width, degree_skew=features.row_cv, classes=p.pop("classes", 16))
    elif builder in ("graphsage", "gin"):
        data = dict(dataset="custom", rows=features.rows, nnz=features.nnz, row_cv=features.row_cv,
                    width=features.width, classes=p.pop("classes", 16))
    else:
        data = dict(dataset="custom", rows=features.rows, nnz=features.nnz, row_cv=features.row_cv)
    return validate_workload(build(builder, **data, **p), f"input {features.name}")


class ProblemFactory:
    """Pipeline problems of the stream's inputs on one platform, cached by input key."""

    def __init__(self, spec: Any, scenario: ScenarioSpec) -> None:

        self.spec = spec
        self.scenario = scenario
        self.platform = spec.platform
        self.cost_model = spec.cost_model if spec.cost_model is not None else RooflineCostModel()
        c = spec.constraints
        self.deadline_s = None if c.deadline_ms is None else c.deadline_ms * 1e-3
        self.power_w = c.power_w
        self.memory = c.memory
        self._cache: dict[str, PipelineProblem] = {}

    def limits(self) -> Limits:
        return Limits(self.power_w, self.deadline_s, self.scenario.min_throughput)

    def __call__(self, features: InputFeatures, key: str | None = None) -> PipelineProblem:

        key = key or repr(features)
        if key not in self._cache:
            tables = self.cost_model.tables(workload_for(self.scenario.workload, features), self.platform)
            deadline = None
            if self.deadline_s is not None:
                ticks = self.deadline_s / tables.seconds_per_time_unit
                if ticks > MAX_DEADLINE_TU:
                    raise SpecError(self.spec.source, "constraints.deadline_ms", self.deadline_s * 1e3,
                                    f"is {ticks:.3g} of the cost tables' time units, past the {MAX_DEADLINE_TU:.3g} "
                                    "they hold; leave the deadline out for none")
                deadline = int(ticks)
            power = None if self.power_w is None else int(self.power_w * 1e3 + 1e-9)
            self._cache[key] = PipelineProblem(tables, ("throughput", "energy"), deadline=deadline,
                                               power_cap_mw=power, memory=self.memory, name=key)
        return self._cache[key]


def mean_features(stream: Sequence[StreamInput]) -> InputFeatures:
    """The average input of a stream: geometric means of rows, nonzeros and width, mean row CV."""
    f = [s.features for s in stream]
    rows = int(round(math.exp(np.mean([math.log(x.rows) for x in f]))))
    nnz = int(round(math.exp(np.mean([math.log(x.nnz) for x in f]))))
    width = int(round(math.exp(np.mean([math.log(x.width) for x in f]))))
    return InputFeatures(rows, min(nnz, rows * rows), max(width, 1), float(np.mean([x.row_cv for x in f])),
                         name="average")


# --------------------------------------------------------------------------- policies of a run


def make_policies(names: Sequence[str], stream: Sequence[StreamInput], factory: ProblemFactory,
                  library: ConfigLibrary, preference: Preference, scenario: ScenarioSpec,
                  reference: Reference) -> dict[str, Policy]:
    """The named policies of one run (see :mod:`dse.runtime.policies`); ``reference`` holds the exact
    fronts the oracle and ``static_average`` choose from."""
    limits = factory.limits()
    average = factory(mean_features(stream), "average")
    out: dict[str, Policy] = {}
    for name in names:
        if name == "gpu_only":
            out[name] = constant_policy(name, gpu_genome(average), "gpu")
        elif name == "static_hand":
            out[name] = constant_policy(name, average.repair(average.with_levels(average.static_partition())[None])[0],
                                        "hand")
        elif name == "static_average":
            out[name] = constant_policy(name, reference.choice("average", average), "average")
        elif name == "dynamic":
            out[name] = analyzer_policy(
                name, library, limits, preference,
                lambda problem, old, genomes: switch_costs(problem, factory.platform, old, genomes, scenario.switch),
                scenario.horizon_inputs * scenario.items_per_input)
        elif name == "oracle":
            out[name] = Policy(name, lambda view: _oracle_decision(reference, view), charges_switches=False)
    return out


# --------------------------------------------------------------------------- the simulation


class Reference:
    """Per distinct input, its exact Pareto set's genomes and figures (cached): the oracle's choice and the
    yardstick of every policy's ``optimal`` flag."""

    def __init__(self, limits: Limits, preference: Preference, exact: str, time_limit: float, seed: int) -> None:
        self.limits, self.preference = limits, preference
        self.exact, self.time_limit, self.seed = exact, time_limit, seed
        self._cache: dict[str, tuple[np.ndarray, Figures, Selection]] = {}

    def of(self, key: str, problem: PipelineProblem) -> tuple[np.ndarray, Figures, Selection]:
        """(front genomes, their figures, the selection among them) of input ``key``."""
        if key not in self._cache:
            from dse.runtime.library import configurations

            configs = configurations(problem, self.exact, nsga2=False, time_limit=self.time_limit, seed=self.seed)
            genomes = (np.asarray([c.genome for c in configs], dtype=np.int64) if configs else
                       problem.repair(problem.with_levels(problem.static_partition())[None, :]))
            figures = Figures.of(problem, genomes)
            sel = select(figures.throughput, figures.energy_j, figures.latency_s, self.limits, self.preference,
                         figures.valid)
            if not configs:
                sel = Selection(0, False, "no mapping of this input meets the constraints")
            self._cache[key] = (genomes, figures, sel)
        return self._cache[key]

    def choice(self, key: str, problem: PipelineProblem) -> np.ndarray:
        genomes, _, sel = self.of(key, problem)
        return genomes[sel.index]

    def is_optimal(self, key: str, problem: PipelineProblem, genome: np.ndarray) -> bool:
        """Whether ``genome`` meets the limits and scores as well as the exact optimum of this input."""
        genomes, figures, sel = self.of(key, problem)
        mine = Figures.of(problem, genome[None, :])
        ok = bool(mine.valid[0]) and bool((self.limits.violations(mine.throughput, mine.energy_j,
                                                                  mine.latency_s) <= 1e-12).all())
        if not sel.feasible:
            return not ok and np.array_equal(genome, genomes[sel.index])
        if not ok:
            return False
        t = np.concatenate([figures.throughput, mine.throughput])
        e = np.concatenate([figures.energy_j, mine.energy_j])
        feasible = np.concatenate([figures.valid & (self.limits.violations(
            figures.throughput, figures.energy_j, figures.latency_s) <= 1e-12).all(axis=1), [True]])
        scores = self.preference.scores(t, e, feasible)
        best = scores[:-1][feasible[:-1]].min()
        return bool(scores[-1] <= best * (1 + 1e-9) + 1e-15)


def run_policy(policy: Policy, stream: Sequence[StreamInput], factory: ProblemFactory, scenario: ScenarioSpec,
               reference: Reference, trace: Trace, progress: Progress | None = None) -> None:
    """Simulate ``policy`` over ``stream``, appending its rows to ``trace`` (one per run and per switch)."""
    queue = EventQueue()
    queue.push(0.0, "input", k=0)
    current: np.ndarray | None = None
    items = scenario.items_per_input
    while queue:
        stop_point()
        event = queue.pop()
        k = int(event.data["k"])
        s = stream[k]
        problem = factory(s.features, s.key)
        if event.kind == "input":
            decision = policy.choose(InputView(k, s.key, s.features, problem, current))
            genome = np.asarray(decision.genome, dtype=np.int64)
            if current is not None and not np.array_equal(genome, current):
                cost = (switch_cost(problem, factory.platform, current, genome, scenario.switch)
                        if policy.charges_switches else SwitchCost(0.0, 0.0))
                trace.add(policy=policy.name, input=k, input_name=s.features.name or s.key, regime=decision.regime,
                          config=_label(genome), kind="switch", start_s=queue.now, end_s=queue.now + cost.seconds,
                          items=0, energy_j=cost.joules, optimal=True, feasible=True)
                current = genome
                queue.push(queue.now + cost.seconds, "run", k=k, regime=decision.regime, feasible=decision.feasible)
            else:
                current = genome
                queue.push(queue.now, "run", k=k, regime=decision.regime, feasible=decision.feasible)
        else:
            assert current is not None
            figures = Figures.of(problem, current[None, :])
            duration = items / figures.throughput[0]
            trace.add(policy=policy.name, input=k, input_name=s.features.name or s.key,
                      regime=event.data["regime"], config=_label(current), kind="run", start_s=queue.now,
                      end_s=queue.now + duration, items=items, energy_j=items * float(figures.energy_j[0]),
                      optimal=reference.is_optimal(s.key, problem, current), feasible=bool(event.data["feasible"]))
            if progress is not None and progress.due():
                progress.update(f"{policy.name}: input {k + 1}/{len(stream)}")
            if k + 1 < len(stream):
                queue.push(queue.now + duration, "input", k=k + 1)


def _label(genome: np.ndarray) -> str:
    return " ".join(str(int(g)) for g in genome)


#: The columns of the summary (``summary.csv``), SI units in their names; docs/units.md says each one's unit.
SUMMARY_COLUMNS = ("policy", "throughput_items_per_s", "energy_j_per_item", "optimal_share", "switches",
                   "duration_s")


def summarize(trace: pd.DataFrame) -> pd.DataFrame:
    """One row per policy from a trace (:data:`SUMMARY_COLUMNS`): items over the policy's span, all energy
    (J) over its items, share of runs that were optimal, switch rows, and the span (s: first start to last
    end) the figures are over."""
    import pandas as pd

    rows = []
    for name in dict.fromkeys(trace["policy"]):
        part = trace[trace["policy"] == name]
        runs = part[part["kind"] == "run"]
        items = float(runs["items"].sum())
        span = float(part["end_s"].max() - part["start_s"].min())
        rows.append(dict(policy=name, throughput_items_per_s=items / span if span > 0 else float("inf"),
                         energy_j_per_item=float(part["energy_j"].sum()) / items if items else float("nan"),
                         optimal_share=float(runs["optimal"].mean()) if len(runs) else float("nan"),
                         switches=int((part["kind"] == "switch").sum()), duration_s=span))
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def plot_timeline(trace: pd.DataFrame, path: str | Path) -> None:
    """``timeline.png``: per policy, throughput and energy per item of each run over time, input phases
    shaded, switches marked (:func:`dse.viz.streams.plot_stream_timeline`)."""
    save(plot_stream_timeline(trace), str(path))


def simulate_scenario(spec: Any, *, seed: int = 0, quiet: bool = True, library: ConfigLibrary | None = None
                      ) -> tuple[pd.DataFrame, pd.DataFrame, ConfigLibrary]:
    """Run a spec's scenario: (summary, trace, library). ``library``: use it instead of building one
    (else ``scenario.library.file``, read from the spec's folder, when it exists).

    Raises :class:`SpecError` for bad inputs (unknown dataset, negative density, empty stream...),
    :class:`InfeasibleError` when an input of the stream has no mapping that meets the constraints, and
    :class:`~dse.util.interrupt.Interrupted` on SIGINT/SIGTERM, its ``partial`` a :class:`PartialRun`.
    """
    scenario = spec.scenario
    if not isinstance(scenario, ScenarioSpec):
        raise SpecError(spec.source, "scenario", None, "the pipeline family's scenario is missing")
    progress = Progress("simulate", enabled=False if quiet else None)
    stream = make_stream(scenario, spec.source, seed)
    factory = ProblemFactory(spec, scenario)
    preference = Preference(scenario.preference, scenario.weight)
    limits = factory.limits()
    context = dict(workload=scenario.workload, platform=factory.platform.name, power_w=factory.power_w,
                   deadline_s=factory.deadline_s, memory=factory.memory, preference=scenario.preference)
    lib = scenario.library
    lib_path = library_path(spec)
    if library is None and lib_path is not None and lib_path.is_file():
        library = load_library(lib_path, context)
    distinct = {s.key: s.features for s in stream}
    if library is None:
        try:
            library = build_library(distinct, lambda f: factory(f, _key_of(distinct, f)), lib.regimes,
                                    exact=lib.exact, nsga2=lib.nsga2, time_limit=lib.time_limit_s, seed=seed,
                                    context=context, progress=progress)
        except Interrupted as stop:
            raise Interrupted(stop.signum, partial=PartialRun(None, None, stop.partial, [], [str(p) for p in scenario.policies])
                              ) from None
    _check_every_regime_feasible(library, distinct, factory, lib.time_limit_s)
    reference = Reference(limits, preference, lib.exact, lib.time_limit_s, seed)
    trace = Trace(TRACE_COLUMNS)
    finished: list[str] = []
    try:
        policies = make_policies(scenario.policies, stream, factory, library, preference, scenario, reference)
        for name, policy in policies.items():
            progress.update(f"{name}: simulating {len(stream)} inputs", force=True)
            mark = len(trace)
            try:
                run_policy(policy, stream, factory, scenario, reference, trace, progress)
            except Interrupted:
                trace.truncate(mark)  # the cut-short policy's rows are not kept
                raise
            finished.append(name)
    except Interrupted as stop:
        frame = trace.to_frame()
        missing = [str(p) for p in scenario.policies if p not in finished]
        raise Interrupted(stop.signum, partial=PartialRun(summarize(frame) if finished else None, frame, library,
                                                          finished, missing)) from None
    frame = trace.to_frame()
    return summarize(frame), frame, library


@dataclass(frozen=True)
class PartialRun:
    """What a scenario stopped by a signal had finished: the summary and trace of the ``finished`` policies
    (None when none had), the library (complete, or the regimes solved so far; None when none was) and
    the policies not run to the end."""

    summary: Any
    trace: Any
    library: ConfigLibrary | None
    finished: list[str]
    missing: list[str]


def library_path(spec: Any) -> Path | None:
    """The scenario's ``library.file`` read from the spec's folder (None when not given)."""
    ref = spec.scenario.library.file
    if ref is None:
        return None
    return spec.path(ref) if hasattr(spec, "path") else Path(ref)


def _check_every_regime_feasible(library: ConfigLibrary, inputs: Mapping[str, InputFeatures],
                                 factory: ProblemFactory, time_limit: float) -> None:
    """:class:`InfeasibleError` naming the first regime whose representative input no mapping serves
    within the constraints, with the binding constraint and by how much."""
    for regime in library.regimes:
        if regime.configs:
            continue
        rep = regime.representative
        key = next((k for k, f in inputs.items() if f == rep), rep.name or regime.name)
        problem = factory(rep, key)
        raise InfeasibleError(f"infeasible: input {key!r} (regime {regime.name}) has no mapping that meets the "
                              f"constraints: {problem.diagnose(time_limit)}")


def _key_of(inputs: Mapping[str, InputFeatures], features: InputFeatures) -> str:
    return next(k for k, f in inputs.items() if f is features)


def _oracle_decision(reference: Reference, view: InputView) -> Decision:
    genomes, _, sel = reference.of(view.key, view.problem)
    return Decision(genomes[sel.index], "exact", sel.feasible, sel.reason, "exact")


def simulate(spec: Any, out: str | Path | None, *, seed: int = 0, quiet: bool = False) -> pd.DataFrame:
    """``dse simulate``: run the scenario, write ``summary.csv``, ``trace.csv``, ``timeline.png`` and
    ``library.json`` into ``out`` (when given) and return the summary; a library built now is also saved to
    ``scenario.library.file`` when that names a file not there yet.

    Every output path is checked writable before the run. On SIGINT/SIGTERM the finished policies'
    summary and trace, and the library's finished regimes, are written with ``partial.json`` beside them
    (the library file is left alone), then :class:`~dse.util.interrupt.Interrupted` says so.
    """
    lib_path = library_path(spec)
    new_library = lib_path is not None and not lib_path.exists()
    if new_library:
        assert lib_path is not None
        check_writable_file(lib_path, spec.source, "scenario.library.file")
    folder = Path(out) if out is not None else None
    try:
        summary, trace, library = simulate_scenario(spec, seed=seed, quiet=quiet)
        stop_point(lambda: PartialRun(summary, trace, library, [str(p) for p in spec.scenario.policies], []))
    except Interrupted as stop:  # the plot takes seconds: a stopped run writes the tables and leaves it out
        raise stop.noted(_write_partial(folder, stop)) from None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        _write_results(folder, summary, trace, library)
        clear_partial(folder)
    if new_library and lib_path is not None:
        save_library(library, lib_path)
    return summary


def _write_results(folder: Path, summary: pd.DataFrame | None, trace: pd.DataFrame | None,
                   library: ConfigLibrary | None, partial: bool = False) -> None:
    """The run's files in ``folder``; ``partial``: a stopped run's (no timeline plot, the library marked)."""
    if summary is not None and trace is not None:
        replace_atomically(folder / "summary.csv", lambda tmp: summary.to_csv(tmp, index=False))
        replace_atomically(folder / "trace.csv", lambda tmp: trace.to_csv(tmp, index=False))
        if not partial:
            replace_atomically(folder / "timeline.png", lambda tmp: plot_timeline(trace, tmp))
    if library is not None:
        save_library(library, folder / "library.json", partial=partial)


def _write_partial(folder: Path | None, stop: Interrupted) -> str:
    """Write what a stopped run finished into ``folder``; returns the line that says what was kept."""
    run = stop.partial
    if not isinstance(run, PartialRun):
        return "nothing had finished, nothing written"
    regimes = len(run.library.regimes) if run.library is not None else 0
    if folder is None:
        kept = f"policies finished: {', '.join(run.finished) or 'none'} (no --out: nothing written)"
        return kept
    folder.mkdir(parents=True, exist_ok=True)
    library_partial = run.summary is None
    _write_results(folder, run.summary, run.trace, None, partial=True)  # no timeline.png: it takes seconds
    if run.library is not None:
        save_library(run.library, folder / "library.json", partial=library_partial)
    mark_partial(folder, {"signal": stop.signum, "policies_finished": run.finished, "policies_missing": run.missing,
                          "library_regimes": regimes, "library_complete": not library_partial,
                          "timeline_png": "not drawn"})
    if run.summary is None:
        return (f"no policy had run; the library's {regimes} finished regimes are in {folder}/library.json "
                f"(partial, see {folder}/partial.json)")
    return (f"{len(run.finished)} of {len(run.finished) + len(run.missing)} policies finished "
            f"({', '.join(run.finished)}); written to {folder} (partial, see {folder}/partial.json)")


# ``dse simulate`` for the pipeline family: its entry gets this scenario (the family sits below the runtime)
register_scenario("pipeline", ScenarioSpec, simulate)
