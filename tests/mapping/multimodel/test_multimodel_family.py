"""The multimodel family through specs and the CLI: dse simulate's files, NSGA-II search, bad input (exit 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

import dse
from dse import cli
from dse.errors import SpecError
from dse.mapping.multimodel import example_problem
from dse.runs.spec import build_problem, load_spec

SYSTEM = {"name": "pair", "accelerators": [
    {"name": "big", "pes": 1024, "dataflow": "ws", "buffer_kib": 512, "offchip_bw_gbps": 64},
    {"name": "little", "pes": 256, "dataflow": "rs", "buffer_kib": 128, "offchip_bw_gbps": 32}]}
SCENARIO = {"name": "duo", "models": [
    {"name": "eyes", "fps": 60, "layers": [["c1", "CONV", 1, 32, 16, 32, 32, 3, 3], ["c2", "CONV", 1, 32, 32, 32, 32, 3, 3]]},
    {"name": "gaze", "fps": 60, "depends_on": "eyes", "probability": 0.5,
     "layers": [["fc", "GEMM", 1, 64, 512, 8, 1, 1, 1]]},
    {"name": "hands", "fps": 30, "layers": [["d1", "DSCONV", 1, 1, 64, 64, 64, 3, 3], ["p1", "CONV", 1, 64, 64, 32, 32, 1, 1]]},
]}


def write_spec(tmp_path, **changes) -> str:
    spec = {"name": "duo", "family": "multimodel", "platform": SYSTEM, "workload": SCENARIO,
            "cost_model": {"name": "accelerator", "blocks_per_model": 2},
            "options": {"search_duration_s": 0.2, "priority_levels": 2},
            "solver": {"name": "nsga2", "time_limit_s": 3, "seed": 0},
            "scenario": {"duration_s": 0.5, "timeline": [{"model": "hands", "join_s": 0.1, "leave_s": 0.4}]}}
    spec.update(changes)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)


def test_simulate_writes_summary_trace_and_timeline(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert cli.main(["simulate", write_spec(tmp_path), "--out", str(out), "--quiet"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary.columns.tolist() == ["scheduler", "uxcost", "edp_j_s", "energy_j", "duration_s", "drop_rate",
                                        "xrbench_score", "whole_accelerators", "uxcost_floor", "uxcost_floor_kept"]
    assert summary["scheduler"].tolist() == ["fcfs", "edf", "least_slack", "static", "herald", "dream", "planaria",
                                             "planaria_acc"]
    assert summary.loc[0, "uxcost"] == 1.0  # FCFS is the reference
    trace = pd.read_csv(out / "trace.csv")
    assert trace.columns.tolist()[:9] == ["scheduler", "model", "frame", "block", "accelerator", "start_ms", "end_ms",
                                          "arrival_ms", "deadline_ms"]
    hands = trace[trace["model"] == "hands"]
    # hands joins at 0.1 s and leaves at 0.4 s: 30 fps frames 3 ... 11
    assert hands["frame"].min() == 3 and hands["frame"].max() == 11
    assert (out / "timeline.png").stat().st_size > 1000
    # the summary is re-derived from the trace: FCFS's energy = blocks + idle over the horizon
    fcfs = trace[trace["scheduler"] == "fcfs"]
    horizon = max(fcfs["deadline_ms"].max(), fcfs["end_ms"].max())
    spec = load_spec(write_spec(tmp_path))
    idle = {a.name: round(a.idle_w * 1e3) * 1e-3 for a in spec.platform.accelerators}  # the tables' whole mW
    from dse.sim.xr_metrics import idle_energy_j

    energy = fcfs["energy_mj"].sum() * 1e-3 + idle_energy_j(fcfs, idle, horizon)
    assert energy == pytest.approx(summary.loc[0, "energy_j"], rel=1e-6)
    assert summary.loc[0, "duration_s"] == pytest.approx(horizon * 1e-3)  # the span energy_j is over, in s
    # edp_j_s: that energy (J) x the completed frames' mean latency (s), from the trace's executed blocks
    executed = fcfs[fcfs["accelerator"].fillna("") != ""]
    latency_s = (executed.groupby(["model", "frame"])["end_ms"].max()
                 - executed.groupby(["model", "frame"])["arrival_ms"].first()).mean() * 1e-3
    assert not (fcfs["accelerator"].fillna("") == "").any()  # FCFS drops nothing here: every frame completes
    assert summary.loc[0, "edp_j_s"] == pytest.approx(energy * latency_s, rel=1e-6)
    # the same for the spatial scheduler, whose rows occupy sub-arrays (idle power per idle sub-array)
    by_name = summary.set_index("scheduler")
    spatial = trace[trace["scheduler"] == "planaria"]
    assert spatial["accelerator"].dropna().str.contains(r"\[").all()
    horizon = max(spatial["deadline_ms"].max(), spatial["end_ms"].max())
    energy = spatial["energy_mj"].sum() * 1e-3 + idle_energy_j(spatial, idle, horizon)
    assert energy == pytest.approx(by_name.loc["planaria", "energy_j"], rel=1e-6)
    # Planaria on whole accelerators (frames hold them to the end): rows name the accelerator alone
    whole = trace[trace["scheduler"] == "planaria_acc"]
    assert not whole["accelerator"].dropna().str.contains(r"\[").any()
    horizon = max(whole["deadline_ms"].max(), whole["end_ms"].max())
    energy = whole["energy_mj"].sum() * 1e-3 + idle_energy_j(whole, idle, horizon)
    assert energy == pytest.approx(by_name.loc["planaria_acc", "energy_j"], rel=1e-6)
    # the run's UXCost floor (dse/sim/ux_bound.py) closes the printed summary
    printed = capsys.readouterr().out.splitlines()
    assert printed[-2].startswith("floor: "), printed[-2]
    # ... with its scope, and summary.csv keeps it: the spatial planaria is the one scheduler it does not cover
    assert printed[-2].endswith("for schedules on whole accelerators; Planaria-style sub-array schedules "
                                "(planaria) are not covered"), printed[-2]
    assert by_name["whole_accelerators"].to_dict() == {name: name != "planaria" for name in by_name.index}
    assert by_name["uxcost_floor"].nunique() == 1 and by_name["uxcost_floor_kept"].nunique() == 1
    covered = by_name[by_name["whole_accelerators"]]
    assert (covered["uxcost"] >= covered["uxcost_floor"] * (1 - 1e-9)).all()  # a floor of every such schedule
    assert by_name["uxcost_floor"].iloc[0] <= by_name["uxcost_floor_kept"].iloc[0]  # drops on purpose allowed


def test_search_finds_a_front_and_the_genome_reads_back(tmp_path) -> None:
    problem = build_problem(load_spec(write_spec(tmp_path)))
    assert problem.n_genes == problem.tables.n_ops + 3

    front = dse.solve(problem, "nsga2", time_limit=3, seed=0)
    assert len(front)
    genomes = np.array([p.genome for p in front.points])
    ev = problem.evaluate(genomes)
    np.testing.assert_array_equal(ev.F, front.internal())
    # the problem sees the spec's timeline: hands has frames only between 0.1 and 0.2 s of the 0.2 s window
    assert int(problem.reference.frames[2]) == 3  # 30 fps frames 3, 4, 5


def test_examples_are_reproducible() -> None:
    a, b = example_problem(2), example_problem(2)
    x = np.zeros(a.n_genes, dtype=np.int64)
    assert a.evaluate(x).F.tolist() == b.evaluate(x).F.tolist()


class AddsAnAttribute:
    """Pickled, it adds an attribute to the problem that holds it: what a thread evaluating the problem does
    (a cached attribute, the memo) while a Dask worker pickles the problem to send it to a peer."""

    def __init__(self, problem: object) -> None:
        self.problem = problem

    def __reduce__(self) -> tuple[type, tuple[()]]:
        self.problem.__dict__["late"] = 1
        return (int, ())


def test_a_problem_pickles_while_its_attributes_change() -> None:
    """A problem changed while it is pickled (as Dask pickles it: cloudpickle, for the objectives' lambdas)
    pickles: before, the pickler walked the live attributes and failed, "dictionary changed size during
    iteration" (19 of 30 tries with a thread evaluating the problem meanwhile; here the change comes from
    inside the pickling, every time). The copy leaves the simulation memo behind and evaluates the same."""
    from distributed.protocol.pickle import dumps, loads

    problem = example_problem(2)
    x = np.zeros((1, problem.n_genes), dtype=np.int64)
    F = problem.evaluate(x).F
    problem.meddler = AddsAnAttribute(problem)  # type: ignore[attr-defined]
    copy = loads(dumps(problem))
    assert problem._cache and "_cache" not in vars(copy)
    np.testing.assert_array_equal(copy.evaluate(x).F, F)


@pytest.mark.parametrize("change, field, value", [
    ({"platform": {"name": "empty", "accelerators": []}}, "accelerators", []),
    ({"workload": {**SCENARIO, "models": [{**SCENARIO["models"][1], "depends_on": "nose"}]}},
     "models[0].depends_on", "nose"),
    ({"workload": {**SCENARIO, "models": [{**SCENARIO["models"][0], "fps": -5}]}}, "models[0].fps", -5),
    ({"workload": {**SCENARIO, "models": [{**SCENARIO["models"][0], "layers": [["c", "LSTM", 1, 1, 1, 1, 1, 1, 1]]}]}},
     "models[0].layers[0].type", "LSTM"),
    ({"scenario": {"schedulers": ["fcfs", "magic"]}}, "scenario.schedulers[1]", "magic"),
    ({"scenario": {"timeline": [{"model": "nose", "join_s": 1}]}}, "scenario.timeline[0].model", "nose"),
    ({"platform": "NoSuchSystem"}, "platform", "NoSuchSystem"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, change, field, value) -> None:
    path = write_spec(tmp_path, **change)
    assert cli.main(["simulate", path, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err and repr(value) in err, err


def test_bad_maestro_file_in_a_spec_names_file_and_line(tmp_path, capsys) -> None:
    (tmp_path / "net.m").write_text("Network A {\nFPS: 30\nLayer l { Type: CONV Dimensions: { N: 1, K: 2 } }\n}\n")
    path = write_spec(tmp_path, workload={"format": "maestro", "path": "net.m"})
    assert cli.main(["simulate", path, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "net.m" in err and "line 3" in err and "C" in err


def test_catalog_problem_loads_with_imported_system_and_scenario() -> None:
    spec = load_spec("problems/xr_ar_gaming.yaml")
    assert [a.pes for a in spec.platform.accelerators] == [6144, 2048]
    assert [m.fps for m in spec.workload.models] == [45.0, 30.0, 15.0]
    with pytest.raises(SpecError):
        load_spec("problems/xr_ar_gaming.yaml").cost_model.tables(spec.workload, "not a system")


def test_simulate_table_fits_the_default_width(tmp_path, capsys, monkeypatch) -> None:
    """The console table is cut into blocks of whole columns that fit 100 columns when the output is not a
    terminal (it was one pandas table 150-200 characters wide); every figure is still printed."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert cli.main(["simulate", write_spec(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    table = out.split("\nsummary.csv has")[0].split("\nfloor:")[0]
    assert max(len(line) for line in table.splitlines()) <= 100
    for column in ("uxcost", "drop_rate", "xrbench_score", "uxcost_floor_kept"):
        assert column in table
    assert sum(line.startswith("dream") for line in table.splitlines()) >= 2  # the key opens every block
