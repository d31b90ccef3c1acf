"""Runs shared by the report and trace tests (test_report.py, test_report_browser.py, test_trace.py): each is
solved, simulated or swept once per test process (session scope) and only read afterwards; under
``pytest -n`` one worker runs the three files (tests/conftest.py's SHARED_FIXTURE_GROUPS), so each run
is made once."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dse.cli import main
from dse.runs.sweep import expand_jobs
from dse.store.batch import run_job
from dse.store.database import JobResult, Store

ROOT = Path(__file__).resolve().parents[2]


def small_store(path: Path, jobs: int = 6) -> Path:
    """A store of ``jobs`` quickstart jobs (power caps x seeds, CP-SAT), run in this process."""
    caps = [150, 200, 250, 300, 350, 400][: max(1, jobs // 2)]
    grid = {"constraints.power_w": caps, "solver.seed": [0, 1], "solver.name": "cpsat", "solver.time_limit_s": 5}
    with Store(path) as store:
        for job in expand_jobs("problems/quickstart.yaml", grid)[:jobs]:
            store.record(job, JobResult.from_dict(run_job(job.spec, job.source, job.base)))
    return path


@pytest.fixture(scope="session")
def solved(tmp_path_factory) -> Path:
    """quickstart solved by CP-SAT and NSGA-II, with a certificate and error bands added to its files the
    way the solvers and cost models write them (a region box and ``_lo``/``_hi`` columns)."""
    out = tmp_path_factory.mktemp("report") / "quickstart"
    assert main(["solve", "quickstart", "--solver", "all", "--time-limit", "5", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "front.json").read_text())
    points = doc["fronts"][0]["points"]
    t = [p["objectives"]["throughput_items_per_s"] for p in points]
    e = [p["objectives"]["energy_mj_per_item"] for p in points]
    doc["fronts"][0]["certificate"] = {"hypervolume": 10.0, "hypervolume_bound": 12.0, "gap": 1 / 6,
                                       "reference": [0.0, 50.0],
                                       "region": [[[min(t) - 500, min(e)], [max(t), max(e) + 0.5]]]}
    (out / "front.json").write_text(json.dumps(doc))
    table = pd.read_csv(out / "front.csv")
    for column in ("throughput_items_per_s", "energy_mj_per_item"):
        table[f"{column}_lo"] = table[column] * 0.95
        table[f"{column}_hi"] = table[column] * 1.05
    table.to_csv(out / "front.csv", index=False)
    return out


@pytest.fixture(scope="session")
def simulated(tmp_path_factory) -> Path:
    """``dse simulate`` of xr_vr_gaming (the DREAM scenario, every scheduler) over 3 s of frames instead of
    its 10 (the report and the trace read the same files, whatever their length): summary.csv,
    trace.csv, trace.json, timeline.png."""
    folder = tmp_path_factory.mktemp("report")
    spec = yaml.safe_load((ROOT / "problems" / "xr_vr_gaming.yaml").read_text())
    spec["scenario"]["duration_s"] = 3.0
    (folder / "xr_vr_gaming.yaml").write_text(yaml.safe_dump(spec))
    out = folder / "xr"
    assert main(["simulate", str(folder / "xr_vr_gaming.yaml"), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="session")
def store(tmp_path_factory) -> Path:
    """A batch store of six quickstart jobs, three power caps x two seeds (:func:`small_store`)."""
    return small_store(tmp_path_factory.mktemp("report") / "sweep.sqlite")
