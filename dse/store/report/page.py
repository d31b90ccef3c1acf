"""The report as one self-contained HTML page: the data as JSON, the page's script and style, and the
plotting library (plotly.js, gzip-compressed and base64-encoded, unpacked by the browser) all inline.

Nothing is fetched when the page opens, so it works offline and from ``file://``.
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

from plotly.offline import get_plotlyjs

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
    return base64.b64encode(gzip.compress(get_plotlyjs().encode(), compresslevel=9, mtime=0)).decode("ascii")


def _inline_json(data: Mapping[str, Any]) -> str:
    """JSON safe inside a ``<script>`` element (no ``</`` that would end it)."""
    return json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/").replace("<!--", "<\\!--")


def render(data: Mapping[str, Any], subtitle: str, version: str) -> str:
    """The whole page for report ``data`` (see :mod:`dse.store.report.collect`)."""
    return _TEMPLATE.format(
        version=html.escape(version), title=html.escape(str(data.get("title", "dse report"))),
        subtitle=html.escape(subtitle), css=(_HERE / "report.css").read_text(), data=_inline_json(data),
        plotly=plotly_payload(), script=(_HERE / "report.js").read_text().replace("</script", "<\\/script"))
