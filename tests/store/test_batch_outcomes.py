"""Batch outcomes as a user reads them: progress counts the jobs really running, an infeasible job is an
answer with its diagnosis, and dse results never cuts a message.

Golden values come from outside the code under test: the worker count the test asks for (two workers of
one thread run at most two jobs), a power cap of 1 W, below either tiny device's idle power (20 W, 30 W).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import dse.store.batch
from dse.runs.sweep import expand_jobs
from dse.store.database import JobResult, Store
from dse.util.progress import Progress
from tests.conftest import TINY_SPEC, run_cli, write_yaml

TINY = TINY_SPEC
#: Jobs of a second or two each (an exact front of a 10-op pipeline on a 4-device SoC).
SLOW = {"name": "slow", "family": "pipeline", "platform": "edge_soc",
        "workload": {"builder": "random_pipeline", "n_ops": 10, "seed": 1},
        "solver": {"name": "cpsat", "time_limit_s": 60, "seed": 0}}



@pytest.mark.slow
def test_batch_progress_never_counts_more_running_jobs_than_workers(tmp_path, capsys, monkeypatch) -> None:
    # Four jobs on two single-threaded workers: Dask hands all four to the workers at once (too few jobs to
    # be queued at the scheduler), but only two can run; the progress line must say at most 2.
    monkeypatch.setattr(dse.store.batch, "Progress", lambda label, enabled=None: Progress(label, True, every_s=0.0))
    jobs = expand_jobs(SLOW, {"solver.seed": [0, 1, 2, 3]})
    report = dse.store.batch.execute(jobs, tmp_path / "s.sqlite", workers=2, quiet=False)
    assert (report.finished, report.failed) == (4, 0)
    running = [int(n) for n in re.findall(r"(\d+) running", capsys.readouterr().err)]
    assert running, "no progress line was printed"
    assert max(running) <= 2, running


def test_an_infeasible_job_is_a_finished_result_with_its_diagnosis(tmp_path, capsys) -> None:
    spec = write_yaml(tmp_path / "tiny.yaml", TINY)
    grid = write_yaml(tmp_path / "grid.yaml", {"constraints.power_w": [400, 1]})  # 1 W: below either device's idle power
    code, out, err = run_cli(capsys, "batch", str(spec), "--grid", str(grid), "--store", str(tmp_path / "s.sqlite"),
                          "--workers", "1", "--quiet")
    assert code == 0, err
    assert "not done" not in out and "see the failed jobs" not in out, out
    assert "1 done, 1 infeasible, 0 failed" in out, out
    assert "power cap 1 W cannot be met" in out, out  # the diagnosis: which constraint and by how much


def _store_with_message(path: Path, message: str) -> str:
    job = expand_jobs(TINY, {"constraints.power_w": [1]})[0]
    with Store(path) as store:
        store.record(job, JobResult("infeasible", message))
    return job.job_id


LONG = ("infeasible: power cap 1 W cannot be met: the lowest average power of any mapping meeting the other "
        "constraints is 50 W, so the cap is 49 W short; raise constraints.power_w to at least 50")


def test_results_never_cut_a_message(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    job_id = _store_with_message(tmp_path / "s.sqlite", LONG)
    code, out, _ = run_cli(capsys, "results", str(tmp_path / "s.sqlite"))
    assert code == 0
    said = LONG.removeprefix("infeasible: ")  # under the job's id and status, which it repeated
    assert said in " ".join(out.split())  # whole, wrapped to the terminal
    assert max(len(line) for line in out.splitlines()) <= 100, out
    code, out, _ = run_cli(capsys, "results", str(tmp_path / "s.sqlite"), "--full")
    assert code == 0 and any(said in line for line in out.splitlines()), out  # --full: each message on one line
    assert job_id in out  # --full: the whole job id too


