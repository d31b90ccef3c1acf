"""YAML reading with errors that name the file and the line."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml

from dse.errors import SpecError


def _read_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path``; :class:`SpecError` (field ``<file>``) for anything else."""
    source = str(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise SpecError(source, "<file>", source, "file not found") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the name
        raise SpecError(source, "<file>", source, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if stat.S_ISDIR(mode):
        raise SpecError(source, "<file>", source, "is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise SpecError(source, "<file>", source, "not a regular file (a device, pipe or socket)")
    try:
        return path.read_bytes()
    except PermissionError:
        raise SpecError(source, "<file>", source, "cannot read: permission denied") from None
    except OSError as exc:
        raise SpecError(source, "<file>", source, f"cannot read: {exc.strerror or exc}") from None


def read_yaml(path: str | Path) -> Any:
    """Parse ``path`` and return its one YAML document.

    Raises :class:`SpecError` (field ``<file>``) for a missing file, a directory, a file that is
    not regular or not readable, a file that is not UTF-8 text (the value is the offset of the
    first bad byte) and an empty file (no document, only comments; the value is its size in
    bytes); field ``line L, column C`` for a YAML syntax error.
    """
    path = Path(path)
    source = str(path)
    data = _read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SpecError(source, "<file>", exc.start,
                        f"not UTF-8 text ({exc.reason}: byte 0x{data[exc.start]:02x} at offset {exc.start}, "
                        f"line {line})") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<yaml>"
        problem = getattr(exc, "problem", None) or str(exc).replace("\n", " ")
        raise SpecError(source, where, None, f"YAML syntax error: {problem}") from None
    except RecursionError:
        raise SpecError(source, "<yaml>", None, "YAML nesting too deep") from None
    if document is None and yaml.compose(text) is None:
        raise SpecError(source, "<file>", len(data),
                        "no YAML document: the file is empty or holds only blank lines and comments")
    return document
