"""The report as one self-contained HTML page: the data as JSON, the page's script and style, and the
plotting library (plotly.js, gzip-compressed and base64-encoded, unpacked by the browser) all inline.

Nothing is fetched when the page opens, so it works offline and from ``file://``. The data carries what
the page draws the way the static figures draw it (:func:`drawing`): each objective's axis plan
(:func:`dse.viz.scales.plan_axis`: log past 10x, baselines off the axis when they would squash the
fronts) and each certificate's region as outline loops (:func:`dse.viz.regions.region_loops`).
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dse.viz.regions import region_loops
from dse.viz.scales import plan_axis

_HERE = Path(__file__).parent

_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="dse {version}">
<title>{title}</title>
<style>
{css}
</style>
</head>
<body>
<header><h1>{title}</h1><p>{subtitle}</p></header>
<div id="loading">Loading the plots (the plotting library is inside this file).</div>
<main id="app"></main>
<script id="report-data" type="application/json">{data}</script>
<script id="plotly-gz" type="application/octet-stream">{plotly}</script>
<script>
{script}
</script>
</body>
</html>
"""


@functools.cache
def plotly_payload() -> str:
    """plotly.js gzip-compressed (fixed timestamp: the same bytes every time), base64-encoded."""
    from plotly.offline import get_plotlyjs
    return base64.b64encode(gzip.compress(get_plotlyjs().encode(), compresslevel=9, mtime=0)).decode("ascii")


#: What must not appear as itself in JSON inside a ``<script>`` element, each written as the JSON escape
#: of the same character (so the text still parses to the same data): ``<`` (``</script>`` would end the
#: element, ``<!--`` would open an HTML comment in it), ``>`` and ``&`` (read by older parsers and by HTML
#: tools), and U+2028 and U+2029 (line ends to JavaScript outside JSON). They occur only within strings.
_SCRIPT_ESCAPES: dict[str, str | int | None] = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def inline_json(data: Mapping[str, Any]) -> str:
    """``data`` as JSON safe inside a ``<script>`` element: nothing in a string (a spec name, an op name, a
    note) can end the element or open a comment in it, and ``JSON.parse`` of the element's text gives
    ``data`` back (:data:`_SCRIPT_ESCAPES`)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.translate(str.maketrans(_SCRIPT_ESCAPES))


def _values(points: Any, column: str) -> list[Any]:
    return [p["objectives"].get(column) for p in points]


def drawing(data: Mapping[str, Any]) -> dict[str, Any]:
    """How the page draws ``data``'s fronts: ``axes``, each objective column's axis plan
    (:meth:`dse.viz.scales.AxisPlan.to_dict`, baselines off the axis by name), and for a solve page
    ``regions``, per front (by index) with a certificate's region, the loops of its outline in the first two
    objectives. Empty for a simulation."""
    if data["kind"] == "store":
        points = [p for job in data["points"].values() for p in job if p["feasible"]]
        return {"axes": {o["column"]: plan_axis(_values(points, o["column"])).to_dict()
                         for o in data["objectives"]}, "regions": {}}
    if data["kind"] != "solve":
        return {}
    points = [p for f in data["fronts"] for p in f["points"]]
    names = [b["name"] for b in data["baselines"]]
    plans = {o["column"]: plan_axis(_values(points, o["column"]), _values(data["baselines"], o["column"]))
             for o in data["objectives"]}
    regions: dict[str, list[list[list[float]]]] = {}
    if len(data["objectives"]) >= 2:
        x, y = (plans[o["column"]] for o in data["objectives"][:2])
        for k, front in enumerate(data["fronts"]):
            boxes = [((lo[0], lo[1]), (hi[0], hi[1])) for lo, hi in (front.get("certificate") or {}).get("region") or []]
            loops = region_loops(boxes, x.window(), y.window())
            if loops:
                regions[str(k)] = [[list(corner) for corner in loop] for loop in loops]
    return {"axes": {c: plan.to_dict(names) for c, plan in plans.items()}, "regions": regions}


def render(data: Mapping[str, Any], subtitle: str, version: str) -> str:
    """The whole page for report ``data`` (see :mod:`dse.store.report.collect`), with its :func:`drawing`."""
    data = {**data, "drawing": drawing(data)}
    return _TEMPLATE.format(
        version=html.escape(version), title=html.escape(str(data.get("title", "dse report"))),
        subtitle=html.escape(subtitle), css=(_HERE / "report.css").read_text(), data=inline_json(data),
        plotly=plotly_payload(), script=(_HERE / "report.js").read_text().replace("</script", "<\\/script"))
