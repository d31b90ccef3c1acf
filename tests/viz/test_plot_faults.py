"""The static plots' faults, each checked on the drawn artists (markers, labels, extents), not on pixels.

Fronts are built by hand (as in test_plot.py) so each test knows what must be seen.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402

from dse.viz import close, plot_fronts, plot_gantt, plot_store_fronts  # noqa: E402
from tests.viz.test_plot import ENERGY, THROUGHPUT, _front, _objective  # noqa: E402


def _rendered(ax):
    """Lay the figure out and draw it as a plain ``savefig`` would; returns its renderer."""
    fig = ax.figure
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    fig.savefig(io.BytesIO(), format="png", dpi=100)
    return canvas.get_renderer()


def visible_points(ax, label: str) -> int:
    """Markers of the collection ``label`` not covered by a filled marker at least as large drawn above it
    (a higher zorder, or the same zorder and added later: matplotlib's drawing order) at the same place."""
    collections = [c for c in ax.collections if isinstance(c, PathCollection)]
    order = {id(c): (c.get_zorder(), k) for k, c in enumerate(collections)}
    mine = next(c for c in collections if c.get_label() == label)
    size = mine.get_sizes()[0]
    above = [c for c in collections if order[id(c)] > order[id(mine)]]
    shown = 0
    for xy in mine.get_offsets():
        covered = any(np.allclose(xy, other_xy) and other.get_sizes()[0] >= size
                      and len(other.get_facecolor()) and other.get_facecolor()[0][3] > 0
                      for other in above for other_xy in other.get_offsets())
        shown += not covered
    return shown


def test_coinciding_fronts_both_stay_visible() -> None:
    """Quickstart and split_gemm: NSGA-II finds exactly CP-SAT's points; both sets of markers must show."""
    rows = [(39746.0, 7.0564), (40912.0, 7.9394)]
    exact = _front("cpsat", rows)
    approx = _front("nsga2", rows, proven=False)
    ax = plot_fronts([approx, exact])
    assert visible_points(ax, "CP-SAT (exact) (2 proven)") == 2
    assert visible_points(ax, "NSGA-II") == 2
    close(ax.figure)


def test_baselines_never_hide_front_points() -> None:
    """xr_vr_gaming and topcuoglu2002: a baseline with the same values as a front point sits below it."""
    exact = _front("cpsat", [(10, 5), (20, 8)], baselines={"only p0": (10, 5), "static": (20, 8), "x": (15, 7)})
    approx = _front("nsga2", [(10, 5), (15, 7)], proven=False)
    ax = plot_fronts([exact, approx])
    assert visible_points(ax, "CP-SAT (exact) (2 proven)") == 2 and visible_points(ax, "NSGA-II") == 2
    front_z = min(c.get_zorder() for c in ax.collections if not c.get_label().startswith("baseline"))
    assert all(c.get_zorder() < front_z for c in ax.collections if c.get_label().startswith("baseline"))
    close(ax.figure)


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_off_axis_labels_stay_inside_clear_of_ticks_points_and_each_other() -> None:
    """quickstart's report and pareto.png: baselines at 85 mJ/item squashed a front of 10 to 21 mJ/item into a
    strip. Off the axis, each is an arrow at the edge with a label; labels that would collide take rows."""
    baselines = {"only cpu": (1, 100), "only gpu": (1005, 500), "only fpga": (1006, 400), "static": (2000, 6.6)}
    front = _front("cpsat", [(1000, 6.5), (1005, 6.6), (1010, 6.7)], baselines=baselines)
    ax = plot_fronts([front])
    renderer = _rendered(ax)
    labels = {t.get_text(): t.get_window_extent(renderer) for t in ax.texts}
    assert set(labels) == {"only cpu: 1 items/s, 100 mJ/item", "only gpu: 500 mJ/item", "only fpga: 400 mJ/item",
                           "static: 2000 items/s"}
    boxes = list(labels.values())
    assert not [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1:] if _overlap(a, b)]
    ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() + ax.get_yticklabels()
             if t.get_visible() and t.get_text()]
    assert not [(a, b) for a in boxes for b in ticks if _overlap(a, b)]
    frame = ax.get_window_extent(renderer)
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)
    points = ax.transData.transform([(x, y) for x, y in ((1000, 6.5), (1005, 6.6), (1010, 6.7))])
    assert not [(b, p) for b in boxes for p in points if b.x0 <= p[0] <= b.x1 and b.y0 <= p[1] <= b.y1]
    close(ax.figure)


def test_an_axis_turns_log_past_ten_x() -> None:
    """The rule, once for every figure: values spanning 12x get a log axis (the old rule waited for 20x),
    9x keep a linear one."""
    for high, scale in ((12.0, "log"), (9.0, "linear")):
        front = _front("cpsat", [(1.0, high), (high, 1.0)], objectives=(THROUGHPUT, ENERGY))
        ax = plot_fronts([front])
        assert (ax.get_xscale(), ax.get_yscale()) == (scale, scale), high
        close(ax.figure)


def _certified(front, boxes):
    from dse.pareto import Certificate

    certificate = Certificate(gap=0.25, proven=False, hypervolume=3.0, hypervolume_bound=4.0, region=tuple(boxes))
    return type(front)(**{**front.__dict__, "certified": certificate})


def test_a_certificate_region_is_one_neutral_outline_beneath_every_point() -> None:
    """A cut-short certificate's boxes overlap; drawn one by one in the front's colour they stacked into a dark
    patch over the points. Now: their union, once, in grey, below every marker."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import PathPatch

    exact = _front("cpsat", [(10, 5), (20, 8), (30, 12)], baselines={"x": (15, 9)})
    exact = _certified(exact, [((25, 4), (10, 8)), ((25, 4), (20, 12)), ((25, 4), (30, 15))])
    ax = plot_fronts([exact])
    regions = [p for p in ax.patches if "unexplored region" in str(p.get_label())]
    assert len(regions) == 1 and isinstance(regions[0], PathPatch)
    (region,) = regions
    r, g, b, alpha = region.get_facecolor()
    assert r == g == b and alpha <= 0.1  # a light neutral grey
    er, eg, eb, _ = region.get_edgecolor()
    assert er == eg == eb
    assert all(region.get_zorder() < c.get_zorder() for c in ax.collections)
    # the union of the three boxes (x from 10, 20 or 30 to 25, y from 4 to 8, 12 or 15), not three boxes
    assert region.contains_point(ax.transData.transform((22, 6))) and region.contains_point(
        ax.transData.transform((24, 9)))
    assert not region.contains_point(ax.transData.transform((15, 10)))
    assert to_rgba("tab:blue") not in {tuple(region.get_facecolor()), tuple(region.get_edgecolor())}
    close(ax.figure)


def test_error_bands_have_a_legend_entry() -> None:
    ax = plot_fronts([_front("cpsat", [(10, 5), (20, 8)])], error=0.1)
    assert "CP-SAT (exact): error band (cost model, 10%)" in ax.get_legend_handles_labels()[1]
    close(ax.figure)


def test_colours_are_okabe_ito() -> None:
    """Okabe and Ito's colour-blind-safe palette (the published hex values), no red for a solver."""
    from matplotlib.colors import to_rgba

    okabe_ito = {to_rgba(c) for c in ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00",
                                      "#CC79A7")}
    exact = _front("cpsat", [(10, 5), (20, 8)], baselines={"a": (12, 7), "b": (14, 6), "c": (16, 7.5)})
    approx = _front("nsga2", [(11, 5), (20, 8.5)], proven=False)
    ax = plot_fronts([exact, approx])
    faces = {c.get_label(): tuple(c.get_facecolor()[0]) for c in ax.collections if len(c.get_facecolor())}
    edges = {c.get_label(): tuple(c.get_edgecolor()[0]) for c in ax.collections}
    assert faces["CP-SAT (exact) (2 proven)"] == to_rgba("#0072B2")
    assert edges["NSGA-II"] == to_rgba("#E69F00")
    assert {edges[f"baseline: {n}"] for n in "abc"} <= okabe_ito
    close(ax.figure)


def test_units_written_once_per_axis() -> None:
    makespan = _objective("makespan", "tu", "min")
    for objectives in ((THROUGHPUT, ENERGY), (makespan, _objective("energy", "mJ", "min"))):
        front = _front("cpsat", [(5, 3), (4, 6)], objectives=objectives)
        ax = plot_fronts([front])
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            assert label.count("[") == 1 and label.count("(") == 0, label
        close(ax.figure)


def test_a_plain_savefig_keeps_the_legend() -> None:
    exact = _front("cpsat", [(10, 5), (20, 8)], baselines={f"only device number {k}": (5 + k, 20 - k)
                                                           for k in range(6)})
    ax = plot_fronts([exact])
    renderer = _rendered(ax)
    box = ax.get_legend().get_window_extent(renderer)
    fig = ax.figure.bbox
    assert fig.x0 <= box.x0 and box.x1 <= fig.x1 and fig.y0 <= box.y0 and box.y1 <= fig.y1
    close(ax.figure)


def _points(values: list[float]) -> pd.DataFrame:
    rows = []
    for k, power in enumerate(values):
        for t, e in ((100.0, 5.0), (200.0, 8.0)):  # every job the same front: they lie on each other
            rows.append({"job": f"job{k}", "power_w": power, "feasible": True, "proven": True,
                         "throughput_items_per_s": t, "energy_mj_per_item": e})
    return pd.DataFrame(rows)


def test_store_plot_discrete_colours_readable_labels_and_visible_fronts() -> None:
    """dse results --plot: jobs varied markers with nothing explaining them, and the 300 W and 400 W fronts of
    problems/sweeps/, equal, hid each other. Now one colour and marker per value, both in its legend entry,
    each later value smaller and hollow."""
    points = _points([200.0, 300.0, 400.0, 200.0])
    objectives = [("throughput_items_per_s", "max"), ("energy_mj_per_item", "min")]
    ax = plot_store_fronts(points, objectives, "power_w")
    assert ax.get_xlabel() == "throughput [items/s], higher is better"
    assert ax.get_ylabel() == "energy [mJ/item], lower is better"
    assert len(ax.figure.axes) == 1  # three values: a legend, no colour bar
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["power_w = 200.0 (2 jobs)", "power_w = 300.0",
                                                          "power_w = 400.0"]
    handles = {t.get_text().split(" (")[0]: h for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)}
    lines = ax.get_lines()
    values = [f"power_w = {v}" for v in (200.0, 300.0, 400.0, 200.0)]  # one line per job, in the jobs' order
    assert len(lines) == len(values)
    for line, value in zip(lines, values, strict=True):  # every front looks like its value's legend entry
        handle = handles[value]
        assert (line.get_marker(), line.get_color(), line.get_markerfacecolor()) == (
            handle.get_marker(), handle.get_color(), handle.get_markerfacecolor())
    first, second, third = lines[:3]  # 200, 300 and 400 W: the same front, drawn over each other
    assert len({first.get_marker(), second.get_marker(), third.get_marker()}) == 3  # each its own marker,
    assert first.get_markersize() > second.get_markersize() > third.get_markersize()  # each later one smaller,
    assert first.get_markerfacecolor() != "none"  # and hollow after the first
    assert second.get_markerfacecolor() == third.get_markerfacecolor() == "none"
    assert first.get_zorder() < second.get_zorder() < third.get_zorder()
    close(ax.figure)


def test_store_plot_many_numeric_values_get_a_colour_bar() -> None:
    points = _points([float(v) for v in range(100, 1300, 100)])
    ax = plot_store_fronts(points, [("throughput_items_per_s", "max"), ("energy_mj_per_item", "min")],
                           "power_w")
    assert len(ax.figure.axes) == 2
    close(ax.figure)


def test_gantt_labels_fit_their_bars_or_are_numbered_with_a_key() -> None:
    schedule = [(f"layer{k}.attention.output_projection", "gpu", 10.0 * k, 10.0 * k + 9.0) for k in range(8)]
    schedule.append(("tiny", "cpu", 0.0, 80.0))
    ax = plot_gantt(schedule, time_unit="ms")
    renderer = _rendered(ax)
    inside = [t for t in ax.texts if t.get_transform() == ax.transData]
    bars = {(p.get_y() + p.get_height() / 2, round(p.get_x() + p.get_width() / 2, 6)): p for p in ax.patches}
    assert len(inside) == 9
    for text in inside:
        x, y = text.get_position()
        bar = bars[(y, round(x, 6))].get_window_extent(renderer)
        box = text.get_window_extent(renderer)
        assert bar.x0 <= box.x0 and box.x1 <= bar.x1, text.get_text()
    boxes = [t.get_window_extent(renderer) for t in inside]
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if _overlap(a, b)]
    key = [t.get_text() for t in ax.texts if t.get_transform() == ax.transAxes]
    assert key and "1: layer0.attention.output_projection" in key[0]
    assert {t.get_text() for t in inside} == {*map(str, range(1, 9)), "tiny"}
    close(ax.figure)


def test_figures_made_here_have_a_layout_engine() -> None:
    ax = plot_fronts([_front("cpsat", [(10, 5), (20, 8)])])
    assert ax.figure.get_layout_engine() is not None
    close(ax.figure)


def _stream_trace() -> pd.DataFrame:
    """Two policies with the same 25 runs (dynamic and oracle), two input phases, a spike in the first run."""
    rows = []
    for policy in ("dynamic", "oracle"):
        t = 0.0
        inputs = [("pubmed", 5000.0)] + [("pubmed", 100.0 + k % 3) for k in range(12)] + [
            ("cora", 120.0 - k % 2) for k in range(12)]
        for k, (name, items_per_s) in enumerate(inputs):
            if k == 13:
                rows.append(dict(policy=policy, input=k, input_name=name, kind="switch", start_s=t, end_s=t,
                                 items=0, energy_j=0.0))
            duration = 100 / items_per_s
            rows.append(dict(policy=policy, input=k, input_name=name, kind="run", start_s=t, end_s=t + duration,
                             items=100, energy_j=2.0))
            t += duration
    return pd.DataFrame(rows)


def test_stream_timeline_phases_every_line_switches_and_spike() -> None:
    from dse.viz import plot_stream_timeline

    ax = plot_stream_timeline(_stream_trace())
    lines = [line for line in ax.get_lines() if line.get_label() in ("dynamic", "oracle")]
    dynamic, oracle = sorted(lines, key=lambda line: line.get_label())
    # the same values: the one drawn above is thinner and dashed differently, so the one below shows
    assert oracle.get_zorder() > dynamic.get_zorder() and oracle.get_linewidth() < dynamic.get_linewidth()
    assert oracle.get_linestyle() != dynamic.get_linestyle()
    switches = [line for line in ax.get_lines() if line.get_marker() == "|"]
    assert switches and all(line.get_transform() == ax.get_xaxis_transform() for line in switches)
    low, high = ax.get_ylim()
    assert low > 50  # no switch tick at y = 0 pulls the axis down
    assert high < 5000  # the early spike is off-scale, not squashing the rest
    assert any("off-scale up to 5000" in t.get_text() for t in ax.texts)
    spans = [p for p in ax.patches if p.get_alpha() == 0.08]
    assert len(spans) == 2 and {t.get_text() for t in ax.texts} >= {"pubmed", "cora"}
    close(ax.figure)


def test_stream_phase_names_never_overlap() -> None:
    """dype_drift: four short phases in the first half second had their names printed over each other. Now
    names take up to three rows, the longest phases first; a name no row has room for is left out."""
    from dse.viz import plot_stream_timeline

    rows = []
    names = [(f"uniform-20000-d{k}e-05-w128", 0.1) for k in range(4)] + [("powerlaw-20000-d0.002-w128", 8.0)]
    for policy in ("dynamic", "oracle"):
        t = 0.0
        for k, (name, duration) in enumerate(names):
            rows.append(dict(policy=policy, input=k, input_name=name, kind="run", start_s=t, end_s=t + duration,
                             items=100, energy_j=2.0))
            t += duration
    ax = plot_stream_timeline(pd.DataFrame(rows))
    renderer = _rendered(ax)
    phases = [t for t in ax.texts if t.get_transform() == ax.get_xaxis_transform()]
    boxes = [t.get_window_extent(renderer) for t in phases]
    assert not [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1:] if _overlap(a, b)]
    shown = {t.get_text() for t in phases}
    assert "powerlaw-20000-d0.002-w128" in shown and 1 <= len(shown & {n for n, _ in names[:4]}) <= 3
    close(ax.figure)


def test_frame_timeline_legend_names_only_models_in_the_window(monkeypatch, tmp_path) -> None:
    import dse.viz.frames
    from dse.viz.frames import plot_frame_timeline

    figures = []
    monkeypatch.setattr(dse.viz.frames, "close", figures.append)
    trace = pd.DataFrame([
        dict(scheduler="dream", model="hand", frame=0, block=0, accelerator="acc0", start_ms=0.0, end_ms=5.0),
        dict(scheduler="dream", model="eyes", frame=0, block=0, accelerator="acc1", start_ms=1.0, end_ms=4.0),
        dict(scheduler="dream", model="late", frame=0, block=0, accelerator="acc0", start_ms=900.0, end_ms=950.0),
    ])
    plot_frame_timeline(trace, ["acc0", "acc1"], ["hand", "eyes", "late"], tmp_path / "t.png", window_ms=100.0)
    (figure,) = figures
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["hand", "eyes"]


def test_two_fronts_of_one_solver_get_their_own_style_and_both_show() -> None:
    """Notebook 02: the exhaustive fronts with and without DVFS were two sets of identical green squares."""
    rows = [(10.0, 5.0), (20.0, 8.0)]
    with_dvfs = _front("exhaustive", rows + [(15.0, 6.0)])
    without = _front("exhaustive", rows)
    with_dvfs = type(with_dvfs)(**{**with_dvfs.__dict__, "problem": "with DVFS"})
    without = type(without)(**{**without.__dict__, "problem": "without DVFS"})
    ax = plot_fronts([with_dvfs, without])
    labels = [c.get_label() for c in ax.collections]
    assert labels == ["exhaustive: with DVFS (3 proven)", "exhaustive: without DVFS (2 proven)"]
    first, second = ax.collections
    assert tuple(first.get_facecolor()[0]) != tuple(second.get_facecolor()[0])
    assert visible_points(ax, labels[0]) == 3 and visible_points(ax, labels[1]) == 2
    close(ax.figure)


def test_baselines_with_equal_values_all_show() -> None:
    """xr_vr_gaming: three baselines with the same UXCost and energy were stacked into one marker."""
    exact = _front("cpsat", [(10, 5), (20, 8)], baselines={"fcfs": (30, 12), "edf": (30, 12), "least_slack": (30, 12)})
    ax = plot_fronts([exact])
    for name in ("fcfs", "edf", "least_slack"):
        assert visible_points(ax, f"baseline: {name}") == 1, name
    close(ax.figure)
