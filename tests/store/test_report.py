"""``dse report``: one self-contained HTML page of a solve folder, a simulate folder or a batch store.

The page's data (the JSON inside it) is read back and checked against the run's own files; the
browser test (test_report_browser.py) checks what a browser draws from it. The runs reported on are
tests/store/conftest.py's, shared with those tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from dse.cli import main
from dse.store.report import MAX_REPORT_BYTES


def page_data(path: Path) -> dict:
    """The JSON data embedded in a report page, read as a browser reads it: the element ends at the first
    ``</script`` (whatever the data holds)."""
    text = path.read_text()
    found = re.search(r'<script id="report-data" type="application/json">(.*?)</script', text, re.S | re.I)
    assert found, "no report data in the page"
    return json.loads(found.group(1))  # as the page's script reads it: JSON.parse of the element's text


def assert_self_contained(path: Path) -> None:
    """Under 5 MB and nothing fetched: no external scripts, styles, images or frames."""
    text = path.read_text()
    assert path.stat().st_size < MAX_REPORT_BYTES
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text), "the page loads something"
    assert 'id="plotly-gz"' in text


def test_solve_report(solved, capsys) -> None:
    assert main(["report", str(solved)]) == 0
    assert f"wrote {solved / 'report.html'} (solve report" in capsys.readouterr().out
    page = solved / "report.html"
    assert_self_contained(page)
    data = page_data(page)
    doc = json.loads((solved / "front.json").read_text())
    assert [f["solver"] for f in data["fronts"]] == [f["solver"] for f in doc["fronts"]] == ["cpsat", "nsga2"]
    assert data["fronts"][0]["certificate"]["gap"] == pytest.approx(1 / 6)
    table = pd.read_csv(solved / "front.csv")
    first = data["fronts"][0]["points"][0]
    assert first["bands"]["energy_mj_per_item"] == pytest.approx(
        [table["energy_mj_per_item_lo"].iloc[0], table["energy_mj_per_item_hi"].iloc[0]])
    assert [b["name"] for b in data["baselines"]] == list(doc["fronts"][0]["baselines"])
    for front in data["fronts"]:
        for point in front["points"]:
            detail = data["details"][point["key"]]
            mapping = dict(detail["mapping"])
            assert len(mapping) == 7 and set(mapping.values()) <= {"cpu", "gpu", "fpga"}
            assert {s["track"] for s in detail["timeline"]["spans"] if s["kind"] == "device"} == set(
                mapping.values())
            # the breakdown sums the timeline: busy time per device is the sum of its ops' spans
            spans = detail["timeline"]["spans"]
            for row in detail["breakdown"]:
                mine = [s["end"] - s["start"] for s in spans if s["track"] == row["resource"]]
                assert row["busy"] == pytest.approx(sum(mine))


def test_solve_report_without_certificate_or_bands(tmp_path) -> None:
    out = tmp_path / "run"
    assert main(["solve", "topcuoglu2002", "--solver", "cpsat", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "front.json").read_text())
    for front in doc["fronts"]:
        front.pop("certificate", None)
    (out / "front.json").write_text(json.dumps(doc))
    table = pd.read_csv(out / "front.csv")  # dse solve writes error bands: take them out
    table.drop(columns=[c for c in table.columns if c.endswith(("_lo", "_hi"))]).to_csv(out / "front.csv", index=False)
    assert main(["report", str(out), "--out", str(tmp_path / "r.html")]) == 0
    data = page_data(tmp_path / "r.html")
    assert data["fronts"][0]["certificate"] is None
    point = data["fronts"][0]["points"][0]
    assert point["bands"] == {}
    timeline = data["details"][point["key"]]["timeline"]
    assert {s["name"] for s in timeline["spans"] if s["kind"] == "device"} == {f"n{k}" for k in range(1, 11)}


def test_solve_report_of_a_problem_not_in_the_catalog_needs_its_spec(solved, tmp_path) -> None:
    doc = json.loads((solved / "front.json").read_text())
    doc["problem"] = "renamed"
    folder = tmp_path / "renamed"
    folder.mkdir()
    (folder / "front.json").write_text(json.dumps(doc))
    assert main(["report", str(folder)]) == 0  # the spec path front.json records
    assert len(page_data(folder / "report.html")["details"]) >= 2
    doc["spec"] = str(tmp_path / "moved.yaml")
    (folder / "front.json").write_text(json.dumps(doc))
    assert main(["report", str(folder)]) == 0
    data = page_data(folder / "report.html")
    assert data["details"] == {} and "give --spec" in data["notes"][0]
    assert main(["report", str(folder), "--spec", "problems/quickstart.yaml"]) == 0
    assert len(page_data(folder / "report.html")["details"]) >= 2


def test_a_distributed_runs_points_say_who_found_them(solved, tmp_path, capsys) -> None:
    """``found_by`` in front.json (written here by hand: a worker's task, a seed) becomes the line that the
    page's hover and point detail show; points without it (a serial run's) have none. A ``found_by`` whose
    task is no number is one line naming the field (exit 2). No spec: no details computed."""
    doc = json.loads((solved / "front.json").read_text())
    doc["problem"], doc["spec"] = "renamed", str(tmp_path / "moved.yaml")
    points = doc["fronts"][0]["points"]
    points[0]["found_by"] = {"worker": "worker 2", "task": 17}
    points[1]["found_by"] = {"worker": "seed", "task": None}
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "front.json").write_text(json.dumps(doc))
    assert main(["report", str(folder)]) == 0
    found = [p.get("found") for f in page_data(folder / "report.html")["fronts"] for p in f["points"]]
    assert found[:2] == ["found by worker 2 (task 17)", "found by a heuristic seed"]
    assert len(found) > 2 and not any(found[2:])
    points[0]["found_by"]["task"] = "seventeen"
    (folder / "front.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["report", str(folder), "--out", str(tmp_path / "bad.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert "fronts[0].points[0].found_by.task" in err and len(err.splitlines()) == 1


def test_simulate_report(simulated) -> None:
    assert main(["report", str(simulated)]) == 0
    page = simulated / "report.html"
    assert_self_contained(page)
    data = page_data(page)
    summary = pd.read_csv(simulated / "summary.csv")
    assert data["summary"]["columns"] == list(summary.columns)
    assert [r[0] for r in data["summary"]["rows"]] == list(summary["scheduler"])
    groups = {s["group"] for s in data["timeline"]["spans"]}
    assert groups == set(pd.read_csv(simulated / "trace.csv")["scheduler"])


def test_store_report_of_six_jobs(store, tmp_path) -> None:
    out = tmp_path / "store.html"
    assert main(["report", str(store), "--out", str(out)]) == 0
    assert_self_contained(out)
    data = page_data(out)
    assert len(data["jobs"]["rows"]) == 6
    assert {"constraints.power_w", "solver.seed"} <= set(data["swept"])
    assert data["swept_kinds"]["constraints.power_w"] == "number"
    assert set(data["points"]) == {row[0] for row in data["jobs"]["rows"]}


@pytest.mark.parametrize(("args", "field"), [
    (["report", "no/such/folder"], "PATH"),
    (["report", "problems"], "PATH"),
])
def test_bad_paths_are_one_line_errors(args, field, capsys) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and field in err and "\n" not in err


def test_damaged_front_json_is_named(tmp_path, capsys) -> None:
    (tmp_path / "front.json").write_text("{not json")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "front.json" in err and "Traceback" not in err


def serving_folder(folder: Path) -> Path:
    """A serving ``dse simulate --out`` folder written by hand (the simulator's columns): one pool, two
    requests, the second one never finished, and two iterations."""
    folder.mkdir(parents=True, exist_ok=True)
    pool = "h100_sxm tp1 pp1 b8 both 100% fp16"
    (folder / "summary.csv").write_text(
        "pool,role,gpus,requests,finished,output_tokens,duration_s,throughput_tok_s\n"
        f"{pool},both,1,2,1,4,1.0,4.0\n")
    (folder / "trace.csv").write_text(
        "request,arrival_s,input_len,output_len,prefill_pool,decode_pool,ttft_s,tpot_s,e2e_s,finish_s,preemptions\n"
        f"0,0.5,16,4,{pool},{pool},0.25,0.1,0.55,1.05,0\n"
        f"1,0.75,16,4,{pool},{pool},0.5,,,,0\n")
    (folder / "iterations.csv").write_text(
        "pool,replica,start_s,end_s,prefill_tokens,prefills,decodes,kv_tokens\n"
        f"{pool},0,0.5,0.75,16,1,0,16\n{pool},0,0.75,1.25,16,1,1,33\n")
    return folder


def test_serving_simulate_report_shows_pools_and_requests(tmp_path) -> None:
    """Before, ``dse report`` on a serving simulation refused its trace.csv ("not a simulation trace")."""
    folder = serving_folder(tmp_path / "serving")
    assert main(["report", str(folder)]) == 0
    data = page_data(folder / "report.html")
    assert data["sim"] == "serving"
    spans = [(s["group"], s["track"], s["name"], s["start"], s["end"]) for s in data["timeline"]["spans"]]
    pool = "h100_sxm tp1 pp1 b8 both 100% fp16"
    # by hand: request 0 waits 0.5 -> 0.75 (TTFT 0.25 s) and decodes 0.75 -> 1.05; request 1 waits 0.75 ->
    # 1.25 (TTFT 0.5 s) and never finishes, on a second lane (#2) of the track: it overlaps request 0's
    # decoding; the pool's two iterations as written
    assert spans == [
        ("pools", pool, "prefill 1 + decode 0", 0.5, 0.75), ("pools", pool, "prefill 1 + decode 1", 0.75, 1.25),
        ("requests", f"requests on {pool}", "request 0: to its first token", 0.5, 0.75),
        ("requests", f"requests on {pool}", "request 0: decoding", 0.75, 1.05),
        ("requests", f"requests on {pool} #2", "request 1: to its first token", 0.75, 1.25)]
