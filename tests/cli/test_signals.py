"""The interruption rule for the long commands beyond ``dse solve`` (see tests/solvers/test_interrupts.py for solve).

The first SIGINT (sent to the whole process group, as Ctrl-C does) or SIGTERM (to the process alone, as
``kill`` does) stops the command within seconds; what finished is written and marked partial, never
presented as complete; one line on stderr; exit 130 or 143; no traceback, no process of the group left.

The tests marked ``slow`` run the real command in a process and send the signal once the command says it
is working: the progress line of the step the test stops (the simulators print theirs on a terminal, so
their standard error is one), the solve's ``solving`` line, the batch's worker processes. The others run
the same commands in this process and ask for the stop where a signal's handler would
(:meth:`dse.util.interrupt.StopToken.request`) at a chosen step, so that what a stop keeps is checked for
a step that had finished as well as for one that had not.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import dse.runtime.library
import dse.runtime.xr_scenario
from dse import cli
from dse.errors import SpecError
from dse.runtime.library import load_library
from dse.sim.realtime import STOP_EVERY, RealTimeRun
from dse.sim.schedulers import SCHEDULERS
from dse.util.interrupt import (
    Interrupted,
    StopToken,
    active_token,
    children_ignore_sigint,
    interruptible,
    stop_point,
)

ROOT = Path(__file__).resolve().parents[2]
#: The rule says 2 s; a loaded test machine gets slack (benchmarks/stop_times.py measures the real figure).
STOP_LIMIT_S = 8.0
#: How long a command may take to print the line a test waits for before the test gives up on it (imports
#: and set-up on a busy machine; a hang guard, not a measurement).
START_LIMIT_S = 180.0
#: A progress line (:class:`dse.util.progress.Progress`): ``[label   1.2s] message``.
PROGRESS = re.compile(r"^\[\S+ +[0-9.]+s\] ")


class Command:
    """``python -m dse.cli ARGV`` in a session of its own, its standard error read line by line as it comes
    (through a terminal when ``terminal``: the simulators print their progress lines only to one)."""

    def __init__(self, argv: list[str], terminal: bool = False) -> None:
        reader, writer = pty.openpty() if terminal else os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-m", "dse.cli", *argv], cwd=ROOT, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=writer, start_new_session=True)
        os.close(writer)
        self.lines: list[str] = []
        self.closed = False
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(reader,), daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        pending = b""
        try:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # a terminal reads EIO once every process writing to it has ended
                    chunk = b""
                if not chunk:
                    break
                *complete, pending = (pending + chunk).split(b"\n")
                with self._changed:
                    self.lines += [line.decode(errors="replace").rstrip("\r") for line in complete]
                    self._changed.notify_all()
        finally:
            os.close(fd)
            with self._changed:
                if pending:
                    self.lines.append(pending.decode(errors="replace").rstrip("\r"))
                self.closed = True
                self._changed.notify_all()

    def wait_for(self, text: str) -> None:
        """Block until a line of standard error holds ``text`` (fails if the command ends first)."""
        with self._changed:
            self._changed.wait_for(lambda: self.closed or any(text in line for line in self.lines),
                                   timeout=START_LIMIT_S)
            seen = list(self.lines)
        assert any(text in line for line in seen), f"no line with {text!r} on stderr: {seen[-20:]}"

    def stop(self, sig: signal.Signals) -> float:
        """Send ``sig`` (SIGINT to the group, SIGTERM to the process); seconds until the command exited."""
        assert self.proc.poll() is None, f"ended before the signal: {self.lines[-20:]}"
        sent = time.monotonic()
        if sig == signal.SIGINT:
            os.killpg(self.proc.pid, sig)
        else:
            self.proc.send_signal(sig)
        self.proc.wait(timeout=120)
        waited = time.monotonic() - sent
        self._reader.join(timeout=30)
        return waited

    def messages(self) -> list[str]:
        """The non-blank lines of standard error that are not progress lines."""
        return [line for line in self.lines if line.strip() and not PROGRESS.match(line)]

    def kill(self) -> None:
        """SIGKILL to whatever is left of the command's process group."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


@contextmanager
def command(argv: list[str], terminal: bool = False) -> Iterator[Command]:
    """A started :class:`Command`; its process group is killed on leaving the block if it still runs."""
    started = Command(argv, terminal)
    try:
        yield started
    finally:
        if started.proc.poll() is None or _group_left(started.proc.pid):
            started.kill()


def _group_left(pgid: int) -> list[int]:
    """Processes of group ``pgid`` still running (zombies waiting to be reaped do not count)."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            left.append(int(stat.parent.name))
    return left


def _one_line(lines: list[str]) -> str:
    assert len(lines) == 1 and not any("Traceback" in line for line in lines), lines
    assert lines[0].startswith("interrupted: "), lines
    return lines[0]


def _stop_at_call(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, call: int,
                  sig: signal.Signals = signal.SIGTERM) -> None:
    """Replace ``module.name`` with a wrapper that asks for a stop (as the signal handler of
    :func:`dse.util.interrupt.interruptible` does) just before its ``call``-th call runs."""
    real: Callable[..., Any] = getattr(module, name)
    calls = []

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == call:
            token = active_token()
            assert token is not None, "not inside the command's interruptible block"
            token.request(sig)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)


def _dype_spec(folder: Path, steps: int, length: int) -> Path:
    """dype_drift with ``steps`` distinct inputs and a stream of ``length``, the library read and written
    beside the spec (``libs/library.json``). The inputs are 2,000-row graphs: generating them takes
    milliseconds (the stream is generated before the first safe point), solving them takes the time."""
    spec = yaml.safe_load((ROOT / "problems" / "dype_drift.yaml").read_text())
    spec["scenario"]["stream"]["drift"].update(steps=steps, rows=2000)
    spec["scenario"]["stream"]["length"] = length
    spec["scenario"]["library"]["file"] = "libs/library.json"
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _xr_spec(folder: Path, duration_s: float) -> tuple[Path, dict]:
    spec = yaml.safe_load((ROOT / "problems" / "xr_ar_gaming.yaml").read_text())
    spec["scenario"]["duration_s"] = duration_s
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path, spec


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code", "working_on", "regimes_kept"), [
    pytest.param(signal.SIGINT, 130, "library: regime 1/", 0, id="2-130"),  # the first regime's solve
    pytest.param(signal.SIGTERM, 143, "library: regime 2/", 1, id="15-143"),  # the first regime solved
])
def test_dype_simulate_stops_at_once_and_never_saves_a_cut_short_library(tmp_path, sig, code, working_on,
                                                                         regimes_kept) -> None:
    # 120 distinct inputs, each solved exactly for the oracle: minutes of work, the signal lands mid-run
    spec = _dype_spec(tmp_path, steps=120, length=240)
    out = tmp_path / "out"
    with command(["simulate", str(spec), "--out", str(out)], terminal=True) as run:
        run.wait_for(working_on)
        waited = run.stop(sig)
        assert run.proc.returncode == code, run.lines
        assert waited < STOP_LIMIT_S, f"took {waited:.1f} s to stop"
        line = _one_line(run.messages())
        assert not (tmp_path / "libs" / "library.json").exists(), "a cut-short run saved the library file"
        info = json.loads((out / "partial.json").read_text())  # what had finished: written, marked partial
        assert info["complete"] is False and info["signal"] == sig and info["policies_finished"] == []
        library = json.loads((out / "library.json").read_text())
        assert library["partial"] is True and len(library["regimes"]) == regimes_kept
        assert str(out) in line
        assert not _group_left(run.proc.pid)


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_xr_simulate_keeps_the_schedulers_that_finished(tmp_path, sig, code) -> None:
    spec, _ = _xr_spec(tmp_path, duration_s=600.0)  # minutes of work: the signal lands mid-run
    out = tmp_path / "out"
    with command(["simulate", str(spec), "--out", str(out)], terminal=True) as run:
        run.wait_for("fcfs (1/")  # the reference scheduler runs (seconds): nothing has finished
        waited = run.stop(sig)
        assert run.proc.returncode == code, run.lines
        assert waited < STOP_LIMIT_S, f"took {waited:.1f} s to stop"
        line = _one_line(run.messages())
        assert "no scheduler had finished" in line
        assert not (out / "summary.csv").exists() and not (out / "partial.json").exists()
        assert not _group_left(run.proc.pid)


@pytest.mark.slow
def test_exhaustive_on_a_multimodel_spec_keeps_its_time_limit(tmp_path) -> None:
    spec = {"name": "xr_small", "family": "multimodel", "platform": "Quad_4K_Hetero",
            "workload": "social_interactionA", "objectives": ["uxcost", "energy"],
            "cost_model": {"name": "accelerator", "blocks_per_model": 1},
            "options": {"search_duration_s": 2.0, "priority_levels": 2},
            "solver": {"name": "exhaustive", "time_limit_s": 600, "seed": 0}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "dse.cli", "solve", str(tmp_path / "spec.yaml"), "--time-limit",
                           "2", "--quiet"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    assert "status time_limit" in done.stdout
    assert wall < 2 + 15, f"the run took {wall:.1f} s with --time-limit 2 (imports included)"


@pytest.mark.slow
def test_exhaustive_on_a_multimodel_spec_stops_on_sigint(tmp_path) -> None:
    spec = {"name": "xr_small", "family": "multimodel", "platform": "Quad_4K_Hetero",
            "workload": "social_interactionA", "objectives": ["uxcost", "energy"],
            "cost_model": {"name": "accelerator", "blocks_per_model": 1},
            "options": {"search_duration_s": 2.0, "priority_levels": 2},
            "solver": {"name": "exhaustive", "time_limit_s": 600, "seed": 0}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    with command(["solve", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out")]) as run:
        run.wait_for("solving")  # "[exhaustive] solving (time limit 600 s; ...)"
        waited = run.stop(signal.SIGINT)
        assert run.proc.returncode == 130, run.lines
        assert waited < STOP_LIMIT_S and not any("Traceback" in line for line in run.lines), run.lines
    frame = pd.read_csv(tmp_path / "out" / "front.csv")
    assert set(frame["status"]) <= {"interrupted"}


@pytest.mark.slow
def test_batch_stops_its_workers_silently(tmp_path) -> None:
    spec = {"name": "slow", "family": "pipeline", "platform": "edge_soc",
            "workload": {"builder": "random_pipeline", "n_ops": 40, "seed": 1},
            "solver": {"name": "cpsat", "time_limit_s": 60, "seed": 0}}
    (tmp_path / "slow.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump({"solver.seed": list(range(6))}))
    with command(["batch", str(tmp_path / "slow.yaml"), "--grid", str(tmp_path / "grid.yaml"), "--store",
                  str(tmp_path / "s.sqlite"), "--workers", "2", "--quiet"]) as run:
        deadline = time.monotonic() + START_LIMIT_S  # the workers (forked from the fork server) run: the sweep
        while len(_group_left(run.proc.pid)) < 4 and time.monotonic() < deadline and run.proc.poll() is None:
            time.sleep(0.1)                        # has started (a hang guard, not a measurement)
        waited = run.stop(signal.SIGINT)
        assert run.proc.returncode == 130, run.lines
        assert waited < STOP_LIMIT_S, f"took {waited:.1f} s to stop"
        lines = run.messages()
        assert lines == [lines[0]] and "interrupted:" in lines[0], run.lines
        assert not any("Traceback" in line for line in run.lines), run.lines
        left = _group_left(run.proc.pid)
        deadline = time.monotonic() + 10  # the parent has exited; its workers' exits may still be under way
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = _group_left(run.proc.pid)
        assert not left, "worker processes outlived the sweep"


# --------------------------------------------------------------------------- in process: what a stop keeps


def test_dype_simulate_stopped_mid_library_writes_the_finished_regimes_as_a_partial_library(
        tmp_path, capsys, monkeypatch) -> None:
    """The stop comes as the second regime's solve starts: the first regime is kept in out/library.json
    marked partial, the library file beside the spec is not written, no policy ran."""
    spec = _dype_spec(tmp_path, steps=6, length=12)
    out = tmp_path / "out"
    _stop_at_call(monkeypatch, dse.runtime.library, "configurations", call=2)
    assert cli.main(["simulate", str(spec), "--out", str(out), "--quiet"]) == 143
    captured = capsys.readouterr()
    line = _one_line([line for line in captured.err.splitlines() if line.strip()])
    assert str(out) in line and captured.out == ""
    assert not (tmp_path / "libs" / "library.json").exists(), "a cut-short run saved the library file"
    info = json.loads((out / "partial.json").read_text())
    assert info["complete"] is False and info["signal"] == signal.SIGTERM
    assert info["policies_finished"] == [] and info["policies_missing"]
    library = json.loads((out / "library.json").read_text())
    assert library["partial"] is True and [r["name"] for r in library["regimes"]] == ["r0"]
    assert not (out / "summary.csv").exists()


def test_xr_simulate_stopped_in_the_second_scheduler_keeps_the_first(tmp_path, capsys, monkeypatch) -> None:
    """The stop comes as the second scheduler starts: fcfs (the reference, run first) is written with
    partial.json naming it finished and every other scheduler missing; no timeline plot."""
    spec, raw = _xr_spec(tmp_path, duration_s=2.0)
    out = tmp_path / "out"
    _stop_at_call(monkeypatch, dse.runtime.xr_scenario, "simulate", call=2, sig=signal.SIGINT)
    assert cli.main(["simulate", str(spec), "--out", str(out), "--quiet"]) == 130
    captured = capsys.readouterr()
    line = _one_line([line for line in captured.err.splitlines() if line.strip()])
    assert "schedulers finished" in line and str(out) in line and captured.out == ""
    info = json.loads((out / "partial.json").read_text())
    assert info["complete"] is False and info["schedulers_finished"] == ["fcfs"]
    everyone = list(raw["scenario"].get("schedulers", SCHEDULERS))
    assert sorted(info["schedulers_finished"] + info["schedulers_missing"]) == sorted(everyone)
    assert list(pd.read_csv(out / "summary.csv")["scheduler"]) == ["fcfs"]
    assert set(pd.read_csv(out / "trace.csv")["scheduler"]) == {"fcfs"}
    assert not (out / "timeline.png").exists()


def _count_ux_bounds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the calls of the UXCost floor (seconds of work on a long scenario) by ``dse simulate``."""
    calls: list[int] = []
    real = dse.runtime.xr_scenario.ux_bound

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(dse.runtime.xr_scenario, "ux_bound", counted)
    return calls


def test_xr_simulate_stopped_inside_the_second_schedulers_run_ends_within_one_check(
        tmp_path, capsys, monkeypatch) -> None:
    """The stop comes after 1,000 block ends of the second scheduler's run (a 60 s scenario: about 18,000
    per run): the run plays at most one stop check's worth of events after it (STOP_EVERY + 1), fcfs's rows
    are all written, and the UXCost floor is not computed (its columns empty, partial.json says so)."""
    spec, _ = _xr_spec(tmp_path, duration_s=60.0)
    out = tmp_path / "out"
    block_ends: dict[str, int] = {}
    after_stop: list[int] = []
    real_end_block = RealTimeRun.end_block

    def counting(run: RealTimeRun, frame: Any, now: int) -> None:
        name = run.scheduler.name
        block_ends[name] = block_ends.get(name, 0) + 1
        token = active_token()
        assert token is not None
        if token.stopped:
            after_stop.append(1)
        elif len(block_ends) == 2 and block_ends[name] == 1000:
            token.request(signal.SIGINT)
        real_end_block(run, frame, now)

    monkeypatch.setattr(RealTimeRun, "end_block", counting)
    floors = _count_ux_bounds(monkeypatch)
    assert cli.main(["simulate", str(spec), "--out", str(out), "--quiet"]) == 130
    second = list(block_ends)[1]
    assert list(block_ends) == ["fcfs", second] and len(after_stop) <= STOP_EVERY + 1
    assert block_ends[second] < block_ends["fcfs"] / 2  # far from the whole run
    assert floors == []
    info = json.loads((out / "partial.json").read_text())
    assert info["schedulers_finished"] == ["fcfs"] and info["uxcost_floor"] == "not computed"
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["scheduler"]) == ["fcfs"] and summary["uxcost_floor"].isna().all()
    trace = pd.read_csv(out / "trace.csv", keep_default_na=False)
    assert set(trace["scheduler"]) == {"fcfs"}
    assert (trace["accelerator"] != "").sum() == block_ends["fcfs"]  # one row per executed block, all of them
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "a temporary file was left"
    _one_line([line for line in capsys.readouterr().err.splitlines() if line.strip()])


def test_xr_simulate_stopped_while_a_finished_schedulers_trace_is_written_leaves_it_out(
        tmp_path, capsys, monkeypatch) -> None:
    """The stop comes as the second scheduler's run returns, before its rows are written: no chunk of them
    is written (a stop check precedes each chunk), the scheduler counts as missing, no floor is computed."""
    spec, _ = _xr_spec(tmp_path, duration_s=4.0)
    out = tmp_path / "out"
    real_simulate = dse.runtime.xr_scenario.simulate
    runs: list[str] = []
    written_after_stop: list[int] = []
    real_to_csv = pd.DataFrame.to_csv

    def simulate_then_stop(*args: Any, **kwargs: Any) -> Any:
        result = real_simulate(*args, **kwargs)
        runs.append(result.scheduler)
        if len(runs) == 2:
            token = active_token()
            assert token is not None
            token.request(signal.SIGTERM)
        return result

    def to_csv(frame: pd.DataFrame, *args: Any, **kwargs: Any) -> Any:
        token = active_token()
        if token is not None and token.stopped and "block" in frame.columns:  # trace rows, not the summary
            written_after_stop.append(len(frame))
        return real_to_csv(frame, *args, **kwargs)

    monkeypatch.setattr(dse.runtime.xr_scenario, "simulate", simulate_then_stop)
    monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv)
    monkeypatch.setattr(dse.runtime.xr_scenario, "TRACE_CHUNK_ROWS", 100)
    floors = _count_ux_bounds(monkeypatch)
    assert cli.main(["simulate", str(spec), "--out", str(out), "--quiet"]) == 143
    assert runs[0] == "fcfs" and len(runs) == 2
    assert written_after_stop == [] and floors == []
    info = json.loads((out / "partial.json").read_text())
    assert info["schedulers_finished"] == ["fcfs"] and runs[1] in info["schedulers_missing"]
    assert set(pd.read_csv(out / "trace.csv")["scheduler"]) == {"fcfs"}
    _one_line([line for line in capsys.readouterr().err.splitlines() if line.strip()])


def test_a_partial_library_file_is_refused(tmp_path) -> None:
    path = tmp_path / "library.json"
    path.write_text(json.dumps({"format": 1, "partial": True, "context": {}, "scale": [1.0], "regimes": []}))
    with pytest.raises(SpecError, match="cut short"):
        load_library(path)


def test_a_library_genome_out_of_range_is_refused_before_conversion(tmp_path) -> None:
    path = tmp_path / "library.json"
    config = {"genome": [0, 10**40], "throughput": 1.0, "energy_j": 1.0, "latency_s": 1.0, "solver": "cpsat",
              "proven": True}
    regime = {"name": "r0", "representative": {}, "centre": [0.0], "members": [], "configs": [config]}
    path.write_text(json.dumps({"format": 1, "context": {}, "scale": [1.0], "regimes": [regime]}))
    with pytest.raises(SpecError, match=r"regimes\[0\]\.configs\[0\]\.genome"):
        load_library(path)


def test_stop_point_raises_only_after_a_request_and_hands_over_the_partial_result() -> None:
    stop_point()  # outside every block: nothing to do
    with interruptible() as token:
        stop_point(lambda: 1 / 0)  # not stopped: the partial result is not even built
        token.request(signal.SIGTERM)
        with pytest.raises(Interrupted) as caught:
            stop_point(lambda: ["finished"])
    assert caught.value.partial == ["finished"] and caught.value.exit_code == 143
    assert isinstance(token, StopToken)


def test_children_started_in_the_block_ignore_sigint_and_the_parent_keeps_its_handler() -> None:
    before = signal.getsignal(signal.SIGINT)
    with children_ignore_sigint():
        child = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT))"],
                               capture_output=True, text=True)
    assert child.stdout.strip() == str(int(signal.SIG_IGN))
    assert signal.getsignal(signal.SIGINT) is before
