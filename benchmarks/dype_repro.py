"""Reproduction of DyPe's headline comparison (Bai et al., arXiv:2502.06304, 2025) on our models.

Cases: irregular workloads (GCN, GraphSAGE-mean, GIN, conjugate gradient, PageRank) x the real inputs
of the catalog (published statistics, models/datasets) x power-cap settings, on the CPU + GPU + FPGA
server with DVFS operating points (models/platforms/server_cpu_gpu_fpga_dvfs.yaml). Preference: maximum
throughput under the cap (then minimum energy).

A case is one input X at a phase change. Its configuration library is built offline without X: over
the workload's other real inputs and a fixed sweep of synthetic inputs spanning the data characteristics
(rows, nonzeros per row, row-length CV, feature width; see SWEEP_*), clustered by k-means into
``--regimes`` regimes, each holding the exact Pareto sets (exhaustive enumeration, one per power cap)
of all its members. X is never clustered, costed or solved for the library. The stream runs a phase of
the previous input in the list, then a phase of X; at the change the dynamic policy's analyzer costs
every library configuration on X and switches only when the gain over the expected phase length repays
the switch, which is charged as ``dse simulate`` charges it (moved data over the platform's routes,
reconfiguration, idle power). The phase of X runs ``--phase-inputs`` inputs of ``--items`` items, or,
with ``--phase-spread``, a seeded length drawn uniformly from 1 to twice the expected length less one
(the analyzer knows only the expected length).

A policy is ``optimal`` in a case when its phase of X (the switch it makes, then the runs) meets the
cap and scores as well as the best phase among keeping the configuration it had installed and
switching to any configuration of X's exact Pareto set (exhaustive search, or CP-SAT with --exact
cpsat, as before), the switch charged. Without switch costs this is the earlier definition, which the
``optimal_run`` column keeps: the configuration run on X scores as well as X's exact optimum. The
oracle, as in ``dse simulate``, switches for free. For each case where the dynamic policy is not
optimal the reason is given: the library lacks the optimum (no library configuration, nor keeping the
installed one, reaches it over the actual phase), a switch the actual phase did not repay (or one
skipped that it would have), or a mis-prediction (the library held the optimum, the phase was as
expected, and the analyzer still chose another).

Writes DIR/cases.csv (one row per case and policy), prints a line per case as it finishes, the share
of cases where each policy is optimal, the dynamic policy's non-optimal cases with their reasons, and
its throughput and energy efficiency relative to static and GPU-only (geometric means over the cases'
phases), next to DyPe's published figures.

    .venv/bin/python benchmarks/dype_repro.py --out out/dype_repro
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from stopping import benchmark_stops

from dse.cost import RooflineCostModel
from dse.inputs import catalog
from dse.inputs.datasets import InputFeatures, dataset
from dse.mapping.pipeline import PipelineProblem
from dse.model.platform import Platform, load_platform
from dse.runtime.library import ConfigLibrary, Configuration, build_library
from dse.runtime.policies import (
    SCORE_TOLERANCE,
    Figures,
    InputView,
    Limits,
    Preference,
    analyzer_policy,
    gpu_genome,
    phase_choice,
    phase_figures,
)
from dse.runtime.stream import Reference, StreamInput, mean_features, workload_for
from dse.runtime.stream_spec import SwitchSpec
from dse.runtime.switching import switch_costs

GRAPHS = ("cora", "citeseer", "pubmed", "flickr", "ogbn-arxiv", "reddit", "ogbn-products")
MATRICES = ("thermal2", "apache2", "ecology2", "G3_circuit", "parabolic_fem")
WEB = ("web-google", "ogbn-arxiv", "flickr", "reddit", "ogbn-products")
WORKLOADS = {
    "gcn": ({"builder": "gcn", "layers": 2, "hidden": 64, "classes": 16}, GRAPHS),
    "graphsage": ({"builder": "graphsage", "layers": 2, "hidden": 64, "classes": 16}, GRAPHS),
    "gin": ({"builder": "gin", "layers": 2, "hidden": 64, "classes": 16}, GRAPHS),
    "cg": ({"builder": "cg", "iterations": 1}, MATRICES),
    "pagerank": ({"builder": "pagerank", "iterations": 2}, WEB),
}
#: Power caps (W): none, and two that bind on most inputs (the platform's devices draw up to 630 W).
CAPS = (None, 350.0, 250.0)
#: DyPe's published figures (abstract and Section 6 of arXiv:2502.06304).
DYPE = {"optimal_dynamic": 0.895, "optimal_static": 0.15, "thr_vs_static": 1.53, "eff_vs_static": 1.09,
        "thr_vs_gpu": 1.44, "eff_vs_gpu": 1.66}
#: The synthetic inputs every library is also built over (fixed, none of them a case's input): rows,
#: mean nonzeros per row, row-length CV and, for the GNNs, the feature width.
SWEEP_ROWS = (1_000, 4_642, 21_544, 100_000, 464_159, 2_154_435, 10_000_000)
SWEEP_DEGREES = (3, 10, 50)
SWEEP_CVS = (0.1, 1.0, 8.0)
SWEEP_WIDTHS = (128, 512, 4096)
LIBRARY_REASON = "library lacks the optimum"


def geomean(values: list[float]) -> float:
    v = [x for x in values if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def problems(params: dict, power_mw: int | None, model: RooflineCostModel, platform: Platform
             ) -> Callable[[InputFeatures], PipelineProblem]:
    """The pipeline problem of one input (cached by input name) under power cap ``power_mw``."""
    cache: dict[str, PipelineProblem] = {}

    def problem_for(f: InputFeatures) -> PipelineProblem:
        if f.name not in cache:
            tables = model.tables(workload_for(params, f), platform)
            cache[f.name] = PipelineProblem(tables, ("throughput", "energy"), power_cap_mw=power_mw)
        return cache[f.name]

    return problem_for


def sweep_inputs(gnn: bool) -> dict[str, InputFeatures]:
    """The synthetic inputs of the library's sweep (width 1 for the solvers' SpMVs)."""
    out = {}
    for rows, degree, cv, width in itertools.product(SWEEP_ROWS, SWEEP_DEGREES, SWEEP_CVS,
                                                     SWEEP_WIDTHS if gnn else (1,)):
        name = f"sweep-{rows}-{degree}-{cv:g}-{width}"
        out[name] = InputFeatures(rows, rows * degree, width, cv, name=name)
    return out


@functools.cache
def every_genome(upper: tuple[int, ...]) -> np.ndarray:
    """Every genome with genes in ``0..upper`` (one row each, the last gene fastest)."""
    return np.indices([u + 1 for u in upper], dtype=np.int64).reshape(len(upper), -1).T


class Fronts:
    """Exact Pareto sets (max items/s, min J/item) per input and power cap, by evaluating every genome once
    per input (the caps only filter), cached by input key and cap."""

    def __init__(self, problem_for: Callable[[InputFeatures], PipelineProblem]) -> None:
        self.problem_for = problem_for
        self._figures: dict[str, tuple[PipelineProblem, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._fronts: dict[tuple[str, float | None], list[Configuration]] = {}

    def _evaluate(self, key: str, features: InputFeatures) -> tuple[PipelineProblem, np.ndarray, np.ndarray,
                                                                     np.ndarray]:
        """(problem, genomes each op's device can run, items/s, J/item) of every valid genome."""
        if key not in self._figures:
            problem = self.problem_for(features)
            t = problem.tables
            genomes = every_genome(tuple(int(u) for u in problem.upper))
            genomes = genomes[t.allowed[np.arange(t.n_ops), genomes[:, : t.n_ops]].all(axis=1)]
            plain = PipelineProblem(t, ("throughput", "energy"), memory=problem.memory)
            ev = plain.evaluate(genomes)
            keep = ev.feasible
            throughput = 1.0 / np.maximum(ev.F[keep, 0] * t.seconds_per_time_unit, 1e-300)
            self._figures[key] = (problem, genomes[keep], throughput, ev.F[keep, 1] * 1e-12)
        return self._figures[key]

    def of(self, key: str, features: InputFeatures, cap: float | None) -> list[Configuration]:
        """The configurations of ``key``'s exact Pareto set among the genomes meeting ``cap`` (W)."""
        if (key, cap) not in self._fronts:
            problem, genomes, t, e = self._evaluate(key, features)
            idx = np.flatnonzero(np.ones(len(t), dtype=bool) if cap is None else e * t <= cap * (1 + 1e-12))
            idx = idx[np.lexsort((e[idx], -t[idx]))]  # by falling throughput, then rising energy
            before = np.concatenate([[np.inf], np.minimum.accumulate(e[idx])[:-1]])
            front = genomes[idx[e[idx] < before]]  # each lowers the energy of every faster one
            f = Figures.of(problem, front)
            self._fronts[(key, cap)] = [
                Configuration(tuple(int(g) for g in genome), float(f.throughput[k]), float(f.energy_j[k]),
                              float(f.latency_s[k]), "exhaustive", True) for k, genome in enumerate(front)]
        return self._fronts[(key, cap)]


def held_out_library(inputs: Mapping[str, InputFeatures], held_out: str,
                     problem_for: Callable[[InputFeatures], PipelineProblem], regimes: int, seed: int,
                     solve: Callable[[str, PipelineProblem], list[Configuration]]) -> ConfigLibrary:
    """The library of a case: built over every input but ``held_out`` (it is never clustered, costed or
    solved), at most ``regimes`` regimes, each with its members' Pareto sets."""
    others = {k: f for k, f in inputs.items() if k != held_out}
    return build_library(others, problem_for, regimes, nsga2=False, seed=seed, solve=solve, members=True)


@dataclass(frozen=True)
class Phase:
    """A policy's phase of one input: the switch it made (seconds, joules) and the phase's figures."""

    genome: np.ndarray
    switch_s: float
    switch_j: float
    throughput: float
    energy_j: float
    meets: bool


class Yardstick:
    """Scores phases of one input against the best of keeping the installed configuration and switching
    to any configuration of the input's exact Pareto set (``front``), the switch charged."""

    def __init__(self, problem: PipelineProblem, front: np.ndarray, limits: Limits, preference: Preference,
                 platform: Platform, switch: SwitchSpec, items: float) -> None:
        self.problem, self.front, self.limits, self.preference = problem, front, limits, preference
        self.platform, self.switch, self.items = platform, switch, items

    def phase(self, installed: np.ndarray | None, genome: np.ndarray, charged: bool = True) -> Phase:
        """The phase of ``genome`` after ``installed`` (the switch free when not ``charged``)."""
        f = Figures.of(self.problem, genome[None, :])
        s, j = (switch_costs(self.problem, self.platform, installed, genome[None, :], self.switch)
                if charged and installed is not None else (np.zeros(1), np.zeros(1)))
        t, e = phase_figures(f.throughput, f.energy_j, s, j, self.items)
        meets = bool(f.valid[0]) and bool((self.limits.violations(f.throughput, f.energy_j, f.latency_s)
                                           <= 1e-12).all())
        return Phase(genome, float(s[0]), float(j[0]), float(t[0]), float(e[0]), meets)

    def optimal(self, installed: np.ndarray | None, phases: list[Phase]) -> list[bool]:
        """Per phase: it meets the limits and scores as well as the best phase among keeping ``installed``
        and switching to a configuration of the front."""
        best = [self.phase(installed, g) for g in self.front]
        if installed is not None:
            best.append(self.phase(installed, installed))
        every = best + phases
        mask = np.asarray([p.meets for p in every])
        if not mask[: len(best)].any():  # nothing meets the limits: a phase that does not either is not worse
            return [not p.meets for p in phases]
        scores = self.preference.scores(np.asarray([p.throughput for p in every]),
                                        np.asarray([p.energy_j for p in every]), mask)
        top = scores[: len(best)][mask[: len(best)]].min()
        return [bool(p.meets and m <= top * (1 + SCORE_TOLERANCE) + 1e-15)
                for p, m in zip(phases, scores[len(best):], strict=True)]


def reason(yard: Yardstick, library: ConfigLibrary, installed: np.ndarray, chosen: Phase, expected: int,
           actual: int) -> str:
    """Why the dynamic policy's phase is not optimal (see the module docstring)."""
    genomes = library.genomes()
    candidates = np.vstack([installed[None, :], genomes])
    s, j = switch_costs(yard.problem, yard.platform, installed, candidates, yard.switch)
    sel = phase_choice(Figures.of(yard.problem, candidates), s, j, yard.items, yard.limits, yard.preference)
    hindsight = yard.phase(installed, candidates[sel.index])
    if not yard.optimal(installed, [hindsight])[0]:
        return LIBRARY_REASON
    switched = not np.array_equal(chosen.genome, installed)
    if actual < expected and switched:
        return f"switch not worth it (phase of {actual} inputs, {expected} expected)"
    if actual > expected and not switched:
        return f"switch skipped that would have paid (phase of {actual} inputs, {expected} expected)"
    if actual != expected:
        return f"another switch would have paid more (phase of {actual} inputs, {expected} expected)"
    return "regime mis-predicted (the library held the optimum and the phase was as expected)"


def run(out: Path, exact: str, regimes: int, seed: int, phase_inputs: int, items: int, switch: SwitchSpec,
        spread: bool) -> pd.DataFrame:
    platform = load_platform(catalog.models_dir() / "platforms" / "server_cpu_gpu_fpga_dvfs.yaml")
    model = RooflineCostModel()
    preference = Preference("throughput")
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    case = 0
    start = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    with benchmark_stops("dype_repro") as stop:
        for name, (params, names) in WORKLOADS.items():
            inputs: dict[str, InputFeatures] = {}
            for n in names:
                stats = dataset(n)
                width = stats.features if params["builder"] in ("gcn", "graphsage", "gin") else 1
                inputs[stats.name] = stats.to_input(width)
            keys = list(inputs)
            training = {**inputs, **sweep_inputs(params["builder"] in ("gcn", "graphsage", "gin"))}
            fronts = Fronts(problems(params, None, model, platform))
            for cap in CAPS:
                problem_for = problems(params, None if cap is None else int(cap * 1e3), model, platform)
                limits = Limits(power_w=cap)

                def solve(key: str, problem: PipelineProblem, cap: float | None = cap, fronts: Fronts = fronts,
                          training: dict[str, InputFeatures] = training) -> list[Configuration]:
                    return fronts.of(key, training[key], cap)

                reference = Reference(limits, preference, exact, 30.0, seed)
                stream = [StreamInput(k, key, key, f) for k, (key, f) in enumerate(inputs.items())]
                average = problem_for(mean_features(stream))
                fixed = {"gpu_only": gpu_genome(average),
                         "static_average": reference.choice("average", average),
                         "static_hand": average.repair(average.with_levels(average.static_partition())[None])[0]}
                for k, key in enumerate(keys):
                    stop.check()
                    features, previous = inputs[key], keys[k - 1]
                    problem, before = problem_for(features), problem_for(inputs[previous])
                    library = held_out_library(training, key, problem_for, regimes, seed, solve)
                    dynamic = analyzer_policy(
                        "dynamic", library, limits, preference,
                        lambda p, old, g: switch_costs(p, platform, old, g, switch), phase_inputs * items)
                    installed = dynamic.choose(InputView(0, previous, inputs[previous], before, None)).genome
                    decision = dynamic.choose(InputView(1, key, features, problem, installed))
                    actual = int(rng.integers(1, 2 * phase_inputs)) if spread else phase_inputs
                    yard = Yardstick(problem, reference.of(key, problem)[0], limits, preference, platform, switch,
                                     actual * items)
                    oracle_before = reference.choice(previous, before)
                    chosen = {**{p: (g, g, True) for p, g in fixed.items()},
                              "dynamic": (installed, decision.genome, True),
                              "oracle": (oracle_before, reference.choice(key, problem), False)}
                    case_rows = []
                    for policy, (was, genome, charged) in chosen.items():
                        phase = yard.phase(was, genome, charged)
                        optimal = yard.optimal(was, [phase])[0]
                        why = ""
                        if policy == "dynamic" and not optimal:
                            why = reason(yard, library, was, phase, phase_inputs, actual)
                        case_rows.append(dict(
                            case=case, workload=name, input=key, previous=previous,
                            constraints="none" if cap is None else f"power_w<={cap:g}", policy=policy,
                            phase_inputs=actual, switched=not np.array_equal(genome, was),
                            switch_s=phase.switch_s, switch_j=phase.switch_j,
                            throughput_items_per_s=phase.throughput, energy_j_per_item=phase.energy_j,
                            optimal=optimal, optimal_run=reference.is_optimal(key, problem, genome), reason=why))
                    rows += stop.keep(case_rows, f"{name} {key} cap {cap}")
                    d = case_rows[3]
                    print(f"  {case:3d} {name:9s} cap {cap!s:>6} {key:14s} after {previous:14s} phase {actual:2d}: "
                          f"dynamic {'switched' if d['switched'] else 'kept':8s} "
                          f"{'optimal' if d['optimal'] else 'NOT optimal: ' + d['reason']} "
                          f"({time.monotonic() - start:.0f} s)", flush=True)
                    pd.DataFrame(rows).to_csv(out / "cases.csv", index=False)
                    case += 1
    return pd.DataFrame(rows)


def report(frame: pd.DataFrame, phase_inputs: int, items: int, switch: SwitchSpec, spread: bool) -> None:
    cases = frame["case"].nunique()
    lengths = f"1 to {2 * phase_inputs - 1}, seeded" if spread else str(phase_inputs)
    print(f"\n{cases} cases (workloads x real inputs x power caps), preference: max throughput under the cap; "
          f"phases of {lengths} inputs of {items} items (expected {phase_inputs}); switch: reconfigure "
          f"{switch.reconfigure_ms:g} ms, scale {switch.scale:g}")
    share = frame.groupby("policy", sort=False)[["optimal", "optimal_run"]].mean()
    print("share of cases where the policy is optimal (switch costs counted | run only, switch-blind):")
    for policy, row in share.iterrows():
        print(f"  {policy:15s} {row['optimal']:6.1%} | {row['optimal_run']:6.1%}")
    dyn = frame[frame["policy"] == "dynamic"]
    missed = dyn[~dyn["optimal"]]
    print(f"dynamic: {int(dyn['switched'].sum())} switches in {cases} phase changes; not optimal in {len(missed)}:")
    for r in missed.itertuples():
        print(f"  {r.workload:9s} {r.constraints:13s} {r.input:14s} after {r.previous:14s}: {r.reason}")
    wide = frame.pivot(index="case", columns="policy", values=["throughput_items_per_s", "energy_j_per_item"])
    thr, energy = wide["throughput_items_per_s"], wide["energy_j_per_item"]
    rel = {}
    for base in ("static_average", "gpu_only"):
        rel[base] = (geomean(list(thr["dynamic"] / thr[base])), geomean(list(energy[base] / energy["dynamic"])))
    print("dynamic vs static (best single mapping for the average input) and vs GPU-only, geometric means:")
    print(f"  throughput        {rel['static_average'][0]:5.2f}x vs static   {rel['gpu_only'][0]:5.2f}x vs GPU-only")
    print(f"  energy efficiency {rel['static_average'][1]:5.2f}x vs static   {rel['gpu_only'][1]:5.2f}x vs GPU-only")
    print("DyPe (arXiv:2502.06304): optimal in 89.5% of cases (static 15%); 1.53x throughput and 1.09x energy "
          "efficiency over static; 1.44x and 1.66x over GPU-only")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("out/dype_repro"))
    parser.add_argument("--exact", choices=("exhaustive", "cpsat"), default="exhaustive")
    parser.add_argument("--regimes", type=int, default=8, help="regimes per case's library (k-means)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--phase-inputs", type=int, default=10, help="expected phase length in inputs")
    parser.add_argument("--items", type=int, default=100, help="items per input")
    parser.add_argument("--phase-spread", action="store_true",
                        help="draw each phase's length from 1 to 2 x phase-inputs - 1 (seeded)")
    parser.add_argument("--reconfigure-ms", type=float, default=1.0)
    parser.add_argument("--switch-scale", type=float, default=1.0)
    args = parser.parse_args()
    switch = SwitchSpec(reconfigure_ms=args.reconfigure_ms, scale=args.switch_scale)
    frame = run(args.out, args.exact, args.regimes, args.seed, args.phase_inputs, args.items, switch,
                args.phase_spread)
    report(frame, args.phase_inputs, args.items, switch, args.phase_spread)


if __name__ == "__main__":
    main()
