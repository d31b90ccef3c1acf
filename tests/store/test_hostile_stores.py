"""Hostile stores and filters: a store that is not exactly a store, rows a hand or a crash damaged, and a
``--where`` that tries to run code. Each is one line and exit 2; nothing runs, nothing is changed.
"""

from __future__ import annotations

import json
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from dse.errors import SpecError
from dse.store.database import Store
from dse.store.query import where_mask
from dse.store.salvage import salvage
from tests.cli.test_cli import run
from tests.cli.test_hostile_inputs import MAX_MESSAGE, _store


def _one_line(err: str) -> str:
    assert "Traceback" not in err, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err[-2000:]
    assert len(lines[0]) <= MAX_MESSAGE, lines[0][:300]
    return lines[0]


def _sql(store: Path, *statements: str) -> Path:
    with sqlite3.connect(store) as conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()
    return store


# --------------------------------------------------------------------------- --where


def test_an_at_reference_that_reaches_os_system_does_not_run(tmp_path, capsys) -> None:
    """pandas' Python engine resolved ``@shutil`` in the command module and ran the call: the marker file
    was made (exit 2 came only after, from the result not being a condition)."""
    marker = tmp_path / "marker"
    code, _, err = run(capsys, "results", str(_store(tmp_path)), "--where",
                       f"@shutil.os.system('touch {marker}') == 0")
    assert not marker.exists()
    assert code == 2 and "@ reference" in _one_line(err)


def test_a_call_that_deletes_a_folder_does_not_run(tmp_path, capsys) -> None:
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep")
    code, _, err = run(capsys, "results", str(_store(tmp_path)), "--where", f"@shutil.rmtree('{folder}')")
    assert (folder / "keep.txt").read_text() == "keep"
    assert code == 2 and "--where" in _one_line(err)


@pytest.mark.parametrize(("expr", "construct"), [
    ("status.str.len() > 1", "a call"),
    ("status.__class__ == 1", "attribute access"),
    ("seed[0] == 0", "a subscript"),
    ("(lambda: 1)() == 1", "a call"),
    ("[s for s in status] == 1", "a comprehension"),
    ("f'{status}' == 'done'", "an f-string"),
    ("(x := 1) == 1", "an assignment"),
    ("9 ** 9 ** 9 ** 9 > 1", "math range error"),
    ("status * 1000000000 == 'x'", "arithmetic takes numbers"),
    ("nosuch > 1", "unknown column 'nosuch'"),
])
def test_a_construct_outside_the_allow_list_is_named(expr, construct, tmp_path, capsys) -> None:
    code, _, err = run(capsys, "results", str(_store(tmp_path)), "--where", expr)
    assert code == 2 and construct in _one_line(err)


@pytest.mark.parametrize(("expr", "kept"), [
    ("status == 'done'", 1),
    ("status == 'done' and seed >= 0", 1),  # the shape the docs give
    ("`seed` > 0", 0),
    ("status in ['done', 'timeout'] and not front_size > 1", 1),
    ("0 <= seed < 1", 1),
    ("front_size * 2 - 1 == 1", 1),
    ("(status == 'failed') | (seed == 0)", 1),
    ("~(status == 'done')", 0),
])
def test_the_documented_shapes_of_the_filter_keep_working(expr, kept, tmp_path, capsys) -> None:
    """Expected counts by hand: the store holds one done job, seed 0, one point in its front."""
    code, out, err = run(capsys, "results", str(_store(tmp_path)), "--where", expr)
    assert code == 0, err
    if kept:
        assert f"\n{kept} jobs" in out
    else:  # no job kept: the line says how many the store holds
        assert out.startswith("0 jobs: none of the store's 1 job meets --where"), out


def test_a_dotted_swept_field_is_a_column(tmp_path) -> None:
    import pandas as pd

    frame = pd.DataFrame({"status": ["done", "done", "failed"], "constraints.power_w": [100, 300, 400]})
    expected = [False, True, False]  # by hand: done and at least 300 W
    assert where_mask(frame, "status == 'done' and constraints.power_w >= 300").tolist() == expected
    assert where_mask(frame, "status == 'done' and `constraints.power_w` >= 300").tolist() == expected


# --------------------------------------------------------------------------- a store's schema


#: name -> statements that make a store something else
SCHEMA_CHANGES: dict[str, tuple[str, ...]] = {
    "a trigger that deletes jobs": (
        "CREATE TRIGGER t AFTER INSERT ON fronts BEGIN DELETE FROM jobs WHERE job_id != new.job_id; END",),
    "a view": ("CREATE VIEW v AS SELECT * FROM jobs",),
    "an index of its own": ("CREATE INDEX i ON jobs(status)",),
    "a table of its own": ("CREATE TABLE extra (x)",),
    "a jobs view in place of the table": (
        "ALTER TABLE jobs RENAME TO old_jobs", "CREATE VIEW jobs AS SELECT * FROM old_jobs"),
    "a row id near 2^63": (
        "INSERT INTO jobs (rowid, job_id, status, spec, swept, finished_at) "
        "VALUES (9223372036854775000, 'b', 'done', '{}', '{}', 0)",),
}


@pytest.mark.parametrize("change", list(SCHEMA_CHANGES))
def test_a_store_that_is_not_exactly_a_store_is_refused_unchanged(change, tmp_path, capsys) -> None:
    store = _sql(_store(tmp_path), *SCHEMA_CHANGES[change])
    before = store.read_bytes()
    code, _, err = run(capsys, "results", str(store))
    assert code == 2 and "not a dse result store" in _one_line(err)
    with pytest.raises(SpecError, match="not a dse result store"):
        Store(store)
    assert store.read_bytes() == before


def test_a_trigger_never_fires_during_a_batch(tmp_path) -> None:
    """The trigger deleted the jobs of earlier runs as soon as a resumed batch recorded one."""
    store = _sql(_store(tmp_path), "CREATE TRIGGER t AFTER INSERT ON fronts BEGIN DELETE FROM jobs; END")
    with pytest.raises(SpecError, match="trigger"):
        Store(store)
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT count(*) FROM jobs").fetchone() == (1,)
    conn.close()


def test_salvage_refuses_a_foreign_database_with_a_jobs_table(tmp_path) -> None:
    foreign = tmp_path / "foreign.sqlite"
    _sql(foreign, "CREATE TABLE jobs (id INTEGER, what TEXT)", "INSERT INTO jobs VALUES (1, 'x')",
         "CREATE TABLE fronts (id INTEGER)")
    with pytest.raises(SpecError, match="not a dse result store"):
        salvage(foreign, tmp_path / "new.sqlite")
    assert not (tmp_path / "new.sqlite").exists()


def test_salvage_of_a_store_with_a_huge_row_id_ends(tmp_path) -> None:
    """Salvage probed every row id up to the highest: near 2^63 it never ended. It keeps both jobs."""
    store = _sql(_store(tmp_path), "INSERT INTO jobs (rowid, job_id, status, spec, swept, finished_at) "
                                   "VALUES (9223372036854775000, 'b', 'invalid', '{}', '{}', 0)")
    report = salvage(store, tmp_path / "new.sqlite")
    assert (report.kept, report.dropped) == (2, 0)


def test_a_batch_on_a_read_only_store_file_is_one_line(tmp_path, capsys) -> None:
    store = _store(tmp_path)
    store.chmod(0o444)
    before = store.read_bytes()
    with pytest.raises(SpecError, match="read-only file") as caught:
        Store(store)
    assert caught.value.exit_code == 2 and len(str(caught.value).splitlines()) == 1
    assert store.read_bytes() == before and stat.S_IMODE(store.stat().st_mode) == 0o444


# --------------------------------------------------------------------------- damaged rows


def _front_row(store: Path, change: Callable[[dict], object]) -> Path:
    with sqlite3.connect(store) as conn:
        front = json.loads(conn.execute("SELECT front FROM fronts").fetchone()[0])
        changed = change(front)
        conn.execute("UPDATE fronts SET front = ?", (json.dumps(front if changed is None else changed),))
    conn.close()
    return store


def _point(key: str, value: object) -> Callable[[dict], None]:
    return lambda front: front["points"][0].__setitem__(key, value)


#: name -> (how the store's rows are damaged, what the line names)
ROW_DAMAGE: dict[str, tuple[Callable[[Path], Path], str]] = {
    "a front that is not an object": (lambda s: _front_row(s, lambda f: [1, 2]), "fronts[job aaaaaaaaaaaa"),
    "genes as text": (lambda s: _front_row(s, _point("genome", ["0"])), "points[0].genome[0]"),
    "a gene past int64": (lambda s: _front_row(s, _point("genome", [10**30])), "points[0].genome[0]"),
    "an objective as text": (lambda s: _front_row(s, _point("objectives", {"t": "1", "e": 2.0})),
                             "points[0].objectives.t"),
    "swept fields as a list": (lambda s: _sql(s, "UPDATE jobs SET swept = '[1, 2]'"), ".swept"),
    "a finish time of yesterday": (lambda s: _sql(s, "UPDATE jobs SET finished_at = 'yesterday'"),
                                   ".finished_at"),
    "an infinite wall time": (lambda s: _sql(s, "UPDATE jobs SET wall_s = 9e999"), ".wall_s"),
}


@pytest.mark.parametrize("damage", list(ROW_DAMAGE))
@pytest.mark.parametrize("command", ["results", "export", "trace", "report"])
def test_a_damaged_row_is_one_line_naming_its_field(damage, command, tmp_path, capsys) -> None:
    change, words = ROW_DAMAGE[damage]
    store = change(_store(tmp_path))
    argv = {"results": ["results", str(store)],
            "export": ["results", str(store), "--export", "csv", "--out", str(tmp_path / "p.csv")],
            "trace": ["results", str(store), "--trace", "--out", str(tmp_path / "t.json")],
            "report": ["report", str(store), "--out", str(tmp_path / "r.html")]}[command]
    code, _, err = run(capsys, *argv)
    assert code == 2, err[-2000:]
    line = _one_line(err)
    assert str(store) in line and words in line, line
    assert not any((tmp_path / name).exists() for name in ("p.csv", "t.json", "r.html"))
