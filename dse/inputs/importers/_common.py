"""Helpers shared by the importers: reading files and formatting numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.model.workload import MAX_OPS
from dse.util import files
from dse.util.limits import IMPORT_BUDGET_ENV, import_budget_mib


def read_text(path: str | Path) -> str:
    """The text of ``path``; :class:`SpecError` naming the path when it is missing or unreadable, or larger
    than the import budget (:func:`~dse.util.limits.import_budget_mib`, checked before it is read)."""
    path = Path(path)
    try:
        size = path.stat().st_size if path.is_file() else 0
        budget = import_budget_mib()
        if size > budget * 2**20:
            raise SpecError(str(path), "<file>", f"{size} bytes",
                            f"is {size / 2**20:.1f} MiB, more than the {budget:g} MiB an import reads (a "
                            f"{MAX_OPS:,}-op graph takes about 12 to 40 MiB); {IMPORT_BUDGET_ENV}=MiB raises it")
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SpecError(str(path), "<file>", str(path), "file not found") from None
    except IsADirectoryError:
        raise SpecError(str(path), "<file>", str(path), "is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise SpecError(str(path), "<file>", str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SpecError(str(path), "<file>", str(path), f"cannot read: {exc.strerror}") from None


def read_json(path: str | Path) -> Any:
    """The parsed JSON of ``path`` (:func:`read_text`); :class:`SpecError` naming the line and column of a
    syntax error."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise SpecError(str(path), f"line {exc.lineno}, column {exc.colno}", None,
                        f"JSON syntax error: {exc.msg}") from None


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8, ``\\n`` line ends) whole or not at all
    (:func:`dse.util.files.write_text`: :class:`~dse.errors.OutputError` for a full disk or a refused path)."""
    files.write_text(path, text)  # bytes as given: "\n" line ends on every system


def fmt_number(value: float) -> str:
    """Shortest text that reads back as the same float: integers without ``.0``."""
    value = float(value)
    if math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)

