"""The report in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

Checks that a page opens with no console error and no network, that every front is drawn, that
clicking a point shows its mapping and schedule, that a store's filters and colouring work; and that
every front is readable: axes and off-axis baselines as the static figures draw them (the plan the page
carries), no certificate region over a point (a click at any point selects it), coincident points each
selectable, a compact hover box, error bands in the legend, colour-blind-safe colours, a jobs table that
fits a 1200 px window, a DyPe report whose phase names and legends overlap nothing. Saves a screenshot of
each page under the test's temporary folder. Never skipped when ``CI=true``; elsewhere a machine without
Chromium skips it, saying how to install it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dse.cli import main
from dse.viz.scales import plan_axis
from tests.store.conftest import ROOT
from tests.store.test_report import page_data, serving_folder

pytestmark = pytest.mark.slow  # a browser

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
INSTALL = ("the browser test needs Chromium and Playwright's Python client: apt-get install chromium "
           "(Debian/Ubuntu) and pip install -e '.[test]'")


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ModuleNotFoundError:
        sync_playwright = None
    if executable is None or sync_playwright is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium or Playwright missing in CI: {INSTALL}")
        pytest.skip(INSTALL)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Page:
    """A report opened in a fresh page that records console errors, page errors and network requests."""

    def __init__(self, browser: Any, path: Path, width: int = 1300) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url) if not r.url.startswith(("file:", "data:", "blob:"))
                     else None)
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector("body[data-ready='1']", timeout=60_000)

    def clean(self) -> None:
        assert self.errors == [] and self.requests == []

    def point_position(self, div: str, trace: int, index: int) -> tuple[float, float]:
        """Where point ``index`` of trace ``trace`` of plot ``div`` is on the screen."""
        return tuple(self.page.evaluate("""([div, trace, index]) => {
            const gd = document.getElementById(div); const fl = gd._fullLayout; const t = gd.data[trace];
            const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
            return [box.left + fl.xaxis.d2p(t.x[index]), box.top + fl.yaxis.d2p(t.y[index])]; }""",
                                        [div, trace, index]))

    def click(self, x: float, y: float) -> None:
        self.page.mouse.move(x, y)
        self.page.wait_for_timeout(50)
        self.page.mouse.click(x, y)

    def boxes(self, selector: str) -> list[list[float]]:
        """``[left, top, right, bottom]`` of every element matching ``selector``."""
        return self.page.evaluate("""(sel) => [...document.querySelectorAll(sel)].map(e => {
            const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })""", selector)


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _traces(page: Page) -> list[dict[str, Any]]:
    """The fronts plot's traces: name, points, hover texts, marker, legend flag and meta (JSON-ready)."""
    return page.page.evaluate("""() => document.getElementById('fronts').data.map(t => ({name: t.name,
        x: t.x, y: t.y, keys: t.customdata || null, hover: t.hovertext || null, marker: t.marker || {},
        showlegend: t.showlegend !== false, meta: t.meta === undefined ? null : t.meta,
        legendgroup: t.legendgroup || null, fill: t.fill || null}))""")


def test_solve_report_in_chromium(browser, solved, tmp_path) -> None:
    assert main(["report", str(solved)]) == 0
    data = page_data(solved / "report.html")
    page = Page(browser, solved / "report.html")
    traces = page.page.evaluate("() => document.getElementById('fronts').data.map("
                                "t => [t.name, t.x.length, t.customdata ? 1 : 0])")
    fronts = [t for t in traces if t[2]]
    sizes = {f["solver"]: len(f["points"]) for f in json.loads((solved / "front.json").read_text())["fronts"]}
    assert [n for n, _, _ in fronts] == [f"CP-SAT (exact): {sizes['cpsat']} points", f"NSGA-II: {sizes['nsga2']} points"]
    assert sum(1 for n, _, _ in traces if n.startswith("baseline")) == len(data["baselines"])
    assert any(n.startswith("cpsat: unexplored region") for n, _, _ in traces)
    drawn = page.page.evaluate("() => [...document.querySelectorAll('#fronts .scatterlayer .trace .point')]"
                               ".filter(p => getComputedStyle(p).opacity !== '0').length")
    # every front point and baseline has a visible marker (the region's legend entry and the error bars'
    # invisible carriers aside)
    assert drawn == sum(k for n, k, _ in traces if "unexplored region" not in n and "error band" not in n)
    caption = page.page.inner_text("#certificates")
    assert "gap 16.667 %" in caption
    # the hypervolume's units and its reference point, as dse certify prints them
    assert "of at most 12 items/s x mJ/item (reference point: throughput 0 items/s, energy 50 mJ/item)" in caption
    page.page.screenshot(path=str(tmp_path / "fronts.png"))
    # click the NSGA-II front's first point (drawn above CP-SAT's where they coincide)
    trace = next(k for k, t in enumerate(traces) if t[0].startswith("NSGA-II") and t[2])
    page.click(*page.point_position("fronts", trace, 0))
    page.page.wait_for_selector("#schedule .barlayer .point", timeout=20_000)
    key = page.page.evaluate(f"() => document.getElementById('fronts').data[{trace}].customdata[0]")
    rows = page.page.eval_on_selector_all("#mapping tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    assert rows == data["details"][key]["mapping"]
    bars = page.page.evaluate("() => document.querySelectorAll('#schedule .barlayer .point').length")
    assert bars == len(data["details"][key]["timeline"]["spans"])
    assert page.page.evaluate("() => document.querySelectorAll('#breakdown .barlayer .point').length") > 0
    # the visible energy table adds up to the point's energy objective: each device's ops at the clock the
    # genome chose plus its idle share (the page used to show the ops' energy at full clock and no idle part)
    energy = page.page.eval_on_selector_all("#energy-breakdown tr", "rows => rows.map(r => [...r.cells].map("
                                            "c => c.textContent))")
    header, body = energy[0], energy[1:]
    assert header[4:7] == ["ops and transfers [mJ]", "idle [mJ]", "energy [mJ]"]
    objective = next(p["objectives"]["energy_mj_per_item"] for f in json.loads((solved / "front.json").read_text())[
        "fronts"] for p in f["points"] if " ".join(map(str, p["genome"])) == key)
    assert body[-1][0] == "total" and float(body[-1][6]) == pytest.approx(objective, rel=1e-4)
    assert sum(float(r[6]) for r in body[:-1]) == pytest.approx(objective, rel=1e-4)
    page.page.screenshot(path=str(tmp_path / "point.png"), full_page=True)
    page.clean()
    assert (tmp_path / "point.png").stat().st_size > 10_000


def test_solve_report_every_point_selectable_and_coincident_points_each(browser, solved) -> None:
    """The certificate's region covered the CP-SAT points, and where CP-SAT and NSGA-II found the same values
    only NSGA-II's point could be clicked. Now the region is a shape beneath the points (it takes no click):
    a click at any point's position selects that point or offers it with every point drawn within a few
    pixels of it (a dense front's neighbours), points of equal values always among them."""
    out = solved / "every-point.html"
    assert main(["report", str(solved), "--out", str(out)]) == 0
    data = page_data(out)
    page = Page(browser, out)
    layout = page.page.evaluate("() => document.getElementById('fronts').layout.shapes")
    regions = [s for s in layout if s["type"] == "path"]
    assert len(regions) == 1 and regions[0]["layer"] in ("below", "between")
    assert not [t for t in _traces(page) if t["fill"] and any(v is not None for v in t["x"])]  # no filled trace
    fronts = [(k, t) for k, t in enumerate(_traces(page)) if t["keys"]]
    columns = [o["column"] for o in data["objectives"]]
    where = [(str(f), p["key"], tuple(p["objectives"][c] for c in columns[:2]))
             for f, front in enumerate(data["fronts"]) for p in front["points"]]
    values = {key: v for _, key, v in where}
    clicked: set[tuple[float, ...]] = set()
    for k, trace in fronts:
        for index, key in enumerate(trace["keys"]):
            if values[key] in clicked:  # a position already clicked: the same click, the same points offered
                continue
            clicked.add(values[key])
            here = sorted((f, q) for f, q, v in where if v == values[key])  # this point and any on it
            page.page.evaluate("() => document.getElementById('detail').replaceChildren()")
            page.click(*page.point_position("fronts", k, index))
            page.page.wait_for_selector("#point-detail[data-key]", timeout=5_000)
            shown = page.page.get_attribute("#point-detail", "data-key")
            offered = page.page.eval_on_selector_all("#coincident button",
                                                     "bs => bs.map(b => [b.dataset.front, b.dataset.key])")
            offered_keys = {q for _, q in offered}
            assert shown == key or key in offered_keys  # the point clicked is shown, or offered with its neighbours
            if len(here) > 1:  # points of equal values are all offered
                assert set(here) <= set(map(tuple, offered))
    # a position where both fronts have a point: both are offered, and each shows its own mapping
    k, cpsat = fronts[0]
    nsga2 = fronts[1][1]
    shared = next(i for i, key in enumerate(cpsat["keys"]) if values[key] in {values[q] for q in nsga2["keys"]})
    page.click(*page.point_position("fronts", k, shared))
    page.page.wait_for_selector("#coincident button", timeout=5_000)
    buttons = page.page.eval_on_selector_all("#coincident button", "bs => bs.map(b => [b.dataset.front, b.dataset.key])")
    assert {"0", "1"} <= {front for front, _ in buttons}  # cpsat's and nsga2's (and any a pixel away)
    for n, (_, key) in enumerate(buttons):
        page.page.click(f"#coincident button >> nth={n}")
        page.page.wait_for_selector(f"#point-detail[data-key='{key}']", timeout=5_000)
        rows = page.page.eval_on_selector_all("#mapping tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
        assert rows == data["details"][key]["mapping"]
    page.clean()


def test_solve_report_axes_baselines_hover_bands_and_colours(browser, solved, tmp_path) -> None:
    """The front was squashed into a strip by the baselines on a linear axis, the hover box cut the mapping
    with "...", error bars had no legend entry, the certificate was red, a double click undid the axes.
    Now the page follows the axis plan the static figures follow (checked against dse.viz.scales on the
    page's own data), and keeps it."""
    out = solved / "axes.html"
    assert main(["report", str(solved), "--out", str(out)]) == 0
    data = page_data(out)
    page = Page(browser, out)
    page.page.screenshot(path=str(tmp_path / "axes.png"))
    points = [p for f in data["fronts"] for p in f["points"]]
    names = [b["name"] for b in data["baselines"]]
    layout = page.page.evaluate("() => { const fl = document.getElementById('fronts')._fullLayout; return "
                                "{x: [fl.xaxis.type, fl.xaxis.range], y: [fl.yaxis.type, fl.yaxis.range]}; }")
    off = {}
    for axis, objective in zip("xy", data["objectives"][:2], strict=True):
        column = objective["column"]
        plan = plan_axis([p["objectives"][column] for p in points], [b["objectives"][column] for b in data["baselines"]])
        scale, (lo, hi) = layout[axis]
        assert scale == plan.scale
        if scale == "log":  # plotly gives a log axis's range in decades
            lo, hi = 10**lo, 10**hi
        a, b = plan.limits()
        assert lo <= a and b <= hi  # the plan's range, maybe widened for labels: every front point shows
        for which, edge in ((plan.below, lo), (plan.above, hi)):
            for k in which:
                off.setdefault(names[k], {})[axis] = edge
    assert "only cpu" in off and "y" in off["only cpu"]  # far above every front point on energy: drawn off the axis
    baselines = {t["name"].removeprefix("baseline: ").removesuffix(" (infeasible)"): t for t in _traces(page)
                 if t["name"].startswith("baseline")}
    for name, edges in off.items():  # an arrow at the edge it lies beyond
        trace = baselines[name]
        assert trace["marker"]["symbol"].startswith("arrow")
        for axis, edge in edges.items():
            assert trace[axis][0] == pytest.approx(edge)
    labels = page.page.evaluate("() => document.getElementById('fronts').layout.annotations.map(a => a.text)")
    assert sorted(t.split(":")[0] for t in labels) == sorted(off)
    cpu_energy = next(b for b in data["baselines"] if b["name"] == "only cpu")["objectives"][data["objectives"][1]["column"]]
    cpu_labels = [t for t in labels if t.startswith("only cpu: ") and t.endswith("mJ/item")]  # its value, its unit
    assert [float(t.removeprefix("only cpu: ").split()[0].replace(",", "")) for t in cpu_labels] == [
        pytest.approx(cpu_energy, rel=1e-3)]
    boxes = page.boxes("#fronts .annotation")
    assert not [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1:] if _overlap(a, b)]
    (area,) = page.boxes("#fronts .nsewdrag")
    assert all(area[0] <= b[0] and b[2] <= area[2] and area[1] <= b[1] and b[3] <= area[3] for b in boxes)
    fronts = [(k, t) for k, t in enumerate(_traces(page)) if t["keys"]]
    for k, trace in fronts:  # no label over a point; a short hover box with units, nothing cut
        for index in range(len(trace["keys"])):
            x, y = page.point_position("fronts", k, index)
            assert not [b for b in boxes if b[0] <= x <= b[2] and b[1] <= y <= b[3]]
        for text in trace["hover"]:
            lines = text.split("<br>")
            assert len(lines) <= 5 and "..." not in text and "mJ/item" in text and "items/s" in text
    legend = [t["name"] for t in _traces(page) if t["showlegend"] and t["name"].endswith("error band")]
    assert legend == ["CP-SAT (exact): error band", "NSGA-II: error band"]
    colours = {t["name"].split(":")[0]: t["marker"].get("color") for _, t in fronts}
    assert colours == {"CP-SAT (exact)": "#0072B2", "NSGA-II": "#E69F00"}  # Okabe and Ito's blue and orange
    region = page.page.evaluate("() => document.getElementById('fronts').layout.shapes.find(s => s.type === 'path')")
    assert region["line"]["color"] == "#555555"  # neutral grey, not red
    assert page.page.evaluate("() => getComputedStyle(document.querySelector('.certificate')).color") == "rgb(68, 68, 68)"
    # a double click (two quick clicks on two points are one) keeps these axes: plotly's default reset went
    # back to the ranges before the labels' bands, and a second one autoscaled onto the baselines
    ranges = "() => { const fl = document.getElementById('fronts')._fullLayout; return [fl.xaxis.range, fl.yaxis.range]; }"
    planned = page.page.evaluate(ranges)
    for _ in range(2):
        page.page.mouse.dblclick((area[0] + area[2]) / 2, (area[1] + area[3]) / 2)
        page.page.wait_for_timeout(500)
        assert page.page.evaluate(ranges) == planned
    page.clean()


def test_simulate_report_in_chromium(browser, simulated, tmp_path) -> None:
    assert main(["report", str(simulated)]) == 0
    page = Page(browser, simulated / "report.html")
    cells = page.page.eval_on_selector_all("table.data tbody tr", "rows => rows.map(r => r.cells[0].textContent)")
    assert cells == ["fcfs", "edf", "least_slack", "static", "planaria", "dream"]
    bars = page.page.evaluate("() => document.querySelectorAll('#timeline .barlayer .point').length")
    assert bars == len([s for s in page_data(simulated / "report.html")["timeline"]["spans"]])
    page.page.screenshot(path=str(tmp_path / "simulation.png"), full_page=True)
    page.clean()


def test_serving_simulate_report_in_chromium(browser, tmp_path) -> None:
    """A serving simulation's page draws its pools' iterations and its requests, one bar each."""
    folder = serving_folder(tmp_path / "serving")
    assert main(["report", str(folder)]) == 0
    page = Page(browser, folder / "report.html")
    bars = page.page.evaluate("() => document.querySelectorAll('#timeline .barlayer .point').length")
    assert bars == len(page_data(folder / "report.html")["timeline"]["spans"]) == 5
    page.page.screenshot(path=str(tmp_path / "serving.png"), full_page=True)
    page.clean()


def test_store_report_in_chromium(browser, store, tmp_path) -> None:
    out = tmp_path / "store.html"
    assert main(["report", str(store), "--out", str(out)]) == 0
    page = Page(browser, out)
    assert page.page.evaluate("() => document.querySelectorAll('#jobs tbody tr').length") == 6
    names = page.page.evaluate("() => document.getElementById('fronts').data.filter(t => t.showlegend).map(t => t.name)")
    assert names == ["constraints.power_w = 150 (2 jobs)", "constraints.power_w = 200 (2 jobs)",
                     "constraints.power_w = 250 (2 jobs)"]
    page.page.select_option("#filter-solver\\.seed", "1")
    page.page.wait_for_timeout(300)
    assert page.page.evaluate("() => document.querySelectorAll('#jobs tbody tr').length") == 3
    page.page.select_option("#color-by", "solver.seed")
    page.page.wait_for_timeout(300)
    names = page.page.evaluate("() => document.getElementById('fronts').data.filter(t => t.showlegend).map(t => t.name)")
    assert names == ["solver.seed = 1 (3 jobs)"]
    page.page.click("#jobs tbody tr a")
    assert page.page.evaluate("() => location.hash").startswith("#job-")
    page.page.screenshot(path=str(tmp_path / "store.png"), full_page=True)
    page.clean()


def test_store_report_table_fits_and_fronts_explain_their_markers(browser, store, tmp_path) -> None:
    """The jobs table was 1472 px wide in a 1200 px window (1775 px for problems/sweeps/platforms.yaml), and
    jobs of one value varied marker with nothing explaining it while equal fronts of two values hid each
    other. Now the table fits, and each value has one colour and marker, the later values hollow and smaller."""
    out = tmp_path / "store.html"
    assert main(["report", str(store), "--out", str(out)]) == 0
    page = Page(browser, out, width=1200)
    width = page.page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
                               " document.querySelector('#jobs table').getBoundingClientRect().width,"
                               " document.getElementById('jobs').clientWidth]")
    assert width[0] <= width[1] == 1200 and width[2] <= width[3]  # no scrolling, neither page nor table
    traces = _traces(page)
    by_value: dict[str, set[str]] = {}
    for t in traces:
        by_value.setdefault(t["legendgroup"], set()).add(t["marker"]["symbol"])
    assert all(len(symbols) == 1 for symbols in by_value.values())  # one marker per value
    shown = [t for t in traces if t["showlegend"]]
    symbols = [t["marker"]["symbol"] for t in shown]
    assert len(set(symbols)) == len(shown) == 3 and not symbols[0].endswith("-open")
    assert all(s.endswith("-open") for s in symbols[1:])
    sizes = [t["marker"]["size"] for t in shown]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    page.page.screenshot(path=str(tmp_path / "store-1200.png"), full_page=True)
    page.clean()


@pytest.fixture(scope="module")
def drifted(tmp_path_factory) -> Path:
    """``dse simulate problems/dype_drift.yaml``: DyPe with six input phases, four of them in the first half
    second; its library's searches get 0.5 s each instead of the spec's 10 (the phases, which the report lays
    out, are the stream's, whatever the library holds)."""
    folder = tmp_path_factory.mktemp("report")
    spec = yaml.safe_load((ROOT / "problems" / "dype_drift.yaml").read_text())
    spec["scenario"]["library"]["time_limit_s"] = 0.5
    (folder / "dype_drift.yaml").write_text(yaml.safe_dump(spec))
    out = folder / "drift"
    assert main(["simulate", str(folder / "dype_drift.yaml"), "--out", str(out), "--quiet"]) == 0
    return out


def test_dype_report_phase_names_and_legends_overlap_nothing(browser, drifted, tmp_path) -> None:
    """dype_drift's report printed its short phases' names over each other, and its legends over the axis
    titles. Now names take rows (the longest phases first; the rest listed under the plot) and legends sit
    beside the plots."""
    assert main(["report", str(drifted)]) == 0
    data = page_data(drifted / "report.html")
    page = Page(browser, drifted / "report.html", width=1200)
    boxes = page.boxes("#stream .annotation")
    assert len(boxes) >= 3
    assert not [(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1:] if _overlap(a, b)]
    named = page.page.evaluate("() => document.getElementById('stream').layout.annotations.map(a => a.text)")
    listed = page.page.inner_text("#unnamed-phases")
    phases = [p["name"] for p in data["phases"]]
    assert all(name in named or name in listed for name in phases)
    longest = max(data["phases"], key=lambda p: p["end"] - p["start"])["name"]
    assert longest in named
    for plot in ("stream", "timeline"):
        (legend,) = page.boxes(f"#{plot} .legend")
        titles = page.boxes(f"#{plot} .g-xtitle") + page.boxes(f"#{plot} .g-ytitle")
        assert titles and not [t for t in titles if _overlap(legend, t)], plot
    page.page.screenshot(path=str(tmp_path / "drift.png"), full_page=True)
    page.clean()
