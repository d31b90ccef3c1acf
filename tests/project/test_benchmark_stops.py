"""Benchmarks stop on the first SIGINT or SIGTERM and never report a run cut short (``benchmarks/stopping.py``).

Before this rule, ``timeout 60 python benchmarks/exact_vs_approx.py`` ran 11 minutes: the signal cut one
CP-SAT solve short and the loop went on, recording that solve as a normal result.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from stopping import BenchmarkStop, benchmark_stops  # noqa: E402

from dse.util.interrupt import Interrupted, StopToken  # noqa: E402

#: Scripts that run no long loop of their own (a module of helpers, or one that sends the signals itself).
NO_LOOP = {"stopping.py", "stop_times.py", "csv_rows.py"}  # no loop of their own


def _started(args: list[str], **kwargs) -> subprocess.Popen[str]:
    env = {**os.environ, "DSE_BACKGROUND_COMPILE": "0", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(args, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            **kwargs)


def _wait_for_header(proc: subprocess.Popen[str], deadline_s: float = 60.0) -> None:
    """Block until the benchmark printed its table header (its imports are done and the first case started)."""
    start = time.monotonic()
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "kind" in line, line
    assert time.monotonic() - start < deadline_s


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_benchmark_and_the_cut_short_case_is_not_reported(signum: int) -> None:
    # A synthetic 32-op instance: CP-SAT does not prove its front within the 300 s limit (the figures table of
    # benchmarks/README.md), so the first case is still running when the signal arrives.
    proc = _started([sys.executable, "benchmarks/exact_vs_approx.py", "--sizes", "32", "--kind", "synthetic",
                     "--time-limit", "300"], start_new_session=True)
    try:
        _wait_for_header(proc)
        time.sleep(1.0)
        sent = time.monotonic()
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends: the whole process group
        else:
            proc.send_signal(signal.SIGTERM)  # what timeout and kill send: the process alone
        out, err = proc.communicate(timeout=60)
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 128 + signum
    assert waited < 30, f"{waited:.1f} s from the signal to the exit"
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith("exact_vs_approx: interrupted by " + signal.Signals(signum).name), err
    assert "after 0 finished case(s)" in lines[-1] and "cut short and not reported: synthetic 32 ops, CP-SAT" in lines[-1]
    assert out.strip() == "", f"a cut-short case was printed as a result: {out!r}"


def test_keep_returns_results_until_a_stop_then_raises() -> None:
    token = StopToken()
    stop = BenchmarkStop(token)
    assert stop.keep(1, "first") == 1 and stop.finished == 1
    stop.check()
    token.request(signal.SIGTERM)
    with pytest.raises(Interrupted):
        stop.keep(2, "second")
    assert stop.cut_short == "second" and stop.finished == 1
    with pytest.raises(Interrupted):
        stop.check()


def test_a_child_process_is_terminated_not_waited_for() -> None:
    token = StopToken()
    stop = BenchmarkStop(token)
    assert stop.run([sys.executable, "-c", "print('ok')"], capture_output=True).stdout.strip() == "ok"
    started = time.monotonic()
    import threading

    threading.Timer(0.5, token.request, args=(signal.SIGTERM,)).start()
    with pytest.raises(Interrupted):
        stop.run([sys.executable, "-c", "import time; time.sleep(60)"])
    assert time.monotonic() - started < 10


def test_the_block_exits_with_the_signal_status(capsys: pytest.CaptureFixture[str]) -> None:
    import dse.util.interrupt

    with pytest.raises(SystemExit) as exited:
        with benchmark_stops("demo") as stop:
            assert dse.util.interrupt.active_token() is stop.token
            stop.keep("row", "a")
            stop.token.request(signal.SIGINT)
            stop.keep("row", "b")
            raise AssertionError("keep returned a cut-short result")
    assert exited.value.code == 130
    assert "demo: interrupted by SIGINT after 1 finished case(s), printed above; cut short and not reported: b" in (
        capsys.readouterr().err)


def test_every_benchmark_with_a_loop_follows_the_stop_rule() -> None:
    """Each script either runs inside ``benchmark_stops`` or is named in NO_LOOP."""
    for script in sorted(BENCHMARKS.glob("*.py")):
        if script.name in NO_LOOP:
            continue
        tree = ast.parse(script.read_text())
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        assert "benchmark_stops" in names, f"{script.name} does not run under benchmarks/stopping.py's rule"
