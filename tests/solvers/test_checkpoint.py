"""Checkpoints of the exact box search (:mod:`dse.solvers.checkpoint`): a run killed midway goes on from its
state and ends on the complete front, searching only what was still open.

A kill is a search that raises midway (an exception no solver catches, as a crash or SIGKILL leaves the run:
no final write), with a checkpoint written before every box; one test kills a real process with SIGKILL. The golden front is the uninterrupted serial
run's (checked against exhaustive search in ``tests/mapping/pipeline/test_three_objectives.py``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import dse
from dse.cost.synthetic import random_tables
from dse.errors import SpecError
from dse.mapping.pipeline import PipelineProblem
from dse.pareto import OPTIMAL
from dse.runs.spec import build_problem, load_spec
from dse.solvers import cpsat as cpsat_module
from dse.solvers.checkpoint import Checkpoint, read_state
from tests.conftest import run_cli


class Killed(Exception):
    """What a killed run leaves: the search ends where it was, nothing written after."""


def problem() -> PipelineProblem:
    return PipelineProblem(random_tables(5, n_ops=4, n_dev=3), ("throughput", "energy", "latency"), memory=False)


def values(front: Any) -> list[tuple[float, ...]]:
    return sorted(map(tuple, front.internal().tolist()))


def killed_at(call: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The box search raises :class:`Killed` at its ``call``-th box."""
    real = cpsat_module.search_box
    calls = {"n": 0}

    def search(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == call:
            raise Killed
        return real(*args, **kwargs)

    monkeypatch.setattr(cpsat_module, "search_box", search)


def test_a_killed_box_search_goes_on_from_its_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed at its 6th box, the run left the state of its first 5 (a write before each box); the run that
    goes on from it ends optimal on the complete front with gap 0, in fewer CP-SAT solves than the whole
    search took, and says it went on from the checkpoint."""
    p = problem()
    complete = dse.solve(p, "cpsat", time_limit=60, seed=0, workers=1)
    assert complete.status == OPTIMAL and len(complete) >= 4
    first = Checkpoint(tmp_path / "first.json", "key", every_s=0.0)
    with monkeypatch.context() as m:
        killed_at(6, m)
        with pytest.raises(Killed):
            dse.solve(p, "cpsat", time_limit=60, seed=0, workers=1, checkpoint=first)
    state, _ = read_state(first.write_to, "key", _top(first.write_to), p.n_genes)
    assert state is not None and state.values and state.boxes  # midway: points found, boxes open
    second = Checkpoint(tmp_path / "second.json", "key", read_from=first.write_to)
    resumed = dse.solve(p, "cpsat", time_limit=60, seed=0, workers=1, checkpoint=second)
    assert resumed.status == OPTIMAL and values(resumed) == values(complete)
    assert resumed.certified is not None and resumed.certified.gap == 0.0
    assert resumed.stats.solver_calls < complete.stats.solver_calls
    assert f"went on from a checkpoint ({len(state.values)} points, {len(state.boxes)} open boxes)" \
        in resumed.stats.message
    final, _ = read_state(second.write_to, "key", state.top, p.n_genes)
    assert final is not None and final.boxes == () and len(final.values) >= len(complete)


def _top(path: Path) -> tuple[int, ...]:
    return tuple(json.loads(path.read_text())["top"])


def test_a_checkpoint_of_another_problem_is_not_used(tmp_path: Path) -> None:
    """A state written under another key: the run starts afresh, says why, and still ends on the front."""
    p = problem()
    first = Checkpoint(tmp_path / "a.json", "spec A")
    dse.solve(p, "cpsat", time_limit=60, seed=0, workers=1, checkpoint=first)
    other = dse.solve(p, "cpsat", time_limit=60, seed=0, workers=1,
                      checkpoint=Checkpoint(tmp_path / "b.json", "spec B", read_from=first.write_to))
    assert other.status == OPTIMAL and "checkpoint not used, starting afresh" in other.stats.message
    assert "written for another problem" in other.stats.message


@pytest.mark.parametrize(("text", "field"), [
    ("not json", "checkpoint"),
    ('{"format": "dse-region-checkpoint/1", "key": "k", "top": [9, 9, 9], "boxes": [], '
     '"genomes": [[0, 1]], "values": [[1, 2, 3]]}', "genomes"),
    ('{"format": "dse-region-checkpoint/1", "key": "k", "top": [9, 9, 9], "boxes": [[[1, 2], [0, 0, 0]]], '
     '"genomes": [], "values": []}', "boxes"),
    ('{"format": "dse-region-checkpoint/1", "key": "k", "top": ["9"], "boxes": [], "genomes": [], "values": []}',
     "top"),
])
def test_a_file_that_is_not_a_checkpoint_is_refused_naming_its_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "checkpoint-cpsat.json"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        read_state(path, "k", (9, 9, 9), 5)
    assert str(path) in str(err.value) and field in str(err.value)


@pytest.mark.slow
def test_the_command_resumes_a_run_killed_before_its_first_front(tmp_path: Path, capsys: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``dse solve --out DIR`` on three objectives keeps ``DIR/checkpoint-cpsat.json`` (its first write comes
    before the first box); a run killed before it wrote a front leaves only that file, and ``--resume DIR``
    goes on from it to the complete front (golden: exhaustive search of the same spec)."""
    spec = tmp_path / "three.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "three", "family": "pipeline", "platform": "edge_soc",
        "workload": {"builder": "random_pipeline", "n_ops": 4, "seed": 3},
        "objectives": ["throughput", "energy", "latency"],
        "solver": {"name": "cpsat", "time_limit_s": 60, "seed": 0, "options": {"cpsat": {"workers": 1}}}}))
    killed = tmp_path / "killed"
    with monkeypatch.context() as m:
        killed_at(3, m)
        with pytest.raises(Killed):
            run_cli(capsys, "solve", str(spec), "--out", str(killed), "--quiet")
    capsys.readouterr()
    assert (killed / "checkpoint-cpsat.json").is_file() and not (killed / "front.json").exists()
    again = tmp_path / "again"
    code, _, _ = run_cli(capsys, "solve", str(spec), "--out", str(again), "--resume", str(killed), "--quiet")
    assert code == 0
    fronts = json.loads((again / "front.json").read_text())["fronts"]
    resumed = next(f for f in fronts if f["solver"] == "cpsat")
    assert resumed["status"] == OPTIMAL and "went on from a checkpoint" in resumed["stats"]["message"]
    exhaustive = dse.solve(build_problem(load_spec(spec)), "exhaustive", time_limit=60, seed=0)
    assert sorted(tuple(pt["internal"]) for pt in resumed["points"]) == values(exhaustive)


# the serial box search in a process of its own, writing its checkpoint before every box
_KILLED_SEARCH = """
import sys
import dse
from dse.cost.synthetic import random_tables
from dse.mapping.pipeline import PipelineProblem
from dse.solvers.checkpoint import Checkpoint
problem = PipelineProblem(random_tables(2, n_ops=7, n_dev=3), ("throughput", "energy", "latency"), memory=False)
dse.solve(problem, "cpsat", time_limit=60, seed=0, workers=1, checkpoint=Checkpoint(sys.argv[1], "key", every_s=0.0))
"""


@pytest.mark.slow
def test_a_search_killed_by_sigkill_resumes_to_the_exhaustive_front(tmp_path: Path) -> None:
    """A real process running the serial box search (3 objectives, a 10-point front) is SIGKILLed once its
    checkpoint holds 3 points with boxes still open; the search resumed here from that file ends optimal
    on the exhaustive solver's front (golden: brute force over all 3^7 mappings) with gap 0."""
    p = PipelineProblem(random_tables(2, n_ops=7, n_dev=3), ("throughput", "energy", "latency"), memory=False)
    path = tmp_path / "checkpoint.json"
    child = subprocess.Popen([sys.executable, "-c", _KILLED_SEARCH, str(path)])
    state = None
    try:
        while child.poll() is None:
            if path.is_file():
                state, _ = read_state(path, "key", _top(path), p.n_genes)
                if state is not None and len(state.values) >= 3 and state.boxes:
                    os.kill(child.pid, signal.SIGKILL)
                    break
            time.sleep(0.005)
    finally:
        child.kill()  # no-op once it is dead; never leaves it running
        code = child.wait()
    assert code == -signal.SIGKILL and state is not None  # killed midway, not finished
    resumed = dse.solve(p, "cpsat", time_limit=60, seed=0, workers=1,
                        checkpoint=Checkpoint(tmp_path / "again.json", "key", read_from=path))
    exhaustive = dse.solve(p, "exhaustive", time_limit=60, seed=0)
    assert resumed.status == OPTIMAL and values(resumed) == values(exhaustive) and len(exhaustive) == 10
    assert resumed.certified is not None and resumed.certified.gap == 0.0
    assert "went on from a checkpoint" in resumed.stats.message
