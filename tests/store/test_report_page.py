"""The report page's drawing plan (dse.store.report.page.drawing): the page draws its axes and certificate
regions by the rule the static figures follow (the browser test checks the page obeys it).

Data are built by hand, in the shape dse.store.report.collect gives them.
"""

from __future__ import annotations

from dse.store.report.page import drawing, render
from tests.store.test_report import page_data

OBJECTIVES = [{"column": "throughput_items_per_s", "name": "throughput", "unit": "items/s", "sense": "max"},
              {"column": "energy_mj_per_item", "name": "energy", "unit": "mJ/item", "sense": "min"}]


def _point(t: float, e: float) -> dict:
    return {"objectives": {"throughput_items_per_s": t, "energy_mj_per_item": e}, "feasible": True}


def _solve_data(region: list | None = None) -> dict:
    points = [_point(7800.3, 10.854), _point(11892, 12.02), _point(14794, 21.4)]
    certificate = {"gap": 0.5, "region": region} if region is not None else None
    return {"kind": "solve", "title": "t", "objectives": OBJECTIVES, "details": {}, "notes": [],
            "fronts": [{"solver": "nsga2", "points": points, "certificate": certificate}],
            "baselines": [{"name": "only cpu", **_point(3294.5, 84.99)}, {"name": "only fpga", **_point(1438.5, 69.516)},
                          {"name": "static", **_point(11892, 26.746)}]}


def test_solve_axes_name_the_baselines_off_them() -> None:
    """quickstart's values (tests/viz/test_scales.py works them by hand): only fpga is off the throughput axis
    (below), only cpu and only fpga off the energy axis (above); static stays on both."""
    axes = drawing(_solve_data())["axes"]
    throughput, energy = axes["throughput_items_per_s"], axes["energy_mj_per_item"]
    assert (throughput["scale"], throughput["below"], throughput["above"]) == ("linear", ["only fpga"], [])
    assert (energy["scale"], energy["below"], energy["above"]) == ("linear", [], ["only cpu", "only fpga"])
    assert (throughput["lo"], throughput["hi"], energy["lo"], energy["hi"]) == (3294.5, 14794, 10.854, 26.746)
    lo, hi = energy["range"]
    assert lo < 10.854 and 26.746 < hi < 30  # 8% of the shown span on each side, nowhere near 85


def test_a_certificates_boxes_become_one_loop_in_the_first_two_objectives() -> None:
    # two boxes sharing the corner (20000, 0): [14794, 20000] x [0, 21.4] and [11892, 20000] x [0, 12.02]. Their
    # union is a staircase, well inside the clipping window (the axes' limits widened by their span: x from
    # about -11000 to 29000, y from about -9 to 46), its corners counter-clockwise from the lowest
    region = [[[20000, 0], [14794, 21.4]], [[20000, 0], [11892, 12.02]]]
    assert drawing(_solve_data(region))["regions"] == {"0": [[[11892, 0], [20000, 0], [20000, 21.4], [14794, 21.4],
                                                              [14794, 12.02], [11892, 12.02]]]}
    assert drawing(_solve_data())["regions"] == {}


def test_store_axes_and_the_page_carries_the_plan(tmp_path) -> None:
    # feasible points from 10 to 150 on x (15x): log; 1 to 2 on y: linear; the infeasible 1e6 is not drawn
    data = {"kind": "store", "title": "s", "objectives": OBJECTIVES, "notes": [],
            "points": {"a": [_point(10, 1), _point(150, 2)], "b": [{**_point(1e6, 1e6), "feasible": False}]}}
    axes = drawing(data)["axes"]
    assert axes["throughput_items_per_s"]["scale"] == "log" and axes["energy_mj_per_item"]["scale"] == "linear"
    page = tmp_path / "p.html"
    page.write_text(render(data, "sub", "0"))
    assert page_data(page)["drawing"]["axes"] == axes
    assert drawing({"kind": "simulate"}) == {}
