"""Batch sweeps: resumable after SIGKILL, worker deaths survived, bad jobs recorded, one writer per store.

One Dask LocalCluster of two worker processes is shared by the module (worker
processes are needed where a worker is killed); the tests that kill or restart a worker or a batch
process are ``slow``. Golden values are not taken
from the code under test: an interrupted-then-resumed sweep is compared with an
uninterrupted run of the same jobs, and counts with the grid's own product.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

import dse.store.batch
from dse.cli import main
from dse.runs.sweep import expand_jobs
from dse.store.database import jobs_frame, points_frame
from tests.cli.test_cli import run
from tests.conftest import TINY_PLATFORM, TINY_WORKLOAD

TINY = {"name": "tiny", "family": "pipeline", "platform": TINY_PLATFORM, "workload": TINY_WORKLOAD,
        "objectives": ["throughput", "energy"], "solver": {"name": "cpsat", "time_limit_s": 30, "seed": 0}}
#: 2 solvers x 2 power caps x 2 seeds = 8 small jobs, each an exact (complete, so reproducible) front.
GRID = {"solver.name": ["cpsat", "exhaustive"], "constraints.power_w": [200, 400], "solver.seed": [0, 1]}
#: Jobs that take about a second each (an exact front of an 8-op pipeline on a 4-device SoC).
SLOW = {"name": "slow", "family": "pipeline", "platform": "edge_soc",
        "workload": {"builder": "random_pipeline", "n_ops": 8, "seed": 1},
        "solver": {"name": "cpsat", "time_limit_s": 60, "seed": 0}}


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=50)
    with Client(cluster) as c:
        yield c
    cluster.close()


def _fronts_by_job(store: Path) -> dict[str, list[tuple]]:
    """Each job's Pareto points as sorted (solver, objectives..., genome) tuples."""
    points = points_frame(store)
    out: dict[str, list[tuple]] = {}
    for job, group in points.groupby("job"):
        rows = group[["solver", "throughput_items_per_s", "energy_mj_per_item", "genome"]]
        out[str(job)] = sorted(map(tuple, rows.itertuples(index=False)))
    return out


def _job_rows(store: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return conn.execute("SELECT job_id, status FROM jobs").fetchall()


#: A batch run in its own process: dse.store.batch.run on a threaded LocalCluster (quick to start), one job at
#: a time. With a fourth argument N, the jobs after the first N never end (the run stays midway, holding the
#: store, until it is killed): the tiny jobs take milliseconds, so a run left to itself could finish between
#: the test seeing N jobs stored and the test's next step.
RUNNER = """
import sys
import threading
from distributed import Client
import dse.store.batch

run_job = dse.store.batch.run_job

def midway_run_job(*args, **kwargs):  # jobs are started in turn: a file beside the store counts them
    with open(sys.argv[3] + ".started", "a") as count:
        count.write("x")
        started = count.tell()
    if len(sys.argv) > 4 and started > int(sys.argv[4]):
        threading.Event().wait()
    return run_job(*args, **kwargs)

dse.store.batch.run_job = midway_run_job
with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
    dse.store.batch.run(sys.argv[1], sys.argv[3], client, grid=sys.argv[2])
print("finished")
"""


def _start_batch(spec: Path, grid: Path, store: Path, stop_after: int | None = None) -> subprocess.Popen:
    """The batch RUNNER in a process of its own session; ``stop_after``: its jobs after that many hang."""
    args = [] if stop_after is None else [str(stop_after)]
    return subprocess.Popen([sys.executable, "-c", RUNNER, str(spec), str(grid), str(store), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.slow
def test_sigkilled_batch_resumes_every_job_once_and_a_second_batch_is_refused(tmp_path, capsys, client) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(TINY))
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump(GRID))
    store = tmp_path / "sweep.sqlite"
    n_jobs = 2 * 2 * 2
    proc = _start_batch(spec, grid, store, stop_after=3)  # three jobs stored, the fourth under way
    try:
        deadline = time.monotonic() + 120  # a hang guard, not a measurement
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if store.exists() and len(jobs_frame(store)) >= 3:
                    break
            except Exception:  # noqa: BLE001 - the schema may not be there yet
                pass
            time.sleep(0.01)
        # while the first run holds the store, a `dse batch` on it refuses with one clear line (exit 2)
        assert proc.poll() is None, "the first run ended before the second one started"
        code, _, err = run(capsys, "batch", str(spec), "--grid", str(grid), "--store", str(store), "--quiet")
        assert code == 2 and "in use by another dse batch" in err and f"pid {proc.pid}" in err, err
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        proc.kill()
    rows = _job_rows(store)
    assert len(rows) == 3, f"{len(rows)} of {n_jobs} jobs stored when the run was killed"
    # the restart takes the stale lock over and runs only the missing jobs
    resumed = _start_batch(spec, grid, store)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0 and "finished" in out, err
    rows = _job_rows(store)
    assert len(rows) == n_jobs and len({j for j, _ in rows}) == n_jobs
    assert {s for _, s in rows} == {"done"}
    # the same jobs run without interruption give the same fronts
    fresh = tmp_path / "fresh.sqlite"
    dse.store.batch.run(spec, fresh, client, grid=grid)
    assert _fronts_by_job(store) == _fronts_by_job(fresh)
    assert len(_fronts_by_job(fresh)) == n_jobs


@pytest.mark.slow
def test_a_killed_worker_does_not_lose_the_sweep(tmp_path, client) -> None:
    store = tmp_path / "kill.sqlite"
    jobs = expand_jobs(SLOW, {"solver.seed": [0, 1, 2, 3]})
    pids = client.run(os.getpid)
    outcome: dict[str, object] = {}

    def sweep() -> None:
        try:
            outcome["frame"] = dse.store.batch.run(jobs, store, client)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = exc

    runner = threading.Thread(target=sweep)
    runner.start()
    killed = None
    deadline = time.monotonic() + 30
    while killed is None and time.monotonic() < deadline:
        busy = [w for w, keys in client.processing().items() if any(str(k).startswith("dse-job-") for k in keys)]
        if busy and busy[0] in pids:
            time.sleep(0.3)  # mid-job
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed = busy[0]
        time.sleep(0.02)
    runner.join(timeout=120)
    assert killed is not None, "no job was seen running"
    assert "error" not in outcome, outcome.get("error")
    frame = outcome["frame"]
    assert len(frame) == len(jobs) and frame["job"].is_unique
    assert set(frame["status"]) <= {"done", "failed"}
    failed = frame[frame["status"] == "failed"]
    assert all("worker" in m for m in failed["message"]), list(failed["message"])
    assert (frame["status"] == "done").sum() >= len(jobs) - 1


def test_an_invalid_job_is_recorded_and_the_others_finish(tmp_path, client) -> None:
    store = tmp_path / "bad.sqlite"
    frame = dse.store.batch.run(TINY, store, client, grid={"constraints.power_w": [300, -5, 400]})
    assert list(frame["constraints.power_w"]) == [300, -5, 400]
    assert list(frame["status"]) == ["done", "invalid", "done"]
    message = frame["message"].iloc[1]
    assert "power_w" in message and "-5" in message
    assert (frame["front_size"].iloc[[0, 2]] > 0).all() and frame["front_size"].iloc[1] == 0
    # resuming does nothing: all three are finished (the invalid one is a deterministic outcome)
    again = dse.store.batch.execute(expand_jobs(TINY, {"constraints.power_w": [300, -5, 400]}), store, client)
    assert (again.skipped, again.finished) == (3, 0)


# ------------------------------------------------------------------ command-line input errors
def test_a_grid_path_that_names_no_spec_field_is_exit_2(tmp_path, capsys) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(TINY))
    (tmp_path / "named.yaml").write_text(yaml.safe_dump({**TINY, "platform": "edge_soc"}))
    for key, named in (("constraints.powr_w", "powr_w"), ("bogus", "bogus"), ("platform.devices", "edge_soc")):
        spec = tmp_path / ("named.yaml" if key.startswith("platform") else "tiny.yaml")
        grid = tmp_path / "grid.yaml"
        grid.write_text(yaml.safe_dump({key: [1, 2]}))
        code, _, err = run(capsys, "batch", str(spec), "--grid", str(grid), "--store", str(tmp_path / "s.sqlite"))
        assert code == 2 and named in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "s.sqlite").exists()  # refused before any work


def test_results_of_a_missing_or_foreign_store_is_exit_2(tmp_path, capsys) -> None:
    code, _, err = run(capsys, "results", str(tmp_path / "nope.sqlite"))
    assert code == 2 and "no such store file" in err and "nope.sqlite" in err
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    code, _, err = run(capsys, "results", str(foreign))
    assert code == 2 and "not a dse result store" in err
    text = tmp_path / "text.sqlite"
    text.write_text("hello")
    code, _, err = run(capsys, "results", str(text))
    assert code == 2 and "not a dse result store" in err and "Traceback" not in err


def test_results_lists_filters_exports_and_plots(tmp_path, capsys, client) -> None:
    store = tmp_path / "r.sqlite"
    dse.store.batch.run(TINY, store, client, grid={"constraints.power_w": [200, 400], "solver.name": ["cpsat"]})
    code, _, err = run(capsys, "results", str(store), "--where", "this is not python")
    assert code == 2 and "--where" in err and "columns are" in err
    code, _, err = run(capsys, "results", str(store), "--where", "front_size")
    assert code == 2 and "must be a condition" in err
    assert main(["results", str(store), "--where", "constraints.power_w > 300"]) == 0
    listing = capsys.readouterr().out
    assert "1 jobs: 1 done" in listing and " 400 " in listing and " 200 " not in listing
    out = tmp_path / "points.csv"
    assert main(["results", str(store), "--export", "csv", "--out", str(out)]) == 0
    import pandas as pd

    exported = pd.read_csv(out)
    assert set(exported["constraints.power_w"]) == {200, 400} and len(exported) == len(points_frame(store))
    assert main(["results", str(store), "--plot", "--out", str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").stat().st_size > 1000
    code, _, err = run(capsys, "results", str(store), "--plot", "--out", str(tmp_path / "g.png"), "--color", "nope")
    assert code == 2 and "--color" in err


def test_bad_batch_flags_are_exit_2(tmp_path, capsys) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(TINY))
    store = str(tmp_path / "s.sqlite")
    code, _, err = run(capsys, "batch", str(spec), "--store", store, "--timeout-per-job", "-1")
    assert code == 2 and "--timeout-per-job" in err
    code, _, err = run(capsys, "batch", str(tmp_path / "missing*.yaml"), "--store", store)
    assert code == 2 and "missing" in err
    (tmp_path / "dir").mkdir()
    code, _, err = run(capsys, "batch", str(spec), "--store", str(tmp_path / "dir"))
    assert code == 2 and "--store" in err


def test_store_keeps_the_swept_fields_and_solver_statistics(tmp_path, client) -> None:
    store = tmp_path / "s.sqlite"
    dse.store.batch.run(TINY, store, client, grid={"constraints.power_w": [300]})
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        spec, swept, version = conn.execute("SELECT spec, swept, engine_version FROM jobs").fetchone()
        (front,) = conn.execute("SELECT front FROM fronts").fetchone()
    assert json.loads(spec)["constraints"]["power_w"] == 300 and json.loads(swept) == {"constraints.power_w": 300}
    assert version == dse.__version__
    stats = json.loads(front)["stats"]
    assert stats["wall_s"] > 0 and stats["solver_calls"] >= 1


# last in the module: it restarts a worker of the shared cluster
@pytest.mark.slow
def test_a_job_past_its_time_limit_is_recorded_as_timeout(tmp_path, client) -> None:
    hard = {**SLOW, "workload": {"builder": "random_pipeline", "n_ops": 60, "seed": 3},
            "solver": {"name": "cpsat", "time_limit_s": 60, "seed": 0}}
    report = dse.store.batch.execute(expand_jobs(hard), tmp_path / "t.sqlite", client, timeout_per_job=1.5)
    assert (report.finished, report.failed) == (1, 1)
    frame = dse.store.batch.load(tmp_path / "t.sqlite")
    assert list(frame["status"]) == ["timeout"] and "1.5 s" in frame["message"].iloc[0]
