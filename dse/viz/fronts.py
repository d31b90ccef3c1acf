"""Figures of Pareto fronts: several solvers on one axis, interactive fronts, a batch store's fronts.

* :func:`plot_fronts`: two objectives on one axis, the exact front drawn above
  the approximate ones, baselines as named colored markers, a log axis or an
  inset when baselines squash the front, a capped legend; three or more
  objectives as pairwise panels (or parallel coordinates on a given axis);
  ``interactive=True`` returns a plotly figure whose points show their mapping
  and metrics on hover.
* :func:`plot_store_fronts`: the fronts of a batch store's jobs, coloured by a
  swept field (discrete colours for discrete values).

Overlapping fronts stay visible (exact fronts below with large markers,
approximate ones above with small markers), baselines sit below the fronts,
units are written once per axis, and a figure made here saves whole with a
plain ``savefig`` (its legend inside the figure). Every function draws without
matplotlib warnings (the tests check stderr).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.cost.error_bands import band
from dse.inputs.catalog import time_unit_note
from dse.viz.figures import axis_or_new, new_figure

__all__ = ["INSET_AREA", "LOG_RATIO", "MAX_NAMED_BASELINES", "column_label", "plot_fronts", "plot_fronts_interactive",
           "plot_store_fronts"]

if TYPE_CHECKING:
    from dse.mapping.base import MappingProblem
    from dse.pareto import ParetoPoint, ParetoSet

_STYLES = {
    "cpsat": dict(marker="o", color="tab:blue", label="CP-SAT (exact)"),
    "exhaustive": dict(marker="s", color="tab:green", label="exhaustive"),
    "nsga2": dict(marker="x", color="tab:orange", label="NSGA-II"),
}
#: Marker areas (points^2): exact fronts large and below, approximate fronts small and above them, so
#: both stay visible where they coincide; baselines below both.
EXACT_SIZE, APPROX_SIZE, BASELINE_SIZE = 90.0, 28.0, 70.0
#: Drawing order: baselines, then exact fronts, then approximate fronts on top.
BASELINE_Z, EXACT_Z, APPROX_Z = 2, 4, 6
#: Colors and markers of baselines, distinct from the solvers' (blue, green, orange).
_BASELINE_COLORS = ("tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "black", "tab:gray")
_BASELINE_MARKERS = "^v<>PX*Dph"
#: Baselines named in the legend; the others are drawn as small grey dots under one entry.
MAX_NAMED_BASELINES = 8
#: A front whose bounding box covers less than this share of the axes' area (baselines included,
#: on the axes' scales) gets an inset.
INSET_AREA = 0.04
#: Positive values spanning more than this ratio get a log axis.
LOG_RATIO = 20.0


def _baselines(fronts: Sequence[ParetoSet]) -> dict[str, ParetoPoint]:
    """The baselines of the first front that has any (every solver of a problem gets the same ones)."""
    return next((f.baselines for f in fronts if f.baselines), {})


#: Colours and markers of a second, third... front of one solver (two settings of one problem, say).
_REPEAT_STYLES = (("navy", "D"), ("darkgoldenrod", "^"), ("indigo", "v"), ("darkslategray", "P"))


def _repeat(front: ParetoSet, k: int, fronts: Sequence[ParetoSet]) -> int:
    """Which of the fronts of ``front``'s solver among ``fronts`` this one (index ``k``) is: 0 for the
    first or only one."""
    same = [j for j, f in enumerate(fronts) if f.solver == front.solver]
    return same.index(k) if k in same else 0


def _style(front: ParetoSet, k: int, fronts: Sequence[ParetoSet] = ()) -> dict[str, Any]:
    """Marker, colour and legend label of front ``k``; a second front of the same solver among ``fronts``
    gets its own colour and marker, and each is labelled with its problem (or its number)."""
    fallback_colors = ("tab:cyan", "tab:olive", "tab:pink", "tab:brown")
    style = dict(_STYLES.get(front.solver, dict(marker="d", color=fallback_colors[k % len(fallback_colors)],
                                                 label=front.solver)))
    same = [f for f in fronts if f.solver == front.solver]
    if len(same) > 1:
        n = _repeat(front, k, fronts)
        if n:
            style["color"], style["marker"] = _REPEAT_STYLES[(n - 1) % len(_REPEAT_STYLES)]
        named = len({f.problem for f in same}) == len(same)
        style["label"] = f"{style['label']}: {front.problem}" if named else f"{style['label']} #{n + 1}"
    return style


def _label(obj: Any, arrow: bool = True) -> str:
    """``name [unit], lower is better``: the unit written once, in one pair of brackets."""
    unit = f" [{obj.unit}]" if obj.unit else ""
    better = (", higher is better" if obj.sense == "max" else ", lower is better") if arrow else ""
    return f"{obj.name}{unit}{better}"


def column_label(column: str, sense: str | None = None) -> str:
    """An axis label from a table column named ``NAME_UNIT`` (``energy_mj_per_item`` -> ``energy
    [mJ/item]``), with ``, lower is better`` or ``, higher is better`` for a ``min``/``max`` sense."""
    name, _, unit = str(column).partition("_")
    words = {"mj": "mJ", "j": "J", "uj": "uJ", "pj": "pJ", "w": "W", "mw": "mW", "gib": "GiB"}
    unit = "/".join(" ".join(words.get(w, w) for w in part.split("_")) for part in unit.split("_per_"))
    better = {"max": ", higher is better", "min": ", lower is better"}.get(str(sense), "")
    return f"{name}{f' [{unit}]' if unit else ''}{better}"


def _unit_notes(objectives: Sequence[Any]) -> str:
    """The explanation of every workload-defined unit among ``objectives``, once each."""
    units = dict.fromkeys(o.unit for o in objectives if time_unit_note(o.unit))
    return "; ".join(f"{u}: the workload's own time unit" for u in units)


def plot_fronts(fronts: Sequence[ParetoSet], ax: Any = None, baselines: bool = True, title: str | None = None,
                interactive: bool = False, problem: MappingProblem | None = None,
                error: float | None = None) -> Any:
    """Draw fronts; returns the matplotlib axis (or a plotly figure with ``interactive=True``).

    Two objectives: first on x, second on y; exact fronts on top of approximate
    ones, points filled when proven and hollow when not; the first front's
    baselines as named colored markers (at most :data:`MAX_NAMED_BASELINES` in
    the legend); a log axis when positive values span more than
    :data:`LOG_RATIO`, and an inset on the fronts when baselines still squash
    them. One objective: a dot per solver and baseline. Three or more: pairwise
    panels in a new figure (the first panel's axis is returned), or parallel
    coordinates when ``ax`` is given. ``problem`` adds each point's mapping to
    the interactive hover text. ``error``: a relative error drawn as each point's band on a
    two-objective plot (:mod:`dse.cost.error_bands`).
    """
    if interactive:
        return plot_fronts_interactive(fronts, baselines=baselines, title=title, problem=problem)
    if not fronts:
        ax = axis_or_new(ax)
        ax.set_title(title or "Pareto front (no front yet)")
        return ax
    objs = fronts[0].objectives
    note = _unit_notes(objs)
    if len(objs) == 1:
        return _plot_single(fronts, axis_or_new(ax, constrained=True), _with_note(title or f"{objs[0].name}: "
                                                                          f"{fronts[0].problem}", note))
    if len(objs) >= 3:
        if ax is not None:
            return _plot_parallel(fronts, ax, baselines, title)
        return _plot_pairwise(fronts, baselines, title)
    ax = axis_or_new(ax, constrained=True)
    _draw_pair(ax, fronts, 0, 1, baselines, legend=True, error=error)
    ax.set_title(_with_note(title or f"Pareto front: {fronts[0].problem}", note))
    _inset_if_squashed(ax, fronts, 0, 1)
    return ax


def _with_note(title: str, note: str) -> str:
    return f"{title}\n({note})" if note else title


def _draw_pair(ax: Any, fronts: Sequence[ParetoSet], i: int, j: int, baselines: bool, legend: bool,
               error: float | None = None) -> None:
    """Objectives ``i`` (x) and ``j`` (y) of every front and baseline on ``ax`` (with ``error``, each front
    point's error band)."""
    objs = fronts[0].objectives
    xcol, ycol = objs[i].column, objs[j].column
    for k, front in _drawing_order(fronts):
        _draw_front(ax, front, k, xcol, ycol, steps=objs[i].sense == "min" and objs[j].sense == "min" and (i, j) == (0, 1),
                    fronts=fronts)
        if error is not None:
            _draw_bands(ax, front, xcol, ycol, error, _style(front, k, fronts)["color"])
    if baselines:
        _draw_baselines(ax, _baselines(fronts), xcol, ycol)
    _log_if_wide(ax, fronts, xcol, ycol, baselines)
    _draw_regions(ax, fronts, i, j)
    ax.set_xlabel(_label(objs[i]))
    ax.set_ylabel(_label(objs[j]))
    ax.grid(True, alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:  # outside the axis: never over points or an inset
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _draw_regions(ax: Any, fronts: Sequence[ParetoSet], i: int, j: int) -> None:
    """Shade, for each front with a certificate, the regions where undiscovered Pareto points can still lie
    (objectives ``i`` and ``j`` of its boxes), clipped to the axis as drawn so they never rescale it."""
    from matplotlib.patches import Rectangle

    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    for k, front in enumerate(fronts):
        certificate = front.certificate()
        if certificate is None or not certificate.region:
            continue
        color = _style(front, k, fronts)["color"]
        label: str | None = f"{front.solver}: unexplored, gap {certificate.gap:.1%}"
        for lower, upper in certificate.region:
            xa, xb = sorted((min(max(lower[i], x0), x1), min(max(upper[i], x0), x1)))
            ya, yb = sorted((min(max(lower[j], y0), y1), min(max(upper[j], y0), y1)))
            if xb <= xa or yb <= ya:
                continue
            ax.add_patch(Rectangle((xa, ya), xb - xa, yb - ya, facecolor=color, alpha=0.12, edgecolor=color,
                                   linewidth=0.6, linestyle="--", hatch="//", zorder=0.5, label=label))
            label = None
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)


def _drawing_order(fronts: Sequence[ParetoSet]) -> list[tuple[int, ParetoSet]]:
    """``(index, front)`` pairs, exact fronts first (drawn below, large markers), approximate ones last."""
    return sorted(enumerate(fronts), key=lambda kf: not kf[1].exact)


def _draw_front(ax: Any, front: ParetoSet, k: int, xcol: str, ycol: str, steps: bool,
                fronts: Sequence[ParetoSet] = ()) -> None:
    """One front: a thin line and its markers, filled when proven and hollow when not; exact fronts with
    large markers at :data:`EXACT_Z`, approximate ones with small markers above them; a second front of
    the same solver (in ``fronts``) smaller again and above the first."""
    style = _style(front, k, fronts)
    label = style.pop("label")
    exact = front.exact
    repeat = _repeat(front, k, fronts)
    zorder = (EXACT_Z if exact else APPROX_Z) + 0.1 * repeat
    size = (EXACT_SIZE if exact else APPROX_SIZE) * 0.45**repeat
    pts = sorted(front.points, key=lambda p: p.objectives[xcol])
    if not pts:
        return
    xs = [p.objectives[xcol] for p in pts]
    ys = [p.objectives[ycol] for p in pts]
    ax.plot(xs, ys, linestyle="-", linewidth=0.8, alpha=0.6, color=style["color"], zorder=zorder - 1,
            drawstyle="steps-post" if steps else "default")
    proven = [p.proven for p in pts]
    if any(proven):
        ax.scatter([x for x, ok in zip(xs, proven, strict=True) if ok], [y for y, ok in zip(ys, proven, strict=True) if ok],
                   label=f"{label} ({sum(proven)} proven)", zorder=zorder, s=size, **style)
    if not all(proven):
        unproven = [(x, y) for x, y, ok in zip(xs, ys, proven, strict=True) if not ok]
        kw = dict(style)
        if kw["marker"] not in ("x", "+"):
            kw.update(facecolors="none", edgecolors=kw.pop("color"))
        ax.scatter(*zip(*unproven, strict=True), label=label + (" (not proven)" if exact else ""),
                   zorder=zorder, s=size, linewidths=1.5, **kw)


def _draw_bands(ax: Any, front: ParetoSet, xcol: str, ycol: str, error: float, color: str) -> None:
    """Each point's error band (:func:`dse.cost.error_bands.band` of both objectives) as light error bars."""
    pts = [p for p in front.points if all(np.isfinite(p.objectives[c]) for c in (xcol, ycol))]
    if not pts:
        return
    xs, ys = np.array([p.objectives[xcol] for p in pts]), np.array([p.objectives[ycol] for p in pts])
    xb = np.array([band(float(x), error) for x in xs]).reshape(-1, 2)
    yb = np.array([band(float(y), error) for y in ys]).reshape(-1, 2)
    xerr = np.vstack([np.abs(xs - xb[:, 0]), np.abs(xb[:, 1] - xs)])
    yerr = np.vstack([np.abs(ys - yb[:, 0]), np.abs(yb[:, 1] - ys)])
    ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, fmt="none", ecolor=color, alpha=0.35, elinewidth=0.8,
                zorder=BASELINE_Z - 0.5)


def _draw_baselines(ax: Any, baselines: dict[str, ParetoPoint], xcol: str, ycol: str) -> None:
    """The first :data:`MAX_NAMED_BASELINES` baselines as named markers, the rest as one grey entry."""
    items = list(baselines.items())
    named, rest = items[:MAX_NAMED_BASELINES], items[MAX_NAMED_BASELINES:]
    if len(rest) == 1:
        named, rest = items, []
    styles = zip(itertools.cycle(_BASELINE_COLORS), itertools.cycle(_BASELINE_MARKERS))
    stacked: dict[tuple[float, float], int] = {}
    for (name, point), (color, marker) in zip(named, styles, strict=False):
        face = color if point.feasible else "none"
        where = (point.objectives[xcol], point.objectives[ycol])
        n = stacked.get(where, 0)  # baselines with equal values: each later one smaller and above
        stacked[where] = n + 1
        ax.scatter([where[0]], [where[1]], marker=marker, s=BASELINE_SIZE * 0.5**n, facecolors=face,
                   edgecolors=color, linewidths=1.2, zorder=BASELINE_Z + 0.01 * n,
                   label=f"baseline: {name}" + ("" if point.feasible else " (infeasible)"))
    if rest:
        ax.scatter([p.objectives[xcol] for _, p in rest], [p.objectives[ycol] for _, p in rest], marker=".", s=20,
                   color="grey", zorder=BASELINE_Z - 1, label=f"{len(rest)} more baselines")


def _values(fronts: Sequence[ParetoSet], col: str, baselines: bool) -> tuple[list[float], list[float]]:
    """(front values, baseline values) of column ``col``."""
    front = [p.objectives[col] for f in fronts for p in f.points]
    base = [p.objectives[col] for p in _baselines(fronts).values()] if baselines else []
    return front, base


def _log_if_wide(ax: Any, fronts: Sequence[ParetoSet], xcol: str, ycol: str, baselines: bool = True) -> None:
    """Log scale on an axis whose values are all positive and span more than :data:`LOG_RATIO`."""
    for col, setter in ((xcol, ax.set_xscale), (ycol, ax.set_yscale)):
        front, base = _values(fronts, col, baselines)
        values = front + base
        if values and min(values) > 0 and max(values) / min(values) > LOG_RATIO:
            from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

            setter("log")
            axis = ax.xaxis if col == xcol else ax.yaxis
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())  # no crowded 2x10^1, 3x10^1 ... labels


def _share(lo: float, hi: float, full_lo: float, full_hi: float, log: bool) -> float:
    if log:
        lo, hi, full_lo, full_hi = (float(np.log10(v)) for v in (lo, hi, full_lo, full_hi))
    return (hi - lo) / (full_hi - full_lo) if full_hi > full_lo else 1.0


def _inset_if_squashed(ax: Any, fronts: Sequence[ParetoSet], i: int, j: int) -> Any:
    """An inset zoomed on the fronts when, even on the chosen scales, their bounding box covers less than
    :data:`INSET_AREA` of the axes; placed in the corner with the fewest points. Returns the inset or None."""
    objs = fronts[0].objectives
    cols = (objs[i].column, objs[j].column)
    spans = []
    for col, scale in zip(cols, (ax.get_xscale(), ax.get_yscale()), strict=True):
        on_front, base = _values(fronts, col, True)
        if not on_front or not base:
            return None
        both = on_front + base
        spans.append(_share(min(on_front), max(on_front), min(both), max(both), scale == "log"))
    if sum(len(f) for f in fronts) < 2 or spans[0] * spans[1] >= INSET_AREA:
        return None
    # corners with room inside the axes for the inset's own tick labels and axis labels
    corners = {(0.56, 0.56): (1, 1), (0.13, 0.56): (0, 1), (0.56, 0.17): (1, 0), (0.13, 0.17): (0, 0)}
    trans = ax.transAxes.inverted()
    pts = [ax.transData.transform((p.objectives[cols[0]], p.objectives[cols[1]]))
           for f in fronts for p in f.points] + [
        ax.transData.transform((p.objectives[cols[0]], p.objectives[cols[1]])) for p in _baselines(fronts).values()]
    where = [trans.transform(p) for p in pts]

    def crowd(corner: tuple[int, int]) -> int:
        return sum(1 for x, y in where if (x > 0.5) == bool(corner[0]) and (y > 0.5) == bool(corner[1]))

    x0, y0 = min(corners, key=lambda c: crowd(corners[c]))
    from matplotlib.ticker import MaxNLocator

    inset = ax.inset_axes((x0, y0, 0.36, 0.32))
    for k, front in _drawing_order(fronts):
        _draw_front(inset, front, k, cols[0], cols[1], steps=False, fronts=fronts)
    inset.tick_params(labelsize=6, pad=1.5)
    inset.set_xlabel(_label(objs[i], arrow=False), fontsize=6, labelpad=1)
    inset.set_ylabel(_label(objs[j], arrow=False), fontsize=6, labelpad=1)
    inset.set_title("zoom on the fronts", fontsize=7, pad=3)
    inset.grid(True, alpha=0.3)
    for axis in (inset.xaxis, inset.yaxis):  # few ticks: the end labels stay inside the main axes
        axis.set_major_locator(MaxNLocator(4))
        axis.get_offset_text().set_fontsize(6)
    return inset


def _plot_single(fronts: Sequence[ParetoSet], ax: Any, title: str | None) -> Any:
    """One objective: a dot per solver (and baseline), labelled with its value."""
    obj = fronts[0].objectives[0]
    rows = [(f.solver + (" (proven)" if f.complete else ""), f.points[0].objectives[obj.column])
            for f in fronts if f.points]
    rows += [(name, p.objectives[obj.column]) for name, p in list(_baselines(fronts).items())[:MAX_NAMED_BASELINES]]
    for k, (_label_text, value) in enumerate(rows):
        ax.scatter([value], [k], color="tab:blue" if k < len(fronts) else "grey", zorder=3)
        ax.annotate(f"{value:.4g}", (value, k), textcoords="offset points", xytext=(6, 0), va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [label for label, _ in rows])
    ax.set_xlabel(_label(obj))
    ax.set_title(title or f"{obj.name}: {fronts[0].problem}")
    ax.grid(True, axis="x", alpha=0.3)
    return ax


def _plot_pairwise(fronts: Sequence[ParetoSet], baselines: bool, title: str | None) -> Any:
    """Every pair of objectives in its own panel (3 objectives: 3 panels); returns the first panel's axis."""
    objs = fronts[0].objectives
    pairs = list(itertools.combinations(range(len(objs)), 2))
    cols = min(3, len(pairs))
    rows = -(-len(pairs) // cols)
    fig, axes = new_figure(rows, cols, figsize=(4.2 * cols, 3.6 * rows + 0.6), squeeze=False)
    flat = list(axes.ravel())
    for ax, (i, j) in zip(flat, pairs, strict=False):
        _draw_pair(ax, fronts, i, j, baselines, legend=False)
        ax.xaxis.label.set_fontsize(8)
        ax.yaxis.label.set_fontsize(8)
    for ax in flat[len(pairs):]:
        ax.set_visible(False)
    handles, labels = flat[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8)
    fig.suptitle(title or f"Pareto front: {fronts[0].problem} ({len(objs)} objectives, pairwise)")
    fig.subplots_adjust(bottom=0.18 + 0.04 * (len(labels) // 4), hspace=0.45, wspace=0.35)
    return flat[0]


def _plot_parallel(fronts: Sequence[ParetoSet], ax: Any, baselines: bool, title: str | None) -> Any:
    """Parallel coordinates on ``ax``: one vertical axis per objective, each scaled to [0, 1] (0 = best)."""
    objs = fronts[0].objectives
    groups: list[tuple[str, str, np.ndarray]] = []
    for k, front in _drawing_order(fronts):
        if len(front):
            style = _style(front, k, fronts)
            groups.append((style["label"], style["color"], front.F()))
    if baselines and _baselines(fronts):
        values = np.array([[p.objectives[o.column] * (-1 if o.sense == "max" else 1) for o in objs]
                           for p in _baselines(fronts).values()])
        groups.append(("baselines", "grey", values))
    if not groups:
        return ax
    stacked = np.vstack([g[2] for g in groups])
    lo, hi = stacked.min(axis=0), stacked.max(axis=0)
    scale = np.where(hi > lo, hi - lo, 1.0)
    xs = np.arange(len(objs))
    for name, color, F in groups:
        for n, row in enumerate((F - lo) / scale):
            ax.plot(xs, row, color=color, alpha=0.6, linewidth=1, label=name if n == 0 else None)
    ax.set_xticks(xs, [_label(o, arrow=False) for o in objs], fontsize=7)
    ax.set_ylabel("normalized, 0 = best of the shown points")
    ax.set_title(title or f"Pareto front: {fronts[0].problem} (parallel coordinates)")
    ax.legend(fontsize=8, loc="best")
    return ax


# --------------------------------------------------------------------------- interactive


def plot_fronts_interactive(fronts: Sequence[ParetoSet], baselines: bool = True, title: str | None = None,
                            problem: MappingProblem | None = None) -> Any:
    """A plotly figure of the first two objectives (all of them in the hover text); hovering a point shows
    its objectives, metrics, proof status, genome and, with ``problem``, its mapping. (``dse report``
    writes a whole page of such plots.)
    """
    import plotly.graph_objects as go  # type: ignore[import-untyped,import-not-found,unused-ignore]
    fig = go.Figure()
    if not fronts:
        return fig
    objs = fronts[0].objectives
    xcol, ycol = objs[0].column, objs[1 if len(objs) > 1 else 0].column

    def hover(p: ParetoPoint) -> str:
        lines = [f"{k} = {v:.5g}" for k, v in {**p.objectives, **p.metrics}.items()]
        lines.append(f"proven: {p.proven}, feasible: {p.feasible}")
        if problem is not None:
            lines.append("mapping: " + problem.describe(p.genome))
        lines.append("genome: " + " ".join(map(str, p.genome[:40])) + (" ..." if len(p.genome) > 40 else ""))
        return "<br>".join(lines)

    for k, front in _drawing_order(fronts):
        style = _style(front, k, fronts)
        pts = sorted(front.points, key=lambda p: p.objectives[xcol])
        fig.add_trace(go.Scatter(
            x=[p.objectives[xcol] for p in pts], y=[p.objectives[ycol] for p in pts], mode="lines+markers",
            name=style["label"], marker=dict(color=style["color"].removeprefix("tab:"),
                                             size=12 if front.exact else 7),
            text=[hover(p) for p in pts], hoverinfo="text"))
    if baselines:
        items = list(_baselines(fronts).items())
        fig.add_trace(go.Scatter(
            x=[p.objectives[xcol] for _, p in items], y=[p.objectives[ycol] for _, p in items], mode="markers",
            name="baselines", marker=dict(symbol="triangle-up", size=10, color="grey"),
            text=[f"baseline: {n}<br>" + hover(p) for n, p in items], hoverinfo="text"))
    fig.update_layout(title=title or f"Pareto front: {fronts[0].problem}", xaxis_title=_label(objs[0]),
                      yaxis_title=_label(objs[1 if len(objs) > 1 else 0]))
    return fig


def plot_store_fronts(points: Any, objectives: Sequence[tuple[str, str]], color: str | None,
                      ax: Any = None) -> Any:
    """The feasible front of every job in ``points`` (a :func:`dse.store.database.points_frame`) on one axis, the
    first two ``(column, sense)`` objectives on x and y, coloured by column ``color``: one colour per
    value (a legend entry each) for up to 10 distinct values, a colour bar for more numbers. Jobs of
    one colour differ by marker, and every marker is hollow, so fronts drawn over each other still
    show. Returns the axis."""
    import pandas as pd
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    (x, xsense), (y, ysense) = objectives[:2]
    if ax is None:
        _, ax = new_figure(figsize=(7.5, 5), layout="constrained")
    feasible = points[points["feasible"].astype(bool)] if len(points) else points
    values = feasible[color] if color is not None and color in feasible else pd.Series(["all"] * len(feasible),
                                                                                        index=feasible.index)
    distinct = list(dict.fromkeys(values.tolist()))
    continuous = pd.api.types.is_numeric_dtype(values) and len(distinct) > 10
    if continuous:
        norm = Normalize(float(values.min()), float(values.max()))
        cmap = colormaps["viridis"]
    else:
        ordered = sorted(distinct, key=lambda v: (str(type(v)), v))
        palette = {v: colormaps["tab10"](i % 10) for i, v in enumerate(ordered)}
    markers = "osD^v<>ph*"
    count: dict[Any, int] = {}
    for _job, group in feasible.groupby("job", sort=False):
        group = group.sort_values(x)
        value = values.loc[group.index[0]]
        shade = cmap(norm(float(value))) if continuous else palette[value]
        n = count.get(value, 0)
        count[value] = n + 1
        label = None if continuous or n else f"{color} = {value}"
        ax.plot(group[x], group[y], marker=markers[n % len(markers)], markersize=6, markerfacecolor="none",
                markeredgewidth=1.2, linewidth=1, color=shade, alpha=0.85, label=label, drawstyle="steps-post")
    if continuous:
        bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax)
        bar.set_label(str(color))
    elif color is not None and count:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    ax.set_xlabel(column_label(x, xsense))
    ax.set_ylabel(column_label(y, ysense))
    ax.set_title(f"Pareto fronts of {feasible['job'].nunique() if len(feasible) else 0} jobs")
    ax.grid(True, alpha=0.3)
    return ax
