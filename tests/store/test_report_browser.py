"""The report in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

Checks that a page opens with no console error and no network, that every front is drawn, that
clicking a point shows its mapping and schedule, that a store's filters and colouring work; saves a
screenshot of each page under the test's temporary folder. Never skipped when ``CI=true``; elsewhere
a machine without Chromium skips it, saying how to install it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dse.cli import main
from tests.store.test_report import page_data

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

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1300, "height": 900})
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
        self.page.wait_for_timeout(200)
        self.page.mouse.click(x, y)


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
    assert any(n.startswith("certificate region") for n, _, _ in traces)
    drawn = page.page.evaluate("() => document.querySelectorAll('#fronts .scatterlayer .trace .point').length")
    # every front point and baseline has a marker (the certificate's outline has none)
    assert drawn == sum(k for n, k, _ in traces if not n.startswith("certificate"))
    assert "gap 16.667 %" in page.page.inner_text("#certificates")
    page.page.screenshot(path=str(tmp_path / "fronts.png"))
    # click the NSGA-II front's first point (drawn above CP-SAT's where they coincide)
    trace = next(k for k, t in enumerate(traces) if t[0].startswith("NSGA-II"))
    page.click(*page.point_position("fronts", trace, 0))
    page.page.wait_for_selector("#schedule .barlayer .point", timeout=20_000)
    key = page.page.evaluate(f"() => document.getElementById('fronts').data[{trace}].customdata[0]")
    rows = page.page.eval_on_selector_all("#mapping tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    assert rows == data["details"][key]["mapping"]
    bars = page.page.evaluate("() => document.querySelectorAll('#schedule .barlayer .point').length")
    assert bars == len(data["details"][key]["timeline"]["spans"])
    assert page.page.evaluate("() => document.querySelectorAll('#breakdown .barlayer .point').length") > 0
    page.page.screenshot(path=str(tmp_path / "point.png"), full_page=True)
    page.clean()
    assert (tmp_path / "point.png").stat().st_size > 10_000


def test_simulate_report_in_chromium(browser, simulated, tmp_path) -> None:
    assert main(["report", str(simulated)]) == 0
    page = Page(browser, simulated / "report.html")
    cells = page.page.eval_on_selector_all("table.data tbody tr", "rows => rows.map(r => r.cells[0].textContent)")
    assert cells == ["fcfs", "edf", "least_slack", "static", "planaria", "dream"]
    bars = page.page.evaluate("() => document.querySelectorAll('#timeline .barlayer .point').length")
    assert bars == len([s for s in page_data(simulated / "report.html")["timeline"]["spans"]])
    page.page.screenshot(path=str(tmp_path / "simulation.png"), full_page=True)
    page.clean()


def test_store_report_in_chromium(browser, store, tmp_path) -> None:
    out = tmp_path / "store.html"
    assert main(["report", str(store), "--out", str(out)]) == 0
    page = Page(browser, out)
    assert page.page.evaluate("() => document.querySelectorAll('#jobs tbody tr').length") == 12
    names = page.page.evaluate("() => document.getElementById('fronts').data.filter(t => t.showlegend).map(t => t.name)")
    assert names == ["constraints.power_w = 150", "constraints.power_w = 200", "constraints.power_w = 250",
                     "constraints.power_w = 300", "constraints.power_w = 350", "constraints.power_w = 400"]
    page.page.select_option("#filter-solver\\.seed", "1")
    page.page.wait_for_timeout(300)
    assert page.page.evaluate("() => document.querySelectorAll('#jobs tbody tr').length") == 6
    page.page.select_option("#color-by", "solver.seed")
    page.page.wait_for_timeout(300)
    names = page.page.evaluate("() => document.getElementById('fronts').data.filter(t => t.showlegend).map(t => t.name)")
    assert names == ["solver.seed = 1"]
    page.page.click("#jobs tbody tr a")
    assert page.page.evaluate("() => location.hash").startswith("#job-")
    page.page.screenshot(path=str(tmp_path / "store.png"), full_page=True)
    page.clean()
