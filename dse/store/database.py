"""The batch result store: one SQLite file in WAL mode, written only by the process running the sweep.

Tables: ``meta`` (the store's marker: ``format`` = :data:`STORE_FORMAT` and
``schema_version``), ``jobs`` (one row per finished job: id, status, message,
resolved spec, swept fields, wall time, engine version, worker, attempts) and
``fronts`` (one row per solver of a job: its :meth:`~dse.pareto.ParetoSet.to_dict`
as JSON, with the points, solver statistics and status). Every finished job is
committed in one transaction, so a killed sweep leaves whole jobs or none.

A store is a store: before anything is written, an existing file is read
(read-only) and must carry the marker, a schema version this engine knows and
pass SQLite's ``quick_check``; another program's database, a damaged file or
anything that is not SQLite is refused with a :class:`~dse.errors.SpecError`
(exit 2) naming the file and what is wrong, and is left byte for byte as it was.
Only a missing or empty file becomes a new store. A damaged store's intact jobs
are copied into a new store by :func:`dse.store.salvage.salvage` (``dse results STORE --salvage OUT``).

A writer holds an exclusive OS lock (``fcntl.flock``) on the store file itself
for as long as it is open, so every path to the same file (symlinks, relative
paths, hard links) meets the same lock; the OS releases it when the process
ends, however it ends, so a killed sweep never leaves a stale lock. The lock
holder's pid is written to ``STORE.lock`` beside the store's real path, and a
second writer is refused with a :class:`SpecError` naming it. Readers
(:func:`jobs_frame`, :func:`points_frame`) take no lock; a store in a
read-only folder is read from a private copy.

Durability: ``synchronous=NORMAL`` in WAL mode: a committed job survives any
crash of the process; only a power loss can drop the last commits, and those
jobs are then run again by the next resume (never duplicated, never half-written).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import sqlite3
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dse.errors import SpecError
from dse.pareto import _json_default
from dse.util.result_files import JobRecord, store_front, store_job

if TYPE_CHECKING:
    import pandas as pd

    from dse.runs.sweep import Job

#: What ``meta.format`` says in a store.
#: What reading a damaged file raises: SQLite's errors, and a decode error where SQLite's message about a
#: damaged schema quotes bytes that are no UTF-8 (Python cannot decode the message itself).
UNREADABLE = (sqlite3.DatabaseError, UnicodeDecodeError)
STORE_FORMAT = "dse-batch-store"
SCHEMA_VERSION = 1
#: Job statuses: solved; no feasible mapping; invalid spec; crashed or errored; ran past its limit.
STATUSES = ("done", "infeasible", "invalid", "failed", "timeout")
#: Statuses that ``retry_failed`` runs again (the others are deterministic outcomes).
RETRYABLE = ("failed", "timeout")
#: The first 16 bytes of every SQLite 3 database file.
SQLITE_MAGIC = b"SQLite format 3\x00"
#: What a damaged store's message suggests.
SALVAGE_HINT = "copy its intact jobs into a new store with: dse results STORE --salvage NEW.sqlite"

_TABLES = ("meta", "jobs", "fronts")
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE jobs (
    job_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    name TEXT,
    family TEXT,
    source TEXT,
    spec TEXT NOT NULL,
    swept TEXT NOT NULL,
    wall_s REAL,
    engine_version TEXT,
    worker TEXT,
    finished_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE fronts (
    job_id TEXT NOT NULL REFERENCES jobs(job_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    solver TEXT NOT NULL,
    status TEXT NOT NULL,
    complete INTEGER NOT NULL,
    wall_s REAL,
    n_points INTEGER NOT NULL,
    front TEXT NOT NULL,
    PRIMARY KEY (job_id, position)
);
"""
#: The highest row id a store's table may hold (a store of a billion jobs is far past any sweep; a crafted
#: row id near 2^63 would make a salvage probe forever).
MAX_ROWID = 2**32


def _schema_objects(rows: Iterable[Sequence[Any]]) -> set[tuple[str, str, str, str]]:
    """``(type, name, table, sql)`` of ``sqlite_master`` rows, the SQL's whitespace collapsed."""
    return {(str(t), str(n), str(tb), " ".join(str(q or "").split())) for t, n, tb, q in rows}


def _expected_objects() -> set[tuple[str, str, str, str]]:
    """The schema objects a store holds: its three tables and their primary-key indexes, nothing more."""
    with closing(sqlite3.connect(":memory:")) as conn:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        return _schema_objects(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))


#: What a store's ``sqlite_master`` holds, exactly (a trigger, a view or any other object is refused).
STORE_OBJECTS = _expected_objects()

_JOB_COLUMNS = ("job_id", "status", "message", "name", "family", "source", "spec", "swept", "wall_s",
                "engine_version", "worker", "finished_at", "attempts")
_FRONT_COLUMNS = ("job_id", "position", "solver", "status", "complete", "wall_s", "n_points", "front")


@dataclass(frozen=True)
class JobResult:
    """What running one job gave: ``status`` (one of :data:`STATUSES`), ``message``, each solver's
    front as :meth:`~dse.pareto.ParetoSet.to_dict`, the job's wall time, the engine version and the
    worker (``host:pid``) that ran it."""

    status: str
    message: str = ""
    fronts: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    engine_version: str = ""
    worker: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message, "fronts": self.fronts, "wall_s": self.wall_s,
                "engine_version": self.engine_version, "worker": self.worker}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobResult:
        return cls(str(data["status"]), str(data.get("message", "")), list(data.get("fronts", [])),
                   float(data.get("wall_s", 0.0)), str(data.get("engine_version", "")), str(data.get("worker", "")))


def _lock_path(path: Path) -> Path:
    """Where the lock holder's description is written: beside the store's real path."""
    real = Path(os.path.realpath(path))
    return real.with_name(real.name + ".lock")


def _ro_uri(path: Path) -> str:
    return f"{path.resolve().as_uri()}?mode=ro"


def check_store_file(path: Path, flag: str = "--store") -> bool:
    """Check, without writing anything, that ``path`` is a dse result store; returns False when the file is
    empty (a new store), True when it is a store. Raises :class:`SpecError` (exit 2) naming the file and
    what is wrong: not SQLite, another program's database (no marker), a newer schema, damaged pages."""
    where = str(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise SpecError("command line", flag, where, f"cannot read it: {exc.strerror or exc}") from None
    if not head:
        return False
    if head != SQLITE_MAGIC:
        raise SpecError("command line", flag, where, "not a dse result store: not an SQLite database; "
                        "give a new file name for a new store")
    conn = _open_for_reading(path, flag)
    try:
        _check_marker(conn, where, flag)
        _check_pages(conn, where, flag)
    finally:
        conn.close()
    return True


def _check_marker(conn: sqlite3.Connection, where: str, flag: str) -> None:
    """The store marker: the three tables, ``meta.format`` and a known ``meta.schema_version``; then the
    schema exactly the store's (:func:`_check_schema`)."""
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in _TABLES if t not in tables]
        if missing:
            raise SpecError("command line", flag, where,
                            f"not a dse result store: another program's database (no {missing[0]} table); "
                            "give a new file name for a new store")
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('format', 'schema_version')"))
    except UNREADABLE as exc:
        raise _damaged(where, exc, flag) from None
    _check_format(meta, where, flag)
    _check_schema(conn, where, flag)


def _check_schema(conn: sqlite3.Connection, where: str, flag: str) -> None:
    """The file's schema is exactly :data:`STORE_OBJECTS` (no trigger that would act while a batch writes, no
    view, index or table of its own, no column changed) and no table's row id passes :data:`MAX_ROWID`;
    :class:`SpecError` naming the first object that differs."""
    try:
        found = _schema_objects(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        highest = {t: conn.execute(f"SELECT max(rowid) FROM {t}").fetchone()[0] for t in _TABLES}
    except UNREADABLE as exc:
        raise _damaged(where, exc, flag) from None
    extra = sorted(found - STORE_OBJECTS)
    if extra:
        kind, name, table = extra[0][:3]
        raise SpecError("command line", flag, where,
                        f"not a dse result store: its schema holds {kind} {_short(name)} on {_short(table)}, which "
                        "a store never has (a store is only its tables meta, jobs and fronts)")
    missing = sorted(STORE_OBJECTS - found)
    if missing:
        raise SpecError("command line", flag, where, f"not a dse result store: its schema lacks or changes "
                        f"{missing[0][0]} {missing[0][1]}")
    past = next(((t, v) for t, v in highest.items() if isinstance(v, int) and v > MAX_ROWID), None)
    if past is not None:
        raise SpecError("command line", flag, where, f"not a dse result store: table {past[0]} holds row id "
                        f"{past[1]}, past {MAX_ROWID} (a store numbers its rows from 1)")


def _check_format(meta: Mapping[str, Any], where: str, flag: str) -> None:
    """``meta.format`` is the store's and ``meta.schema_version`` one this engine reads."""
    if meta.get("format") != STORE_FORMAT:
        raise SpecError("command line", flag, where,
                        f"not a dse result store (format {_short(meta.get('format'))}, "
                        f"expected {STORE_FORMAT!r}); give a new file name for a new store")
    version = str(meta.get("schema_version", ""))
    if not version.isdigit() or int(version) != SCHEMA_VERSION:
        raise SpecError("command line", flag, where,
                        f"store schema version {_short(meta.get('schema_version'))} is not the version "
                        f"{SCHEMA_VERSION} this engine reads (written by another dse version?)")


def _check_pages(conn: sqlite3.Connection, where: str, flag: str) -> None:
    """SQLite's ``quick_check`` over every page; SpecError naming the first problem found."""
    try:
        rows = conn.execute("PRAGMA quick_check(3)").fetchall()
    except UNREADABLE as exc:
        rows = [(str(exc),)]
    if rows != [("ok",)]:
        problem = "; ".join(str(r[0]) for r in rows)
        raise SpecError("command line", flag, where, f"damaged store ({_short(problem, 160)}); {SALVAGE_HINT}")


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _CopyConnection(sqlite3.Connection):
    """A connection to a private copy of a store; closing it removes the copy."""

    copy_dir: str | None = None

    def close(self) -> None:
        super().close()
        if self.copy_dir is not None:
            shutil.rmtree(self.copy_dir, ignore_errors=True)
            self.copy_dir = None


def _open_for_reading(path: Path, flag: str) -> sqlite3.Connection:
    """A read-only connection to ``path``. Where SQLite cannot open it read-only in place (a WAL store in a
    read-only folder: its shared-memory file cannot be made), the store and its WAL are copied into a
    private folder and read there. Raises :class:`SpecError` when it cannot be read at all."""
    where = str(path)
    try:
        conn = sqlite3.connect(_ro_uri(path), uri=True, timeout=30)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except UNREADABLE as exc:
        first = exc
        conn.close()
    if "readonly" not in str(first) and "unable to open" not in str(first):
        raise _damaged(where, first, flag) from None
    copy_dir = tempfile.mkdtemp(prefix="dse-store-")
    try:
        copy = Path(copy_dir) / "store.sqlite"
        shutil.copyfile(path, copy)
        wal = path.with_name(path.name + "-wal")
        if wal.is_file():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        conn = sqlite3.connect(_ro_uri(copy), uri=True, timeout=30, factory=_CopyConnection)
        conn.copy_dir = copy_dir
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except (OSError, *UNREADABLE) as exc:
        shutil.rmtree(copy_dir, ignore_errors=True)
        reason = getattr(exc, "strerror", None) or exc
        raise SpecError("command line", flag, where, f"cannot read it: {reason}") from None


class Store:
    """A store opened for writing: holds the lock until :meth:`close` (also a context manager).

    Raises :class:`SpecError` (exit 2) when another process holds the lock, when the file exists and
    is not a dse store (left unchanged), is damaged, or cannot be written.

    Example::

        with Store("out/sweep.sqlite") as store:
            done = store.finished()
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.write_s = 0.0
        self.writes = 0
        self.conn: sqlite3.Connection | None = None
        where = str(self.path)
        if self.path.exists() and not self.path.is_file():
            raise SpecError("command line", "--store", where, "is not a file")
        if self.path.exists():  # refuse a foreign or damaged file before creating anything beside it
            check_store_file(self.path)
            if not self.path.stat().st_mode & 0o222 or not os.access(self.path, os.W_OK):
                raise SpecError("command line", "--store", where, "is a read-only file: a batch adds its jobs "
                                "to the store (make it writable, or give a new file name for a new store)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError as exc:
            raise SpecError("command line", "--store", where, f"cannot write there: {exc.strerror or exc}") from None
        self._holder = None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(self.path) or "another process"
            os.close(self._fd)
            raise SpecError("command line", "--store", where,
                            f"is in use by another dse batch ({holder}); wait for it to finish or stop it, "
                            "then run this command again to resume") from None
        try:
            self._write_holder()
            exists = check_store_file(self.path)  # again, under the lock: another writer may have made it
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            if not exists:
                self.conn.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                self.conn.execute("INSERT INTO meta VALUES ('format', ?), ('schema_version', ?)",
                                  (STORE_FORMAT, str(SCHEMA_VERSION)))
                self.conn.execute("COMMIT")
        except UNREADABLE as exc:
            self._release()
            raise SpecError("command line", "--store", where, f"cannot write the store: {exc}") from None
        except BaseException:
            self._release()
            raise

    def _write_holder(self) -> None:
        """Write who holds the lock into ``STORE.lock`` (best effort: the lock itself is on the store file)."""
        text = f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}"
        try:
            with open(_lock_path(self.path), "w") as handle:
                handle.write(text)
        except OSError:
            pass

    def _release(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        """Close the database and release the lock."""
        self._release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self) -> sqlite3.Connection:
        if self.conn is None:
            raise SpecError("command line", "--store", str(self.path), "the store is closed")
        return self.conn

    def finished(self) -> dict[str, str]:
        """The status of every job in the store, by job id."""
        try:
            return dict(self._connection().execute("SELECT job_id, status FROM jobs").fetchall())
        except UNREADABLE as exc:
            raise _damaged(self.path, exc, "--store") from None

    def record(self, job: Job, result: JobResult) -> None:
        """Commit ``job``'s result in one transaction (replacing an earlier try of the same job)."""
        start = time.perf_counter()
        spec = job.spec
        rows = [(job.job_id, k, str(f.get("solver", "")), str(f.get("status", "")), int(bool(f.get("complete"))),
                 float(f.get("stats", {}).get("wall_s", 0.0)), len(f.get("points", [])),
                 json.dumps(f, default=_json_default))
                for k, f in enumerate(result.fronts)]
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("DELETE FROM fronts WHERE job_id = ?", (job.job_id,))
            conn.execute(
                "INSERT INTO jobs (job_id, status, message, name, family, source, spec, swept, wall_s, "
                "engine_version, worker, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(job_id) DO UPDATE SET status=excluded.status, message=excluded.message, "
                "wall_s=excluded.wall_s, engine_version=excluded.engine_version, worker=excluded.worker, "
                "finished_at=excluded.finished_at, attempts=jobs.attempts + 1",
                (job.job_id, result.status, result.message, str(spec.get("name", "")), str(spec.get("family", "")),
                 job.source, json.dumps(spec, sort_keys=True, default=str), json.dumps(job.swept, default=str),
                 result.wall_s, result.engine_version, result.worker, time.time()))
            conn.executemany("INSERT INTO fronts VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self.write_s += time.perf_counter() - start
        self.writes += 1

    def copy_rows(self, job: Sequence[Any], fronts: Sequence[Sequence[Any]]) -> None:
        """Commit one job row and its front rows exactly as read from another store
        (:func:`dse.store.salvage.salvage`)."""
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(f"INSERT INTO jobs ({', '.join(_JOB_COLUMNS)}) VALUES ({', '.join('?' * len(_JOB_COLUMNS))})",
                         tuple(job))
            conn.executemany(f"INSERT INTO fronts ({', '.join(_FRONT_COLUMNS)}) VALUES "
                             f"({', '.join('?' * len(_FRONT_COLUMNS))})", [tuple(f) for f in fronts])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _read_holder(path: Path) -> str:
    try:
        return _lock_path(path).read_text()[:200].strip()
    except OSError:
        return ""


# ------------------------------------------------------------------ reading
def connect_readonly(path: str | Path, flag: str = "STORE") -> sqlite3.Connection:
    """A read-only connection to an existing store (nothing is written, a read-only folder is fine);
    :class:`SpecError` (exit 2) when it is missing, not a store, of another schema version or damaged."""
    path = Path(path)
    if not path.is_file():
        raise SpecError("command line", flag, str(path), "no such store file")
    if not check_store_file(path, flag):
        raise SpecError("command line", flag, str(path), "not a dse result store: the file is empty")
    conn = _open_for_reading(path, flag)
    try:
        _check_marker(conn, str(path), flag)
    except SpecError:
        conn.close()
        raise
    return conn


def _damaged(store: str | Path, exc: Exception, flag: str = "store") -> SpecError:
    """The one-line refusal of a damaged store; SQLite's message (which may quote a schema over several lines)
    is cut short and its line breaks escaped."""
    return SpecError("command line", flag, str(store), f"damaged store ({_short(str(exc), 120)}); {SALVAGE_HINT}")


def _cell(value: Any) -> Any:
    """A swept value as a table cell: scalars as they are, lists and mappings as compact JSON."""
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def _swept_columns(swepts: Iterable[Mapping[str, Any]]) -> list[str]:
    columns: list[str] = []
    for swept in swepts:
        columns += [k for k in swept if k not in columns]
    return columns


def _select_jobs(conn: sqlite3.Connection, job_ids: Sequence[str] | None) -> list[tuple[Any, ...]]:
    query = ("SELECT job_id, status, message, name, family, swept, wall_s, engine_version, worker, attempts, "
             "finished_at FROM jobs")
    rows = conn.execute(query + " ORDER BY finished_at").fetchall()
    if job_ids is None:
        return rows
    by_id = {r[0]: r for r in rows}
    return [by_id[j] for j in job_ids if j in by_id]


def _fronts(conn: sqlite3.Connection, source: str) -> dict[str, list[dict[str, Any]]]:
    """Every job's fronts, each checked as :func:`dse.util.result_files.store_front` (SpecError naming the
    row, field and value)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for job_id, position, front in conn.execute("SELECT job_id, position, front FROM fronts "
                                                "ORDER BY job_id, position"):
        where = f"fronts[job {str(job_id)[:12]}, position {position}]"
        out.setdefault(str(job_id), []).append(store_front(json.loads(front), source, where))
    return out


def checked_job(row: Mapping[str, Any], source: str) -> JobRecord:
    """A job row (its ``swept`` as stored: JSON text) checked as :class:`dse.util.result_files.JobRecord`:
    swept fields an object, a finite wall time, a finish time in seconds. Raises :class:`SpecError`."""
    swept = row.get("swept")
    try:
        parsed = json.loads(swept) if isinstance(swept, str) else swept
    except ValueError as exc:
        raise SpecError(source, f"jobs[{str(row.get('job_id'))[:12]}].swept", swept,
                        f"not JSON ({exc})") from None
    return store_job({**row, "swept": parsed}, source, f"jobs[{str(row.get('job_id'))[:12]}]")


def _read_jobs(store: str | Path, job_ids: Sequence[str] | None) -> tuple[list[Any], dict[str, list[dict[str, Any]]],
                                                                        list[dict[str, Any]], list[str]]:
    """The selected job rows, every job's fronts, each row's swept fields and their column names;
    :class:`SpecError` when the store is damaged."""
    try:
        with closing(connect_readonly(store, "store")) as conn:
            rows = _select_jobs(conn, job_ids)
            fronts = _fronts(conn, str(store))
        swepts = [checked_job({"job_id": r[0], "status": r[1], "swept": r[5], "wall_s": r[6],
                               "finished_at": r[10]}, str(store)).swept for r in rows]
    except (*UNREADABLE, ValueError, TypeError) as exc:
        if isinstance(exc, SpecError):
            raise
        raise _damaged(store, exc) from None
    return rows, fronts, swepts, _swept_columns(swepts)


def jobs_frame(store: str | Path, job_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per finished job: ``job``, ``status``, each swept field, ``solvers``, ``front_size``
    (points over all its fronts), ``best_<objective>`` per objective (over its feasible points, in
    the objective's sense), ``wall_s``, ``message``. ``job_ids`` picks and orders the rows."""
    import pandas as pd

    rows, fronts, swepts, swept_cols = _read_jobs(store, job_ids)
    records = []
    for row, swept in zip(rows, swepts, strict=True):
        job_fronts = fronts.get(row[0], [])
        record: dict[str, Any] = {"job": row[0], "status": row[1]}
        record.update({c: _cell(swept.get(c)) for c in swept_cols})
        record["solvers"] = " ".join(str(f.get("solver", "")) for f in job_fronts)
        record["front_size"] = sum(len(f.get("points", [])) for f in job_fronts)
        record.update(_best(job_fronts))
        record.update({"wall_s": row[6], "attempts": row[9], "engine_version": row[7], "message": row[2]})
        records.append(record)
    head = ["job", "status", *swept_cols, "solvers", "front_size"]
    tail = ["wall_s", "attempts", "engine_version", "message"]
    frame = pd.DataFrame.from_records(records, columns=None if records else head + tail)
    best = [c for c in frame.columns if c not in head and c not in tail]
    return frame[head + best + tail]


def _best(fronts: list[dict[str, Any]]) -> dict[str, float]:
    """Best value of each objective over the feasible points of ``fronts`` (max or min by its sense)."""
    best: dict[str, float] = {}
    for f in fronts:
        senses = {o["column"]: o.get("sense", "min") for o in f.get("objectives", [])}
        for p in f.get("points", []):
            if not p.get("feasible", True):
                continue
            for column, value in p.get("objectives", {}).items():
                key = f"best_{column}"
                better = max if str(senses.get(column, "min")).startswith("max") else min
                best[key] = float(value) if key not in best else better(best[key], float(value))
    return best


def points_frame(store: str | Path, job_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """Every Pareto point of every job: ``job``, ``status``, the swept fields, ``solver``,
    ``front_status``, ``proven``, ``feasible``, the objectives in user units, the metrics and the
    ``genome`` (space-separated)."""
    import pandas as pd

    rows, fronts, swepts, swept_cols = _read_jobs(store, job_ids)
    records = []
    for row, swept in zip(rows, swepts, strict=True):
        base = {"job": row[0], "status": row[1], **{c: _cell(swept.get(c)) for c in swept_cols}}
        for f in fronts.get(row[0], []):
            for p in f.get("points", []):
                record = {**base, "solver": p.get("solver", f.get("solver")), "front_status": f.get("status"),
                          "proven": p.get("proven"), "feasible": p.get("feasible")}
                record.update(p.get("objectives", {}))
                record.update(p.get("metrics", {}))
                record["genome"] = " ".join(str(g) for g in p.get("genome", []))
                records.append(record)
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        frame = pd.DataFrame(columns=["job", "status", *swept_cols, "solver", "front_status", "proven",
                                      "feasible", "genome"])
    return frame



def objective_columns(store: str | Path) -> list[tuple[str, str]]:
    """Each objective's column and sense (``min``/``max``) over the store's fronts, in first-seen order."""
    found: dict[str, str] = {}
    try:
        with closing(connect_readonly(store, "store")) as conn:
            for job_id, position, front in conn.execute("SELECT job_id, position, front FROM fronts "
                                                        "ORDER BY job_id, position"):
                where = f"fronts[job {str(job_id)[:12]}, position {position}]"
                for o in store_front(json.loads(front), str(store), where).get("objectives", []):
                    found.setdefault(str(o["column"]), str(o.get("sense", "min")))
    except (*UNREADABLE, ValueError, TypeError, KeyError, AttributeError) as exc:
        if isinstance(exc, SpecError):
            raise
        raise _damaged(store, exc) from None
    return list(found.items())
