"""The real-time simulator's runs as a picture: ``timeline.png`` of ``dse simulate`` on a multimodel spec."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dse.cost.accelerator import PODS
from dse.viz.figures import close, new_figure


def plot_frame_timeline(trace: Any, accelerators: Sequence[str], models: Sequence[str], path: Path,
                        window_ms: float = 1000.0) -> None:
    """``timeline.png``: one panel per scheduler, one row per accelerator, blocks colored by model, drops as x."""
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle

    schedulers = list(dict.fromkeys(trace["scheduler"]))
    height = 1.0 + 0.55 * (len(accelerators) + 1) * len(schedulers)
    fig, axes = new_figure(len(schedulers), 1, figsize=(11, height), squeeze=False, sharex=True)
    colors = {m: colormaps["tab10"](k % 10) for k, m in enumerate(models)}
    shown = trace[trace["start_ms"] < window_ms]
    for ax, name in zip(axes[:, 0], schedulers, strict=True):
        mine = shown[shown["scheduler"] == name]
        executed = mine[mine["accelerator"].fillna("") != ""]
        base = executed["accelerator"].str.split("[").str[0]
        for row, acc in enumerate(accelerators):
            for label, blocks in executed[base == acc].groupby("accelerator"):
                low, height = _lane(str(label), row)
                for model, g in blocks.groupby("model"):
                    ax.broken_barh(list(zip(g["start_ms"], g["end_ms"] - g["start_ms"], strict=True)), (low, height),
                                   color=colors[str(model)])
        drops = mine[mine["accelerator"].fillna("") == ""]
        ax.scatter(drops["end_ms"], [len(accelerators)] * len(drops), marker="x", color="black", s=18)
        ax.set_yticks(range(len(accelerators) + 1), list(accelerators) + ["dropped"])
        ax.set_title(name, fontsize=9, loc="left")
    axes[-1, 0].set_xlabel(f"time (ms), first {window_ms:g} ms")
    axes[-1, 0].set_xlim(0, window_ms)
    present = [m for m in colors if m in set(shown["model"].astype(str))]  # models seen in the window only
    handles = [Rectangle((0, 0), 1, 1, color=colors[m]) for m in present]
    fig.legend(handles, present, loc="upper right", fontsize=7, ncol=max(min(len(present), 4), 1))
    height = fig.get_figheight()  # fixed margins in inches (tight_layout costs seconds on long traces)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.55 / height, top=1 - 0.5 / height, hspace=0.35)
    fig.savefig(path, dpi=110)
    close(fig)


def _lane(label: str, row: int) -> tuple[float, float]:
    """Vertical extent of a trace's accelerator label in row ``row``: ``ACC`` the whole row, ``ACC[i,j]``
    the band of its sub-arrays (of :data:`~dse.cost.accelerator.PODS`)."""
    if "[" not in label:
        return row - 0.4, 0.8
    held = [int(p) for p in label[label.index("[") + 1:-1].split(",")]
    lane = 0.8 / PODS
    return row - 0.4 + lane * min(held), lane * (max(held) - min(held) + 1)
