"""``dse report``: one self-contained HTML page of a ``dse solve`` or ``dse simulate`` output folder or
of a batch store (see :mod:`dse.store.report.collect` for what each shows, :mod:`dse.store.report.page` for the page).

Example::

    from dse.store.report import write_report
    result = write_report(Path("out/quickstart"))   # out/quickstart/report.html
    print(result.path, result.size_bytes)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from dse.errors import SpecError
from dse.store.report.collect import metadata, read_report_data
from dse.store.report.page import render
from dse.util.files import replace_atomically

#: The most a report may weigh; a larger one is refused (it would not be the quick look it is meant to be).
MAX_REPORT_BYTES = 5 * 2**20


def _engine_version() -> str:
    try:
        return version("dse")
    except PackageNotFoundError:
        return "0+unknown"


@dataclass(frozen=True)
class ReportResult:
    """Where the report went, its kind (``solve``, ``simulate``, ``store``), size and build time."""

    path: Path
    kind: str
    size_bytes: int
    build_s: float


def default_out(source: Path) -> Path:
    """``report.html`` inside a run folder, ``STORE.html`` beside a store file."""
    return source / "report.html" if source.is_dir() else source.with_suffix(".html")


def write_report(source: Path, out: Path | None = None, spec: str | Path | None = None) -> ReportResult:
    """Write the report of ``source`` (a run folder or a store) to ``out`` (default: :func:`default_out`);
    ``spec`` is the problem spec of a solve folder (default: the catalog problem of the front's name).
    Raises :class:`SpecError` for an unreadable source, and when the page would pass
    :data:`MAX_REPORT_BYTES`."""
    start = time.perf_counter()
    source = Path(source)
    data = read_report_data(source, spec)
    counts = ", ".join(f"{v} {k}" for k, v in metadata(data).items())
    page = render(data, f"{data['kind']} report of {source.name}: {counts}", _engine_version()).encode()
    target = Path(out) if out is not None else default_out(source)
    if len(page) > MAX_REPORT_BYTES:
        raise SpecError(str(source), "<size>", len(page), f"the report would pass {MAX_REPORT_BYTES} bytes: "
                        "select fewer jobs or points")
    replace_atomically(target, lambda tmp: Path(tmp).write_bytes(page))
    return ReportResult(target, str(data["kind"]), len(page), time.perf_counter() - start)
