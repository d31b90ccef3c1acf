"""Timelines of what ran where, and their export to the Chrome trace event format (Perfetto, chrome://tracing).

A :class:`Timeline` is a list of :class:`Span` (a name on a track between two
times, with arguments) and instants (a drop, a switch), in one display unit.
It is built from

* a decoded mapping (:func:`mapping_timeline`): its breakdown's ops per device
  and transfers per link with their energies (a ``dag`` or ``pipeline``
  schedule, a ``split``'s parts per device and host link), a ``multimodel``
  genome's simulated frames;
* a ``dse simulate`` trace table (:func:`simulation_timeline`): DREAM's frames
  per accelerator, DyPe's runs and switches per policy, the serving simulator's
  iterations per pool (:func:`serving_timeline`);
* a ``dse coexec`` report (:func:`coexec_timeline`) and a batch store's job
  timings (:func:`jobs_timeline`);
* a distributed solve's tasks (:func:`run_timeline`): one track per worker
  with a span per task, and the driver's own work.

:func:`chrome_trace` turns a timeline into the trace event document: one
process per group (the devices, a scheduler, a policy), one thread per track
(a device, a link), complete events (``ph: "X"``) with microsecond ``ts`` and
``dur`` and the op, item or frame and energy as ``args``, sorted by time per
track. Spans that overlap on a track (two transfers sharing a link) go to a
second lane of that track (``link a->b #2``); spans on a device never overlap.
:func:`combined_trace` puts several such documents in one (a point's
timeline and the run that found it), each in processes of its own.

Example::

    timeline = mapping_timeline(problem, genome)
    write_trace(chrome_trace(timeline), "trace.json")
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.errors import SpecError
from dse.pareto import NO_RESULT, DriverTimings
from dse.sim.realtime import TRACE_COLUMNS as FRAME_COLUMNS
from dse.store.database import UNREADABLE, checked_job, connect_readonly
from dse.util.files import write_text

if TYPE_CHECKING:
    import pandas as pd

    from dse.mapping.base import DecodedMapping, MappingProblem

#: Trace rows of a multimodel simulation kept for a point's frame timeline (the first ones in time).
MAX_FRAME_SPANS = 4000


@dataclass(frozen=True)
class Span:
    """``name`` on ``track`` (of process ``group``) from ``start`` to ``end`` (display unit); ``kind`` is
    ``device``, ``link`` or ``other``; ``args`` are shown on selection (op, item or frame, energy)."""

    name: str
    track: str
    start: float
    end: float
    kind: str = "device"
    group: str = "devices"
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Timeline:
    """Spans and instants in one display ``unit``; ``us_per_unit`` converts to trace microseconds.
    ``tracks`` orders the tracks (devices first, then links); ``title`` names the whole."""

    title: str
    unit: str
    us_per_unit: float
    spans: tuple[Span, ...]
    instants: tuple[Span, ...] = ()
    tracks: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (the report draws it), spans that overlap on a track moved to a second lane
        of it as in :func:`chrome_trace`."""
        spans = [_span_dict(s) | {"track": lane} for s, lane in _lanes(self.spans)]
        return {"title": self.title, "unit": self.unit, "tracks": list(self.tracks or _track_order(self.spans)),
                "spans": spans, "instants": [_span_dict(s) for s in self.instants]}


def _span_dict(s: Span) -> dict[str, Any]:
    return {"name": s.name, "track": s.track, "start": s.start, "end": s.end, "kind": s.kind, "group": s.group,
            "args": {k: _plain(v) for k, v in s.args.items()}}


def _plain(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _track_order(spans: Sequence[Span]) -> list[str]:
    devices = [s.track for s in spans if s.kind != "link"]
    links = [s.track for s in spans if s.kind == "link"]
    return list(dict.fromkeys(devices + links))


# --------------------------------------------------------------------------- builders


def mapping_timeline(problem: MappingProblem, genome: Sequence[int] | np.ndarray,
                     mapping: DecodedMapping | None = None) -> Timeline | None:
    """The timeline of one genome of ``problem`` (``mapping``: its decoded mapping, when already at hand):
    the ops per device and the transfers per link of its breakdown (:meth:`DecodedMapping.breakdown`),
    each span with its energy there at the operating point the genome chose, or a multimodel genome's
    simulated frames; for a family without a breakdown its schedule without energies; ``None`` when the
    mapping has none of these."""
    x = np.asarray(genome, dtype=np.int64)
    mapping = problem.decode(x) if mapping is None else mapping
    t = problem.tables
    factor, unit = float(t.display_per_time_unit), str(t.display_time_unit)
    us = float(t.seconds_per_time_unit) * 1e6 / factor
    title = f"{problem.name}: " + problem.describe([int(g) for g in x])
    result = getattr(mapping, "result", None)
    if result is not None and hasattr(problem, "run"):
        return _frames_timeline(problem, x, title)
    costs = mapping.breakdown()
    if costs is None:
        spans = [Span(op, dev, start * factor, end * factor, "device", "devices", {"op": op, "device": dev})
                 for op, dev, start, end in mapping.schedule]
    else:
        energy = f"energy_{costs.energy_unit}"
        spans = [Span(a.name, a.where, costs.display_time(a.start), costs.display_time(a.finish), "device", "devices",
                      {"op": a.name, "device": a.where, energy: a.energy}) for a in costs.ops]
        spans += [Span(a.name, a.where, costs.display_time(a.start), costs.display_time(a.finish), "link", "devices",
                       {"edge": a.name, "link": a.where.removeprefix("link "), energy: a.energy})
                  for a in costs.transfers]
    if not spans:
        return None
    return Timeline(title, unit, us, tuple(spans), tracks=tuple(_track_order(spans)))


def _frames_timeline(problem: MappingProblem, x: np.ndarray, title: str) -> Timeline:
    """A multimodel genome's simulated frames (the search window), one track per accelerator."""
    from_rows = problem.run(x, trace=True).rows  # type: ignore[attr-defined]
    rows = [dict(zip(FRAME_COLUMNS, r, strict=False)) for r in from_rows]
    return _realtime(rows, title, group_key=None, limit=MAX_FRAME_SPANS)


def _realtime(rows: Sequence[Mapping[str, Any]], title: str, group_key: str | None,
              limit: int | None = None) -> Timeline:
    """DREAM rows (``model, frame, block, accelerator, start_ms, end_ms, ...``) as spans per accelerator
    lane, drops (no accelerator) as instants on a ``dropped`` track; ``limit``: the first rows only."""
    ordered = sorted(rows, key=lambda r: float(r["start_ms"]))[:limit]
    spans, instants = [], []
    for r in ordered:
        group = str(r[group_key]) if group_key else "accelerators"
        args = {"model": str(r["model"]), "frame": int(r["frame"]), "block": int(r["block"]),
                "energy_mJ": float(r["energy_mj"]), "deadline_ms": float(r["deadline_ms"])}
        acc = r.get("accelerator")
        if acc is None or (isinstance(acc, float) and not np.isfinite(acc)) or str(acc) == "":
            instants.append(Span(f"{r['model']} frame {int(r['frame'])} dropped", "dropped", float(r["end_ms"]),
                                 float(r["end_ms"]), "other", group, args))
            continue
        spans.append(Span(f"{r['model']} #{int(r['frame'])} b{int(r['block'])}", str(acc), float(r["start_ms"]),
                          float(r["end_ms"]), "device", group, args))
    return Timeline(title, "ms", 1e3, tuple(spans), tuple(instants), tuple(sorted({s.track for s in spans})))


def simulation_timeline(trace: pd.DataFrame, title: str = "simulation") -> Timeline:
    """The timeline of a ``dse simulate`` trace table: DREAM's (columns ``scheduler, accelerator, start_ms,
    ...``) with one process per scheduler and one track per accelerator (or sub-array group), DyPe's
    (``policy, kind, start_s, ...``) with one process per policy, runs and switches on one track, the
    serving simulator's iterations (:func:`serving_timeline`) or its requests
    (:func:`serving_requests_timeline`).
    Raises ``ValueError`` for a table with neither set of columns."""
    columns = set(trace.columns)
    if SERVING_REQUEST_COLUMNS <= columns:
        return serving_requests_timeline(trace, title)
    if {"scheduler", "accelerator", "start_ms", "end_ms"} <= columns:
        return _realtime(trace.to_dict("records"), title, group_key="scheduler")
    if {"pool", "replica", "start_s", "end_s", "prefills", "decodes"} <= columns:
        return serving_timeline(trace, title)
    if {"policy", "kind", "start_s", "end_s"} <= columns:
        spans, instants = [], []
        for r in trace.to_dict("records"):
            args = {k: _plain(r[k]) for k in ("input", "input_name", "regime", "config", "items", "energy_j",
                                               "optimal", "feasible") if k in r}
            start, end = float(r["start_s"]), float(r["end_s"])
            if r["kind"] == "switch":
                instants.append(Span("switch", "platform", start, start, "other", str(r["policy"]), args))
                if end <= start:
                    continue
                name = "switch"
            else:
                name = f"input {r['input']} ({r.get('input_name', '')})"
            spans.append(Span(name, "platform", start, end, "device", str(r["policy"]), args))
        return Timeline(title, "s", 1e6, tuple(spans), tuple(instants), ("platform",))
    raise ValueError(f"not a simulation trace: columns {', '.join(map(str, trace.columns))}")


#: The columns of the serving simulator's per-request table (``trace.csv`` of a serving ``dse simulate``).
SERVING_REQUEST_COLUMNS = frozenset({"request", "arrival_s", "ttft_s", "finish_s", "decode_pool"})


def _seconds(value: Any) -> float:
    """A table cell as seconds: NaN for an empty one (a request with no first or last token); raises
    ``ValueError`` for text that is no number."""
    return math.nan if value is None or (isinstance(value, str) and not value.strip()) else float(value)


def serving_requests_timeline(requests: pd.DataFrame, title: str = "requests") -> Timeline:
    """The serving simulator's requests (``trace.csv``: ``request, arrival_s, ttft_s, finish_s, decode_pool,
    ...``) on one track per pool that decoded them: per request a span from its arrival to its first token
    (``kind`` other) and one from there to its last (device), in seconds; a request that did not finish
    keeps its first span only (or none, without a first token)."""
    spans = []
    for r in requests.to_dict("records"):
        arrival, ttft, finish = (_seconds(r[k]) for k in ("arrival_s", "ttft_s", "finish_s"))
        track = f"requests on {r['decode_pool']}"
        args = {k: _plain(r[k]) for k in ("input_len", "output_len", "ttft_s", "tpot_s", "e2e_s", "preemptions")
                if k in r}
        if math.isfinite(ttft):
            spans.append(Span(f"request {int(r['request'])}: to its first token", track, arrival, arrival + ttft,
                              "other", "requests", args))
            if math.isfinite(finish) and finish > arrival + ttft:
                spans.append(Span(f"request {int(r['request'])}: decoding", track, arrival + ttft, finish, "device",
                                  "requests", args))
    return Timeline(title, "s", 1e6, tuple(spans), tracks=tuple(dict.fromkeys(s.track for s in spans)))


def serving_timeline(iterations: pd.DataFrame, title: str = "serving") -> Timeline:
    """The serving simulator's iterations (``iterations.csv``: ``pool, replica, start_s, end_s, prefills,
    decodes, ...``) as one track per pool (its replicas' iterations, overlapping, on lanes of it), each
    span named by its prefills and decodes, in seconds."""
    spans = []
    for r in iterations.to_dict("records"):
        args = {k: _plain(r[k]) for k in ("replica", "prefill_tokens", "prefills", "decodes", "kv_tokens") if k in r}
        spans.append(Span(f"prefill {int(r['prefills'])} + decode {int(r['decodes'])}", str(r["pool"]),
                          float(r["start_s"]), float(r["end_s"]), "device", "pools", args))
    return Timeline(title, "s", 1e6, tuple(spans), tracks=tuple(dict.fromkeys(str(p) for p in iterations["pool"])))


def coexec_timeline(report: Mapping[str, Any]) -> Timeline:
    """A ``dse coexec`` report (``report.json``): every device's part, all started at time 0, measured."""
    spans = tuple(Span(f"rows {d['row_range'][0]}:{d['row_range'][1]}", str(d["name"]), 0.0,
                       float(d["measured_s"]) * 1e3, "device", "coexec",
                       {"rows": int(d["rows"]), "predicted_ms": float(d["predicted_s"]) * 1e3})
                  for d in report.get("devices", []) if int(d.get("rows", 0)) > 0)
    title = f"{report.get('kernel', 'gemm')} {report.get('m')}x{report.get('n')}x{report.get('k')}"
    return Timeline(title, "ms", 1e3, spans, tracks=tuple(s.track for s in spans))


def jobs_timeline(store: str | Path, job_ids: Sequence[str] | None = None) -> Timeline:
    """The jobs of a batch store (those of ``job_ids`` when given) on one track per worker: each from its
    finish time less its wall time, named by its swept fields, with its status as an argument. Raises
    :class:`SpecError` for a file that is not a store."""
    with closing(connect_readonly(store, "STORE")) as conn:
        try:
            rows = conn.execute("SELECT job_id, status, swept, wall_s, worker, finished_at FROM jobs "
                                "ORDER BY finished_at").fetchall()
        except UNREADABLE as exc:
            raise SpecError(str(store), "jobs", None, f"cannot be read: {exc}") from None
    if job_ids is not None:
        wanted = set(job_ids)
        rows = [r for r in rows if r[0] in wanted]
    records = [checked_job({"job_id": j, "status": st, "swept": sw or "{}", "wall_s": w, "finished_at": f},
                           str(store)) for j, st, sw, w, _, f in rows]
    starts = [r.finished_at - (r.wall_s or 0.0) for r in records]
    origin = min(starts, default=0.0)
    spans = []
    for (job, status, _, wall, worker, _), record, start in zip(rows, records, starts, strict=True):
        fields = record.swept
        name = ", ".join(f"{k}={v}" for k, v in fields.items()) or job[:12]
        spans.append(Span(name, str(worker or "worker"), start - origin, start - origin + float(wall or 0.0),
                          "device", "batch", {"job": job, "status": status, **{k: _plain(v) if not isinstance(
                              v, list | dict) else json.dumps(v) for k, v in fields.items()}}))
    return Timeline(f"batch store {Path(store).name}", "s", 1e6, tuple(spans))


#: The track of a distributed run's driver (:func:`run_timeline`).
DRIVER_TRACK = "driver"


def run_timeline(title: str, timings: DriverTimings) -> Timeline:
    """A distributed run's tasks (``timings.tasks``) in seconds since its driver started: the driver's track
    first (its work between two waits, named by the results it took), then one track per worker (``worker 1``,
    ...) with a span per task named by its number and what it did, its outcome and the Dask worker as
    arguments, then the tasks whose result never came back (:data:`~dse.pareto.NO_RESULT`: cancelled,
    failed), from submission to cancellation on the driver's clock."""
    spans = [Span(f"took {n} result{'s' if n != 1 else ''}", DRIVER_TRACK, start, end, "other", title,
                  {"results": n}) for start, end, n in timings.driver_busy]
    spans += [Span(f"task {t.task}: {t.name}", t.worker, t.start_s, t.end_s,
                   "other" if t.worker == NO_RESULT else "device", title,
                   {"task": t.task, "outcome": t.outcome, **({"dask_worker": t.dask_worker} if t.dask_worker else {})})
              for t in timings.tasks]
    workers = sorted({t.worker for t in timings.tasks} - {NO_RESULT}, key=lambda w: (len(w), w))
    lost = [NO_RESULT] if any(t.worker == NO_RESULT for t in timings.tasks) else []
    return Timeline(title, "s", 1e6, tuple(spans), tracks=(DRIVER_TRACK, *workers, *lost))


# --------------------------------------------------------------------------- Chrome trace format


def _lanes(spans: Sequence[Span]) -> list[tuple[Span, str]]:
    """Each span (in the given order) with the track lane it goes on: its own track, or ``track #n`` when it
    overlaps an earlier span on that track (lanes filled first-fit in time, so chained spans share one)."""
    ends: dict[str, list[float]] = {}
    lane_of: dict[int, str] = {}
    for k in sorted(range(len(spans)), key=lambda k: (spans[k].group, spans[k].track, spans[k].start, spans[k].end)):
        s = spans[k]
        lanes = ends.setdefault(f"{s.group}\0{s.track}", [])
        for n, end in enumerate(lanes):
            if s.start >= end - 1e-12:
                lanes[n] = s.end
                lane_of[k] = s.track if n == 0 else f"{s.track} #{n + 1}"
                break
        else:
            lanes.append(s.end)
            lane_of[k] = s.track if len(lanes) == 1 else f"{s.track} #{len(lanes)}"
    return [(s, lane_of[k]) for k, s in enumerate(spans)]


def chrome_trace(timeline: Timeline) -> dict[str, Any]:
    """The Chrome trace event document of ``timeline``: ``traceEvents`` with process and thread name
    metadata (``ph: "M"``), complete events (``ph: "X"``, ``ts`` and ``dur`` in microseconds) sorted by
    time on each thread, and thread-scoped instants (``ph: "i"``); ``displayTimeUnit`` and the title in
    ``otherData``."""
    us = timeline.us_per_unit
    order = list(timeline.tracks) or _track_order(timeline.spans)
    placed = _lanes(timeline.spans)
    groups = list(dict.fromkeys([s.group for s in timeline.spans] + [s.group for s in timeline.instants]))
    pid = {g: k + 1 for k, g in enumerate(groups)}
    threads: dict[tuple[str, str], int] = {}

    def rank(lane: str) -> tuple[int, str]:
        base = lane.split(" #")[0]
        return (order.index(base) if base in order else len(order), lane)

    lanes = sorted({(s.group, lane) for s, lane in placed} | {(s.group, s.track) for s in timeline.instants},
                   key=lambda gl: (pid[gl[0]], rank(gl[1])))
    events: list[dict[str, Any]] = []
    for g in groups:
        events.append({"name": "process_name", "ph": "M", "pid": pid[g], "tid": 0, "args": {"name": g}})
    for k, (g, lane) in enumerate(lanes):
        threads[(g, lane)] = k + 1
        events.append({"name": "thread_name", "ph": "M", "pid": pid[g], "tid": k + 1, "args": {"name": lane}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": pid[g], "tid": k + 1, "args": {"sort_index": k}})
    timed = []
    for s, lane in placed:
        ts, end = round(s.start * us, 6), round(s.end * us, 6)  # ts + dur is the rounded end exactly
        timed.append({"name": s.name, "cat": s.kind, "ph": "X", "ts": ts, "dur": max(end - ts, 0.0), "pid": pid[s.group],
                      "tid": threads[(s.group, lane)], "args": {k: _plain(v) for k, v in s.args.items()}})
    for s in timeline.instants:
        timed.append({"name": s.name, "cat": s.kind, "ph": "i", "s": "t", "ts": round(s.start * us, 6),
                      "pid": pid[s.group], "tid": threads[(s.group, s.track)],
                      "args": {k: _plain(v) for k, v in s.args.items()}})
    timed.sort(key=lambda e: (e["pid"], e["tid"], e["ts"]))
    return {"traceEvents": events + timed, "displayTimeUnit": "ms",
            "otherData": {"title": timeline.title, "unit": timeline.unit, "us_per_unit": us}}


def combined_trace(docs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One Chrome trace document holding every one of ``docs`` (from :func:`chrome_trace`), each in processes
    of its own (their ids shifted past the previous documents'); ``otherData`` is the first one's, with every
    document's title under ``titles``. A single document is returned as it is."""
    if len(docs) == 1:
        return dict(docs[0])
    events: list[dict[str, Any]] = []
    shift = 0
    for doc in docs:
        events += [{**e, "pid": e["pid"] + shift} for e in doc["traceEvents"]]
        shift = max((e["pid"] for e in events), default=shift)
    other = dict(docs[0]["otherData"]) if docs else {}
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": other | {"titles": [d["otherData"]["title"] for d in docs]}}


def _strict_json(value: Any) -> Any:
    """``value`` with NaN and infinities as ``None``: what JSON can hold (``NaN`` is no JSON, and trace
    viewers refuse a file that holds it)."""
    if isinstance(value, Mapping):
        return {k: _strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict_json(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if np.isfinite(value) else None
    return value


def write_trace(doc: Mapping[str, Any], path: str | Path) -> Path:
    """Write a trace document as strict JSON (a non-finite number as ``null``, never ``NaN``) to ``path``
    through :func:`dse.util.files.write_text` (a device node, a FIFO, a read-only file refused; written whole
    or not at all); returns the path."""
    target = Path(path)
    try:  # json's C encoder on the document as it is: the same text when it holds only finite plain numbers
        text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):  # a NaN or an infinity, a numpy float that is no float, another Mapping
        text = json.dumps(_strict_json(doc), separators=(",", ":"), allow_nan=False)
    write_text(target, text)
    return target


def write_simulation_trace(folder: str | Path) -> Path | None:
    """``folder/trace.json`` from the ``iterations.csv`` a serving simulation wrote there, else from the
    ``trace.csv`` a ``dse simulate`` wrote; returns its path, or ``None`` when the folder has neither."""
    import pandas as pd

    folder = Path(folder)
    source = folder / "iterations.csv"
    if source.is_file():
        return write_trace(chrome_trace(serving_timeline(pd.read_csv(source), folder.name)), folder / "trace.json")
    source = folder / "trace.csv"
    if not source.is_file():
        return None
    table = pd.read_csv(source, keep_default_na=False, na_values={"start_ms": [""], "end_ms": [""]})
    return write_trace(chrome_trace(simulation_timeline(table, folder.name)), folder / "trace.json")
