"""The result store is never hijacked, run twice, or read into a traceback.

Stores are written directly with :class:`dse.store.database.Store` (no Dask cluster): each job holds one front of
``POINTS`` made-up points, so the expected contents are known without running a solver.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dse.errors import SpecError
from dse.runs.sweep import Job
from dse.store.database import JobResult, Store, check_store_file, jobs_frame, points_frame
from tests.cli.test_cli import run
from tests.conftest import TINY_PLATFORM, TINY_WORKLOAD

TINY = {"name": "tiny", "family": "pipeline", "platform": TINY_PLATFORM, "workload": TINY_WORKLOAD,
        "objectives": ["throughput", "energy"], "solver": {"name": "exhaustive", "time_limit_s": 30, "seed": 0}}
POINTS = 40


def _front(k: int) -> dict:
    points = [{"genome": [k, j, 0], "objectives": {"t": float(j), "e": float(POINTS - j)}, "metrics": {},
               "feasible": True, "proven": True, "solver": "exhaustive"} for j in range(POINTS)]
    return {"solver": "exhaustive", "status": "optimal", "complete": True, "stats": {"wall_s": 0.1},
            "objectives": [{"column": "t", "sense": "max"}, {"column": "e", "sense": "min"}], "points": points}


def _write_store(path: Path, n_jobs: int) -> list[str]:
    ids = []
    with Store(path) as store:
        for k in range(n_jobs):
            job = Job(f"{k:064x}", {"name": f"job{k}", "family": "pipeline", "pad": "x" * 300}, {"seed": k})
            store.record(job, JobResult("done", "", [_front(k)], 0.5, "test", "here"))
            ids.append(job.job_id)
    return ids


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _spec(tmp_path: Path) -> Path:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(TINY))
    return spec


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_batch_refuses_another_programs_database_and_leaves_it_unchanged(tmp_path, capsys, journal) -> None:
    foreign = tmp_path / "app.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute(f"PRAGMA journal_mode={journal}")
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO users (name) VALUES (?)", [("ann",), ("bob",)])
    conn.close()
    before = _digest(foreign)
    code, _, err = run(capsys, "batch", str(_spec(tmp_path)), "--store", str(foreign), "--quiet")
    assert code == 2, err
    assert "not a dse result store" in err and "app.db" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert _digest(foreign) == before
    assert not (tmp_path / "app.db.lock").exists()
    with sqlite3.connect(foreign) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("users",)]
    conn.close()


def test_a_store_of_a_newer_schema_is_refused_unchanged(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    _write_store(store, 1)
    with sqlite3.connect(store) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    before = _digest(store)
    with pytest.raises(SpecError, match="schema version '99'"):
        Store(store)
    assert _digest(store) == before


@pytest.mark.parametrize("how", ["symlink", "hardlink", "relative"])
def test_a_second_writer_through_another_path_is_refused(tmp_path, capsys, monkeypatch, how) -> None:
    store = tmp_path / "real" / "s.sqlite"
    store.parent.mkdir()
    _write_store(store, 1)
    other = tmp_path / "other.sqlite"
    if how == "symlink":
        other.symlink_to(store)
    elif how == "hardlink":
        os.link(store, other)
    else:
        monkeypatch.chdir(tmp_path / "real")
        other = Path("s.sqlite")
    with Store(store):
        with pytest.raises(SpecError, match="in use by another dse batch"):
            Store(other)
        code, _, err = run(capsys, "batch", str(_spec(tmp_path)), "--store", str(other), "--quiet")
        assert code == 2 and "in use by another dse batch" in err, err
    with Store(other) as again:  # released with the first writer
        assert len(again.finished()) == 1


def _damage(path: Path) -> None:
    """Overwrite a page in the middle of the file with garbage (pages of 4 KiB; page 1 holds the schema)."""
    size = path.stat().st_size
    page = 4096
    middle = (size // page // 2) * page
    with open(path, "r+b") as handle:
        handle.seek(middle)
        handle.write(b"\xde\xad\xbe\xef" * (page // 4))


def test_a_damaged_store_is_exit_2_for_batch_and_results_and_is_salvaged(tmp_path, capsys) -> None:
    store = tmp_path / "s.sqlite"
    ids = _write_store(store, 30)
    original = points_frame(store)
    _damage(store)
    before = _digest(store)
    code, _, err = run(capsys, "results", str(store))
    assert code == 2 and "damaged store" in err and "--salvage" in err and "Traceback" not in err, err
    code, _, err = run(capsys, "batch", str(_spec(tmp_path)), "--store", str(store), "--quiet")
    assert code == 2 and "damaged store" in err and "Traceback" not in err, err
    assert _digest(store) == before
    new = tmp_path / "saved.sqlite"
    code, out, err = run(capsys, "results", str(store), "--salvage", str(new))
    assert code == 0, err
    assert _digest(store) == before
    with sqlite3.connect(new) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    kept = set(jobs_frame(new)["job"])
    assert kept < set(ids) and len(kept) >= len(ids) // 2, (len(kept), out)
    assert f"wrote {new}: {len(kept)} intact jobs" in out
    # every salvaged job holds exactly the points it had before the damage
    salvaged = points_frame(new).sort_values(["job", "genome"]).reset_index(drop=True)
    expected = original[original["job"].isin(kept)].sort_values(["job", "genome"]).reset_index(drop=True)
    assert salvaged[["job", "t", "e", "genome"]].equals(expected[["job", "t", "e", "genome"]])
    # the salvaged store is a store: a batch may resume into it
    with Store(new) as db:
        assert set(db.finished()) == kept


def test_a_schema_byte_that_is_no_utf8_is_a_damaged_store_not_a_traceback(tmp_path, capsys) -> None:
    """One byte 0x80 in the schema's SQL text (page 1): SQLite's complaint about the damaged schema quotes it,
    and Python cannot decode that message (a UnicodeDecodeError, which escaped as a traceback before)."""
    store = tmp_path / "s.sqlite"
    _write_store(store, 3)
    data = bytearray(store.read_bytes())
    at = data.index(b"CREATE TABLE") + len(b"CREATE T")  # "CREATE T\x80BLE": a syntax error quoting it
    data[at] = 0x80
    store.write_bytes(bytes(data))
    before = _digest(store)
    with pytest.raises(SpecError, match="damaged store"):
        Store(store)
    code, _, err = run(capsys, "results", str(store))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert _digest(store) == before


def test_salvage_refuses_an_existing_output_and_a_file_that_is_not_sqlite(tmp_path, capsys) -> None:
    store = tmp_path / "s.sqlite"
    _write_store(store, 2)
    exists = tmp_path / "exists.sqlite"
    exists.write_text("keep me")
    code, _, err = run(capsys, "results", str(store), "--salvage", str(exists))
    assert code == 2 and "already exists" in err and exists.read_text() == "keep me"
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    code, _, err = run(capsys, "results", str(text), "--salvage", str(tmp_path / "new.sqlite"))
    assert code == 2 and "not an SQLite database" in err


def test_salvage_leaves_out_a_job_whose_json_parses_but_no_reader_accepts(tmp_path, capsys) -> None:
    # a byte flipped inside a key ('genome' -> 'genom ') leaves valid JSON with the same point count: the
    # salvaged store must still be one that every reader accepts, so that job is left out
    store = tmp_path / "s.sqlite"
    ids = _write_store(store, 3)
    with sqlite3.connect(store) as conn:
        (front,) = conn.execute("SELECT front FROM fronts WHERE job_id = ?", (ids[1],)).fetchone()
        conn.execute("UPDATE fronts SET front = ? WHERE job_id = ?",
                     (front.replace('"genome"', '"genom "', 1), ids[1]))
    conn.close()
    new = tmp_path / "new.sqlite"
    code, out, err = run(capsys, "results", str(store), "--salvage", str(new))
    assert code == 0, err
    assert sorted(jobs_frame(new)["job"]) == sorted([ids[0], ids[2]])


def _without_permission_override(argv: list[str]) -> list[str]:
    """``argv`` run so that folder permissions apply: as root, without the capabilities that bypass them."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "running as root: setpriv (util-linux) is needed to drop CAP_DAC_OVERRIDE"
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", *argv]


@pytest.mark.slow
@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_a_store_in_a_read_only_folder_is_readable(tmp_path, journal) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    store = folder / "s.sqlite"
    _write_store(store, 3)
    with sqlite3.connect(store) as conn:  # a store left in WAL mode (as earlier versions left them)
        conn.execute(f"PRAGMA journal_mode={journal}")
    conn.close()
    os.chmod(folder, 0o555)
    try:
        probe = subprocess.run(_without_permission_override(
            [sys.executable, "-c", f"open({str(folder / 'probe')!r}, 'w')"]), capture_output=True, text=True)
        assert probe.returncode != 0 and "Permission denied" in probe.stderr  # the folder really is read-only
        done = subprocess.run(_without_permission_override([sys.executable, "-m", "dse.cli", "results", str(store)]),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "3 jobs: 3 done" in done.stdout
        assert sorted(p.name for p in folder.iterdir()) == ["s.sqlite", "s.sqlite.lock"]
    finally:
        os.chmod(folder, 0o755)


def test_check_store_file_says_new_for_an_empty_file(tmp_path) -> None:
    empty = tmp_path / "new.sqlite"
    empty.write_bytes(b"")
    assert check_store_file(empty) is False
    _write_store(empty, 1)
    assert check_store_file(empty) is True
