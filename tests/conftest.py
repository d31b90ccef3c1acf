"""Shared fixtures. Random instances come from :mod:`dse.cost.synthetic` (tables built directly, no cost model)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from dse.cost.synthetic import random_tables

__all__ = ["TINY_PLATFORM", "TINY_WORKLOAD", "random_tables"]

#: Test files sharing a costly fixture of module or session scope, by group: under ``pytest -n N --dist
#: loadgroup`` one worker runs a group's files, so the fixture is made once per run (each on two workers,
#: it would be made twice); every other test is scheduled on its own, wherever a worker is free.
SHARED_FIXTURE_GROUPS = {
    "tests/model/test_boundary_inputs.py": "boundary-cli",  # the CLI processes of its cli rows (concurrent)
    "tests/project/test_docs.py": "docs-commands",  # the pages' and README's commands, each run once in
    "tests/project/test_readme.py": "docs-commands",  # one folder (the workdir and seen fixtures below)
    "tests/store/test_batch.py": "batch-cluster",  # a Dask cluster of two worker processes
    "tests/store/test_report.py": "store-runs",  # tests/store/conftest.py's solve, simulation and store
    "tests/store/test_report_browser.py": "store-runs",
    "tests/store/test_trace.py": "store-runs",
}


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadgroup`` with the groups of :data:`SHARED_FIXTURE_GROUPS`, read from the test's file.
    (pytest-xdist's own ``xdist_group`` marks group nothing with pytest 9.2, whose node ids its
    scheduler can no longer tag: pytest-dev/pytest-xdist#1386.) Other ``--dist`` modes are left to xdist."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return SHARED_FIXTURE_GROUPS.get(nodeid.split("::", 1)[0], nodeid)

    return SharedFixtureScheduling(config, log)


@pytest.fixture(autouse=True, scope="session")
def compiled_dag_kernels() -> None:
    """Compile (or load from numba's on-disk cache) every dag kernel (decoder, heuristics, lower bounds, the
    memetic search's moves) once per test process, before any test's time limit starts, and record that
    the cache is warm (:mod:`dse.util.jit`): on a clean checkout the first compile takes seconds, which would
    otherwise land inside whichever timed test runs first, or run uncompiled beside a background
    compilation. On a cold cache the workers of ``pytest -n`` take the warm-up's lock in turn: the first
    compiles, the others load what it cached (``make test`` warms the cache before pytest starts)."""
    from dse.solvers.warmup import compile_all
    from dse.util.jit import cache_is_warm, holding_lock, write_stamp

    with contextlib.nullcontext() if cache_is_warm() else holding_lock():
        write_stamp(compile_all())


#: The repository's root: no test writes into it.
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def solve_outputs_outside_the_repository(tmp_path_factory, monkeypatch) -> None:
    """``dse solve`` without ``--out`` writes ``out/<problem name>/`` under the working folder; a test that
    runs it from the repository's root writes it under a temporary folder instead (tests that run commands
    the way the docs do move to a temporary working folder first, and keep the default there)."""
    import dse.cli.app

    real, base = dse.cli.app.default_out, tmp_path_factory.getbasetemp() / "default-out"

    def default_out(problem_name: str) -> Path:
        folder = real(problem_name)
        return base / folder if Path.cwd().resolve() == ROOT else folder

    monkeypatch.setattr(dse.cli.app, "default_out", default_out)


#: A two-device platform and a three-op workload, written out inline in specs by the CLI tests.
TINY_PLATFORM = {
    "name": "tiny",
    "devices": [
        {"name": "cpu", "kind": "cpu", "peak_tflops": {"fp32": 1.0}, "mem_bw_gbps": 100, "mem_gib": 64,
         "idle_w": 20, "active_w": 100},
        {"name": "gpu", "kind": "gpu", "peak_tflops": {"fp32": 10.0}, "mem_bw_gbps": 900, "mem_gib": 16,
         "idle_w": 30, "active_w": 250},
    ],
    "links": [{"a": "cpu", "b": "gpu", "bandwidth_gbps": 16, "latency_us": 5, "energy_pj_per_byte": 20}],
}
TINY_WORKLOAD = {
    "name": "three",
    "ops": [
        {"name": "load", "op_class": "memcpy", "bytes_moved": 4e6, "output_bytes": 4e6},
        {"name": "mm", "op_class": "gemm", "flops": 2e10, "bytes_moved": 2e7, "resident_bytes": 1e7,
         "output_bytes": 1e6, "inputs": ["load"]},
        {"name": "act", "op_class": "elementwise", "flops": 1e6, "bytes_moved": 2e6, "output_bytes": 1e6,
         "inputs": ["mm"]},
    ],
}

#: A two-objective pipeline spec on the tiny platform and workload above (a few milliseconds to solve).
TINY_SPEC = {"name": "tiny", "family": "pipeline", "platform": TINY_PLATFORM, "workload": TINY_WORKLOAD,
             "objectives": ["throughput", "energy"], "solver": {"name": "cpsat", "time_limit_s": 30, "seed": 0}}


def write_yaml(path: Path, data: object) -> Path:
    """``data`` written to ``path`` as YAML (keys in their order); returns ``path``."""
    import yaml

    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run_cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``dse ARGV`` run in this process."""
    from dse import cli

    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def tables_factory():
    return random_tables


@pytest.fixture
def imports_asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The module names the test asks to import from here on (``import`` statements, in functions too, and
    :func:`importlib.import_module`), whether loaded already or not: a module the code under test never asks
    for is one it does not import, whatever other tests of this process imported."""
    import builtins
    import importlib

    asked: list[str] = []
    statement, function = builtins.__import__, importlib.import_module

    def recorded_statement(name: str, *args, **kwargs):
        asked.append(name)
        return statement(name, *args, **kwargs)

    def recorded_function(name: str, package: str | None = None):
        asked.append(name)
        return function(name, package)

    monkeypatch.setattr(builtins, "__import__", recorded_statement)
    monkeypatch.setattr(importlib, "import_module", recorded_function)
    return asked


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    """One folder for the commands of every docs page and the README (tests/project/test_docs.py, tests/project/test_readme.py)."""
    folder = tmp_path_factory.mktemp("docs-run")
    (folder / "out").mkdir()
    return folder


@pytest.fixture(scope="session")
def seen() -> dict[tuple[str, ...], int]:
    """Commands already run in :func:`workdir` (identical commands of several pages run once)."""
    return {}
