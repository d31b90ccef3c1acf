"""The interruption rule for the long commands beyond ``dse solve`` (see tests/solvers/test_interrupts.py for solve).

The first SIGINT (sent to the whole process group, as Ctrl-C does) or SIGTERM (to the process alone, as
``kill`` does) stops the command within seconds; what finished is written and marked partial, never
presented as complete; one line on stderr; exit 130 or 143; no traceback, no process of the group left.
The signal is sent a few seconds after the start, once the command is past Python's imports.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dse.errors import SpecError
from dse.runtime.library import load_library
from dse.sim.schedulers import SCHEDULERS
from dse.util.interrupt import (
    Interrupted,
    StopToken,
    children_ignore_sigint,
    interruptible,
    stop_point,
)

ROOT = Path(__file__).resolve().parents[2]
#: Past the imports of a fresh process on a busy two-core machine; the commands below run far longer.
WARM_S = 7.0
#: The rule says 2 s; a loaded test machine gets slack (benchmarks/stop_times.py measures the real figure).
STOP_LIMIT_S = 8.0


def _start(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dse.cli", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, start_new_session=True)


def _stop(proc: subprocess.Popen, sig: signal.Signals) -> tuple[float, str]:
    """Send ``sig`` (SIGINT to the group, SIGTERM to the process); seconds until exit, and stderr."""
    time.sleep(WARM_S)
    assert proc.poll() is None, f"ended before the signal: {proc.communicate()[1][-500:]}"
    sent = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return time.monotonic() - sent, err


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


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("interrupted: "), lines
    return lines[0]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_dype_simulate_stops_at_once_and_never_saves_a_cut_short_library(tmp_path, sig, code) -> None:
    spec = yaml.safe_load((ROOT / "problems" / "dype_drift.yaml").read_text())
    # 120 distinct inputs, each solved exactly for the oracle: minutes of work, the signal lands mid-run
    spec["scenario"]["stream"]["drift"]["steps"] = 120
    spec["scenario"]["stream"]["length"] = 240
    spec["scenario"]["library"]["file"] = "libs/library.json"  # read and written beside the spec
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    out = tmp_path / "out"
    proc = _start(["simulate", str(tmp_path / "spec.yaml"), "--out", str(out), "--quiet"])
    waited, err = _stop(proc, sig)
    assert proc.returncode == code, err
    assert waited < STOP_LIMIT_S, f"took {waited:.1f} s to stop"
    line = _one_line(err)
    assert not (tmp_path / "libs" / "library.json").exists(), "a cut-short run saved the library file"
    marker = out / "partial.json"
    if marker.exists():  # something had finished: it is written and marked partial
        info = json.loads(marker.read_text())
        assert info["complete"] is False and info["signal"] == sig
        if info["policies_finished"]:
            summary = pd.read_csv(out / "summary.csv")
            assert list(summary["policy"]) == info["policies_finished"]
            assert set(info["policies_missing"]).isdisjoint(info["policies_finished"])
        else:
            assert json.loads((out / "library.json").read_text())["partial"] is True
        assert str(out) in line
    assert not _group_left(proc.pid)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_xr_simulate_keeps_the_schedulers_that_finished(tmp_path, sig, code) -> None:
    spec = yaml.safe_load((ROOT / "problems" / "xr_ar_gaming.yaml").read_text())
    spec["scenario"]["duration_s"] = 600.0  # minutes of work: the signal lands mid-run
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    out = tmp_path / "out"
    proc = _start(["simulate", str(tmp_path / "spec.yaml"), "--out", str(out), "--quiet"])
    waited, err = _stop(proc, sig)
    assert proc.returncode == code, err
    assert waited < STOP_LIMIT_S, f"took {waited:.1f} s to stop"
    line = _one_line(err)
    if (out / "partial.json").exists():
        info = json.loads((out / "partial.json").read_text())
        summary = pd.read_csv(out / "summary.csv")
        assert list(summary["scheduler"]) == info["schedulers_finished"]
        assert sorted(info["schedulers_finished"] + info["schedulers_missing"]) == sorted(
            spec["scenario"].get("schedulers", SCHEDULERS))
        assert "schedulers finished" in line
    else:
        assert "no scheduler had finished" in line and not (out / "summary.csv").exists()


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


def test_exhaustive_on_a_multimodel_spec_stops_on_sigint(tmp_path) -> None:
    spec = {"name": "xr_small", "family": "multimodel", "platform": "Quad_4K_Hetero",
            "workload": "social_interactionA", "objectives": ["uxcost", "energy"],
            "cost_model": {"name": "accelerator", "blocks_per_model": 1},
            "options": {"search_duration_s": 2.0, "priority_levels": 2},
            "solver": {"name": "exhaustive", "time_limit_s": 600, "seed": 0}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    proc = _start(["solve", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out"), "--quiet"])
    waited, err = _stop(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    assert waited < STOP_LIMIT_S and "Traceback" not in err
    frame = pd.read_csv(tmp_path / "out" / "front.csv")
    assert set(frame["status"]) <= {"interrupted"}


def test_batch_stops_its_workers_silently(tmp_path) -> None:
    spec = {"name": "slow", "family": "pipeline", "platform": "edge_soc",
            "workload": {"builder": "random_pipeline", "n_ops": 40, "seed": 1},
            "solver": {"name": "cpsat", "time_limit_s": 60, "seed": 0}}
    (tmp_path / "slow.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump({"solver.seed": list(range(6))}))
    proc = _start(["batch", str(tmp_path / "slow.yaml"), "--grid", str(tmp_path / "grid.yaml"), "--store",
                   str(tmp_path / "s.sqlite"), "--workers", "2", "--quiet"])
    deadline = time.monotonic() + 90  # the workers (forked from the fork server) run: the sweep has started
    while len(_group_left(proc.pid)) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    waited, err = _stop(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    assert waited < STOP_LIMIT_S, f"took {waited:.1f} s to stop"
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [lines[0]] and "interrupted:" in lines[0] and "Traceback" not in err, err
    time.sleep(1.0)
    assert not _group_left(proc.pid), "worker processes outlived the sweep"


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
