"""DyPe's online part: the stream simulator, its policies, the configuration library and ``dse simulate``."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dse.inputs.datasets as datasets
from dse.errors import SpecError
from dse.runs.spec import spec_from_dict
from dse.runtime import library as library_module
from dse.runtime.library import load_library, save_library
from dse.runtime.stream import ProblemFactory, make_stream, simulate_scenario
from dse.runtime.stream_spec import DriftSpec
from dse.util.interrupt import Interrupted, active_token, interruptible

ROOT = Path(__file__).resolve().parents[2]


def spec(scale: float = 0.001, horizon: float = 10.0, policies=None, power_w: float | None = 400.0,
         preference: str = "throughput", repeat: int = 2):
    """A small scenario: a 1-layer GCN (3 ops, 3 devices: 27 genomes) over a stream alternating a sparse
    real graph (Cora) and a dense synthetic one; exact fronts by exhaustive enumeration.

    16 classes, so that the two inputs want different mappings under the gpu class defaults (tiles and
    split-K): with 8, each input's combine (2708 x 1433 x 8 and 1500 x 256 x 8) is one output tile that keeps
    at most 5 of the gpu's 108 SMs busy, both inputs' best mapping under 400 W is the same (combine on
    the fpga, the rest on the gpu) and no policy has a reason to switch. With 16 (exhaustive search of the
    27 genomes per input) Cora's best puts the combine on the cpu and the rest on the fpga, the dense
    input's keeps the 8-class mapping."""
    scenario = {
        "workload": {"builder": "gcn", "layers": 1, "classes": 16},
        "inputs": {"sparse": {"dataset": "cora"},
                   "dense": {"synthetic": {"rows": 1500, "density": 0.08, "degree": "uniform", "width": 256}}},
        "stream": {"kind": "phases", "phases": [{"input": "sparse", "length": 4}, {"input": "dense", "length": 4}],
                   "repeat": repeat},
        "items_per_input": 50,
        "preference": preference,
        "horizon_inputs": horizon,
        "switch": {"reconfigure_ms": 1.0, "scale": scale},
        "library": {"regimes": 2, "exact": "exhaustive", "nsga2": False},
    }
    if policies is not None:
        scenario["policies"] = policies
    data = {"name": "stream", "family": "pipeline", "platform": "server_cpu_gpu_fpga",
            "workload": {"builder": "gcn", "dataset": "cora", "layers": 1},
            "constraints": {"memory": True, **({"power_w": power_w} if power_w else {})},
            "scenario": scenario}
    return spec_from_dict(data, "test-spec.yaml", ROOT)


@pytest.fixture(scope="module")
def cheap():
    return simulate_scenario(spec(scale=0.001), seed=0)


def test_cheap_switches_let_dynamic_match_the_oracle(cheap) -> None:
    summary, trace, _ = cheap
    rows = summary.set_index("policy")
    assert list(summary["policy"]) == ["gpu_only", "static_average", "static_hand", "dynamic", "oracle"]
    dynamic, oracle = rows.loc["dynamic"], rows.loc["oracle"]
    assert dynamic["throughput_items_per_s"] >= 0.98 * oracle["throughput_items_per_s"]
    assert dynamic["switches"] >= 1  # the two regimes want different mappings here
    assert dynamic["optimal_share"] == 1.0
    # the summary is re-derived from the trace alone: items over the span, energy over items
    part = trace[trace["policy"] == "dynamic"]
    items = part.loc[part["kind"] == "run", "items"].sum()
    assert items == 16 * 50
    assert dynamic["throughput_items_per_s"] == pytest.approx(items / (part["end_s"].max() - part["start_s"].min()))
    assert dynamic["energy_j_per_item"] == pytest.approx(part["energy_j"].sum() / items)


def test_prohibitive_switch_cost_never_switches() -> None:
    summary, trace, _ = simulate_scenario(spec(scale=1e6, policies=["dynamic", "oracle"]), seed=0)
    rows = summary.set_index("policy")
    assert rows.loc["dynamic", "switches"] == 0
    assert (trace.loc[trace["policy"] == "dynamic", "kind"] == "run").all()
    assert rows.loc["oracle", "switches"] >= 1  # the oracle ignores switch costs: it still switches


def brute_force_best(problem, power_w: float) -> tuple[float, float]:
    """Max throughput, then min energy, over every genome meeting memory and the power cap, by plain
    enumeration and the evaluator's integers (independent of the library, the selector and CP-SAT)."""
    t = problem.tables
    genomes = np.array(list(itertools.product(*[range(int(u) + 1) for u in problem.upper])), dtype=np.int64)
    genomes = genomes[(t.allowed[np.arange(t.n_ops), genomes[:, : t.n_ops]]).all(axis=1)]
    ev = problem.evaluate(genomes, metrics=True)
    period = ev.metrics["period"].astype(float)
    energy = ev.metrics["energy"].astype(float)
    mem_ok = np.array([all(np.bincount(g[: t.n_ops], weights=t.mem[np.arange(t.n_ops), g[: t.n_ops]],
                                       minlength=t.n_dev) <= t.mem_capacity) for g in genomes])
    ok = mem_ok & (energy <= power_w * 1e3 * period)  # pJ <= mW x ns
    best = min(zip(period[ok], energy[ok], strict=True))
    return 1 / (best[0] * 1e-9), best[1] * 1e-12


def test_oracle_equals_the_exhaustive_optimum_input_by_input(cheap) -> None:
    _, trace, _ = cheap
    s = spec()
    factory = ProblemFactory(s, s.scenario)
    stream = make_stream(s.scenario, s.source, seed=0)
    oracle = trace[(trace["policy"] == "oracle") & (trace["kind"] == "run")]
    assert len(oracle) == len(stream)
    for row, item in zip(oracle.itertuples(), stream, strict=True):
        throughput, energy = brute_force_best(factory(item.features, item.key), 400.0)
        assert row.items / (row.end_s - row.start_s) == pytest.approx(throughput, rel=1e-9)
        assert row.energy_j / row.items == pytest.approx(energy, rel=1e-9)


def test_static_policies_are_constant_and_gpu_only_runs_on_the_gpu(cheap) -> None:
    _, trace, _ = cheap
    runs = trace[trace["kind"] == "run"]
    for name in ("gpu_only", "static_average", "static_hand"):
        assert runs.loc[runs["policy"] == name, "config"].nunique() == 1
    assert set(runs.loc[runs["policy"] == "gpu_only", "config"].iloc[0].split()) == {"1"}  # device 1 = gpu


def test_library_reloads_without_re_solving(cheap, tmp_path, monkeypatch) -> None:
    summary, _, library = cheap
    path = tmp_path / "library.json"
    save_library(library, path)
    again = load_library(path)
    assert [r.name for r in again.regimes] == [r.name for r in library.regimes]
    np.testing.assert_array_equal(again.genomes(), library.genomes())
    assert again.nearest(library.regimes[1].representative).name == library.regimes[1].name

    def refuse(*args, **kwargs):
        raise AssertionError("the library was re-solved")

    monkeypatch.setattr(library_module, "build_library", refuse)
    reused, _, _ = simulate_scenario(spec(scale=0.001, policies=["dynamic"]), seed=0, library=again)
    assert reused.set_index("policy").loc["dynamic", "throughput_items_per_s"] == pytest.approx(
        summary.set_index("policy").loc["dynamic", "throughput_items_per_s"])
    with pytest.raises(SpecError) as info:
        load_library(path, {"platform": "another"})
    assert info.value.field == "context.platform"


def test_mix_and_drift_streams_are_seeded() -> None:
    s = spec()
    mix = s.scenario.model_copy(update={"stream": s.scenario.stream.model_copy(
        update={"kind": "mix", "mix": {"sparse": 1.0, "dense": 3.0}, "length": 30})})
    a, b = make_stream(mix, seed=3), make_stream(mix, seed=3)
    assert [x.key for x in a] == [x.key for x in b] and {x.key for x in a} == {"sparse", "dense"}

    drift = s.scenario.model_copy(update={"stream": s.scenario.stream.model_copy(update={
        "kind": "drift", "length": 12, "drift": DriftSpec(rows=800, width=32, density_from=0.001,
                                                          density_to=0.05, steps=4)})})
    items = make_stream(drift, seed=0)
    densities = [x.features.density for x in items]
    assert len(items) == 12 and densities[0] < densities[-1]
    assert len({x.key for x in items}) == 4


def test_a_drift_stream_stops_between_its_generated_graphs(monkeypatch) -> None:
    """A stop requested while the second of 50 drift graphs is generated ends make_stream before the third."""
    s = spec()
    drift = s.scenario.model_copy(update={"stream": s.scenario.stream.model_copy(update={
        "kind": "drift", "length": 100, "drift": DriftSpec(rows=800, width=32, density_from=0.001,
                                                           density_to=0.05, steps=50)})})
    real = datasets.synthetic_features
    generated: list[int] = []

    def generate(*args, **kwargs):
        generated.append(1)
        if len(generated) == 2:
            token = active_token()
            assert token is not None
            token.request()
        return real(*args, **kwargs)

    monkeypatch.setattr(datasets, "synthetic_features", generate)
    with interruptible(), pytest.raises(Interrupted):
        make_stream(drift, seed=0)
    assert len(generated) == 2


def test_simulate_cli_writes_summary_and_timeline(tmp_path) -> None:
    import yaml

    from dse import cli

    data = yaml.safe_load((ROOT / "problems" / "dype_phases.yaml").read_text())
    data["platform"] = "server_cpu_gpu_fpga"
    data["scenario"]["stream"] = {"kind": "phases", "repeat": 1,
                                  "phases": [{"input": "sparse", "length": 2}, {"input": "dense", "length": 2}]}
    data["scenario"]["library"] = {"regimes": 2, "exact": "exhaustive", "nsga2": False}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    assert cli.main(["simulate", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert list(summary.columns) == ["policy", "throughput_items_per_s", "energy_j_per_item", "optimal_share",
                                     "switches", "duration_s"]
    assert len(summary) == 5 and (tmp_path / "out" / "timeline.png").stat().st_size > 1000
    # duration_s is the span each policy's figures are over: first start to last end of its trace rows, and
    # throughput is its items over that span (docs/units.md)
    trace = pd.read_csv(tmp_path / "out" / "trace.csv")
    for _, row in summary.iterrows():
        mine = trace[trace["policy"] == row["policy"]]
        span = mine["end_s"].max() - mine["start_s"].min()
        assert row["duration_s"] == pytest.approx(span, rel=1e-12)
        assert row["throughput_items_per_s"] == pytest.approx(mine["items"].sum() / span, rel=1e-12)
