"""Layer 7, figures: Pareto fronts (:mod:`~dse.viz.fronts`), schedules as Gantt charts
(:mod:`~dse.viz.schedules`), DyPe's runs over time (:mod:`~dse.viz.streams`), the real-time simulator's
frames (:mod:`~dse.viz.frames`), all made and saved one way (:mod:`~dse.viz.figures`: no pyplot unless
a notebook has it, closed once saved).

Example::

    from dse.viz import plot_fronts
    ax = plot_fronts([front])        # a matplotlib axis
    ax.figure.savefig("front.png")
"""

from __future__ import annotations

from dse.viz.figures import close, new_figure, save
from dse.viz.frames import plot_frame_timeline
from dse.viz.fronts import column_label, plot_fronts, plot_fronts_interactive, plot_store_fronts
from dse.viz.schedules import plot_gantt, plot_schedule, transfers
from dse.viz.streams import plot_stream_timeline, stream_phases

__all__ = ["close", "column_label", "new_figure", "plot_fronts", "plot_fronts_interactive", "plot_frame_timeline",
           "plot_gantt", "plot_schedule", "plot_store_fronts", "plot_stream_timeline", "save", "stream_phases",
           "transfers"]
