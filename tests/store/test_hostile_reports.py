"""Hostile text in a report's data, and a store with nothing in it: the page always draws.

A spec name, an op name or any string of a ``front.json`` may hold ``<!--``, ``</script>``,
``<script``, ``&`` or the line separators U+2028/U+2029: the page's embedded data must still end
where the page says, and parse back to exactly the data written (fast tests read it back as a
browser does, up to the first ``</script``). A store with no jobs is a page that says so. The
browser tests (slow) open each page in Chromium and check that it finishes drawing with no error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from dse.cli import main
from dse.store.database import Store
from dse.store.report.collect import read_report_data
from dse.store.report.page import drawing, inline_json, render
from tests.conftest import TINY_PLATFORM, TINY_WORKLOAD
from tests.store.test_report import page_data
from tests.store.test_report_browser import Page, browser  # noqa: F401  (the browser fixture)

#: Each what once broke the page: an HTML comment opener (the data failed to parse: "Bad escaped
#: character in JSON"), a script end and start, an ampersand, and JavaScript's line separators.
HOSTILE = "x<!--y</script><script>z&w\u2028v\u2029"


def _hostile_run(folder: Path) -> Path:
    """A solve folder of the tiny workload whose spec name and one op's name hold :data:`HOSTILE`, with a
    note in its front.json holding it too (a hand-edited string)."""
    workload = json.loads(json.dumps(TINY_WORKLOAD))
    workload["ops"][1]["name"] = f"mm{HOSTILE}"
    workload["ops"][2]["inputs"] = [f"mm{HOSTILE}"]
    spec = {"name": f"n{HOSTILE}", "family": "pipeline", "platform": TINY_PLATFORM, "workload": workload,
            "objectives": ["throughput", "energy"], "solver": {"name": "cpsat", "time_limit_s": 10, "seed": 0}}
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec))
    assert main(["solve", str(folder / "spec.yaml"), "--out", str(folder / "run"), "--quiet"]) == 0
    doc = json.loads((folder / "run" / "front.json").read_text())
    doc["fronts"][0]["notes"] = [*doc["fronts"][0]["notes"], f"edited by hand {HOSTILE}"]
    (folder / "run" / "front.json").write_text(json.dumps(doc))
    return folder / "run"


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _hostile_run(tmp_path_factory.mktemp("hostile"))


@pytest.fixture
def empty_store(tmp_path: Path) -> Path:
    path = tmp_path / "empty.sqlite"
    with Store(path):
        pass
    return path


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize("text", ["<!--", "</script>", "<script>", "</SCRIPT >", "a&b", "\u2028", "\u2029",
                                  "-->", "<![CDATA[", HOSTILE])
def test_inline_json_of_any_string_parses_back_identically_and_holds_no_markup(text: str) -> None:
    data = {"title": text, "rows": [[text, 1.5]], text: {"nested": [text]}}
    inline = inline_json(data)
    assert json.loads(inline) == data
    assert not re.search(r"[<>&\u2028\u2029]", inline)  # nothing an HTML parser or a script could read


def test_a_solve_report_with_hostile_names_embeds_its_data_whole(hostile_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(hostile_run), "--out", str(out)]) == 0
    data = read_report_data(hostile_run)
    assert f"n{HOSTILE}" in _strings(data) and any(HOSTILE in s for s in _strings(data))  # the test's premise
    assert page_data(out) == json.loads(json.dumps({**data, "drawing": drawing(data)}))


def test_a_store_with_no_jobs_is_a_page_whose_data_says_so(empty_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty.html"
    assert main(["report", str(empty_store), "--out", str(out)]) == 0
    data = page_data(out)
    assert data["kind"] == "store" and data["jobs"]["rows"] == [] and data["points"] == {}
    script = out.read_text()
    assert "This store holds no jobs yet" in script  # the page's own line for it (drawn: the browser test)


def test_render_of_hostile_store_data_parses_back(empty_store: Path) -> None:
    data = read_report_data(empty_store)
    data = {**data, "title": f"{HOSTILE}: 0 jobs", "notes": [HOSTILE]}
    page = render(data, subtitle=HOSTILE, version="test")
    found = re.search(r'<script id="report-data" type="application/json">(.*?)</script', page, re.S | re.I)
    assert found and json.loads(found.group(1)) == json.loads(json.dumps({**data, "drawing": drawing(data)}))


@pytest.mark.slow  # a browser
def test_a_solve_report_with_hostile_names_draws_in_chromium(browser, hostile_run, tmp_path) -> None:  # noqa: F811
    out = tmp_path / "report.html"
    assert main(["report", str(hostile_run), "--out", str(out)]) == 0
    page = Page(browser, out)  # waits for the page's "ready" mark: the data parsed and every plot drawn
    assert page.page.evaluate("() => JSON.parse(document.getElementById('report-data').textContent).title") \
        == page_data(out)["title"]
    assert page.page.evaluate("() => document.querySelectorAll('.js-plotly-plot').length") >= 1
    assert "x<!--y</script><script>z&w" in page.page.evaluate("() => document.title")  # shown as text
    page.clean()


@pytest.mark.slow  # a browser
def test_a_store_with_no_jobs_draws_a_line_saying_so_in_chromium(browser, empty_store, tmp_path) -> None:  # noqa: F811
    out = tmp_path / "empty.html"
    assert main(["report", str(empty_store), "--out", str(out)]) == 0
    page = Page(browser, out)
    assert "This store holds no jobs yet" in page.page.inner_text("#no-jobs")
    page.clean()
