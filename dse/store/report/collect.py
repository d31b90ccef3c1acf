"""What a report shows, gathered into JSON-ready dictionaries from a run folder or a batch store.

* :func:`solve_data`: a ``dse solve --out`` folder (``front.json``, ``front.csv``):
  every front, baselines, certificates and error bands where present, and
  with the problem (a spec) each point's mapping, time and energy breakdown
  per device and link, and timeline; for a distributed run, who found each
  point (``found``: ``found by worker 2 (task 17)``);
* :func:`simulate_data`: a ``dse simulate --out`` folder (``summary.csv``,
  ``trace.csv``): the summary table, the timeline (a serving run's: its pools'
  iterations and its requests, from their first token's wait to their last token),
  DyPe's runs over time with the input phases;
* :func:`store_data`: a batch store: its jobs with their swept fields, every
  job's fronts and details.

Every function raises :class:`~dse.errors.SpecError` naming the file, field and
value it cannot read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.errors import DseError, GenomeError, SpecError
from dse.inputs import catalog
from dse.mapping.base import Breakdown, MappingProblem
from dse.pareto import FoundBy
from dse.runs.spec import build_problem, load_spec
from dse.sim.ux_bound import scope
from dse.store.database import jobs_frame, objective_columns, points_frame
from dse.store.trace import (
    SERVING_REQUEST_COLUMNS,
    Timeline,
    mapping_timeline,
    serving_timeline,
    simulation_timeline,
)
from dse.util.result_files import front_file
from dse.util.units import column_unit, in_output_units

if TYPE_CHECKING:
    import pandas as pd

#: Points whose mapping, breakdown and timeline are computed (distinct genomes, fronts in order).
MAX_DETAILED_POINTS = 250
#: Spans of a simulation timeline kept in a report, shared among its processes (the first in time).
MAX_REPORT_SPANS = 6000


def _clean(value: Any) -> Any:
    """``value`` with NaN and infinities as ``None`` and numpy scalars as Python ones (JSON-ready)."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _read_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(str(path), "<file>", path.name, f"cannot be read as JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("fronts"), list):
        raise SpecError(str(path), "fronts", None, "missing: not a front.json written by dse solve --out")
    return front_file(doc, str(path))


def _read_csv(path: Path) -> pd.DataFrame:
    import pandas as pd
    try:
        return pd.read_csv(path, keep_default_na=False, na_values={"start_ms": [""], "end_ms": [""]})
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SpecError(str(path), "<file>", path.name, f"cannot be read as CSV: {exc}") from None


def resolve_problem(name: str, spec: str | Path | None, recorded: str | None = None
                    ) -> tuple[MappingProblem | None, str]:
    """The problem a folder was solved for: from ``spec`` when given, else from the spec file ``front.json``
    ``recorded`` (when it is still there), else the catalog problem named ``name`` (when there is one);
    returns ``(problem or None, a note saying which)``. Raises :class:`SpecError` for a bad ``spec``."""
    if spec is not None:
        return build_problem(load_spec(spec)), f"mappings decoded with {spec}"
    if recorded and Path(recorded).is_file():
        try:
            return build_problem(load_spec(recorded)), f"mappings decoded with {recorded}"
        except DseError:
            pass  # the file changed since: fall back to the catalog
    if name in catalog.problems():
        try:
            return build_problem(load_spec(name)), f"mappings decoded with the catalog problem {name}"
        except DseError as exc:
            return None, f"the catalog problem {name} could not be built ({exc}); give --spec"
    return None, f"no spec named {name!r} in the catalog: give --spec SPEC to see mappings and schedules"


# --------------------------------------------------------------------------- a point's details


def breakdown(costs: Breakdown) -> list[dict[str, Any]]:
    """One row per device and per link of a decoded mapping's breakdown, in its display time unit and mJ:
    ``busy``, ``energy`` (what its ops or transfers spend, at the operating point the genome chose),
    ``idle_energy`` (a device's idle power over the time its family charges it), ``level`` (its clock,
    None for a device without DVFS or one that runs nothing) and ``spans`` (its ops or transfers). The
    rows' ``energy`` and ``idle_energy`` add up to the mapping's energy objective."""
    spans: dict[str, int] = {}
    for a in (*costs.ops, *costs.transfers):
        spans[a.where] = spans.get(a.where, 0) + 1
    mj = costs.millijoules
    rows = [{"resource": d.name, "kind": "device", "busy": costs.display_time(d.busy), "energy": mj(d.dynamic_energy),
             "idle_energy": mj(d.idle_energy), "level": d.level, "ops": d.ops, "energy_unit": "mJ",
             "spans": spans.get(d.name, 0)} for d in costs.devices]
    rows += [{"resource": link.name, "kind": "link", "busy": costs.display_time(link.busy), "energy": mj(link.energy),
              "idle_energy": 0.0, "level": None, "ops": 0, "energy_unit": "mJ", "spans": spans.get(link.name, 0)}
             for link in costs.links]
    return rows


def point_detail(problem: MappingProblem, genome: Sequence[int]) -> dict[str, Any]:
    """One point's mapping (op -> device rows), description, explanation, per-resource breakdown (what the
    energy is spent on: ``breakdown_per``) and timeline. Raises :class:`GenomeError` when the genome does
    not fit ``problem``."""
    x = problem.checked_genomes(np.asarray(genome, dtype=np.int64))[0]
    mapping = problem.decode(x)
    timeline = mapping_timeline(problem, x, mapping)
    costs = mapping.breakdown()
    detail: dict[str, Any] = {"describe": problem.describe(x), "mapping": [[op, dev] for op, dev in
                                                                          mapping.assignment().items()],
                              "explain": mapping.explain(), "timeline": None, "breakdown": [], "unit": "",
                              "breakdown_per": None}
    if costs is not None:
        detail.update(breakdown=breakdown(costs), unit=costs.display_time_unit, breakdown_per=costs.per)
    if timeline is not None:
        detail.update(timeline=timeline.to_dict())
    return _clean(detail)


# --------------------------------------------------------------------------- solve folders


def _bands(table: pd.DataFrame | None, columns: Sequence[str], source: str = "front.csv"
           ) -> list[dict[str, list[float]]]:
    """Per row of ``front.csv``: ``{column: [lo, hi]}`` for every objective with ``_lo``/``_hi`` columns;
    :class:`SpecError` naming ``source``, the column and row for a band that is no number."""
    import pandas as pd
    if table is None:
        return []
    present = [c for c in columns if f"{c}_lo" in table and f"{c}_hi" in table]
    for name in (f"{c}_{end}" for c in present for end in ("lo", "hi")):
        numbers = pd.to_numeric(table[name], errors="coerce")
        bad = table[name][numbers.isna() & table[name].notna() & (table[name].astype(str) != "")]
        if len(bad):
            raise SpecError(source, f"{name} (row {bad.index[0]})", bad.iloc[0], "must be a number")
    return [{c: [float(r[f"{c}_lo"]), float(r[f"{c}_hi"])] for c in present} for _, r in table.iterrows()]


def _found(point: Mapping[str, Any]) -> dict[str, str]:
    """``{"found": "found by worker 2 (task 17)"}`` for a point of a distributed run (its ``found_by``), what
    the page shows in its hover and detail; nothing for other points."""
    by = point.get("found_by")
    if not isinstance(by, Mapping):
        return {}
    return {"found": "found by " + FoundBy(str(by["worker"]), by.get("task")).describe()}


def solve_data(folder: Path, spec: str | Path | None = None) -> dict[str, Any]:
    """The report data of a ``dse solve --out`` folder; see the module docstring."""
    doc = _read_json(folder / "front.json")
    csv_path = folder / "front.csv"
    table = _read_csv(csv_path) if csv_path.is_file() else None
    fronts = doc["fronts"]
    name = str(doc.get("problem") or (fronts[0].get("problem") if fronts else "") or folder.name)
    recorded = doc.get("spec")
    problem, note = resolve_problem(name, spec, recorded if isinstance(recorded, str) else None)
    objectives: list[dict[str, Any]] = next((f["objectives"] for f in fronts if f.get("objectives")), [])
    bands = _bands(table, [o["column"] for o in objectives], str(csv_path))
    details: dict[str, Any] = {}
    notes = [note]
    row = 0
    out_fronts = []
    for f in fronts:
        points = []
        for p in f.get("points", []):
            key = " ".join(str(int(g)) for g in p.get("genome", []))
            if problem is not None and key not in details and len(details) < MAX_DETAILED_POINTS:
                try:
                    details[key] = point_detail(problem, p["genome"])
                except GenomeError as exc:
                    raise SpecError(str(folder / "front.json"), "fronts.points.genome", key[:40],
                                    f"does not fit the problem ({exc}): give the spec it was solved for") from None
            points.append({**p, "key": key, "bands": bands[row] if row < len(bands) else {}, **_found(p)})
            row += 1
        out_fronts.append({k: f.get(k) for k in ("solver", "status", "complete", "stats", "notes", "certificate")}
                          | {"points": points, "exact": bool(f.get("exact"))})
    if problem is not None and len(details) >= MAX_DETAILED_POINTS:
        notes.append(f"details computed for the first {MAX_DETAILED_POINTS} distinct mappings")
    baselines: dict[str, Any] = next((f["baselines"] for f in fronts if f.get("baselines")), {})
    return _clean({"kind": "solve", "title": f"{name}: Pareto fronts", "problem": name, "objectives": objectives,
                   "fronts": out_fronts, "baselines": [{"name": k, **v} for k, v in baselines.items()],
                   "details": details, "notes": notes,
                   "family": problem.family if problem is not None else None})


# --------------------------------------------------------------------------- simulate folders


def _phases(trace: pd.DataFrame) -> list[dict[str, Any]]:
    """DyPe's input phases: consecutive runs of the first policy with the same input name."""
    if "input_name" not in trace or "policy" not in trace:
        return []
    first = trace[(trace["policy"] == trace["policy"].iloc[0]) & (trace["kind"] == "run")]
    phases: list[dict[str, Any]] = []
    for _, r in first.iterrows():
        if phases and phases[-1]["name"] == str(r["input_name"]):
            phases[-1]["end"] = float(r["end_s"])
        else:
            phases.append({"name": str(r["input_name"]), "start": float(r["start_s"]), "end": float(r["end_s"])})
    return phases


def _windowed(timeline: Timeline) -> tuple[Timeline, str]:
    """At most :data:`MAX_REPORT_SPANS` spans, the first in time of each process; a note when cut."""
    groups = list(dict.fromkeys(s.group for s in timeline.spans))
    if len(timeline.spans) <= MAX_REPORT_SPANS or not groups:
        return timeline, ""
    share = MAX_REPORT_SPANS // len(groups)
    kept: list[Any] = []
    horizon = math.inf
    for g in groups:
        mine = sorted((s for s in timeline.spans if s.group == g), key=lambda s: s.start)[:share]
        kept += mine
        horizon = min(horizon, mine[-1].end if mine else math.inf)
    spans = tuple(s for s in kept if s.start < horizon)
    instants = tuple(s for s in timeline.instants if s.start < horizon)
    note = f"timeline: the first {horizon:.4g} {timeline.unit} (trace.json has all of it)"
    return Timeline(timeline.title, timeline.unit, timeline.us_per_unit, spans, instants, timeline.tracks), note


def _floor(summary: pd.DataFrame, path: Path) -> dict[str, Any] | None:
    """The UXCost floor of a multimodel simulation's summary (its ``uxcost_floor`` columns, written by
    :mod:`dse.runtime.xr_scenario`) with its scope; None for a summary without one. Raises
    :class:`SpecError` naming ``path`` and the column for a floor that is not a number."""
    if not {"scheduler", "uxcost_floor", "uxcost_floor_kept", "whole_accelerators"} <= set(summary) or summary.empty:
        return None
    values = {}
    for column in ("uxcost_floor", "uxcost_floor_kept"):
        try:
            values[column] = float(summary[column].iloc[0])
        except (TypeError, ValueError):
            raise SpecError(str(path), column, summary[column].iloc[0], "is not a number") from None
    whole = summary["whole_accelerators"].astype(str).str.lower() == "true"
    uncovered = [str(name) for name in summary.loc[~whole, "scheduler"]]
    return {"uxcost": values["uxcost_floor"], "uxcost_kept": values["uxcost_floor_kept"], "scope": scope(uncovered),
            "uncovered": uncovered}


def _floor_note(floor: Mapping[str, Any]) -> str:
    """One line on the floor: its value(s) and scope."""
    value, kept = floor["uxcost"], floor["uxcost_kept"]
    if not math.isfinite(kept):
        also = " (none misses only the frames that cannot make their deadlines alone: the frames do not fit)"
    elif kept != value:
        also = f" ({kept:.5g} for schedules that miss only the frames that cannot make their deadlines alone)"
    else:
        also = ""
    return f"UXCost floor {value:.5g}{also}, {floor['scope']}"


def simulate_data(folder: Path) -> dict[str, Any]:
    """The report data of a ``dse simulate --out`` folder; see the module docstring. ``summary.units``: each
    column's unit, read from its name (``""`` for a count, a ratio, a score or a label); ``floor``: a
    multimodel run's UXCost floor with its scope (:func:`_floor`), also one of the ``notes``."""
    written = _read_csv(folder / "summary.csv")
    summary = in_output_units(written)  # mJ per item, as a solve folder's
    floor = _floor(written, folder / "summary.csv")
    notes: list[str] = [_floor_note(floor)] if floor is not None else []
    timeline = None
    phases: list[dict[str, Any]] = []
    kind = "simulation"
    if (folder / "trace.csv").is_file():
        trace = _read_csv(folder / "trace.csv")
        try:
            full = simulation_timeline(trace, folder.name)
        except ValueError as exc:
            raise SpecError(str(folder / "trace.csv"), "<columns>", None, str(exc)) from None
        kind = "stream" if "policy" in trace else "frames"
        if SERVING_REQUEST_COLUMNS <= set(trace.columns):
            kind = "serving"
            if (folder / "iterations.csv").is_file():  # the pools' iterations above their requests
                pools = serving_timeline(_read_csv(folder / "iterations.csv"), folder.name)
                full = Timeline(full.title, full.unit, full.us_per_unit, pools.spans + full.spans,
                                tracks=pools.tracks + full.tracks)
        phases = _phases(trace)
        cut, note = _windowed(full)
        timeline = cut.to_dict()
        notes += [note] if note else []
    return _clean({"kind": "simulate", "sim": kind, "title": f"{folder.name}: simulation",
                   "summary": {"columns": [str(c) for c in summary.columns],
                               "units": [column_unit(c) for c in summary.columns],
                               "rows": summary.astype(object).values.tolist()},
                   "floor": floor, "timeline": timeline, "phases": phases, "notes": notes})


# --------------------------------------------------------------------------- stores


def swept_columns(jobs: pd.DataFrame) -> list[str]:
    """The swept-field columns of a jobs table (between ``status`` and ``solvers``)."""
    columns = list(jobs.columns)
    return columns[columns.index("status") + 1: columns.index("solvers")]


def store_data(store: Path) -> dict[str, Any]:
    """The report data of a batch store; see the module docstring."""
    import pandas as pd
    jobs = jobs_frame(store)
    points = points_frame(store)
    swept = swept_columns(jobs)
    objectives = [{"column": c, "sense": s} for c, s in objective_columns(store)]
    by_job: dict[str, list[dict[str, Any]]] = {}
    columns = [o["column"] for o in objectives]
    for record in points.to_dict("records"):
        by_job.setdefault(str(record["job"]), []).append(
            {"solver": record.get("solver"), "front_status": record.get("front_status"),
             "proven": bool(record.get("proven")), "feasible": bool(record.get("feasible")),
             "objectives": {c: record.get(c) for c in columns if c in record},
             "genome": record.get("genome", "")})
    kinds = {c: "number" if pd.api.types.is_numeric_dtype(jobs[c]) else "text" for c in swept}
    return _clean({"kind": "store", "title": f"{store.name}: {len(jobs)} jobs", "objectives": objectives,
                   "swept": swept, "swept_kinds": kinds,
                   "jobs": {"columns": [str(c) for c in jobs.columns], "rows": jobs.astype(object).values.tolist()},
                   "points": by_job, "notes": []})


def read_report_data(path: Path, spec: str | Path | None = None) -> dict[str, Any]:
    """The report data of ``path``: a solve folder (``front.json``), a simulate folder (``summary.csv``)
    or a batch store (a file); :class:`SpecError` naming ``PATH`` for anything else."""
    if path.is_file():
        return store_data(path)
    if path.is_dir() and (path / "front.json").is_file():
        return solve_data(path, spec)
    if path.is_dir() and (path / "summary.csv").is_file():
        return simulate_data(path)
    raise SpecError("command line", "PATH", str(path), "is not a dse solve or dse simulate output folder (no "
                    "front.json or summary.csv) nor a batch store file")


def metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    """What the page says about its contents (kind, counts), for the title block."""
    if data["kind"] == "solve":
        return {"fronts": len(data["fronts"]), "points": sum(len(f["points"]) for f in data["fronts"])}
    if data["kind"] == "store":
        return {"jobs": len(data["jobs"]["rows"])}
    return {"rows": len(data["summary"]["rows"])}
