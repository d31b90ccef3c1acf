"""The test tiers: ``make test`` runs every test, ``make test-fast`` every test not marked ``slow``, both on
every core; files sharing a costly fixture run on one worker (tests/conftest.py)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.conftest import SHARED_FIXTURE_GROUPS, pytest_xdist_make_scheduler

ROOT = Path(__file__).resolve().parents[2]


def _recipe(target: str) -> str:
    """The recipe lines of ``target`` in the Makefile."""
    text = (ROOT / "Makefile").read_text()
    found = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert found, f"no {target} target in the Makefile"
    return found.group(1)


def test_make_test_runs_every_test_and_make_test_fast_leaves_out_the_slow_ones() -> None:
    pytest_line = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("PYTEST :="))
    options = pytest_line.split("-m pytest", 1)[1].split()
    assert "-n" in options and "-m" not in options, pytest_line
    assert _recipe("test").split() == ["$(PYTEST)"]
    assert _recipe("test-fast").split() == ["$(PYTEST)", "-m", '"not', 'slow"']
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "-m" not in ini.get("addopts", ""), "pytest's own options deselect tests: make test would not run them all"
    assert any(marker.startswith("slow:") for marker in ini["markers"])
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert any(dep.startswith("pytest-xdist") for dep in extra)


class _Config:
    """What the scheduler reads of pytest's configuration: the --dist mode and one worker."""

    def __init__(self, dist: str) -> None:
        self.dist = dist

    def getoption(self, name: str) -> object:
        return {"dist": self.dist, "tx": ["popen"]}[name]

    getvalue = getoption


def test_files_sharing_a_costly_fixture_run_on_one_worker() -> None:
    for path in SHARED_FIXTURE_GROUPS:
        assert (ROOT / path).is_file(), f"{path} is gone: its group in tests/conftest.py groups nothing"
    scheduler = pytest_xdist_make_scheduler(_Config("loadgroup"), None)
    scope = scheduler._split_scope
    assert scope("tests/store/test_report.py::test_solve_report") == "store-runs"
    assert scope("tests/store/test_trace.py::test_dream_simulation_trace") == "store-runs"
    assert scope("tests/model/test_boundary_inputs.py::test_bad_input_through_the_cli_process[flops-1e300]") == (
        "boundary-cli")
    alone = "tests/util/test_files.py::test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary"
    assert scope(alone) == alone  # scheduled on its own
    assert pytest_xdist_make_scheduler(_Config("load"), None) is None  # other modes: xdist's own
