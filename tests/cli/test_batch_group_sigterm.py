"""SIGTERM to ``dse batch``'s whole process group while Dask's workers start: one line, exit 143, every time.

The signal reaches the fork server and the workers it is forking as well as the command, so Dask's start
fails under the command (tests/store/test_batch_stop.py plays the same in this process). Each try sends
it at another moment of the start, read from the processes of the group: ``dse batch``, the
resource tracker and the fork server (3), the first worker forked (4), both (5); each moment is tried
twice, since which of Dask's start-up steps the signal meets varies from run to run.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.cli.test_signals import START_LIMIT_S, _group_left, command
from tests.conftest import write_yaml

#: Jobs of a few seconds each, so that none has finished when the signal comes.
SPEC = {"name": "slow", "family": "pipeline", "platform": "edge_soc",
        "workload": {"builder": "random_pipeline", "n_ops": 30, "seed": 1},
        "solver": {"name": "cpsat", "time_limit_s": 60, "seed": 0}}


@pytest.mark.slow
@pytest.mark.parametrize("processes", [3, 4, 5])  # the six tries of the finding (4 of 6 failed) measured it once
def test_sigterm_to_the_group_as_the_workers_start(tmp_path, processes: int) -> None:
    spec = write_yaml(tmp_path / "slow.yaml", SPEC)
    grid = write_yaml(tmp_path / "grid.yaml", {"solver.seed": [0, 1, 2, 3]})
    with command(["batch", str(spec), "--grid", str(grid), "--store", str(tmp_path / "s.sqlite"),
                  "--workers", "2"]) as run:
        deadline = time.monotonic() + START_LIMIT_S  # a hang guard, not a measurement
        while len(_group_left(run.proc.pid)) < processes and time.monotonic() < deadline \
                and run.proc.poll() is None:
            time.sleep(0.01)
        assert run.proc.poll() is None, f"ended before the signal: {run.lines}"
        os.killpg(run.proc.pid, signal.SIGTERM)
        run.proc.wait(timeout=120)
        run._reader.join(timeout=30)
        assert not any("Traceback" in line or "Error" in line for line in run.lines), run.lines
        lines = run.messages()
        assert len(lines) == 1 and lines[0].startswith("interrupted: "), run.lines
        assert run.proc.returncode == 143, run.lines
        deadline = time.monotonic() + 10  # the command has exited; its workers' exits may still be under way
        while _group_left(run.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _group_left(run.proc.pid), "processes of the batch outlived it"
