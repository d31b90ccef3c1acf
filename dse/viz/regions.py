"""A certificate's region as one outline: the union of its boxes (where undiscovered Pareto points can still
lie), clipped to a window, as closed loops of corners.

Boxes of a cut-short certificate nest and overlap; drawn one by one, their fills stack into a dark patch
that hides the points. Their union, drawn once with a light fill and a thin outline beneath the points,
shows the same region without hiding anything. ``dse report`` draws the loops this module computes (the
page's data carries them), the static figures draw them as one patch.

Example::

    region_loops([((0, 0), (2, 1)), ((1, 0), (3, 2))], (-1, 4), (-1, 4))
    # one loop: (0,0) (3,0) (3,2) (1,2) (1,1) (0,1), counter-clockwise
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["region_loops"]

Point = tuple[float, float]


def _clipped(box: tuple[Sequence[float], Sequence[float]], xclip: Sequence[float], yclip: Sequence[float]
             ) -> tuple[float, float, float, float] | None:
    """``(x0, x1, y0, y1)`` of a box (two opposite corners) inside the window; None when nothing is left."""
    (xa, ya), (xb, yb) = box
    x0, x1 = max(min(xa, xb), min(xclip)), min(max(xa, xb), max(xclip))
    y0, y1 = max(min(ya, yb), min(yclip)), min(max(ya, yb), max(yclip))
    return (x0, x1, y0, y1) if x0 < x1 and y0 < y1 else None


def region_loops(boxes: Sequence[tuple[Sequence[float], Sequence[float]]], xclip: Sequence[float],
                 yclip: Sequence[float]) -> list[list[Point]]:
    """The outline of the union of ``boxes`` (each two opposite corners ``(x, y)``) inside the window
    ``xclip`` by ``yclip``: closed loops of corners, the union on each loop's left (outer loops
    counter-clockwise, holes clockwise, so a non-zero fill rule fills the union once). Empty when no box
    reaches the window."""
    kept = [c for c in (_clipped(b, xclip, yclip) for b in boxes) if c is not None]
    if not kept:
        return []
    xs = sorted({v for c in kept for v in c[:2]})
    ys = sorted({v for c in kept for v in c[2:]})

    def covered(i: int, j: int) -> bool:
        if not (0 <= i < len(xs) - 1 and 0 <= j < len(ys) - 1):
            return False
        cx, cy = (xs[i] + xs[i + 1]) / 2, (ys[j] + ys[j + 1]) / 2
        return any(x0 <= cx <= x1 and y0 <= cy <= y1 for x0, x1, y0, y1 in kept)

    # every side of a covered cell whose neighbour is not covered, directed with the cell on its left
    following: dict[Point, list[Point]] = {}
    for i in range(len(xs) - 1):
        for j in range(len(ys) - 1):
            if not covered(i, j):
                continue
            sw, se, ne, nw = (xs[i], ys[j]), (xs[i + 1], ys[j]), (xs[i + 1], ys[j + 1]), (xs[i], ys[j + 1])
            for (a, b), (di, dj) in (((sw, se), (0, -1)), ((se, ne), (1, 0)), ((ne, nw), (0, 1)), ((nw, sw), (-1, 0))):
                if not covered(i + di, j + dj):
                    following.setdefault(a, []).append(b)
    loops: list[list[Point]] = []
    while following:
        start = min(following)
        loop = [start]
        at = start
        while True:
            ends = following[at]
            nxt = ends.pop()
            if not ends:
                del following[at]
            if nxt == start:
                break
            loop.append(nxt)
            at = nxt
        loops.append(_without_straight_corners(loop))
    return loops


def _without_straight_corners(loop: list[Point]) -> list[Point]:
    """``loop`` without the corners that lie on a straight line between their neighbours."""
    kept = []
    for k, (x, y) in enumerate(loop):
        (px, py), (nx, ny) = loop[k - 1], loop[(k + 1) % len(loop)]
        if not ((px == x == nx) or (py == y == ny)):
            kept.append((x, y))
    return kept
