"""Errors the engine raises on purpose; the CLI turns them into one-line messages.

Every error here carries enough context for a user to fix the input without a
traceback: the file, the field and the offending value. This module imports nothing of the
package: every layer may raise these; :mod:`dse.util.validation` turns pydantic's errors into
:class:`SpecError`.
"""

from __future__ import annotations

#: Characters of a value that a message quotes (a longer value is cut, with its length said).
EXCERPT_CHARS = 80


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters; a long list or mapping says how many items it had.

    A long string keeps its beginning and its end (``'/tmp/a/very/lo...folder/spec.yaml'``): the end of a
    path names the file. Never expands the whole of a huge value: a list of a million numbers costs its
    first few items.
    """
    if isinstance(value, list | tuple | set | frozenset | dict) and len(value) > 8:
        items = list(value.items() if isinstance(value, dict) else value)[:8]
        head = excerpt(dict(items) if isinstance(value, dict) else items, limit)
        return f"{head} ({len(value)} items)"
    if isinstance(value, str) and len(value) > 4 * limit:
        value = value[: 2 * limit] + value[-2 * limit:]
    text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, str):
        tail = (limit - 3) // 2
        return f"{text[: limit - 3 - tail]}...{text[-tail:]}"
    return f"{text[: limit - 3]}..."


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


class GenomeTypeError(GenomeError, TypeError):
    """A genome whose genes are not integers (booleans, fractions, NaN, strings): a ``TypeError`` naming the
    expected type, and a :class:`GenomeError` (exit 2) for the command line."""


class OutputError(DseError, OSError):
    """A result file could not be written (a full disk, an I/O error, a quota, a folder made read-only mid-run),
    or its path is refused (a device node, a FIFO, a folder, a read-only file); nothing half-written is left
    and a refused path is left as it was. The message names the file and the reason."""

    exit_code = 2
