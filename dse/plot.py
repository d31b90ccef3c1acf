"""Matplotlib figures: Pareto fronts (several solvers on one axis), Gantt charts, device breakdowns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dse.pareto import ParetoSet

_STYLES = {
    "cpsat": dict(marker="o", color="tab:blue", label="CP-SAT (exact)"),
    "exhaustive": dict(marker="s", color="tab:green", label="exhaustive"),
    "nsga2": dict(marker="x", color="tab:orange", label="NSGA-II"),
}


def _axis(ax: Any) -> Any:
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7, 4.5))
    return ax


def plot_fronts(fronts: Sequence[ParetoSet], ax: Any = None, baselines: bool = True, title: str | None = None) -> Any:
    """First objective on x, second on y; exact points filled when proven, hollow when not.

    Baselines of the first front are drawn as labelled grey markers. Returns the axis.
    """
    ax = _axis(ax)
    if not fronts:
        return ax
    objs = fronts[0].objectives
    if len(objs) == 1:
        return _plot_single(fronts, ax, title)
    xcol, ycol = objs[0].column, objs[1].column
    for front in fronts:
        style = dict(_STYLES.get(front.solver, dict(marker="d", color=None, label=front.solver)))
        label = style.pop("label")
        pts = sorted(front.points, key=lambda p: p.objectives[xcol])
        xs = [p.objectives[xcol] for p in pts]
        ys = [p.objectives[ycol] for p in pts]
        if not pts:
            continue
        ax.plot(xs, ys, linestyle="-", linewidth=0.8, alpha=0.6, color=style["color"], drawstyle="steps-post"
                if objs[0].sense == "min" else "default")
        proven = [p.proven for p in pts]
        if any(proven):
            ax.scatter([x for x, ok in zip(xs, proven, strict=True) if ok], [y for y, ok in zip(ys, proven, strict=True) if ok],
                       label=f"{label} ({sum(proven)} proven)", zorder=3, s=36, **style)
        if not all(proven):
            unproven = [(x, y) for x, y, ok in zip(xs, ys, proven, strict=True) if not ok]
            kw = dict(style)
            if kw["marker"] not in ("x", "+"):
                kw.update(facecolors="none", edgecolors=kw.pop("color"))
            ax.scatter(*zip(*unproven, strict=True), label=f"{label}" + (" (not proven)" if front.solver == "cpsat" else ""),
                       zorder=3, s=36, **kw)
    if baselines:
        markers = iter("^v<>PX*D")
        for name, point in fronts[0].baselines.items():
            marker = next(markers, "*")
            face = "grey" if point.feasible else "none"
            ax.scatter([point.objectives[xcol]], [point.objectives[ycol]], marker=marker, s=70, facecolors=face,
                       edgecolors="black", zorder=4, label=f"{name}" + ("" if point.feasible else " (infeasible)"))
    _log_if_wide(ax, fronts, xcol, ycol)
    ax.set_xlabel(f"{objs[0].name} [{objs[0].unit}]" + (" (higher is better)" if objs[0].sense == "max" else ""))
    ax.set_ylabel(f"{objs[1].name} [{objs[1].unit}]" + (" (lower is better)" if objs[1].sense == "min" else ""))
    ax.set_title(title or f"Pareto front: {fronts[0].problem}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return ax


def _plot_single(fronts: Sequence[ParetoSet], ax: Any, title: str | None) -> Any:
    """One objective: a dot per solver (and baseline), labelled with its value."""
    obj = fronts[0].objectives[0]
    rows = [(f.solver + (" (proven)" if f.complete else ""), f.points[0].objectives[obj.column])
            for f in fronts if f.points]
    rows += [(name, p.objectives[obj.column]) for name, p in fronts[0].baselines.items()]
    for k, (_label, value) in enumerate(rows):
        ax.scatter([value], [k], color="tab:blue" if k < len(fronts) else "grey", zorder=3)
        ax.annotate(f"{value:.4g}", (value, k), textcoords="offset points", xytext=(6, 0), va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [label for label, _ in rows])
    ax.set_xlabel(f"{obj.name} [{obj.unit}]" + (" (lower is better)" if obj.sense == "min" else ""))
    ax.set_title(title or f"{obj.name}: {fronts[0].problem}")
    ax.grid(True, axis="x", alpha=0.3)
    return ax


def _log_if_wide(ax: Any, fronts: Sequence[ParetoSet], xcol: str, ycol: str) -> None:
    """Log scale on an axis whose positive values span more than 20x (baselines often do)."""
    points = [p for f in fronts for p in f.points] + list(fronts[0].baselines.values())
    for col, setter in ((xcol, ax.set_xscale), (ycol, ax.set_yscale)):
        values = [p.objectives[col] for p in points if p.objectives[col] > 0]
        if values and max(values) / min(values) > 20:
            setter("log")


def plot_gantt(schedule: Sequence[tuple[str, str, float, float]], ax: Any = None, time_unit: str = "",
               title: str = "Schedule", label_ops: bool | None = None) -> Any:
    """Horizontal bars, one row per device, from ``(op, device, start, end)`` tuples. Returns the axis."""
    ax = _axis(ax)
    devices = list(dict.fromkeys(dev for _, dev, _, _ in schedule))
    row = {d: i for i, d in enumerate(devices)}
    label_ops = len(schedule) <= 60 if label_ops is None else label_ops
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab20")
    for k, (op, dev, start, end) in enumerate(schedule):
        ax.barh(row[dev], end - start, left=start, height=0.6, color=cmap(k % 20), edgecolor="black", linewidth=0.3)
        if label_ops and end > start:
            ax.text((start + end) / 2, row[dev], op, ha="center", va="center", fontsize=6, clip_on=True)
    ax.set_yticks(range(len(devices)), devices)
    ax.set_xlabel(f"time [{time_unit}]" if time_unit else "time")
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    return ax


def save(ax: Any, path: str) -> None:
    """Save the figure holding ``ax`` and close it."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
