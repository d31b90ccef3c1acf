"""Salvage: copy the intact jobs of a damaged result store into a new one (``dse results STORE --salvage NEW``)."""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.store.database import (
    _FRONT_COLUMNS,
    _JOB_COLUMNS,
    SQLITE_MAGIC,
    STATUSES,
    STORE_FORMAT,
    STORE_OBJECTS,
    UNREADABLE,
    Store,
    _open_for_reading,
    _short,
    checked_job,
)
from dse.util.files import check_writable_file
from dse.util.result_files import store_front

__all__ = ["SalvageReport", "salvage"]

#: Row ids probed one by one past four times the rows a plain scan read (rows a damaged page hides).
MAX_PROBED_GAP = 100_000


@dataclass(frozen=True)
class SalvageReport:
    """What :func:`salvage` copied: jobs kept, job rows found but left out (unreadable or inconsistent)."""

    kept: int
    dropped: int


def _readable_rows(conn: sqlite3.Connection, table: str, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """Every row of ``table`` that can still be read: a plain scan first, then row by row over the rowids
    a damaged page hides from the scan."""
    rows: dict[int, tuple[Any, ...]] = {}
    query = f"SELECT rowid, {', '.join(columns)} FROM {table}"
    try:
        for row in conn.execute(query + " ORDER BY rowid"):
            rows[int(row[0])] = tuple(row[1:])
    except UNREADABLE:
        pass
    highest = max(rows, default=0)
    try:
        top = conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()
        highest = max(highest, int(top[0] or 0))
    except UNREADABLE:
        highest = max(highest, 1) * 2 + 1000
    # a store numbers its rows from 1 without large gaps: the probe stops well past the rows the scan saw, so a
    # crafted row id near 2^63 is not probed towards for ever
    highest = min(highest, 4 * len(rows) + MAX_PROBED_GAP)
    for rowid in range(1, highest + 1):
        if rowid in rows:
            continue
        try:
            row = conn.execute(query + " WHERE rowid = ?", (rowid,)).fetchone()
        except UNREADABLE:
            continue
        if row is not None:
            rows[rowid] = tuple(row[1:])
    return [rows[k] for k in sorted(rows)]


def _intact(job: tuple[Any, ...], fronts: list[tuple[Any, ...]], source: str) -> bool:
    """Whether a job row and its front rows are whole: its JSON fields parse, the row and every front pass
    the checks the store's readers make (:func:`checked_job`, :func:`store_front`: a byte flipped inside a
    key leaves valid JSON that no reader accepts), its fronts are numbered 0..k-1 with the point count their
    row gives, and a ``done`` job has a front."""
    try:
        json.loads(job[6])
        checked_job({"job_id": job[0], "status": job[1], "swept": job[7], "wall_s": job[8],
                     "finished_at": job[11]}, source)
        if job[1] not in STATUSES:
            return False
        positions = sorted(int(f[1]) for f in fronts)
        if positions != list(range(len(fronts))) or (job[1] == "done" and not fronts):
            return False
        parsed = [store_front(json.loads(f[7]), source, "fronts") for f in fronts]
        return all(len(p.get("points", [])) == int(f[6]) for p, f in zip(parsed, fronts, strict=True))
    except (ValueError, TypeError, AttributeError, SpecError):
        return False


def _check_is_store(conn: sqlite3.Connection, source: Path) -> None:
    """Refuse a database that is not a dse store: where its schema can be read, it must hold the store's
    tables with the store's columns (a foreign database with a ``jobs`` table is not salvaged) and, where
    ``meta`` can be read, the store's format. A schema or ``meta`` that damage made unreadable is let through:
    the rows are checked one by one."""
    try:
        tables = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())
    except UNREADABLE:
        return
    expected = {name: sql for kind, name, _, sql in STORE_OBJECTS if kind == "table"}
    for name, sql in expected.items():
        if name not in tables:
            raise SpecError("command line", "store", str(source),
                            f"not a dse result store (no {name} table): nothing to salvage")
        if " ".join(str(tables[name] or "").split()) != sql:
            raise SpecError("command line", "store", str(source),
                            f"not a dse result store (its {name} table has other columns): nothing to salvage")
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    except UNREADABLE:
        return
    if meta and meta.get("format") != STORE_FORMAT:  # rows of meta lost to damage are no verdict
        raise SpecError("command line", "store", str(source),
                        f"not a dse result store (format {_short(meta.get('format'))}): nothing to salvage")


def salvage(source: str | Path, out: str | Path) -> SalvageReport:
    """Copy every intact job of the (possibly damaged) store ``source`` into a new store ``out``; returns a
    :class:`SalvageReport`. ``source`` is only read. ``out`` must not exist; it is written beside its final
    name and renamed into place when complete. Raises :class:`SpecError` when ``source`` is not SQLite or
    not a dse store, or ``out`` exists or cannot be written."""
    source, out = Path(source), Path(out)
    if not source.is_file():
        raise SpecError("command line", "store", str(source), "no such store file")
    if out.exists() or out.is_symlink():
        raise SpecError("command line", "--salvage", str(out), "already exists; give a new file name")
    with open(source, "rb") as handle:
        if handle.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            raise SpecError("command line", "store", str(source), "not an SQLite database: nothing to salvage")
    check_writable_file(out, "command line", "--salvage")
    with closing(_open_for_reading(source, "store")) as conn:
        _check_is_store(conn, source)
        jobs = _readable_rows(conn, "jobs", _JOB_COLUMNS)
        fronts = _readable_rows(conn, "fronts", _FRONT_COLUMNS)
    by_job: dict[str, list[tuple[Any, ...]]] = {}
    for f in fronts:
        by_job.setdefault(str(f[0]), []).append(f)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}-", suffix=".tmp")
    os.close(fd)
    os.unlink(tmp)
    kept = dropped = 0
    try:
        with Store(tmp) as db:
            seen: set[str] = set()
            for job in jobs:
                mine = sorted(by_job.get(str(job[0]), []), key=lambda f: int(f[1]))
                if str(job[0]) in seen or not _intact(job, mine, str(source)):
                    dropped += 1
                    continue
                seen.add(str(job[0]))
                db.copy_rows(job, mine)
                kept += 1
        os.replace(tmp, out)
    except OSError as exc:
        raise SpecError("command line", "--salvage", str(out), f"cannot write it: {exc.strerror or exc}") from None
    finally:
        for leftover in (tmp, tmp + "-wal", tmp + "-shm", tmp + ".lock"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return SalvageReport(kept, dropped)
