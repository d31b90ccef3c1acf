"""A heuristic that raises while the search solvers' seeds are gathered: said once, the other seeds kept.

One heuristic (HEFT) is replaced by one that raises; :func:`dse.heuristics.seed_genomes` (and
:func:`dse.solvers.registry.collect_seeds`, which caches the seeds per problem) must warn once, naming the
heuristic, the problem and the error, and return the seeds of every other heuristic. The command line
shows the warning without a traceback and still solves.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import dse.heuristics
from dse.heuristics import LIST_SCHEDULERS, SeedHeuristicWarning, names, seed_genomes
from dse.mapping.dag import DagProblem
from dse.solvers.registry import collect_seeds
from tests.conftest import random_tables

ROOT = Path(__file__).resolve().parents[2]


def _problem(name: str) -> DagProblem:
    return DagProblem(random_tables(3, n_ops=8, n_dev=3), ("makespan",), memory=False, name=name)


def _broken_heft(problem: DagProblem) -> dse.heuristics.HeuristicResult:
    raise RuntimeError("the heap ran dry\nsecond line of the message")


@pytest.fixture
def heft_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(LIST_SCHEDULERS, "heft", _broken_heft)


def _seed_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, SeedHeuristicWarning)]


def test_a_failing_heuristic_is_named_once_and_the_other_seeds_are_kept(heft_raises: None) -> None:
    problem = _problem("eight-tasks")
    others = [name for name in names() if name != "heft"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # Python's own once-per-location filter must not hide a repeat
        expected = seed_genomes(problem, others)  # heft not asked for: nothing to say
        first = seed_genomes(problem)
        second = seed_genomes(problem)
    messages = _seed_warnings(caught)
    assert len(messages) == 1, messages
    assert messages[0].startswith("heuristic 'heft' failed on problem 'eight-tasks' "
                                  "(RuntimeError: the heap ran dry)")
    assert "second line" not in messages[0]
    assert expected  # the other heuristics gave seeds ...
    for seeds in (first, second):  # ... and the solve gets every one of them, twice alike
        assert [s.tolist() for s in seeds] == [s.tolist() for s in expected]


def test_collect_seeds_warns_once_per_problem(heft_raises: None) -> None:
    one, other = _problem("one"), _problem("other")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seeds = collect_seeds(one)
        assert collect_seeds(one) and len(collect_seeds(one)) == len(seeds)
        collect_seeds(other)
    messages = _seed_warnings(caught)
    assert len(messages) == 2, messages
    assert "problem 'one'" in messages[0] and "problem 'other'" in messages[1]
    baselines = list(one.baselines().values())
    assert len(seeds) > len(baselines)  # heuristic seeds besides the single-device baselines


def test_the_command_line_in_process_prints_the_warning_as_one_line(heft_raises: None, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """The fast tier's counterpart of the process test below: ``dse.cli.main`` in this process (3 s: the seed
    heuristics stop at the time limit, and on a loaded machine 0.5 s could end before HEFT ran)."""
    from dse.cli import main

    code = main(["solve", str(ROOT / "problems" / "topcuoglu2002.yaml"), "--solver", "nsga2", "--time-limit",
                 "3", "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    warned = [line for line in err.splitlines() if "heuristic 'heft' failed" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: "), err
    assert "Traceback" not in err and "SeedHeuristicWarning" not in err


@pytest.mark.slow
def test_the_command_line_names_the_failing_heuristic_without_a_traceback(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import sys
        import dse.heuristics

        def broken(problem):
            raise RuntimeError("the heap ran dry")

        dse.heuristics.LIST_SCHEDULERS["heft"] = broken
        from dse.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", script, "solve", "problems/topcuoglu2002.yaml", "--solver",
                           "memetic", "--time-limit", "2", "--out", str(out), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.count("heuristic 'heft' failed on problem 'topcuoglu2002'") == 1, done.stderr
    warned = [line for line in done.stderr.splitlines() if "heuristic 'heft' failed" in line]
    assert warned[0].startswith("warning: "), done.stderr  # one line, not Python's file:line and source
    assert "SeedHeuristicWarning" not in done.stderr and "warnings.warn" not in done.stderr
    assert (out / "front.json").exists()


def test_seeds_without_failures_say_nothing() -> None:
    problem = _problem("quiet")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seeds = seed_genomes(problem)
    assert _seed_warnings(caught) == []
    assert all(isinstance(s, np.ndarray) and s.shape == (problem.n_genes,) for s in seeds)
