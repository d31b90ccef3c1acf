"""Hostile output paths and damaged result files: each is one clear line and exit 2, never a traceback,
and a path that is refused is left as it was (a device node stays a device, a FIFO a FIFO, a read-only file
keeps its bytes).

Each case runs the command in this process (``dse.cli.main``) from a fresh working folder.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from dse.runs.spec import load_problem
from dse.store.trace import Span, Timeline, chrome_trace, write_trace
from tests.cli.test_cli import run
from tests.cli.test_hostile_inputs import MAX_MESSAGE, _store


def _one_line(err: str) -> str:
    assert "Traceback" not in err, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("note:")]
    assert len(lines) == 1, err[-2000:]
    assert len(lines[0]) <= MAX_MESSAGE, lines[0][:300]
    return lines[0]


def _fifo(tmp: Path) -> Path:
    path = tmp / "pipe"
    os.mkfifo(path)
    return path


def _solve_folder(tmp: Path, change: Callable[[dict], None] | None = None) -> Path:
    """A solve folder of the catalog's quickstart holding one mapping (every op on device 0: a genome of
    zeros fits any pipeline problem), as ``dse solve --out`` writes its front.json."""
    problem = load_problem("quickstart")
    folder = tmp / "run"
    folder.mkdir()
    point = {"solver": "nsga2", "proven": False, "feasible": True, "objectives": {"latency_ms": 1.0},
             "metrics": {}, "genome": [0] * problem.n_genes}
    doc = {"problem": problem.name, "spec": "quickstart",
           "fronts": [{"solver": "nsga2", "status": "feasible", "complete": False, "stats": {"wall_s": 0.1},
                       "objectives": [{"column": "latency_ms", "sense": "min"}], "points": [point]}]}
    if change is not None:
        change(doc)
    (folder / "front.json").write_text(json.dumps(doc))
    return folder


def _long_name_spec(tmp: Path) -> Path:
    spec = {"name": "n" * 5000, "family": "pipeline", "platform": "edge_soc",
            "workload": {"builder": "random_pipeline", "n_ops": 4, "seed": 0}}
    path = tmp / "long.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _a_file(tmp: Path) -> Path:
    path = tmp / "plain.txt"
    path.write_text("a file, not a folder")
    return path


#: name -> (build the argv from a fresh folder, words the one line must hold); every case is exit 2.
CASES: dict[str, tuple[Callable[[Path], list[str]], tuple[str, ...]]] = {
    "schema --out a character device": (lambda t: ["schema", "--out", "/dev/null"], ("character device",)),
    "schema --out a fifo": (lambda t: ["schema", "--out", str(_fifo(t))], ("FIFO",)),
    "results --export --out a character device": (
        lambda t: ["results", str(_store(t)), "--export", "csv", "--out", "/dev/null"], ("character device",)),
    "results --trace --out a fifo": (
        lambda t: ["results", str(_store(t)), "--trace", "--out", str(_fifo(t))], ("FIFO",)),
    "report --out a character device": (
        lambda t: ["report", str(_store(t)), "--out", "/dev/null"], ("character device",)),
    "report into a folder no file can be made in": (
        lambda t: ["report", str(_store(t)), "--out", "/proc/report.html"], ("--out", "cannot write there")),
    "certify --out a file": (
        lambda t: ["certify", str(_solve_folder(t)), "--out", str(_a_file(t)), "--time-limit", "1"],
        ("--out", "is a file")),
    "certify --out under /proc": (
        lambda t: ["certify", str(_solve_folder(t)), "--out", "/proc/certified", "--time-limit", "1"],
        ("--out", "cannot write there")),
    "accuracy --out a file": (lambda t: ["accuracy", "--quiet", "--out", str(_a_file(t))], ("--out", "is a file")),
    "accuracy --out under /proc": (
        lambda t: ["accuracy", "--quiet", "--out", "/proc/accuracy"], ("--out", "cannot write there")),
    "solve a 5,000-character name as the default folder": (
        lambda t: ["solve", str(_long_name_spec(t)), "--time-limit", "1", "--quiet"],
        ("--out", "File name too long")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_output_path_is_one_line_and_exit_2(name, tmp_path, capsys, monkeypatch) -> None:
    build, words = CASES[name]
    argv = build(tmp_path)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    code, _, err = run(capsys, *argv)
    assert code == 2, (code, err[-2000:])
    line = _one_line(err)
    for word in words:
        assert word in line, line
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe"
    assert not fifo.exists() or stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_read_only_trace_file_is_refused_not_overwritten(tmp_path, capsys) -> None:
    target = tmp_path / "trace.json"
    target.write_text("kept")
    target.chmod(0o444)
    code, _, err = run(capsys, "results", str(_store(tmp_path)), "--trace", "--out", str(target))
    assert code == 2 and "read-only" in _one_line(err)
    assert target.read_text() == "kept" and stat.S_IMODE(target.stat().st_mode) == 0o444


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO, errno.EDQUOT])
def test_a_full_disk_at_the_flush_leaves_the_old_schema_whole(tmp_path, capsys, monkeypatch, code) -> None:
    """The system reports a full disk when the data is flushed: the schema written so far never takes the
    final name, and the old file stays as it was."""
    target = tmp_path / "schema.json"
    target.write_text("old")

    def full(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", full)
    got, _, err = run(capsys, "schema", "--out", str(target))
    assert got == 2
    assert _one_line(err) == f"error: cannot write {target}: {os.strerror(code)} (nothing written)"
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["schema.json"]


# --------------------------------------------------------------------------- damaged front files


def _set(path: tuple[object, ...], value: object) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]  # type: ignore[index]
        node[path[-1]] = value  # type: ignore[index]
    return change


#: name -> (how front.json is damaged, the field the line names)
FRONT_DAMAGE: dict[str, tuple[Callable[[dict], None], str]] = {
    "a front that is not an object": (_set(("fronts", 0), "not a front"), "fronts[0]"),
    "genes as text": (_set(("fronts", 0, "points", 0, "genome"), ["0", "1"]), "fronts[0].points[0].genome[0]"),
    "a gene past 2^31": (_set(("fronts", 0, "points", 0, "genome", 0), 10**30), "fronts[0].points[0].genome[0]"),
    "an objective as text": (_set(("fronts", 0, "points", 0, "objectives", "latency_ms"), "fast"),
                             "fronts[0].points[0].objectives.latency_ms"),
    "points that are not a list": (_set(("fronts", 0, "points"), {"a": 1}), "fronts[0].points"),
}


@pytest.mark.parametrize("damage", list(FRONT_DAMAGE))
@pytest.mark.parametrize("command", ["report", "certify", "resume"])
def test_a_damaged_front_json_is_one_line_naming_its_field(damage, command, tmp_path, capsys) -> None:
    change, field = FRONT_DAMAGE[damage]
    folder = _solve_folder(tmp_path, change)
    argv = {"report": ["report", str(folder)],
            "certify": ["certify", str(folder), "--time-limit", "1", "--out", str(tmp_path / "c")],
            "resume": ["solve", "quickstart", "--resume", str(folder), "--time-limit", "1", "--quiet",
                       "--out", str(tmp_path / "s")]}[command]
    code, _, err = run(capsys, *argv)
    assert code == 2, err[-2000:]
    line = _one_line(err)
    assert str(folder / "front.json") in line and f"'{field}'" in line, line
    assert not (folder / "report.html").exists()


def test_a_front_csv_band_that_is_no_number_is_one_line(tmp_path, capsys) -> None:
    folder = _solve_folder(tmp_path)
    (folder / "front.csv").write_text("solver,latency_ms,latency_ms_lo,latency_ms_hi,genome\n"
                                      "nsga2,1.0,oops,1.1,0\n")
    code, _, err = run(capsys, "report", str(folder))
    assert code == 2 and "latency_ms_lo" in _one_line(err) and "'oops'" in err


def test_a_trace_is_strict_json_even_with_a_non_finite_number(tmp_path) -> None:
    """A span whose start is not a number (a damaged trace table) is ``null`` in the file, never ``NaN``."""
    timeline = Timeline("t", "ms", 1e3, (Span("op", "cpu", float("nan"), 1.0),))
    path = write_trace(chrome_trace(timeline), tmp_path / "trace.json")
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["traceEvents"][-1]["ts"] is None


# --------------------------------------------------------------------------- measurement files


def test_a_measurement_file_cannot_make_accuracy_read_another_file(tmp_path, capsys) -> None:
    """A catalog reference is a catalog name: a path out of the catalog's folder is refused without reading
    the file, so no line of it is quoted."""
    secret = tmp_path / "secret.yaml"
    secret.write_text("name: x\ndevices: THE-SECRET-LINE\n")
    folder = tmp_path / "measurements"
    folder.mkdir()
    measurement = {"family": "pipeline",
                   "devices": [{"id": "d", "class": "gpu", "catalog": {"platform": str(secret), "device": "gpu"},
                                "sources": {"all": "none"}}],
                   "measurements": [{"id": "row-1", "source": "all", "device": "d",
                                     "workload": {"builder": "random_pipeline"}, "metric": "latency_s",
                                     "value": 1.0, "split": "fit"}]}
    (folder / "m.yaml").write_text(yaml.safe_dump(measurement))
    code, out, err = run(capsys, "accuracy", "--measurements", str(folder), "--quiet")
    assert code == 2
    line = _one_line(err)
    assert "catalog.platform" in line and "no such catalog platform" in line
    assert "THE-SECRET-LINE" not in err + out
