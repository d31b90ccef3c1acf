"""Bad command lines and impossible problems, through the CLI in a subprocess: one clear line, the right exit.

Each row: the arguments (``{spec}`` is the spec written from the row's overrides, ``{tmp}`` the test folder),
the exit code, and words the single stderr line must contain (the field and the value it names).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import TINY_PLATFORM, TINY_WORKLOAD

PLATFORM, WORKLOAD = TINY_PLATFORM, TINY_WORKLOAD
BASE = {"name": "tiny", "family": "pipeline", "platform": PLATFORM, "workload": WORKLOAD,
        "solver": {"name": "all", "time_limit_s": 5, "seed": 0}}
TOPCUOGLU = {"name": "t", "family": "dag", "platform": "three_processors", "workload": "topcuoglu2002",
             "objectives": ["makespan"], "options": {"insertion": True}}
BIG_DAG = {"name": "big", "family": "dag", "platform": "edge_soc", "cost_model": "roofline",
           "workload": {"builder": "random_pipeline", "n_ops": 300, "seed": 0}}

ROWS = [
    # (id, spec overrides, extra args, exit code, words the message names)
    ("time-limit negative", {}, ["--time-limit", "-1"], 2, ["--time-limit", "-1"]),
    ("time-limit zero", {}, ["--time-limit", "0"], 2, ["--time-limit", "0"]),
    ("time-limit nan", {}, ["--time-limit", "nan"], 2, ["--time-limit", "nan"]),
    ("seed negative", {}, ["--seed", "-1"], 2, ["--seed", "-1"]),
    ("seed too large", {}, ["--seed", str(2**40)], 2, ["--seed", str(2**40)]),
    ("out is a file", {}, ["--out", "{tmp}/spec.yaml"], 2, ["--out", "spec.yaml", "is a file"]),
    ("unknown solver flag", {}, ["--solver", "foo"], 2, ["foo", "known solvers", "cpsat", "nsga2"]),
    ("unknown heuristic", {}, ["--solver", "heuristic:nope"], 2, ["heuristic:nope", "known solvers"]),
    ("unknown solver in spec", {"solver": {"name": "gurobi"}}, [], 2, ["solver.name", "gurobi", "cpsat"]),
    ("duplicate objectives", {"objectives": ["energy", "energy"]}, [], 2, ["objectives", "energy", "twice"]),
    ("unknown objective", {"objectives": ["throughput", "joy"]}, [], 2, ["objectives", "joy"]),
    ("dag has no power cap", {**TOPCUOGLU, "constraints": {"power_w": 100}}, [], 2,
     ["constraints.power_w", "100", "no power limit"]),
    ("unknown dag option", {**TOPCUOGLU, "options": {"insert": True}}, [], 2, ["options.insert", "insertion"]),
    ("infinite deadline", {"constraints": {"deadline_ms": float("inf")}}, [], 2, ["deadline_ms", "inf"]),
    ("time limit in spec", {"solver": {"time_limit_s": -3}}, [], 2, ["solver.time_limit_s", "-3"]),
    ("nsga2 finds nothing feasible", {"constraints": {"deadline_ms": 0.0001}}, ["--solver", "nsga2"], 3,
     ["deadline", "cannot be met", "fastest mapping takes"]),
    ("heuristic misses the deadline", {**TOPCUOGLU, "constraints": {"deadline": 60}}, ["--solver", "heuristic:heft"],
     3, ["deadline 60", "best schedule found takes", "critical path alone takes 41"]),
]


def _spec(tmp_path: Path, overrides: dict) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({**BASE, **overrides}))
    return path


@pytest.mark.parametrize(("overrides", "extra", "code", "words"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_is_one_clear_line(tmp_path, overrides, extra, code, words) -> None:
    spec = _spec(tmp_path, overrides)
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    proc = subprocess.run([sys.executable, "-m", "dse.cli", "solve", str(spec), "--quiet", *args],
                          cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("note:")]
    assert proc.returncode == code, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_unwritable_out_is_refused_before_solving(tmp_path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        probe = locked / "probe"
        try:
            probe.write_text("")
        except OSError:
            pass
        else:  # running as root: permissions do not bind, use a path under a file instead
            locked = tmp_path / "spec.yaml" / "sub"
        spec = _spec(tmp_path, {})
        proc = subprocess.run([sys.executable, "-m", "dse.cli", "solve", str(spec), "--out", str(locked / "x")],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    finally:
        (tmp_path / "locked").chmod(0o700)
    assert proc.returncode == 2, proc.stderr
    assert "--out" in proc.stderr and "solving" not in proc.stderr


def test_validate_states_the_size_of_a_huge_space(tmp_path) -> None:
    spec = tmp_path / "big.yaml"
    spec.write_text(yaml.safe_dump(BIG_DAG))
    proc = subprocess.run([sys.executable, "-m", "dse.cli", "validate", str(spec)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # 300 tasks on 4 devices: 4^300 device choices x 300^300 priority vectors;
    # by hand, 300 x log10(4) + 300 x log10(300) = 180.62 + 743.14 = 923.75
    assert "about 10^923.8 genomes" in proc.stdout
