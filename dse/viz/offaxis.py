"""Baselines off the axis (:mod:`dse.viz.scales` decides which): an arrow at the axis's edge pointing where
the baseline lies, labelled with its name and value (``only cpu: 85 mJ/item``).

Labels along the top and bottom edges read across, those along the left and right edges read upwards;
labels that would overlap go into further rows (:func:`dse.viz.labels.stagger`), and the axis grows a band
at each labelled edge to hold them, so a label never sits over a point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dse.viz.labels import stagger

__all__ = ["LABEL_FONT", "MAX_ROWS", "OffAxisMark", "draw_arrow", "label_edges"]

#: Font size (points) of an off-axis baseline's label.
LABEL_FONT = 7.0
#: Rows of labels along one edge; a label that fits none is left out (its arrow and legend entry stay).
MAX_ROWS = 3
_LINE = LABEL_FONT * 1.35  # points per row of labels
_ARROW = 9.0  # points the arrow takes inside the edge
_CHAR = LABEL_FONT * 0.56  # points per character, about (DejaVu Sans)
#: Direction of the arrow (degrees from pointing up, anticlockwise) by (x side, y side).
_ANGLES = {(None, "above"): 0, ("below", "above"): 45, ("below", None): 90, ("below", "below"): 135,
           (None, "below"): 180, ("above", "below"): 225, ("above", None): 270, ("above", "above"): 315}


@dataclass(frozen=True)
class OffAxisMark:
    """One baseline off the axis: its values ``x`` and ``y``, on which side of each axis it lies (``below``,
    ``above`` or ``None`` for on the axis), its label text, colour, fill and legend label."""

    x: float
    y: float
    side_x: str | None
    side_y: str | None
    text: str
    color: str
    filled: bool = True
    label: str | None = None
    size: float = 70.0
    zorder: float = 2.0


def _edge(mark: OffAxisMark) -> str:
    """The edge whose labels ``mark``'s label joins: top or bottom when it lies above or below, else left
    or right."""
    if mark.side_y is not None:
        return "top" if mark.side_y == "above" else "bottom"
    return "right" if mark.side_x == "above" else "left"


def _place(ax: Any, mark: OffAxisMark) -> tuple[tuple[float, float], Any]:
    """Where ``mark``'s arrow goes and in which transform: the edge it lies beyond, at its other value."""
    edge = {"below": 0.0, "above": 1.0}
    if mark.side_x is not None and mark.side_y is not None:
        return (edge[mark.side_x], edge[mark.side_y]), ax.transAxes
    if mark.side_y is not None:
        return (mark.x, edge[mark.side_y]), ax.get_xaxis_transform()
    return (edge[str(mark.side_x)], mark.y), ax.get_yaxis_transform()


def _axes_fraction(ax: Any, xy: tuple[float, float], transform: Any) -> tuple[float, float]:
    x, y = ax.transAxes.inverted().transform(transform.transform(xy))
    return float(x), float(y)


def draw_arrow(ax: Any, mark: OffAxisMark) -> None:
    """``mark``'s arrow at the edge of ``ax`` (whose limits must be set), pointing where it lies, with its
    legend label; :func:`label_edges` writes the labels once every arrow is drawn."""
    from matplotlib.markers import MarkerStyle
    from matplotlib.transforms import Affine2D

    xy, transform = _place(ax, mark)
    marker = MarkerStyle("^", transform=Affine2D().rotate_deg(_ANGLES[(mark.side_x, mark.side_y)]))
    ax.scatter([xy[0]], [xy[1]], transform=transform, marker=marker, s=mark.size, clip_on=False,
               facecolors=mark.color if mark.filled else "none", edgecolors=mark.color, linewidths=1.2,
               zorder=mark.zorder, label=mark.label)


def label_edges(ax: Any, marks: Sequence[OffAxisMark]) -> None:
    """The labels of ``marks`` (drawn by :func:`draw_arrow`) in rows along the edges of ``ax``, the limits
    widened by a band at each labelled edge to hold them."""
    if not marks:
        return
    # rows first, to know each labelled edge's band; then, on the widened axis, the labels themselves
    first = _rows(ax, marks, MAX_ROWS)
    _widen(ax, {edge: (_ARROW + used * _LINE + 2) / thickness for edge, (_, used, thickness) in first.items()})
    for edge, (placed, _, thickness) in _rows(ax, marks, MAX_ROWS, {e: u for e, (_, u, _) in first.items()}).items():
        across = edge in ("top", "bottom")
        for mark, start, row in placed:
            depth = (_ARROW + row * _LINE + _LINE / 2) / thickness
            inside = {"top": (start, 1 - depth), "bottom": (start, depth), "left": (depth, start),
                      "right": (1 - depth, start)}[edge]
            ax.text(*inside, mark.text, transform=ax.transAxes, fontsize=LABEL_FONT, color=mark.color,
                    ha="left", va="center", rotation=0 if across else 90, rotation_mode="anchor",
                    zorder=mark.zorder - 0.5, clip_on=False)


def _rows(ax: Any, marks: Sequence[OffAxisMark], rows: int, room: dict[str, int] | None = None
          ) -> dict[str, tuple[list[tuple[OffAxisMark, float, int]], int, float]]:
    """Per labelled edge: each placed label's ``(mark, start along the edge as a share of it, row)``, the
    rows used, and the axes' size across the edge in points. ``room``: rows each edge may use at most."""
    position = ax.get_position()
    size = ax.figure.get_size_inches() * 72
    width_pt, height_pt = size[0] * position.width, size[1] * position.height
    by_edge: dict[str, list[OffAxisMark]] = {}
    for mark in marks:
        by_edge.setdefault(_edge(mark), []).append(mark)
    out = {}
    for edge, items in by_edge.items():
        across = edge in ("top", "bottom")
        along, thickness = (width_pt, height_pt) if across else (height_pt, width_pt)
        extents = []
        for mark in items:
            fx, fy = _axes_fraction(ax, *_place(ax, mark))
            length, corner = len(mark.text) * _CHAR / along, _ARROW / along  # clear of a corner's arrow
            start = min(max((fx if across else fy) - length / 2, corner), max(1.0 - length - corner, corner))
            extents.append((start, start + length))
        allowed = rows if room is None else room.get(edge, 0)
        placed = [(mark, start, row) for mark, (start, _), row in
                  zip(items, extents, stagger(extents, allowed, gap=4.0 / along), strict=True) if row is not None]
        out[edge] = (placed, max((r for _, _, r in placed), default=-1) + 1, thickness)
    return out


def _widen(ax: Any, bands: dict[str, float]) -> None:
    """Grow the limits of ``ax`` so a band of the given share of the axes is free at each named edge."""
    for low, high, get, set_, log in (("bottom", "top", ax.get_ylim, ax.set_ylim, ax.get_yscale() == "log"),
                                      ("left", "right", ax.get_xlim, ax.set_xlim, ax.get_xscale() == "log")):
        b_low, b_high = bands.get(low, 0.0), bands.get(high, 0.0)
        if not (b_low or b_high):
            continue
        lo, hi = get()
        if log:
            lo, hi = math.log10(lo), math.log10(hi)
        span = (hi - lo) / max(1.0 - b_low - b_high, 0.2)
        lo, hi = lo - b_low * span, hi + b_high * span
        set_((10**lo, 10**hi) if log else (lo, hi))
