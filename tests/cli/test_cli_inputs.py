"""Bad command lines and impossible problems, through the CLI: one clear line, the right exit.

Each row: the arguments (``{spec}`` is the spec written from the row's overrides, ``{tmp}`` the test folder),
the exit code, and words the single stderr line must contain (the field and the value it names). Every row
runs ``dse.cli.main`` in this process, recording the warnings a plain ``python`` would print on its
terminal (none may come); the rows of :data:`PROCESS_ROWS` (one per kind of refusal) also run as real
``python -m dse.cli`` processes (``slow``), where a traceback, a warning or any second line the interpreter
prints would show.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from dse import cli
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


#: One row per kind of refusal, also run as a real process: a flag's value (checked before the spec is read), a
#: spec field, a problem whose solve finds nothing that meets it (exit 3, after the solve).
PROCESS_ROWS = ["time-limit nan", "unknown solver in spec", "heuristic misses the deadline"]


def _spec(tmp_path: Path, overrides: dict) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({**BASE, **overrides}))
    return path


def _message_lines(stderr: str) -> list[str]:
    """The non-blank lines of stderr that are not notes (``note: exhaustive skipped: ...``)."""
    return [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("note:")]


@contextmanager
def terminal_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record the warnings that a plain ``python`` process would print on its terminal: Python's default
    filters (deprecations shown only from ``__main__``), not the test runner's."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        yield seen


def _main(argv: list[str]) -> int:
    """``dse.cli.main(argv)``; argparse's own refusals (SystemExit) give their exit code."""
    try:
        return cli.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize(("overrides", "extra", "code", "words"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_is_one_clear_line(tmp_path, capsys, monkeypatch, overrides, extra, code, words) -> None:
    spec = _spec(tmp_path, overrides)
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    monkeypatch.chdir(tmp_path)
    with terminal_warnings() as seen:
        exit_code = _main(["solve", str(spec), "--quiet", *args])
    err = capsys.readouterr().err
    lines = _message_lines(err)
    assert exit_code == code, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert [str(w.message) for w in seen] == []
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.slow
@pytest.mark.parametrize(("overrides", "extra", "code", "words"), [r[1:] for r in ROWS if r[0] in PROCESS_ROWS],
                         ids=[r[0] for r in ROWS if r[0] in PROCESS_ROWS])
def test_bad_input_in_a_real_process_is_one_clear_line(tmp_path, overrides, extra, code, words) -> None:
    spec = _spec(tmp_path, overrides)
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    proc = subprocess.run([sys.executable, "-m", "dse.cli", "solve", str(spec), "--quiet", *args],
                          cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    lines = _message_lines(proc.stderr)
    assert proc.returncode == code, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_process_rows_name_rows() -> None:
    assert set(PROCESS_ROWS) <= {r[0] for r in ROWS}


def test_terminal_warnings_records_what_a_plain_python_prints() -> None:
    with terminal_warnings() as seen:
        warnings.warn("shown", RuntimeWarning, stacklevel=1)
        warnings.warn("hidden", DeprecationWarning, stacklevel=1)  # from a module, not __main__: not shown
    assert [str(w.message) for w in seen] == ["shown"]


def test_unwritable_out_is_refused_before_solving(tmp_path, capsys) -> None:
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
        code = cli.main(["solve", str(spec), "--out", str(locked / "x")])
    finally:
        (tmp_path / "locked").chmod(0o700)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--out" in err and "solving" not in err


def test_validate_states_the_size_of_a_huge_space(tmp_path, capsys) -> None:
    spec = tmp_path / "big.yaml"
    spec.write_text(yaml.safe_dump(BIG_DAG))
    code = cli.main(["validate", str(spec)])
    out, err = capsys.readouterr()
    assert code == 0, err
    # 300 tasks on 4 devices: 4^300 device choices x 300^300 priority vectors;
    # by hand, 300 x log10(4) + 300 x log10(300) = 180.62 + 743.14 = 923.75
    assert "about 10^923.8 genomes" in out
