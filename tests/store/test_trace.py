"""Chrome trace event files (Perfetto, chrome://tracing) from schedules, simulations and batch stores.

``check_chrome_trace`` writes the format's rules out independently of :mod:`dse.store.trace` (the Trace
Event Format document: a ``traceEvents`` list; every event names ``name``, ``ph``, ``pid``, ``tid``;
complete events ``X`` carry ``ts`` and ``dur`` in microseconds; instants ``i`` a scope ``s``; metadata
``M`` names processes and threads); on top, what Perfetto needs to draw tracks cleanly: timestamps in
order on each track, and no two events overlapping on a device's track.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dse.cli import main
from dse.cost import CostTables
from dse.mapping.dag import DagProblem
from dse.store.trace import Span, Timeline, chrome_trace, jobs_timeline, mapping_timeline

PHASES = {"X", "i", "I", "M", "B", "E", "C"}
METADATA = {"process_name", "thread_name", "thread_sort_index", "process_sort_index"}


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def check_chrome_trace(path: Path) -> dict:
    """Load ``path`` and assert the trace event format's rules; returns the document."""
    doc = json.loads(path.read_text(), parse_constant=_reject_constant)
    assert isinstance(doc, dict) and isinstance(doc["traceEvents"], list) and doc["traceEvents"]
    names: dict[tuple[int, int], str] = {}
    timed: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for e in doc["traceEvents"]:
        assert isinstance(e["name"], str) and e["ph"] in PHASES, e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "M":
            assert e["name"] in METADATA and isinstance(e["args"], dict), e
            if e["name"] == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        assert isinstance(e["ts"], int | float) and math.isfinite(e["ts"]) and e["ts"] >= 0, e
        if e["ph"] == "X":
            assert isinstance(e["dur"], int | float) and math.isfinite(e["dur"]) and e["dur"] >= 0, e
        if e["ph"] == "i":
            assert e["s"] in ("g", "p", "t"), e
        assert isinstance(e.get("args", {}), dict)
        timed[(e["pid"], e["tid"])].append(e)
    for track, events in timed.items():
        assert track in names, f"track {track} has no thread_name"
        stamps = [e["ts"] for e in events]
        assert stamps == sorted(stamps), f"timestamps out of order on {names[track]}"
        name = names[track]
        if name.startswith(("link", "host link")) or " #" in name or name == "dropped":
            continue
        spans = [e for e in events if e["ph"] == "X"]
        for a, b in zip(spans, spans[1:], strict=False):
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-6, f"{a['name']} and {b['name']} overlap on {name}"
    return doc


def _complete(doc: dict) -> list[dict]:
    return [e for e in doc["traceEvents"] if e["ph"] == "X"]


def test_dag_trace_by_hand(tmp_path) -> None:
    """a on d0 feeds b on d1 and c on d2, every task 10 ns; d0 sends in 5, 4 bytes at 3 ns/byte to d1 and
    2 ns/byte to d2. TF send rule by hand (sends in device order): a->b arrives at 10 + 12 + 5 = 27,
    a->c at 10 + 8 + 2 x 5 = 28; b runs 27-37 and c 28-38 (1 ns = 0.001 us)."""
    rate = np.zeros((3, 3))
    rate[0, 1], rate[0, 2] = 3.0, 2.0
    tables = CostTables(
        op_names=("a", "b", "c"), device_names=("d0", "d1", "d2"), time=np.full((3, 3), 10, dtype=np.int64),
        energy=np.full((3, 3), 7, dtype=np.int64), mem=np.zeros((3, 3), dtype=np.int64),
        allowed=np.ones((3, 3), dtype=bool), edges=np.array([[0, 1], [0, 2]], dtype=np.int64),
        edge_bytes=np.full(2, 4, dtype=np.int64), idle_power_mw=np.zeros(3, dtype=np.int64),
        mem_capacity=np.ones(3, dtype=np.int64), send_time=np.array([5, 0, 0], dtype=np.int64),
        time_unit="ns", link_time_per_byte=rate)
    problem = DagProblem(tables, ("makespan",), memory=False, tensor_per_device=True)
    x = problem.genome([0, 1, 2])
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(chrome_trace(mapping_timeline(problem, x))))
    events = {e["name"]: e for e in _complete(check_chrome_trace(path))}
    assert events["b"]["ts"] == pytest.approx(0.027) and events["c"]["ts"] == pytest.approx(0.028)
    assert events["b"]["dur"] == pytest.approx(0.010) and events["a"]["args"]["energy_pJ"] == 7
    assert events["a->b"]["dur"] == pytest.approx(0.017) and events["a->c"]["dur"] == pytest.approx(0.018)
    threads = {e["args"]["name"] for e in check_chrome_trace(path)["traceEvents"] if e["name"] == "thread_name"}
    assert threads == {"d0", "d1", "d2", "link d0->d1", "link d0->d2"}


def test_overlapping_spans_on_one_track_go_to_a_second_lane() -> None:
    spans = (Span("t1", "link a->b", 0, 10, "link"), Span("t2", "link a->b", 5, 12, "link"),
             Span("t3", "link a->b", 10, 11, "link"))
    doc = chrome_trace(Timeline("x", "us", 1.0, spans))
    lanes = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    placed = {e["name"]: lanes[e["tid"]] for e in _complete(doc)}
    assert placed == {"t1": "link a->b", "t2": "link a->b #2", "t3": "link a->b"}


def test_solve_writes_the_trace_of_a_dag_point(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert main(["solve", "topcuoglu2002", "--solver", "cpsat", "--time-limit", "10", "--out", str(out),
                 "--quiet", "--point", "0"]) == 0
    assert "trace.json (row 0)" in capsys.readouterr().out
    doc = check_chrome_trace(out / "trace.json")
    tasks = [e for e in _complete(doc) if e["cat"] == "device"]
    assert sorted(e["name"] for e in tasks) == [f"n{k}" for k in sorted(range(1, 11), key=str)]
    front = pd.read_csv(out / "front.csv")
    # the last task ends at the point's makespan (tu read as 1 ns, so 1 tu = 0.001 us)
    assert max(e["ts"] + e["dur"] for e in tasks) == pytest.approx(front["makespan_tu"].iloc[0] * 1e-3)
    assert main(["solve", "topcuoglu2002", "--solver", "cpsat", "--out", str(out), "--quiet",
                 "--point", "7"]) == 2
    assert "--point" in capsys.readouterr().err


def test_dream_simulation_trace(simulated) -> None:
    out = simulated  # dse simulate xr_vr_gaming (tests/store/conftest.py)
    doc = check_chrome_trace(out / "trace.json")
    table = pd.read_csv(out / "trace.csv", keep_default_na=False)
    executed = table[table["accelerator"] != ""]
    assert len(_complete(doc)) == len(executed)  # one event per executed block, none lost
    processes = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert processes == set(table["scheduler"])
    some = _complete(doc)[0]
    assert {"model", "frame", "block", "energy_mJ"} <= set(some["args"])


def test_dype_stream_trace(tmp_path) -> None:
    out = tmp_path / "stream"
    assert main(["simulate", "dype_phases", "--out", str(out), "--quiet"]) == 0
    doc = check_chrome_trace(out / "trace.json")
    table = pd.read_csv(out / "trace.csv")
    runs = [e for e in _complete(doc) if e["name"] != "switch"]
    assert len(runs) == int((table["kind"] == "run").sum())
    assert {"input", "regime", "items", "energy_j"} <= set(runs[0]["args"])
    assert {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"} == set(table["policy"])


def test_batch_job_timings_trace(store, tmp_path, capsys) -> None:
    out = tmp_path / "jobs.json"
    assert main(["results", str(store), "--trace", "--out", str(out)]) == 0
    doc = check_chrome_trace(out)
    assert len(_complete(doc)) == 6
    assert {e["args"]["status"] for e in _complete(doc)} == {"done"}
    assert len(jobs_timeline(store, []).spans) == 0
