"""DyPe's runs over time: throughput and energy per item of each policy, input phases and switches
(:func:`plot_stream_timeline`; also reachable as ``dse.viz.plot_stream_timeline``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dse.viz import palette
from dse.viz.figures import new_figure
from dse.viz.labels import stagger

__all__ = ["PHASE_FONT", "PHASE_ROWS", "SPIKE_RATIO", "plot_stream_timeline", "stream_phases"]


#: Line styles of the policies on a stream timeline (with widths falling from the first to the last, so a
#: later policy drawn over an earlier one with the same values leaves it visible).
_POLICY_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)))
#: A timeline value above this multiple of the 95th percentile is drawn off-scale (its maximum noted).
SPIKE_RATIO = 1.5
#: Font size (points) of the phase names above the timeline, and the rows they may take; a name that
#: fits no row is left out (its phase stays shaded).
PHASE_FONT, PHASE_ROWS = 7.0, 3


def stream_phases(trace: Any) -> list[tuple[str, float, float]]:
    """``(input name, start, end)`` of each run of consecutive inputs with one name, read from the first
    policy of a DyPe trace (``policy, kind, input_name, start_s, end_s``)."""
    first = trace[(trace["policy"] == trace["policy"].iloc[0]) & (trace["kind"] == "run")]
    phases: list[tuple[str, float, float]] = []
    for name, start, end in zip(first["input_name"].astype(str), first["start_s"], first["end_s"], strict=True):
        if phases and phases[-1][0] == name:
            phases[-1] = (name, phases[-1][1], float(end))
        else:
            phases.append((name, float(start), float(end)))
    return phases


def _robust_limits(ax: Any, values: np.ndarray) -> None:
    """Y limits that keep a lone early spike from squashing the rest: past :data:`SPIKE_RATIO` times the
    95th percentile, the axis stops there and says how high the values go."""
    values = values[np.isfinite(values)]
    if not len(values):
        return
    lo, high, top = float(values.min()), float(np.percentile(values, 95)), float(values.max())
    if top <= high * SPIKE_RATIO or high <= lo:
        return
    pad = (high - lo) * 0.08
    ax.set_ylim(lo - pad, high + pad)
    ax.text(0.99, 0.97, f"off-scale up to {top:.4g}", transform=ax.transAxes, ha="right", va="top", fontsize=7,
            bbox=dict(facecolor="white", edgecolor="none", alpha=0.8))


def plot_stream_timeline(trace: Any) -> Any:
    """DyPe's runs over time: per policy, throughput (top) and energy per item (bottom) of each run, the
    input phases shaded and named, switches as ticks in a strip above each panel (never at y = 0). Every
    policy has its own line style and a thinner line than the one before, so equal lines stay visible.
    Returns the top axis (its figure holds both)."""
    fig, (ax_t, ax_e) = new_figure(2, 1, figsize=(9.5, 6.5), sharex=True, layout="constrained")
    phases = stream_phases(trace)
    for k, (_name, start, end) in enumerate(phases):
        for ax in (ax_t, ax_e):
            ax.axvspan(start, end, color=palette.SKY_BLUE if k % 2 == 0 else "tab:gray", alpha=0.08, linewidth=0,
                       zorder=0)
    policies = list(dict.fromkeys(trace["policy"]))
    throughput, energy = [], []
    for k, name in enumerate(policies):
        part = trace[trace["policy"] == name]
        runs = part[part["kind"] == "run"]
        mid = ((runs["start_s"] + runs["end_s"]) / 2).to_numpy()
        t = (runs["items"] / (runs["end_s"] - runs["start_s"])).to_numpy(dtype=float)
        e = (runs["energy_j"] / runs["items"]).to_numpy(dtype=float)
        throughput.append(t)
        energy.append(e)
        style = dict(linestyle=_POLICY_STYLES[k % len(_POLICY_STYLES)], linewidth=max(3.6 - 0.5 * k, 1.2),
                     zorder=2 + k, where="mid")
        lines = ax_t.step(mid, t, label=name, color=palette.SERIES[k % len(palette.SERIES)], **style)
        ax_e.step(mid, e, color=lines[0].get_color(), **style)
        switches = part[part["kind"] == "switch"]["start_s"].to_numpy(dtype=float)
        strip = 0.96 - 0.045 * k  # the band above the data (see below), one row per policy
        ax_t.plot(switches, np.full(len(switches), strip), "|", color=lines[0].get_color(), markersize=9,
                  markeredgewidth=2, transform=ax_t.get_xaxis_transform(), zorder=10)
    _robust_limits(ax_t, np.concatenate(throughput) if throughput else np.zeros(0))
    _robust_limits(ax_e, np.concatenate(energy) if energy else np.zeros(0))
    low, high = ax_t.get_ylim()  # room at the top for the switch rows
    ax_t.set_ylim(low, high + (high - low) * (0.06 + 0.05 * len(policies)))
    ax_t.set_ylabel("throughput [items/s]")
    ax_e.set_ylabel("energy [J/item]")
    ax_e.set_xlabel(f"simulated time [s]; | at the top marks a switch; shading: input phases of {policies[0]}"
                    if policies else "simulated time [s]")
    ax_t.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    for ax in (ax_t, ax_e):
        ax.grid(True, alpha=0.3)
    _name_phases(ax_t, phases)
    return ax_t


def _name_phases(ax: Any, phases: list[tuple[str, float, float]]) -> None:
    """Each phase's name above ``ax``, centred on it, in up to :data:`PHASE_ROWS` rows so that no two names
    overlap (:func:`dse.viz.labels.stagger`, longest phases first); a name no row has room for is left out."""
    x0, x1 = ax.get_xlim()
    size = ax.figure.get_size_inches() * 72
    width_pt = size[0] * ax.get_position().width * 0.85  # the legend beside the axis takes some of it
    height_pt = size[1] * ax.get_position().height
    extents = []
    for name, start, end in phases:
        centre = ((start + end) / 2 - x0) / (x1 - x0)
        length = len(name) * PHASE_FONT * 0.56 / width_pt
        extents.append((centre - length / 2, centre + length / 2))
    rows = stagger(extents, PHASE_ROWS, gap=6.0 / width_pt, priority=[end - start for _, start, end in phases])
    for (name, start, end), row in zip(phases, rows, strict=True):
        if row is not None:
            ax.text((start + end) / 2, 1.02 + row * PHASE_FONT * 1.35 / height_pt, name, fontsize=PHASE_FONT,
                    transform=ax.get_xaxis_transform(), ha="center", va="bottom", clip_on=False)
