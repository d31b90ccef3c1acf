"""Errors the engine raises on purpose; the CLI turns them into one-line messages.

Every error here carries enough context for a user to fix the input without a
traceback: the file, the field and the offending value.
"""

from __future__ import annotations


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
        super().__init__(f"{self.source}: field '{field}' = {value!r}: {reason}")


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
