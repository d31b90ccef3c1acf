"""Ctrl-C and SIGTERM stop every solver within seconds and keep what was found (CLI and Python API)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

import dse

#: A pipeline whose exact front takes far longer than the test: CP-SAT finds points early, never finishes.
HARD = {
    "name": "hard",
    "family": "pipeline",
    "platform": "edge_soc",
    "workload": {"builder": "random_pipeline", "n_ops": 60, "seed": 3},
    "objectives": ["throughput", "energy"],
    "solver": {"name": "cpsat", "time_limit_s": 120, "seed": 0, "options": {"nsga2": {"patience": None}}},
}


def _start(tmp_path: Path, solver: str) -> subprocess.Popen:
    spec = tmp_path / "hard.yaml"
    spec.write_text(yaml.safe_dump(HARD))
    # SIGINT at its default disposition, as from a terminal (a parent may have set it to ignored)
    return subprocess.Popen(
        [sys.executable, "-m", "dse.cli", "solve", str(spec), "--solver", solver, "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for_solving(proc: subprocess.Popen) -> None:
    """Block until the CLI says the solve started (its first stderr line), then give it time to find points."""
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "solving" in line, line
    time.sleep(1.0)


@pytest.mark.slow
@pytest.mark.parametrize(("solver", "sig", "code"), [
    ("cpsat", signal.SIGINT, 130),
    ("cpsat", signal.SIGTERM, 143),
    ("nsga2", signal.SIGINT, 130),
    ("nsga2", signal.SIGTERM, 143),
])
def test_cli_stops_within_seconds_and_writes_the_front_so_far(tmp_path, solver, sig, code) -> None:
    proc = _start(tmp_path, solver)
    try:
        _wait_for_solving(proc)
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        waited = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == code, err
    # the signal ended it, not its 120 s time limit (communicate's 30 s bound); how fast is a figure,
    # measured by benchmarks/stop_times.py, not asserted here
    assert waited < 30.0
    assert "Traceback" not in err
    frame = pd.read_csv(tmp_path / "out" / "front.csv")
    assert len(frame) >= 1 and set(frame["status"]) == {"interrupted"} and frame["feasible"].all()
    assert set(frame["solver"]) == {solver}


def _interrupt_soon(delay: float) -> threading.Timer:
    timer = threading.Timer(delay, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.fixture
def python_ctrl_c():
    """Python's own Ctrl-C handler (KeyboardInterrupt) during the test, whatever the runner started with (a
    job a shell without job control starts in the background inherits SIGINT ignored); the runner's after."""
    runner = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, runner)


@pytest.mark.parametrize("solver", ["cpsat", "nsga2"])
def test_api_interrupt_returns_the_front_and_restores_the_handler(solver: str, python_ctrl_c) -> None:
    problem = dse.build_problem(dse.runs.spec.spec_from_dict(HARD, "<test>"))
    before = signal.getsignal(signal.SIGINT)
    timer = _interrupt_soon(2.0)
    start = time.monotonic()
    options = {"patience": None} if solver == "nsga2" else {}
    front = dse.solve(problem, solver=solver, time_limit=60, seed=0, progress=False, **options)
    timer.cancel()
    assert time.monotonic() - start < 10.0
    assert front.status == "interrupted" and len(front) >= 1
    assert signal.getsignal(signal.SIGINT) is before
    # the next Ctrl-C behaves as it did before the solve: KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)


def test_interrupt_before_any_front_still_writes_the_files(tmp_path, capsys, monkeypatch) -> None:
    from dse import cli
    from dse.util.interrupt import StopToken

    spec = tmp_path / "hard.yaml"
    spec.write_text(yaml.safe_dump({**HARD, "workload": {"builder": "random_pipeline", "n_ops": 6, "seed": 1}}))

    def stopped_at_once(problem, solver, **kw):
        import dse.util.interrupt as interrupt

        assert isinstance(interrupt._active, StopToken)
        interrupt._active.request(signal.SIGINT)
        raise KeyboardInterrupt

    monkeypatch.setattr(dse.solvers, "solve", stopped_at_once)
    code = cli.main(["solve", str(spec), "--out", str(tmp_path / "out"), "--quiet"])
    capsys.readouterr()
    assert code == 130
    assert (tmp_path / "out" / "front.csv").exists() and (tmp_path / "out" / "front.json").exists()
