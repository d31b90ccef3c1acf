"""A batch stopped while Dask's workers start: one ``interrupted:`` line and exit 143, never Dask's tracebacks.

A SIGTERM sent to the whole process group reaches the fork server and the worker processes as well as
``dse batch``: the nannies then fail to start their workers (the cluster's start raises ``Nanny failed to
start``) or a nanny still starting is asked to close (``AssertionError`` in its ``kill``). These tests
play each in this process: the stop is requested where the signal's
handler would (:meth:`dse.util.interrupt.StopToken.request`); tests/cli/test_batch_group_sigterm.py sends
the real signal to a real command.
"""

from __future__ import annotations

import signal
from typing import Any

import pytest

import dse.store.batch
from dse.runs.sweep import expand_jobs
from dse.store.batch import _close, execute
from dse.store.database import Store
from dse.util.interrupt import active_token, interruptible
from tests.conftest import TINY_SPEC, write_yaml


def _stopped_while_starting(workers: int | None, n_jobs: int) -> tuple[Any, Any]:
    """What a LocalCluster does when the group's SIGTERM kills its workers as they start."""
    token = active_token()
    assert token is not None, "the cluster starts inside the batch's interruptible block"
    token.request(signal.SIGTERM)
    raise RuntimeError("Nanny failed to start.")


def test_a_stop_while_the_workers_start_is_one_line_and_exit_143(tmp_path, capfd, monkeypatch) -> None:
    from dse import cli

    monkeypatch.setattr(dse.store.batch, "_local_client", _stopped_while_starting)
    spec = write_yaml(tmp_path / "tiny.yaml", TINY_SPEC)
    grid = write_yaml(tmp_path / "grid.yaml", {"solver.seed": [0, 1, 2]})
    code = cli.main(["batch", str(spec), "--grid", str(grid), "--store", str(tmp_path / "s.sqlite"),
                     "--workers", "2"])
    out, err = capfd.readouterr()
    assert code == 143, err
    assert err.strip().splitlines() == ["interrupted: 3 jobs not run; run the same command again to resume"], err
    assert "3 jobs: 0 already in" in out and "0 run now" in out, out
    with Store(tmp_path / "s.sqlite") as store:
        assert store.finished() == {}


def test_a_stop_before_the_workers_start_starts_none(tmp_path, monkeypatch) -> None:
    def no_cluster(workers: int | None, n_jobs: int) -> tuple[Any, Any]:
        raise AssertionError("a cluster was started after the stop")

    monkeypatch.setattr(dse.store.batch, "_local_client", no_cluster)
    with interruptible() as token:  # the command's block: the batch's own shares its token
        token.request(signal.SIGTERM)
        report = execute(expand_jobs(TINY_SPEC, {"solver.seed": [0, 1]}), tmp_path / "s.sqlite", workers=2)
    assert (report.jobs, report.finished, report.interrupted, report.exit_code) == (2, 0, signal.SIGTERM, 143)


def test_a_start_that_fails_without_a_stop_still_raises(tmp_path, monkeypatch) -> None:
    def broken(workers: int | None, n_jobs: int) -> tuple[Any, Any]:
        raise RuntimeError("no ports left")

    monkeypatch.setattr(dse.store.batch, "_local_client", broken)
    with pytest.raises(RuntimeError, match="no ports left"):
        execute(expand_jobs(TINY_SPEC), tmp_path / "s.sqlite", workers=1)


class _StartingCluster:
    """A cluster whose close meets a nanny still starting, as distributed's ``Nanny.kill`` asserts."""

    workers: dict[str, Any] = {}

    def close(self, timeout: float | None = None) -> None:
        raise AssertionError("Status.starting")


class _Client:
    def close(self, timeout: float | None = None) -> None:
        pass


def test_closing_after_a_stop_swallows_what_a_starting_nanny_raises() -> None:
    _close((_StartingCluster(), _Client()), stopped=True)
    with pytest.raises(AssertionError):  # without a stop, a failing close is a fault to show
        _close((_StartingCluster(), _Client()), stopped=False)
