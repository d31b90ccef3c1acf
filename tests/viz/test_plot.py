"""Plots: layering, named baselines, capped legends, off-axis baselines, several objectives, schedules, no warnings.

Fronts are built by hand (ParetoSet of a few points) so that each test knows what must be drawn.
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dse.mapping.base import Objective  # noqa: E402
from dse.mapping.pipeline import PipelineProblem  # noqa: E402
from dse.pareto import ParetoPoint, ParetoSet, SolveStats  # noqa: E402
from dse.viz import plot_fronts, plot_schedule, save  # noqa: E402
from dse.viz.fronts import MAX_NAMED_BASELINES  # noqa: E402
from tests.mapping.pipeline.test_pipeline_hand import hand_tables  # noqa: E402


def _objective(name: str, unit: str, sense: str) -> Objective:
    return Objective(name, unit, sense, name, unit, lambda v: np.asarray(v, dtype=float))


THROUGHPUT = _objective("throughput", "items/s", "max")
ENERGY = _objective("energy", "mJ/item", "min")
LATENCY = _objective("latency", "ms", "min")


def _front(solver: str, rows: list[tuple[float, ...]], objectives=(THROUGHPUT, ENERGY), proven: bool = True,
           baselines: dict[str, tuple[float, ...]] | None = None, complete: bool = True) -> ParetoSet:
    def point(values: tuple[float, ...], k: int) -> ParetoPoint:
        objs = {o.column: v for o, v in zip(objectives, values, strict=True)}
        return ParetoPoint(genome=(k, 0), internal=tuple(int(v) for v in values), objectives=objs,
                           solver=solver, proven=proven)

    return ParetoSet(problem="hand", objectives=tuple(objectives), solver=solver,
                     points=tuple(point(r, k) for k, r in enumerate(rows)),
                     status="optimal" if complete else "time_limit", complete=complete, stats=SolveStats(0.1),
                     baselines={n: point(v, 0) for n, v in (baselines or {}).items()},
                     exact=solver in ("cpsat", "exhaustive"))  # as those solvers mark their fronts


@pytest.fixture(autouse=True)
def _no_warnings(capsys):
    """Every plot in this module must draw without a warning, and write nothing to stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    plt.close("all")
    assert not [str(w.message) for w in caught]
    assert capsys.readouterr().err == ""


def test_exact_front_drawn_below_approximate_with_larger_markers_and_baselines_named(tmp_path) -> None:
    exact = _front("cpsat", [(10, 5), (20, 8), (30, 12)], baselines={"only cpu": (5, 20), "only gpu": (15, 9)})
    approx = _front("nsga2", [(10, 5.5), (19, 8), (30, 12.5)], proven=False)
    ax = plot_fronts([exact, approx])
    z = {c.get_label(): c.get_zorder() for c in ax.collections}
    size = {c.get_label(): c.get_sizes()[0] for c in ax.collections}
    # where the fronts coincide the small approximate markers sit on the large exact ones: both seen
    assert z["CP-SAT (exact) (3 proven)"] < z["NSGA-II"] and size["CP-SAT (exact) (3 proven)"] > size["NSGA-II"]
    assert z["baseline: only cpu"] < z["CP-SAT (exact) (3 proven)"]
    labels = ax.get_legend_handles_labels()[1]
    assert "baseline: only cpu" in labels and "baseline: only gpu" in labels
    colors = {lbl: tuple(c.get_edgecolor()[0]) for lbl, c in ((c.get_label(), c) for c in ax.collections)}
    assert colors["baseline: only cpu"] != colors["baseline: only gpu"]
    assert "higher is better" in ax.get_xlabel() and "[mJ/item]" in ax.get_ylabel()
    save(ax, str(tmp_path / "pareto.png"))
    assert (tmp_path / "pareto.png").stat().st_size > 0


def test_legend_capped_for_200_device_baselines() -> None:
    baselines = {f"only dev{k}": (1.0 + k, 100.0 - k / 4) for k in range(200)} | {"static": (150.0, 40.0)}
    front = _front("cpsat", [(300, 30), (320, 35)], baselines=baselines)
    ax = plot_fronts([front])
    labels = ax.get_legend().get_texts()
    # 8 named baselines + one entry for the other 193 + the front: 10 entries, not 202
    assert len(labels) == MAX_NAMED_BASELINES + 2
    # every baseline's throughput (1 to 200) would leave the front (300 to 320) 20 / 319 of the axis: all are
    # off it; the 193 unnamed ones are counted, not drawn
    assert [t.get_text() for t in labels][-1] == "193 more baselines (193 off the axis, not drawn)"


def test_a_baseline_that_would_squash_the_front_is_an_arrow_at_the_corner_with_its_values() -> None:
    # the front spans 1000..1010 on x and 1.00..1.02 on y; a baseline at (1, 100) would leave it 10 / 1009
    # of x and 0.102 / 99 of y (its least span, 10% of 1.02): far below a third, so it goes off both axes
    front = _front("cpsat", [(1000, 1.0), (1005, 1.01), (1010, 1.02)], baselines={"only cpu": (1, 100)})
    ax = plot_fronts([front])
    assert ax.get_xscale() == "linear" and ax.get_yscale() == "linear"  # the front alone spans 1.01x and 1.02x
    (lo, hi), (bottom, top) = ax.get_xlim(), ax.get_ylim()
    assert 990 < lo < 1000 and 1010 < hi < 1020 and 0.99 < bottom < 1.0 and 1.02 < top < 1.1
    (arrow,) = [c for c in ax.collections if c.get_label() == "baseline: only cpu"]
    assert arrow.get_offset_transform() == ax.transAxes and tuple(arrow.get_offsets()[0]) == (0.0, 1.0)  # top left
    assert not arrow.get_clip_on()
    assert [t.get_text() for t in ax.texts] == ["only cpu: 1 items/s, 100 mJ/item"]
    assert ax.child_axes == []  # no inset any more: the front has the axis to itself


def test_a_baseline_inside_the_fronts_range_stays_on_the_axis() -> None:
    front = _front("cpsat", [(10, 5), (20, 8), (30, 12)], baselines={"only cpu": (12, 10)})
    ax = plot_fronts([front])
    assert len(ax.texts) == 0 and ax.child_axes == []
    (marker,) = [c for c in ax.collections if c.get_label() == "baseline: only cpu"]
    assert tuple(marker.get_offsets()[0]) == (12, 10)


def test_three_objectives_pairwise_panels_drop_none() -> None:
    objectives = (THROUGHPUT, ENERGY, LATENCY)
    front = _front("cpsat", [(10, 5, 3), (20, 8, 2), (30, 12, 1)], objectives=objectives,
                   baselines={"static": (15, 9, 4)})
    ax = plot_fronts([front])
    panels = [a for a in ax.figure.axes if a.get_visible()]
    pairs = {(a.get_xlabel().split(" [")[0], a.get_ylabel().split(" [")[0]) for a in panels}
    assert pairs == {("throughput", "energy"), ("throughput", "latency"), ("energy", "latency")}


def test_three_objectives_parallel_coordinates_on_given_axis() -> None:
    objectives = (THROUGHPUT, ENERGY, LATENCY)
    front = _front("cpsat", [(10, 5, 3), (20, 8, 2)], objectives=objectives)
    _, ax = plt.subplots()
    ax = plot_fronts([front], ax=ax)
    assert [t.get_text().split(" [")[0] for t in ax.get_xticklabels()] == ["throughput", "energy", "latency"]
    # best throughput (20, maximized) is normalized to 0, the other point to 1
    first = [line for line in ax.get_lines() if line.get_label() == "CP-SAT (exact)"][0]
    assert first.get_ydata()[0] == 1.0


def test_tu_axis_is_explained() -> None:
    makespan = _objective("makespan", "tu", "min")
    front = _front("cpsat", [(5, 3), (4, 6)], objectives=(makespan, _objective("energy", "mJ", "min")))
    ax = plot_fronts([front])
    assert ax.get_xlabel() == "makespan [tu], lower is better"  # the unit once, explained in the title
    assert "workload's own time unit" in ax.get_title()


def test_pipeline_gantt_is_one_period_with_transfers() -> None:
    problem = PipelineProblem(hand_tables(), memory=False)
    ax = plot_schedule(problem, [1, 1, 0])
    rows = [t.get_text() for t in ax.get_yticklabels()]
    # a, b on gpu; c on cpu: b->c and a->c cross gpu->cpu (7 + 2 ns, see test_pipeline_hand)
    assert rows == ["gpu", "cpu", "link gpu->cpu"]
    assert "steady-state period" in ax.get_title()
    assert ax.get_xlabel() == "time [ms]"
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert dashed and dashed[0].get_xdata()[0] == pytest.approx(9e-6)  # period 9 ns in ms


def test_interactive_plot_hover_shows_mapping() -> None:
    problem = PipelineProblem(hand_tables(), memory=False)
    front = _front("cpsat", [(10, 5), (20, 8)])
    front = ParetoSet(**{**front.__dict__, "points": tuple(
        ParetoPoint(**{**p.__dict__, "genome": (1, 1, 0)}) for p in front.points)})
    fig = plot_fronts([front], interactive=True, problem=problem)
    hover = fig.data[0].text[0]
    assert "mapping: gpu: a,b | cpu: c" in hover and "throughput_items_per_s = 10" in hover


def test_files_are_drawn_without_pyplot_outside_notebooks(tmp_path) -> None:
    """A command that only writes PNGs (no pyplot, no IPython loaded) never imports pyplot's GUI machinery."""
    import subprocess
    import sys

    code = ("import sys\nfrom dse.viz import new_figure, save\n"
            "fig, ax = new_figure(figsize=(3, 2))\nax.plot([0, 1], [1, 0])\n"
            f"save(ax, {str(tmp_path / 'x.png')!r})\n"
            "assert 'matplotlib.pyplot' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert (tmp_path / "x.png").read_bytes()[:4] == b"\x89PNG"


def test_dag_gantt_transfers_follow_the_send_rule_without_building_the_transfer_table() -> None:
    """a on d0 feeds b on d1 and c on d2; every task takes 10, d0 sends in 5, the tensor (4 bytes) takes
    3 per byte to d1 and 2 per byte to d2. By hand (TF rule: sends go out in device order): a->b
    leaves at 10 and arrives after 12 + 1 x 5 = 17, a->c after 8 + 2 x 5 = 18."""
    from dse.cost import CostTables
    from dse.mapping.dag import DagProblem
    from dse.viz import transfers

    rate = np.zeros((3, 3))
    rate[0, 1], rate[0, 2] = 3.0, 2.0
    tables = CostTables(
        op_names=("a", "b", "c"), device_names=("d0", "d1", "d2"), time=np.full((3, 3), 10, dtype=np.int64),
        energy=np.zeros((3, 3), dtype=np.int64), mem=np.zeros((3, 3), dtype=np.int64),
        allowed=np.ones((3, 3), dtype=bool), edges=np.array([[0, 1], [0, 2]], dtype=np.int64),
        edge_bytes=np.full(2, 4, dtype=np.int64), idle_power_mw=np.zeros(3, dtype=np.int64),
        mem_capacity=np.ones(3, dtype=np.int64), send_time=np.array([5, 0, 0], dtype=np.int64),
        time_unit="tu", link_time_per_byte=rate)
    problem = DagProblem(tables, ("makespan",), memory=False, tensor_per_device=True)
    x = problem.genome([0, 1, 2])
    rows = transfers(problem, problem.decode(x), x)
    assert rows == [("a->b", "d0->d1", 10.0, 27.0), ("a->c", "d0->d2", 10.0, 28.0)]
    assert tables.__dict__["_transfer_time_array"] is None  # read edge by edge, never as a full table
