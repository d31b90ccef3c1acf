"""The batch result store: one SQLite file in WAL mode, written only by the process running the sweep.

Tables: ``meta`` (format and schema version), ``jobs`` (one row per finished
job: id, status, message, resolved spec, swept fields, wall time, engine
version, worker, attempts) and ``fronts`` (one row per solver of a job: its
:meth:`~dse.pareto.ParetoSet.to_dict` as JSON, with the points, solver
statistics and status). Every finished job is committed in one transaction,
so a killed sweep leaves whole jobs or none.

A writer holds an exclusive OS lock on ``STORE.lock`` (``fcntl.flock``) for as
long as it is open; the OS releases it when the process ends, however it ends,
so a killed sweep never leaves a stale lock. A second writer is refused with a
:class:`~dse.errors.SpecError` naming the process that holds it. Readers
(:func:`jobs_frame`, :func:`points_frame`) take no lock.

Durability: ``synchronous=NORMAL`` in WAL mode: a committed job survives any
crash of the process; only a power loss can drop the last commits, and those
jobs are then run again by the next resume (never duplicated, never half-written).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dse.errors import SpecError

if TYPE_CHECKING:
    import pandas as pd

    from dse.sweep import Job

#: What ``meta.format`` says in a store.
STORE_FORMAT = "dse-batch-store"
SCHEMA_VERSION = 1
#: Job statuses: solved; no feasible mapping; invalid spec; crashed or errored; ran past its limit.
STATUSES = ("done", "infeasible", "invalid", "failed", "timeout")
#: Statuses that ``retry_failed`` runs again (the others are deterministic outcomes).
RETRYABLE = ("failed", "timeout")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
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
CREATE TABLE IF NOT EXISTS fronts (
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
    return path.with_name(path.name + ".lock")


class Store:
    """A store opened for writing: holds the lock until :meth:`close` (also a context manager).

    Raises :class:`SpecError` (exit 2) when another process holds the lock, or when the file
    exists and is not a store.

    Example::

        with Store("out/sweep.sqlite") as store:
            done = store.finished()
    """

    def __init__(self, path: str | Path) -> None:
        import fcntl

        self.path = Path(path)
        self.write_s = 0.0
        self.writes = 0
        where = str(self.path)
        if self.path.exists() and not self.path.is_file():
            raise SpecError("command line", "--store", where, "is not a file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = open(_lock_path(self.path), "a+")  # noqa: SIM115 - held until close()
        except OSError as exc:
            raise SpecError("command line", "--store", where, f"cannot write there: {exc.strerror or exc}") from None
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.seek(0)
            holder = self._lock.read().strip() or "another process"
            self._lock.close()
            raise SpecError("command line", "--store", where,
                            f"is in use by another dse batch ({holder}); wait for it to finish or stop it, "
                            "then run this command again to resume") from None
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}")
        self._lock.flush()
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.executescript(_SCHEMA)
            _check_format(self.conn, where)
            self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?), ('schema_version', ?)",
                              (STORE_FORMAT, str(SCHEMA_VERSION)))
        except sqlite3.DatabaseError as exc:
            self._release()
            raise SpecError("command line", "--store", where, f"not a dse result store: {exc}") from None
        except SpecError:
            self._release()
            raise

    def _release(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()
        self._lock.close()

    def close(self) -> None:
        """Close the database and release the lock."""
        if not self._lock.closed:
            self._release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def finished(self) -> dict[str, str]:
        """The status of every job in the store, by job id."""
        return dict(self.conn.execute("SELECT job_id, status FROM jobs").fetchall())

    def record(self, job: Job, result: JobResult) -> None:
        """Commit ``job``'s result in one transaction (replacing an earlier try of the same job)."""
        start = time.perf_counter()
        spec = job.spec
        rows = [(job.job_id, k, str(f.get("solver", "")), str(f.get("status", "")), int(bool(f.get("complete"))),
                 float(f.get("stats", {}).get("wall_s", 0.0)), len(f.get("points", [])),
                 json.dumps(f, default=_json_default))
                for k, f in enumerate(result.fronts)]
        conn = self.conn
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


def _json_default(value: Any) -> Any:
    from dse.pareto import _json_default as default

    return default(value)


def _check_format(conn: sqlite3.Connection, where: str) -> None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    if row is not None and row[0] != STORE_FORMAT:
        raise SpecError("command line", "--store", where, f"not a dse result store (format {row[0]!r})")


# ------------------------------------------------------------------ reading
def connect_readonly(path: str | Path, flag: str = "STORE") -> sqlite3.Connection:
    """A read-only connection to an existing store; :class:`SpecError` when it is missing or not a store."""
    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise SpecError("command line", flag, where, "no such store file")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "jobs", "fronts"} <= tables:
            conn.close()
            raise SpecError("command line", flag, where, "not a dse result store (no jobs table)")
        _check_format(conn, where)
    except sqlite3.DatabaseError as exc:
        raise SpecError("command line", flag, where, f"not a dse result store: {exc}") from None
    return conn


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
    query = "SELECT job_id, status, message, name, family, swept, wall_s, engine_version, worker, attempts FROM jobs"
    rows = conn.execute(query + " ORDER BY finished_at").fetchall()
    if job_ids is None:
        return rows
    by_id = {r[0]: r for r in rows}
    return [by_id[j] for j in job_ids if j in by_id]


def _fronts(conn: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for job_id, front in conn.execute("SELECT job_id, front FROM fronts ORDER BY job_id, position"):
        out.setdefault(job_id, []).append(json.loads(front))
    return out


def _read_jobs(store: str | Path, job_ids: Sequence[str] | None) -> tuple[list[Any], dict[str, list[dict[str, Any]]],
                                                                        list[dict[str, Any]], list[str]]:
    """The selected job rows, every job's fronts, each row's swept fields and their column names."""
    with closing(connect_readonly(store, "store")) as conn:
        rows = _select_jobs(conn, job_ids)
        fronts = _fronts(conn)
    swepts = [json.loads(r[5]) for r in rows]
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
    with closing(connect_readonly(store, "store")) as conn:
        for (front,) in conn.execute("SELECT front FROM fronts ORDER BY job_id, position"):
            for o in json.loads(front).get("objectives", []):
                found.setdefault(str(o["column"]), str(o.get("sense", "min")))
    return list(found.items())
