"""YAML reading with errors that name the file and the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dse.errors import SpecError


def read_yaml(path: str | Path) -> Any:
    """Parse ``path``; raises :class:`SpecError` for a missing file or bad YAML syntax."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise SpecError(str(path), "<file>", str(path), "file not found") from None
    except OSError as exc:
        raise SpecError(str(path), "<file>", str(path), f"cannot read: {exc.strerror}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<yaml>"
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(str(path), where, None, f"YAML syntax error: {problem}") from None
