"""Errors the engine raises on purpose; the CLI turns them into one-line messages.

Every error here carries enough context for a user to fix the input without a
traceback: the file, the field and the offending value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

#: Characters of a value that a message quotes (a longer value is cut, with its length said).
EXCERPT_CHARS = 80


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters; a long list or mapping says how many items it had.

    Never expands the whole of a huge value: a list of a million numbers costs its first few items.
    """
    if isinstance(value, list | tuple | set | frozenset | dict) and len(value) > 8:
        items = list(value.items() if isinstance(value, dict) else value)[:8]
        head = excerpt(dict(items) if isinstance(value, dict) else items, limit)
        return f"{head} ({len(value)} items)"
    if isinstance(value, str) and len(value) > 4 * limit:
        value = value[: 4 * limit]
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."



class DseError(Exception):
    """Base class of the engine's deliberate errors."""

    exit_code = 1


class SpecError(DseError, ValueError):
    """Invalid input: names the file, the field and the value.

    Example: ``SpecError("problems/x.yaml", "platform.links[0].bandwidth_gbps", -3, "must be > 0")``.
    """

    exit_code = 2

    def __init__(self, source: str, field: str, value: object, reason: str) -> None:
        self.source = str(source)
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(f"{self.source}: field '{field}' = {excerpt(value)}: {reason}")


class InfeasibleError(DseError):
    """No mapping satisfies the constraints; ``reason`` says which one and by how much."""

    exit_code = 3


class SpaceTooLargeError(DseError, ValueError):
    """Exhaustive search refused: the genome space exceeds the configured bound."""

    exit_code = 2


class GenomeError(DseError, ValueError):
    """A genome that does not fit its problem: the wrong number of genes, or a gene outside its bounds.

    Raised by :meth:`MappingProblem.evaluate` and every family's ``decode`` before any array is indexed.
    """

    exit_code = 2


class OutputError(DseError, OSError):
    """A result file could not be written (a full disk, a folder made read-only mid-run); nothing half-written
    is left. The message names the file and the system's reason."""

    exit_code = 1


def spec_error_from_validation(source: str, exc: ValidationError, data: Any) -> SpecError:
    """Turn pydantic's first error into a :class:`SpecError` naming field and value."""
    err = exc.errors()[0]
    loc = err.get("loc", ())
    field_name = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc).replace(".[", "[")
    value: Any = err.get("input", None)
    if isinstance(value, Mapping) and loc:
        value = value.get(loc[-1], value) if err.get("type") != "missing" else None
    message = err.get("msg", "invalid value").removeprefix("Value error, ")
    return SpecError(source, field_name or "<root>", value, message)
