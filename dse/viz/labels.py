"""Labels that never overlap: :func:`stagger` puts labels along a line into a few rows, leaving out those
that fit none (the phases of a DyPe timeline, the off-axis baselines of a front).

``dse/store/report/report.js`` places the report's labels by the same rule (its ``stagger``).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["stagger"]


def stagger(extents: Sequence[tuple[float, float]], rows: int, gap: float = 0.0,
            priority: Sequence[float] | None = None) -> list[int | None]:
    """The row (0 first) of each label whose extent along the line is ``(start, end)``: the first of
    ``rows`` rows where it stays at least ``gap`` clear of every label already there; ``None`` for a label
    no row has room for (it is left out). Labels are placed by ``priority`` (highest first; the order
    given when None), so the ones that matter most are the last to be left out."""
    taken: list[list[tuple[float, float]]] = [[] for _ in range(rows)]
    placed: list[int | None] = [None] * len(extents)
    order = range(len(extents)) if priority is None else sorted(range(len(extents)), key=lambda i: -priority[i])
    for k in order:
        start, end = extents[k]
        row = next((r for r in range(rows)
                    if all(end + gap <= s or e + gap <= start for s, e in taken[r])), None)
        if row is not None:
            taken[row].append((start, end))
            placed[k] = row
    return placed
