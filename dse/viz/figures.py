"""Matplotlib figures made and saved the same way everywhere: without pyplot unless a notebook or
pyplot is already loaded, closed once saved."""

from __future__ import annotations

from typing import Any


def new_figure(nrows: int = 1, ncols: int = 1, **kwargs: Any) -> tuple[Any, Any]:
    """``(figure, axes)`` as ``plt.subplots`` returns them. Through pyplot (figures a notebook shows)
    when pyplot or IPython is already loaded; otherwise a bare :class:`matplotlib.figure.Figure`, which
    saves to a file without importing pyplot and its GUI back ends (half a second of a short CLI run)."""
    import sys

    if "matplotlib.pyplot" in sys.modules or "IPython" in sys.modules:
        import matplotlib.pyplot as plt

        return plt.subplots(nrows, ncols, **kwargs)
    from matplotlib.figure import Figure

    subplot_keys = ("sharex", "sharey", "squeeze", "subplot_kw", "gridspec_kw", "width_ratios", "height_ratios")
    figure = Figure(**{k: v for k, v in kwargs.items() if k not in subplot_keys})
    return figure, figure.subplots(nrows, ncols, **{k: v for k, v in kwargs.items() if k in subplot_keys})


def axis_or_new(ax: Any, constrained: bool = False) -> Any:
    """``ax``, or the axis of a new 8.5 x 4.5 inch figure (with constrained layout: a legend outside the
    axis stays inside the figure when it is saved)."""
    if ax is None:
        _, ax = new_figure(figsize=(8.5, 4.5), layout="constrained" if constrained else None)
    return ax


def close(figure: Any) -> None:
    """Release a figure made by :func:`new_figure` (pyplot keeps its own until closed)."""
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close(figure)


def save(ax: Any, path: str) -> None:
    """Save the figure holding ``ax`` and close it (tight layout unless the figure has a layout engine or
    placed its own legend)."""
    fig = ax.figure
    if not fig.legends and fig.get_layout_engine() is None:
        fig.tight_layout()
    fig.savefig(path, dpi=120)
    close(fig)
