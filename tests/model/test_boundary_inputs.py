"""Bad input at the boundary: `dse validate` exits 2 with ONE stderr line naming the field and the value.

One row per kind of bad input. Every row runs ``dse.cli.main(["validate", SPEC])`` in process with
warnings turned into errors; the rows marked ``cli=True`` (four kinds: a platform number, a table
that overflows int64, a file that is not UTF-8, a size past the bounds) also run the real CLI in a
subprocess (``python -m dse.cli validate SPEC``, ``slow``), where a traceback, a warning or any second
line printed by the interpreter would show. Those subprocesses run concurrently,
once per module: importing the engine costs ~2.5 s of CPU per process, so running every row
that way would take a minute on two cores.

Rows marked ``bug=True`` crashed (OverflowError, UnicodeDecodeError, MemoryError), ran for ever
or were silently accepted (exit 0, or exit 3 for an input error) before the boundary checks;
the others pin behaviour that already held or make a message name the field.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from dse import cli
from dse.errors import SpecError
from tests.conftest import TINY_PLATFORM, TINY_WORKLOAD

ROOT = Path(__file__).resolve().parents[2]  # the subprocess imports this checkout's dse

PLATFORM, WORKLOAD = TINY_PLATFORM, TINY_WORKLOAD
DAG = {"family": "dag", "platform": {"identical": 2}, "objectives": ["makespan"]}
DIRECTORY = object()  # a ``files`` value: make a directory of that name


def platform(path: str, value: Any) -> dict:
    """PLATFORM with the value at ``path`` (e.g. ``devices.0.active_w``) replaced."""
    return {"platform": _replace(PLATFORM, path, value)}


def workload(path: str, value: Any) -> dict:
    """WORKLOAD with the value at ``path`` (e.g. ``ops.1.flops``) replaced."""
    return {"workload": _replace(WORKLOAD, path, value)}


def _replace(data: dict, path: str, value: Any) -> dict:
    data = copy.deepcopy(data)
    *parents, last = [int(k) if k.isdigit() else k for k in path.split(".")]
    target = data
    for key in parents:
        target = target[key]
    target[last] = value
    return data


@dataclass(frozen=True)
class Row:
    id: str
    spec: dict | None  # overrides of the base spec; None: no spec.yaml is written (see ``files``)
    expect: tuple[str, ...]  # in the one stderr line: the field, the value (and a reason word where needed)
    bug: bool
    files: dict[str, Any] = field(default_factory=dict)  # written next to spec.yaml (str, bytes or DIRECTORY)
    cli: bool = False  # also run through the real CLI in a subprocess


def _heavy_workload(flops: float) -> dict:
    ops = [{**op, "op_class": "gemm", "flops": flops} for op in WORKLOAD["ops"]]
    return {**WORKLOAD, "ops": ops}


ROWS = [
    # -- platform numbers: finite and within the documented bounds (dse.model.platform.MAX_*)
    Row("active_w-1e300", platform("devices.0.active_w", 1e300), ("devices[0].active_w", "1e+300"), bug=True, cli=True),
    Row("mem_gib-1e30", platform("devices.0.mem_gib", 1e30), ("devices[0].mem_gib", "1e+30"), bug=True),
    Row("mem_bw-1e-300", platform("devices.1.mem_bw_gbps", 1e-300), ("devices[1].mem_bw_gbps", "1e-300"), bug=True),
    Row("peak_tflops-1e-300", platform("devices.0.peak_tflops.fp32", 1e-300),
        ("devices[0].peak_tflops.fp32", "1e-300"), bug=True),
    Row("link-bandwidth-inf", platform("links.0.bandwidth_gbps", float("inf")),
        ("links[0].bandwidth_gbps", "inf"), bug=True),
    Row("device-count-1e9", platform("devices.0.count", 10**9), ("devices[0].count", "1000000000"), bug=True),
    Row("link-bandwidth-negative", platform("links.0.bandwidth_gbps", -3), ("links[0].bandwidth_gbps", "-3"),
        bug=False),
    # -- workload numbers
    Row("flops-1e300", workload("ops.1.flops", 1e300), ("ops[1].flops", "1e+300"), bug=True),
    Row("edge-bytes-1e300", workload("ops.1.inputs", [{"op": "load", "bytes": 1e300}]),
        ("ops[1].inputs[0].bytes", "1e+300"), bug=True),
    Row("density-1e-300", {"workload": _replace(_replace(WORKLOAD, "ops.2.op_class", "spmm"),
                                                "ops.2.features", {"density": 1e-300})},
        ("ops[2].features.density", "1e-300"), bug=True),
    Row("flops-nan", workload("ops.1.flops", float("nan")), ("ops[1].flops", "nan"), bug=False),
    # -- values each in bounds whose combination does not fit the int64 cost tables
    Row("table-cell-overflow", platform("devices.0.peak_tflops.fp32", 1e-6) | workload("ops.1.flops", 1e24),
        ("time[mm, cpu]", "1.429e+27"), bug=True, cli=True),
    Row("table-total-energy", {"platform": _replace(_replace(PLATFORM, "devices.0.active_w", 1e6),
                                                    "devices.1.active_w", 1e6),
                               "workload": _heavy_workload(3e12)},
        ("total energy", "1.286e+19", "op 'load' on device 'cpu'"), bug=True),
    # -- device_costs naming a device the platform lacks (was exit 3 "may not run on any device")
    Row("device-costs-unknown-device",
        DAG | {"workload": {"name": "w", "ops": [{"name": "a", "device_costs": {"tpu": 3}},
                                                 {"name": "b", "work": 2, "inputs": ["a"]}]}},
        ("ops[0].device_costs", "'tpu'", "p0, p1"), bug=True),
    # -- files
    Row("platform-not-utf8", {"platform": "plat.yaml"}, ("plat.yaml", "<file>", "= 7", "not UTF-8"), bug=True,
        files={"plat.yaml": b"name: t\xe9st\n"}, cli=True),
    Row("platform-empty-file", {"platform": "plat.yaml"}, ("plat.yaml", "<file>", "no YAML document"), bug=False,
        files={"plat.yaml": "# nothing but a comment\n"}),
    Row("spec-is-a-directory", None, ("spec.yaml", "<file>", "directory"), bug=False,
        files={"spec.yaml": DIRECTORY}),
    Row("workload-yaml-syntax", {"workload": "w.yaml"}, ("w.yaml", "line 3", "YAML syntax"), bug=False,
        files={"w.yaml": "name: w\nops: [\n"}),
    # -- DOT: undeclared nodes and unknown attributes
    Row("dot-undeclared-node", DAG | {"workload": {"format": "dot", "path": "g.dot"}},
        ("g.dot", "line 3", "'b'", "declare"), bug=True, files={"g.dot": "digraph g {\n  a [work=3];\n  a -> b;\n}\n"}),
    Row("dot-unknown-node-attribute", DAG | {"workload": {"format": "dot", "path": "g.dot"}},
        ("g.dot", "line 2", "'wrok'"), bug=True, files={"g.dot": "digraph g {\n  a [work=3, wrok=4];\n}\n"}),
    Row("dot-unknown-edge-attribute", DAG | {"workload": {"format": "dot", "path": "g.dot"}},
        ("g.dot", "line 4", "'weight'"), bug=True,
        files={"g.dot": "digraph g {\n  a [work=3];\n  b [work=1, label=ignored];\n  a -> b [weight=5];\n}\n"}),
    # -- sizes past MAX_OPS / MAX_EDGES, refused before allocating
    Row("random-pipeline-1e9-ops", {"workload": {"builder": "random_pipeline", "n_ops": 10**9}},
        ("workload.n_ops", "1000000000"), bug=True, cli=True),
    Row("gcn-1e8-layers", {"workload": {"builder": "gcn", "layers": 10**8}}, ("workload.layers", "100000000"),
        bug=True),
    Row("stg-1e7-tasks", DAG | {"workload": {"format": "stg", "path": "big.stg"}},
        ("big.stg", "line 1", "10000000", "200000"), bug=False, files={"big.stg": "10000000\n0 0 0\n"}),
    # -- solver settings (solver.options.NAME.KEY): a negative chunk made exhaustive search report
    #    "infeasible", a zero population raised numpy's argmin error, an unknown key a TypeError
    Row("exhaustive-chunk-negative", {"solver": {"name": "exhaustive", "options": {"exhaustive": {"chunk": -1}}}},
        ("solver.options.exhaustive.chunk", "-1", "greater than or equal to 1"), bug=True),
    Row("nsga2-pop-size-zero", {"solver": {"name": "nsga2", "options": {"nsga2": {"pop_size": 0}}}},
        ("solver.options.nsga2.pop_size", "= 0"), bug=True),
    Row("cpsat-workers-fraction", {"solver": {"options": {"cpsat": {"workers": 2.5}}}},
        ("solver.options.cpsat.workers", "2.5", "integer"), bug=True),
    Row("nsga2-unknown-setting", {"solver": {"options": {"nsga2": {"popsize": 50}}}},
        ("solver.options.nsga2.popsize", "unknown option", "pop_size"), bug=True),
    Row("nsga2-callback-in-a-spec", {"solver": {"options": {"nsga2": {"callback": "print"}}}},
        ("solver.options.nsga2.callback", "unknown option"), bug=True),
    Row("options-of-an-unknown-solver", {"solver": {"options": {"nsgaa2": {"pop_size": 50}}}},
        ("solver.options.nsgaa2", "no such solver"), bug=True),
]


def _write_row(row: Row, folder: Path) -> Path:
    for name, content in row.files.items():
        path = folder / name
        if content is DIRECTORY:
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    spec_path = folder / "spec.yaml"
    if row.spec is not None:
        spec = {"name": "tiny", "family": "pipeline", "platform": PLATFORM, "workload": WORKLOAD,
                "objectives": ["throughput", "energy"], "constraints": {"memory": True},
                "solver": {"name": "all", "time_limit_s": 10, "seed": 0}}
        spec.update(row.spec)
        spec_path.write_text(yaml.safe_dump(spec))
    return spec_path


def _check_line(stderr: str, row: Row) -> None:
    """``stderr`` is one line, ``error: ...``, holding every ``row.expect`` part, and no traceback."""
    assert "Traceback" not in stderr, stderr[-2000:]
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr[-2000:]
    assert lines[0].startswith("error: ")
    for part in row.expect:
        assert part in lines[0], (part, lines[0])


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, row: Row) -> None:
    spec = _write_row(row, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy overflow warning would be a second line on stderr
        code = cli.main(["validate", str(spec)])
    out, err = capsys.readouterr()
    _check_line(err, row)
    assert code == 2 and out == ""


CLI_ROWS = [row for row in ROWS if row.cli]


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    """The finished ``python -m dse.cli validate`` process of each ``cli`` row, run concurrently."""
    specs = {row.id: _write_row(row, tmp_path_factory.mktemp(row.id)) for row in CLI_ROWS}

    def run(spec: Path) -> subprocess.CompletedProcess:
        args = [sys.executable, "-m", "dse.cli", "validate", str(spec)]
        try:
            return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:  # reported by the row's own test, not as an error of all rows
            return subprocess.CompletedProcess(args, -1, "", "timed out after 120 s")

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(zip(specs, pool.map(run, specs.values()), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("row", CLI_ROWS, ids=[row.id for row in CLI_ROWS])
def test_bad_input_through_the_cli_process(cli_results, row: Row) -> None:
    proc = cli_results[row.id]
    _check_line(proc.stderr, row)
    assert proc.returncode == 2 and proc.stdout == ""


def test_rows_cover_distinct_inputs() -> None:
    assert len({row.id for row in ROWS}) == len(ROWS)
    assert sum(row.bug for row in ROWS) >= 15
    assert all(row.bug for row in CLI_ROWS)


# --------------------------------------------------------------------------- in process


def test_unreadable_file_is_one_spec_error(tmp_path, monkeypatch) -> None:
    """Root reads any file, so permission denied is simulated where read_yaml reads the bytes."""
    from dse.util.yamlio import read_yaml

    path = tmp_path / "locked.yaml"
    path.write_text("name: x\n")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(SpecError, match="permission denied") as err:
        read_yaml(path)
    assert (err.value.field, err.value.value) == ("<file>", str(path))


def test_stg_generator_refuses_a_million_tasks_before_allocating() -> None:
    from dse.inputs.builders.stg_generator import stg_random_graph

    with pytest.raises(SpecError) as err:
        stg_random_graph(n_tasks=10**6)
    assert (err.value.field, err.value.value) == ("n_tasks", 10**6)
    with pytest.raises(SpecError) as err:
        stg_random_graph(n_tasks=100_000, mean_preds=50.0)
    assert err.value.field == "mean_preds"


def test_table_cost_model_rejects_a_non_finite_scale() -> None:
    from dse.cost import TableCostModel

    with pytest.raises(SpecError) as err:
        TableCostModel(scale=float("inf"))
    assert (err.value.field, err.value.value) == ("scale", float("inf"))


@pytest.mark.parametrize(("argument", "value"), [
    ("seed", -1), ("seed", 1.5), ("seed", 2**70), ("seed", True), ("seed", "x"),
    ("time_limit", 0), ("time_limit", -1.0), ("time_limit", float("nan")), ("time_limit", float("inf")),
    ("time_limit", "5"),
])
def test_the_python_api_refuses_a_bad_seed_or_time_limit_by_name(argument: str, value: object) -> None:
    """The ranges of a spec and of the command line (seed in [0, 2**31 - 1], time limit in (0, 30 days]),
    checked before any solver starts: neither numpy's seeding nor OR-Tools' parameters see the value."""
    import dse

    problem = dse.load_problem("quickstart")
    with pytest.raises(SpecError, match=rf"^dse\.solve: field '{argument}' = .*: must be"):
        dse.solve(problem, solver="nsga2", **{argument: value})


def test_numpy_scalars_are_a_seed_and_a_time_limit() -> None:
    import numpy as np

    import dse

    front = dse.solve(dse.load_problem("quickstart"), solver="cpsat", seed=np.int64(3), time_limit=np.float64(60))
    assert front.status == "optimal"


@pytest.mark.parametrize(("solver", "options", "field"), [
    ("exhaustive", {"chunk": 0}, "chunk"), ("nsga2", {"generations": 0}, "generations"),
    ("nsga2", {"mutation_rate": 5.0}, "mutation_rate"), ("cpsat", {"workers": -2}, "workers"),
    ("nsga2", {"bogus": 1}, "bogus"),
])
def test_the_python_api_refuses_a_bad_solver_setting_by_name(solver: str, options: dict, field: str) -> None:
    """Before the fix: range() raised on chunk 0, a ZeroDivisionError on 0 generations, a mutation rate of 5
    ran as 1, CP-SAT with -2 workers returned an empty front as if time had run out."""
    import dse

    with pytest.raises(SpecError, match=rf"^dse\.solve: field '{field}' = "):
        dse.solve(dse.load_problem("quickstart"), solver=solver, time_limit=5, **options)


def test_python_objects_still_reach_the_solver() -> None:
    """Arguments that are no setting (a callback, resume genomes) pass through ``dse.solve`` unchecked."""
    import dse

    problem = dse.load_problem("quickstart")
    calls = []
    front = dse.solve(problem, solver="nsga2", time_limit=5, generations=3, callback=lambda *a: calls.append(a))
    assert calls and len(front)
