"""DyPe's online analyzer: the dynamic policy's choice at a phase change, with switch costs counted, and a
reproduction library that never sees the evaluated input."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from dse.cost import RooflineCostModel
from dse.inputs import catalog
from dse.inputs.datasets import InputFeatures
from dse.mapping.pipeline import PipelineProblem
from dse.model.platform import load_platform
from dse.runtime.library import ConfigLibrary, Configuration, Regime
from dse.runtime.policies import (
    Figures,
    InputView,
    Limits,
    Preference,
    analyzer_policy,
    phase_choice,
)
from dse.runtime.stream import workload_for
from dse.runtime.stream_spec import SwitchSpec
from dse.runtime.switching import switch_cost, switch_costs

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = {"builder": "gcn", "layers": 1, "classes": 8}
SWITCH = SwitchSpec(reconfigure_ms=2.0, scale=1.0)


@pytest.fixture(scope="module")
def platform():
    return load_platform(catalog.models_dir() / "platforms" / "server_cpu_gpu_fpga_dvfs.yaml")


def small_problem(platform, seed: int, power_w: float | None) -> PipelineProblem:
    """A 1-layer GCN (3 ops; 3 devices, two with 3 DVFS levels: 243 genomes) on a seeded synthetic input."""
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(500, 200_000))
    features = InputFeatures(rows, int(rows * rng.uniform(2, 60)), int(rng.choice([16, 128, 1024])),
                             float(rng.uniform(0.1, 5)), name=f"seed{seed}")
    tables = RooflineCostModel().tables(workload_for(WORKLOAD, features), platform)
    return PipelineProblem(tables, ("throughput", "energy"), power_cap_mw=None if power_w is None else
                           int(power_w * 1e3), memory=True, name=features.name)


def every_genome(problem: PipelineProblem) -> np.ndarray:
    return np.array(list(itertools.product(*[range(int(u) + 1) for u in problem.upper])), dtype=np.int64)


def library_of(genomes: np.ndarray, features: InputFeatures) -> ConfigLibrary:
    """One regime holding ``genomes`` (figures left at zero: the analyzer costs them on the input)."""
    configs = tuple(Configuration(tuple(int(g) for g in x), 0.0, 0.0, 0.0, "test", False) for x in genomes)
    return ConfigLibrary((Regime("r0", features, tuple(features.vector()), ("x",), configs),), {}, (1.0,) * 4)


def test_vectorized_switch_costs_match_the_one_at_a_time_count(platform) -> None:
    problem = small_problem(platform, 0, None)
    genomes = every_genome(problem)
    rng = np.random.default_rng(1)
    for old in genomes[rng.choice(len(genomes), 5, replace=False)]:
        seconds, joules = switch_costs(problem, platform, old, genomes, SWITCH)
        for k in rng.choice(len(genomes), 40, replace=False):
            one = switch_cost(problem, platform, old, genomes[k], SWITCH)
            assert seconds[k] == pytest.approx(one.seconds, rel=1e-12, abs=1e-15)
            assert joules[k] == pytest.approx(one.joules, rel=1e-12, abs=1e-15)
        assert seconds[(genomes == old).all(axis=1)][0] == 0.0  # keeping costs nothing


@pytest.mark.parametrize("seed", range(8))
def test_analyzer_picks_what_exhaustive_evaluation_picks(platform, seed: int) -> None:
    """Every genome in the library: the analyzer's choice scores as the brute-force best phase, computed
    here from the evaluator's integers, the one-at-a-time switch cost and the phase's sums."""
    rng = np.random.default_rng(100 + seed)
    power_w = [None, 300.0, 200.0][seed % 3]
    kind = ["throughput", "energy"][seed % 2]
    problem = small_problem(platform, seed, power_w)
    t = problem.tables
    genomes = every_genome(problem)
    genomes = genomes[t.allowed[np.arange(t.n_ops), genomes[:, : t.n_ops]].all(axis=1)]
    ev = problem.evaluate(genomes, metrics=True)
    period_s = ev.metrics["period"].astype(float) * t.seconds_per_time_unit
    energy_j = ev.metrics["energy"].astype(float) * 1e-12
    used = [np.bincount(g[: t.n_ops], weights=t.mem[np.arange(t.n_ops), g[: t.n_ops]], minlength=t.n_dev)
            for g in genomes]
    ok = np.array([(u <= t.mem_capacity).all() for u in used])
    if power_w is not None:
        ok &= energy_j / period_s <= power_w * (1 + 1e-12)
    # installed: a feasible genome; the phase: from a fraction of the reconfiguration time to many times it,
    # so that keeping, a cheap switch and the best switch each win on some seed
    installed = genomes[rng.choice(np.flatnonzero(ok))]
    items = float(rng.choice([0.5, 5.0, 50.0])) * SWITCH.reconfigure_ms * 1e-3 / period_s[ok].min()

    features = InputFeatures(10, 20, 1, 0.0, name="observed")
    policy = analyzer_policy("dynamic", library_of(genomes, features), Limits(power_w=power_w), Preference(kind),
                             lambda p, old, g: switch_costs(p, platform, old, g, SWITCH), items)
    chosen = policy.choose(InputView(0, "observed", features, problem, installed)).genome

    phase = []
    for g, p, e in zip(genomes, period_s, energy_j, strict=True):
        cost = switch_cost(problem, platform, installed, g, SWITCH)
        seconds, joules = cost.seconds + items * p, cost.joules + items * e
        phase.append((seconds, joules) if kind == "throughput" else (joules, seconds))
    best = min(x for x, keep in zip(phase, ok, strict=True) if keep)
    mine = phase[int(np.flatnonzero((genomes == chosen).all(axis=1))[0])]
    assert mine[0] == pytest.approx(best[0], rel=1e-9)


def test_switch_is_skipped_when_the_phase_is_too_short_to_repay_it() -> None:
    """Installed: 100 items/s; the other: 200 items/s, same 1 J/item, a switch of 1 s and 50 J. Over N
    items keeping takes N/100 s and switching 1 + N/200 s: equal at N = 200 (hand-computed)."""
    figures = Figures(np.array([100.0, 200.0]), np.array([1.0, 1.0]), np.array([0.01, 0.01]),
                      np.array([True, True]))
    s, j = np.array([0.0, 1.0]), np.array([0.0, 50.0])
    for items, expected in ((100, 0), (199, 0), (201, 1), (400, 1)):
        assert phase_choice(figures, s, j, items, Limits(), Preference("throughput")).index == expected
    # by energy: the same 1 J/item, so the switch's 50 J never pays off, however long the phase
    assert phase_choice(figures, s, j, 10**9, Limits(), Preference("energy")).index == 0
    # a 150 W cap: the installed one draws 100 W, the faster 200 W; switching is not an option
    assert phase_choice(figures, s, j, 10**6, Limits(power_w=150.0), Preference("throughput")).index == 0
    # the installed one breaks a 150 W cap the other meets at 1 s cost: a switch, however short the phase
    hot = Figures(np.array([200.0, 100.0]), np.array([1.0, 1.0]), np.array([0.01, 0.01]), np.array([True, True]))
    assert phase_choice(hot, s, j, 1, Limits(power_w=150.0), Preference("throughput")).index == 1


def test_dynamic_policy_keeps_its_configuration_within_a_phase(platform) -> None:
    problem = small_problem(platform, 5, None)
    genomes = every_genome(problem)[:40]
    features = InputFeatures(10, 20, 1, 0.0, name="x")
    calls = []

    def costs(p, old, g):
        calls.append(len(g))
        return switch_costs(p, platform, old, g, SWITCH)

    policy = analyzer_policy("dynamic", library_of(genomes, features), Limits(), Preference(), costs, 1e6)
    first = policy.choose(InputView(0, "a", features, problem, None))
    again = policy.choose(InputView(1, "a", features, problem, problem.repair(first.genome[None])[0]))
    assert again.label == "kept" and not calls  # no analysis within a phase, nothing to switch from at first
    policy.choose(InputView(2, "b", features, problem, first.genome))
    assert calls  # a new input's key is a phase change: analysed with the switch counted


def _benchmark():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import dype_repro
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return dype_repro


def test_reproduction_library_never_sees_the_evaluated_input() -> None:
    bench = _benchmark()
    inputs = {n: InputFeatures(r, r * d, 64, cv, name=n) for n, r, d, cv in
              (("a", 1000, 3, 1.0), ("b", 5000, 10, 2.0), ("c", 20000, 5, 0.5), ("d", 90000, 30, 4.0))}
    seen: list[str] = []

    def problem_for(f: InputFeatures):
        seen.append(f.name)
        return f.name

    def solve(key: str, problem) -> list[Configuration]:
        seen.append(key)
        return [Configuration((len(key),), 1.0, 1.0, 1.0, "test", True)]

    for held_out in inputs:
        seen.clear()
        library = bench.held_out_library(inputs, held_out, problem_for, 2, 0, solve)
        assert held_out not in seen
        assert all(held_out not in r.members and r.representative.name != held_out for r in library.regimes)
        assert sorted(m for r in library.regimes for m in r.members) == sorted(set(inputs) - {held_out})
        assert set(seen) == set(inputs) - {held_out}  # every other input solved: the spy does see inputs
