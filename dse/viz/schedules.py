"""Schedules as Gantt charts.

* :func:`plot_schedule`: the decoded schedule of one genome with its
  transfers, in the tables' display time unit; a pipeline's chart is one
  steady-state period.
* :func:`plot_gantt`: bars from ``(op, device, start, end)`` rows; labels
  that do not fit their bar are numbered, with a key beside the chart.
* :func:`transfers`: the data transfers of a decoded mapping, as bars.

Both are also reachable as ``dse.viz.plot_schedule`` and ``dse.viz.plot_gantt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.inputs.catalog import time_unit_note
from dse.viz.figures import axis_or_new

if TYPE_CHECKING:
    from dse.mapping.base import MappingProblem

__all__ = ["GANTT_FONT", "MAX_GANTT_KEY", "plot_gantt", "plot_schedule", "transfers"]


def transfers(problem: MappingProblem, mapping: Any, x: np.ndarray) -> list[tuple[str, str, float, float]]:
    """``(edge label, link label, start, end)`` rows of the data transfers of a decoded ``mapping``.

    A schedule with per-task finish times (``dag``) gives each crossing edge's
    send-to-arrival interval, the TF send rule included; a pipeline mapping
    (``link_load``) gives each link's busy time within one period, after
    the transfers' producers. Empty when the mapping has neither.
    """
    t = problem.tables
    names = t.device_names
    rows: list[tuple[str, str, float, float]] = []
    if hasattr(mapping, "finish") and hasattr(problem, "structure") and t.n_edges:
        dev = np.asarray(mapping.device)
        delay, _ = problem.structure.send_delays(dev, t, bool(getattr(problem, "tensor_per_device", False)))
        for e, (s, d) in enumerate(np.asarray(t.edges).tolist()):
            a, b = int(dev[s]), int(dev[d])
            if a != b and delay[e] > 0:
                start = float(mapping.finish[s])
                rows.append((f"{t.op_names[s]}->{t.op_names[d]}", f"{names[a]}->{names[b]}", start, start + float(delay[e])))
    elif hasattr(mapping, "link_load") and t.n_edges:
        cursor: dict[str, float] = {}
        for e, (s, d) in enumerate(np.asarray(t.edges).tolist()):
            a, b = int(x[s]), int(x[d])
            if a == b:
                continue
            link = f"{names[a]}->{names[b]}"
            start = cursor.get(link, 0.0)
            end = start + float(t.edge_transfer_time(e, a, b))
            cursor[link] = end
            rows.append((f"{t.op_names[s]}->{t.op_names[d]}", link, start, end))
    return rows


def plot_schedule(problem: MappingProblem, genome: Sequence[int] | np.ndarray, ax: Any = None,
                  title: str | None = None) -> Any:
    """The Gantt chart of one genome: op bars per device, transfer bars per link, in the tables' display
    time unit (ms for the roofline model, the workload's own unit for tables).

    A pipeline mapping is drawn as one steady-state period: each device's ops
    back to back (every device works on a different item), each link's
    transfers, and the period as a dashed line. Returns the axis; an empty
    axis when the family's decoded mapping has no schedule.
    """
    x = np.asarray(genome, dtype=np.int64)
    mapping = problem.decode(x)
    t = problem.tables
    factor, unit = t.display_per_time_unit, t.display_time_unit
    ops = [(op, dev, s * factor, e * factor) for op, dev, s, e in mapping.schedule]
    moves = [(lbl, f"link {link}", s * factor, e * factor) for lbl, link, s, e in transfers(problem, mapping, x)]
    period = getattr(mapping, "period", None) if hasattr(mapping, "link_load") else None
    ax = plot_gantt(ops, ax=ax, time_unit=unit, title=title or f"{problem.name}: schedule", transfers=moves)
    notes = []
    if period is not None:
        ax.axvline(period * factor, color="black", linestyle="--", linewidth=1)
        notes.append(f"one steady-state period ({period * factor:.4g} {unit}, dashed line): "
                     "every device works on a different item")
    note = time_unit_note(unit)
    if note:
        notes.append(f"{unit}: the workload's own time unit (task costs as given), not seconds")
    if notes:
        import textwrap

        ax.set_title(ax.get_title() + "\n" + "\n".join(textwrap.fill(n, 100) for n in notes), fontsize=8)
    return ax


#: Gantt label font size (points); a label wider than its bar at this size is replaced by a number.
GANTT_FONT = 7.0
#: Numbered labels listed in the key beside a Gantt chart; past that, bars too narrow stay unlabelled.
MAX_GANTT_KEY = 40


def _fits(text: str, width_in: float, fontsize: float) -> bool:
    """Whether ``text`` at ``fontsize`` fits in ``width_in`` inches (a character is about 0.62 em wide)."""
    return len(text) * 0.62 * fontsize / 72.0 <= 0.9 * width_in


def plot_gantt(schedule: Sequence[tuple[str, str, float, float]], ax: Any = None, time_unit: str = "",
               title: str = "Schedule", label_ops: bool | None = None,
               transfers: Sequence[tuple[str, str, float, float]] = ()) -> Any:
    """Horizontal bars, one row per device, from ``(op, device, start, end)`` rows, then one row per link
    from ``transfers`` (hatched). A label that fits its bar is written in it; one that does not is
    replaced by a number, listed with its name in a key beside the chart (at most
    :data:`MAX_GANTT_KEY`). Returns the axis."""
    ax = axis_or_new(ax)
    devices = list(dict.fromkeys([dev for _, dev, _, _ in schedule] + [link for _, link, _, _ in transfers]))
    row = {d: i for i, d in enumerate(devices)}
    label_ops = len(schedule) + len(transfers) <= 60 if label_ops is None else label_ops
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    bars = [(op, dev, start, end, False) for op, dev, start, end in schedule]
    bars += [(label, link, start, end, True) for label, link, start, end in transfers]
    times = [t for _, _, start, end, _ in bars for t in (start, end)]
    span = (max(times) - min(times)) * 1.1 if times else 1.0
    width_in = ax.figure.get_size_inches()[0] * ax.get_position().width * 0.85  # after room for device names
    key: list[str] = []
    for k, (name, where, start, end, moved) in enumerate(bars):
        if moved:
            ax.barh(row[where], end - start, left=start, height=0.4, color="white", edgecolor="dimgray", hatch="///",
                    linewidth=0.5)
        else:
            ax.barh(row[where], end - start, left=start, height=0.6, color=cmap(k % 20), edgecolor="black",
                    linewidth=0.3)
        if not label_ops or end <= start:
            continue
        bar_in = (end - start) / span * width_in if span > 0 else 0.0
        text = name
        if not _fits(text, bar_in, GANTT_FONT):
            if len(key) >= MAX_GANTT_KEY or not _fits(str(len(key) + 1), bar_in, GANTT_FONT):
                continue
            key.append(name)
            text = str(len(key))
        ax.text((start + end) / 2, row[where], text, ha="center", va="center", fontsize=GANTT_FONT, clip_on=True,
                bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.6) if moved else None)
    if key:
        lines = [f"{n}: {name}" for n, name in enumerate(key, start=1)]
        ax.text(1.02, 1.0, "labels\n" + "\n".join(lines), transform=ax.transAxes, ha="left", va="top",
                fontsize=GANTT_FONT, family="monospace")
    if devices:
        ax.set_yticks(range(len(devices)), devices)
    ax.invert_yaxis()
    ax.set_xlabel(f"time [{time_unit}]" if time_unit else "time")
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    return ax
