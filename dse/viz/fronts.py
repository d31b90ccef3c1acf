"""Figures of Pareto fronts: several solvers on one axis, interactive fronts, a batch store's fronts.

* :func:`plot_fronts`: two objectives on one axis, the exact front drawn above
  the approximate ones, baselines as named coloured markers, a capped legend;
  three or more objectives as pairwise panels (or parallel coordinates on a
  given axis); ``interactive=True`` returns a plotly figure whose points show
  their mapping and metrics on hover.
* :func:`plot_store_fronts`: the fronts of a batch store's jobs, coloured by a
  swept field (one colour and marker per value, both in the legend).

Every axis follows one rule (:mod:`dse.viz.scales`, which ``dse report`` follows
too): the fronts keep at least a third of each axis, a baseline farther out is
an arrow at the axis's edge labelled with its value (:mod:`dse.viz.offaxis`),
and an axis whose values span more than 10x is logarithmic. A certificate's
region is one light grey outline beneath every point (:mod:`dse.viz.regions`);
error bands have their legend entry; colours are colour-blind safe
(:mod:`dse.viz.palette`). Overlapping fronts stay visible (exact fronts below
with large markers, approximate ones above with small markers), baselines sit
below the fronts, units are written once per axis, and a figure made here saves
whole with a plain ``savefig`` (its legend inside the figure). Every function
draws without matplotlib warnings (the tests check stderr).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.cost.error_bands import band
from dse.inputs.catalog import time_unit_note
from dse.pareto import ParetoSet
from dse.util.arguments import expect, expect_items
from dse.viz import palette
from dse.viz.figures import axis_or_new, new_figure
from dse.viz.offaxis import OffAxisMark, draw_arrow, label_edges
from dse.viz.regions import region_loops
from dse.viz.scales import AxisPlan, plan_axis

__all__ = ["MAX_NAMED_BASELINES", "MAX_STORE_VALUES", "column_label", "plot_fronts", "plot_fronts_interactive", "plot_store_fronts"]

if TYPE_CHECKING:
    from dse.mapping.base import MappingProblem
    from dse.pareto import ParetoPoint

_STYLES = {
    "cpsat": dict(marker="o", color=palette.BLUE, label="CP-SAT (exact)"),
    "exhaustive": dict(marker="s", color=palette.BLUISH_GREEN, label="exhaustive"),
    "nsga2": dict(marker="x", color=palette.ORANGE, label="NSGA-II"),
    "certify": dict(marker="d", color=palette.REDDISH_PURPLE, label="dse certify"),
}
#: Marker areas (points^2): exact fronts large and below, approximate fronts small and above them, so
#: both stay visible where they coincide; baselines below both.
EXACT_SIZE, APPROX_SIZE, BASELINE_SIZE = 90.0, 28.0, 70.0
#: Drawing order: a certificate's region, baselines, then exact fronts, then approximate fronts on top.
REGION_Z, BASELINE_Z, EXACT_Z, APPROX_Z = 0.5, 2, 4, 6
#: Colours and markers of baselines: the first colours distinct from the solvers' (blue, green, orange,
#: purple); no triangles, which mark a baseline off the axis (:mod:`dse.viz.offaxis`).
_BASELINE_COLORS = (palette.SKY_BLUE, palette.BLACK, palette.VERMILLION, "#7F7F7F", palette.YELLOW,
                    palette.BLUISH_GREEN, palette.ORANGE, palette.BLUE)
_BASELINE_MARKERS = "PXD*phH8"
#: Baselines named in the legend; the others are drawn as small grey dots under one entry.
MAX_NAMED_BASELINES = 8
#: A store plot colours up to this many distinct numbers one by one (a legend entry each); more get a colour bar.
MAX_STORE_VALUES = 10
#: Markers of a store plot's values, in order (the value's legend entry shows it).
_STORE_MARKERS = "osD^vP*Xph"


def _baselines(fronts: Sequence[ParetoSet]) -> dict[str, ParetoPoint]:
    """The baselines of the first front that has any (every solver of a problem gets the same ones)."""
    return next((f.baselines for f in fronts if f.baselines), {})


#: Colours and markers of a second, third... front of one solver (two settings of one problem, say).
_REPEAT_STYLES = ((palette.SKY_BLUE, "D"), (palette.REDDISH_PURPLE, "P"), (palette.BLACK, "X"),
                  (palette.VERMILLION, "h"))


def _repeat(front: ParetoSet, k: int, fronts: Sequence[ParetoSet]) -> int:
    """Which of the fronts of ``front``'s solver among ``fronts`` this one (index ``k``) is: 0 for the
    first or only one."""
    same = [j for j, f in enumerate(fronts) if f.solver == front.solver]
    return same.index(k) if k in same else 0


def _style(front: ParetoSet, k: int, fronts: Sequence[ParetoSet] = ()) -> dict[str, Any]:
    """Marker, colour and legend label of front ``k``; a second front of the same solver among ``fronts``
    gets its own colour and marker, and each is labelled with its problem (or its number)."""
    fallback_colors = (palette.REDDISH_PURPLE, palette.SKY_BLUE, palette.BLACK, palette.VERMILLION)
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
    baselines as named coloured markers (at most :data:`MAX_NAMED_BASELINES` in
    the legend); each axis planned by :func:`dse.viz.scales.plan_axis`
    (baselines that would squash the fronts drawn off the axis with their
    values, a log axis past 10x); a certificate's region as one light outline
    beneath the points. One objective: a dot per solver and baseline. Three or
    more: pairwise panels in a new figure (the first panel's axis is returned),
    or parallel coordinates when ``ax`` is given. ``problem`` adds each point's
    mapping to the interactive hover text. ``error``: a relative error drawn as
    each point's band on a two-objective plot (:mod:`dse.cost.error_bands`),
    with its legend entry.

    Raises ``TypeError`` when ``fronts`` is not a sequence of :class:`~dse.pareto.ParetoSet` or ``ax`` is
    neither None nor a matplotlib axis.
    """
    expect_items(fronts, ParetoSet, "dse.plot_fronts", "fronts", "a list of fronts, e.g. [front]")
    if ax is not None:
        from matplotlib.axes import Axes

        expect(ax, Axes, "dse.plot_fronts", "ax", "a matplotlib axis, e.g. plt.subplots()[1], or None")
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
    return ax


def _with_note(title: str, note: str) -> str:
    return f"{title}\n({note})" if note else title


def _draw_pair(ax: Any, fronts: Sequence[ParetoSet], i: int, j: int, baselines: bool, legend: bool,
               error: float | None = None) -> None:
    """Objectives ``i`` (x) and ``j`` (y) of every front and baseline on ``ax``, each axis planned by
    :func:`dse.viz.scales.plan_axis` (with ``error``, each front point's error band)."""
    objs = fronts[0].objectives
    xcol, ycol = objs[i].column, objs[j].column
    shown = _baselines(fronts) if baselines else {}
    plans = [plan_axis([p.objectives[col] for f in fronts for p in f.points],
                       [p.objectives[col] for p in shown.values()]) for col in (xcol, ycol)]
    _draw_regions(ax, fronts, i, j, plans[0], plans[1])
    for k, front in _drawing_order(fronts):
        _draw_front(ax, front, k, xcol, ycol, steps=objs[i].sense == "min" and objs[j].sense == "min" and (i, j) == (0, 1),
                    fronts=fronts)
        if error is not None:
            _draw_bands(ax, front, xcol, ycol, error, _style(front, k, fronts))
    for axis, plan in zip((ax.xaxis, ax.yaxis), plans, strict=True):
        _apply_plan(ax, axis, plan)
    if shown:
        _draw_baselines(ax, shown, (objs[i], objs[j]), plans[0], plans[1])
    ax.set_xlabel(_label(objs[i]))
    ax.set_ylabel(_label(objs[j]))
    ax.grid(True, alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:  # outside the axis: never over points
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _apply_plan(ax: Any, axis: Any, plan: AxisPlan) -> None:
    """Scale and limits of ``axis`` (``ax.xaxis`` or ``ax.yaxis``) as ``plan`` says; a log axis ticked at 1,
    2 and 5 times each power of ten, written plainly."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    is_x = axis is ax.xaxis
    if plan.log:
        (ax.set_xscale if is_x else ax.set_yscale)("log")
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())  # no crowded 2x10^1, 3x10^1 ... labels
    (ax.set_xlim if is_x else ax.set_ylim)(*plan.limits())


def _draw_regions(ax: Any, fronts: Sequence[ParetoSet], i: int, j: int, xplan: AxisPlan, yplan: AxisPlan) -> None:
    """For each front with a certificate, the union of its region's boxes (where undiscovered Pareto points
    can still lie; objectives ``i`` and ``j``) as one light grey patch with a dashed outline beneath every
    point, clipped to the axis so it never rescales it; one legend entry each."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path

    window = [plan.window() for plan in (xplan, yplan)]
    for front in fronts:
        certificate = front.certificate()
        if certificate is None or not certificate.region:
            continue
        boxes = [((lower[i], lower[j]), (upper[i], upper[j])) for lower, upper in certificate.region]
        loops = region_loops(boxes, *window)
        if not loops:
            continue
        vertices = [v for loop in loops for v in (*loop, loop[0])]
        codes = [c for loop in loops for c in (Path.MOVETO, *[Path.LINETO] * (len(loop) - 1), Path.CLOSEPOLY)]
        ax.add_patch(PathPatch(Path(vertices, codes), facecolor=palette.NEUTRAL_FILL, edgecolor=palette.NEUTRAL,
                               linewidth=0.9, linestyle="--", zorder=REGION_Z,
                               label=f"{front.solver}: unexplored region (gap {certificate.gap:.1%})"))


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


def _draw_bands(ax: Any, front: ParetoSet, xcol: str, ycol: str, error: float, style: dict[str, Any]) -> None:
    """Each point's error band (:func:`dse.cost.error_bands.band` of both objectives) as light error bars,
    with a legend entry naming the front and the error."""
    pts = [p for p in front.points if all(np.isfinite(p.objectives[c]) for c in (xcol, ycol))]
    if not pts:
        return
    xs, ys = np.array([p.objectives[xcol] for p in pts]), np.array([p.objectives[ycol] for p in pts])
    xb = np.array([band(float(x), error) for x in xs]).reshape(-1, 2)
    yb = np.array([band(float(y), error) for y in ys]).reshape(-1, 2)
    xerr = np.vstack([np.abs(xs - xb[:, 0]), np.abs(xb[:, 1] - xs)])
    yerr = np.vstack([np.abs(ys - yb[:, 0]), np.abs(yb[:, 1] - ys)])
    ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, fmt="none", ecolor=style["color"], alpha=0.35, elinewidth=0.8,
                zorder=BASELINE_Z - 0.5, label=f"{style['label']}: error band (cost model, {error:.0%})")


def _draw_baselines(ax: Any, baselines: dict[str, ParetoPoint], objectives: tuple[Any, Any], xplan: AxisPlan,
                    yplan: AxisPlan) -> None:
    """The first :data:`MAX_NAMED_BASELINES` baselines as named markers, those off an axis (``xplan``,
    ``yplan``) as arrows at its edge labelled with their values; the rest as one grey entry (those of
    them off the axis counted in it, not drawn)."""
    xcol, ycol = objectives[0].column, objectives[1].column
    items = list(baselines.items())
    side = {k: (_side(xplan, k), _side(yplan, k)) for k in range(len(items))}
    named = list(range(min(len(items), MAX_NAMED_BASELINES)))
    rest = list(range(len(named), len(items)))
    if len(rest) == 1:
        named, rest = named + rest, []
    styles = zip(itertools.cycle(_BASELINE_COLORS), itertools.cycle(_BASELINE_MARKERS))
    stacked: dict[tuple[float, float], int] = {}
    off: list[OffAxisMark] = []
    for k, (color, marker) in zip(named, styles, strict=False):
        name, point = items[k]
        label = f"baseline: {name}" + ("" if point.feasible else " (infeasible)")
        where = (point.objectives[xcol], point.objectives[ycol])
        if side[k] != (None, None):
            values = [_value(v, o) for v, o, s in zip(where, objectives, side[k], strict=True) if s is not None]
            off.append(OffAxisMark(where[0], where[1], *side[k], f"{name}: {', '.join(values)}", color,
                                   filled=point.feasible, label=label, size=BASELINE_SIZE, zorder=BASELINE_Z))
            draw_arrow(ax, off[-1])
            continue
        n = stacked.get(where, 0)  # baselines with equal values: each later one smaller and above
        stacked[where] = n + 1
        ax.scatter([where[0]], [where[1]], marker=marker, s=BASELINE_SIZE * 0.5**n,
                   facecolors=color if point.feasible else "none", edgecolors=color, linewidths=1.2,
                   zorder=BASELINE_Z + 0.01 * n, label=label)
    if rest:
        on = [items[k][1] for k in rest if side[k] == (None, None)]
        away = len(rest) - len(on)
        ax.scatter([p.objectives[xcol] for p in on], [p.objectives[ycol] for p in on], marker=".", s=20,
                   color="grey", zorder=BASELINE_Z - 1,
                   label=f"{len(rest)} more baselines" + (f" ({away} off the axis, not drawn)" if away else ""))
    label_edges(ax, off)


def _side(plan: AxisPlan, k: int) -> str | None:
    """Where baseline ``k`` lies against the axis of ``plan``: ``below``, ``above`` or ``None`` (on it)."""
    return "below" if k in plan.below else "above" if k in plan.above else None


def _value(value: float, objective: Any) -> str:
    """``85 mJ/item``: a value with its objective's unit."""
    return f"{value:.4g}" + (f" {objective.unit}" if objective.unit else "")


def _plot_single(fronts: Sequence[ParetoSet], ax: Any, title: str | None) -> Any:
    """One objective: a dot per solver (and baseline), labelled with its value; the axis planned by
    :func:`dse.viz.scales.plan_axis`, a baseline off it drawn as an arrow at its edge."""
    obj = fronts[0].objectives[0]
    rows = [(f.solver + (" (proven)" if f.complete else ""), f.points[0].objectives[obj.column])
            for f in fronts if f.points]
    solved = len(rows)
    rows += [(name, p.objectives[obj.column]) for name, p in list(_baselines(fronts).items())[:MAX_NAMED_BASELINES]]
    plan = plan_axis([v for _, v in rows[:solved]], [v for _, v in rows[solved:]])
    _apply_plan(ax, ax.xaxis, plan)
    lo, hi = ax.get_xlim()
    for k, (_label_text, value) in enumerate(rows):
        side = _side(plan, k - solved) if k >= solved else None
        where = {None: value, "below": lo, "above": hi}[side]
        ax.scatter([where], [k], color=palette.BLUE if k < solved else "grey", zorder=3, clip_on=False,
                   marker={None: "o", "below": "<", "above": ">"}[side])
        ax.annotate(f"{value:.4g}", (where, k), textcoords="offset points", xytext=(-6 if side == "above" else 6, 0),
                    va="center", ha="right" if side == "above" else "left", fontsize=8)
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

    items = list(_baselines(fronts).items()) if baselines else []
    plans = [plan_axis([p.objectives[col] for f in fronts for p in f.points], [p.objectives[col] for _, p in items])
             for col in (xcol, ycol)]
    for k, front in _drawing_order(fronts):
        style = _style(front, k, fronts)
        pts = sorted(front.points, key=lambda p: p.objectives[xcol])
        fig.add_trace(go.Scatter(
            x=[p.objectives[xcol] for p in pts], y=[p.objectives[ycol] for p in pts], mode="lines+markers",
            name=style["label"], marker=dict(color=style["color"], size=12 if front.exact else 7),
            text=[hover(p) for p in pts], hoverinfo="text"))
    if items:  # a baseline off an axis sits at its edge, its values in the hover text
        edges = [plan.limits() for plan in plans]
        where = [[{None: p.objectives[col], "below": lim[0], "above": lim[1]}[_side(plan, k)]
                  for k, (_, p) in enumerate(items)] for col, plan, lim in zip((xcol, ycol), plans, edges, strict=True)]
        fig.add_trace(go.Scatter(
            x=where[0], y=where[1], mode="markers", name="baselines", cliponaxis=False,
            marker=dict(symbol="triangle-up", size=10, color="grey"),
            text=[f"baseline: {n}" + (" (off the axis)" if any(_side(pl, k) for pl in plans) else "") + "<br>" + hover(p)
                  for k, (n, p) in enumerate(items)], hoverinfo="text"))
    axes = {}
    for name, plan in zip(("xaxis", "yaxis"), plans, strict=True):
        lo, hi = plan.limits()
        axes[name] = dict(type=plan.scale, range=[np.log10(lo), np.log10(hi)] if plan.log else [lo, hi])
    fig.update_layout(title=title or f"Pareto front: {fronts[0].problem}", xaxis_title=_label(objs[0]),
                      yaxis_title=_label(objs[1 if len(objs) > 1 else 0]), **axes)
    return fig

def plot_store_fronts(points: Any, objectives: Sequence[tuple[str, str]], color: str | None,
                      ax: Any = None) -> Any:
    """The feasible front of every job in ``points`` (a :func:`dse.store.database.points_frame`) on one axis, the
    first two ``(column, sense)`` objectives on x and y (each axis planned by
    :func:`dse.viz.scales.plan_axis`: log past 10x), coloured by column ``color``.

    Up to :data:`MAX_STORE_VALUES` distinct values (or any number of texts): one colour *and* one marker
    per value, both shown by its legend entry (with its number of jobs); each later value is drawn above
    the earlier ones with a smaller, hollow marker and a thinner line, so fronts that coincide all stay
    visible. More numbers: a colour bar, and one hollow marker for all. Returns the axis."""
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
    continuous = pd.api.types.is_numeric_dtype(values) and len(distinct) > MAX_STORE_VALUES
    ordered = sorted(distinct, key=lambda v: (str(type(v)), v))
    jobs = feasible.groupby("job", sort=False)
    counts = {v: sum(1 for _, g in jobs if values.loc[g.index[0]] == v) for v in ordered}
    if continuous:
        norm = Normalize(float(values.min()), float(values.max()))
        cmap = colormaps["viridis"]
    labelled: set[Any] = set()
    for _job, group in jobs:
        group = group.sort_values(x)
        value = values.loc[group.index[0]]
        if continuous:
            ax.plot(group[x], group[y], marker="o", markersize=6, markerfacecolor="none", markeredgewidth=1.2,
                    linewidth=1, color=cmap(norm(float(value))), alpha=0.85, drawstyle="steps-post")
            continue
        rank = ordered.index(value)
        later = rank / max(len(ordered) - 1, 1)  # 0 for the first value, 1 for the last
        shade = palette.SERIES[rank % len(palette.SERIES)]
        label = None
        if value not in labelled:
            labelled.add(value)
            jobs_text = f" ({counts[value]} jobs)" if counts[value] > 1 else ""
            label = (f"{color} = {value}" if color is not None else "all jobs") + jobs_text
        ax.plot(group[x], group[y], marker=_STORE_MARKERS[rank % len(_STORE_MARKERS)], markersize=10 - 5 * later,
                markerfacecolor=shade if rank == 0 else "none", markeredgecolor=shade, markeredgewidth=1.4,
                linewidth=2.4 - 1.6 * later, color=shade, zorder=2 + later, label=label, drawstyle="steps-post")
    if len(feasible):
        for axis, column in ((ax.xaxis, x), (ax.yaxis, y)):
            _apply_plan(ax, axis, plan_axis(feasible[column].astype(float).tolist()))
    if continuous:
        bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax)
        bar.set_label(str(color))
    elif labelled:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                  title=str(color) if color is not None else None, title_fontsize=8)
    ax.set_xlabel(column_label(x, xsense))
    ax.set_ylabel(column_label(y, ysense))
    ax.set_title(f"Pareto fronts of {feasible['job'].nunique() if len(feasible) else 0} jobs")
    ax.grid(True, alpha=0.3)
    return ax
