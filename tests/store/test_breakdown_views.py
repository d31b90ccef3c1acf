"""The views of one mapping read its breakdown (:meth:`DecodedMapping.breakdown`): ``trace.json``'s span
energies and the report's rows add up to the energy objective the front reports, at the operating points
the genome chose (a DVFS platform's levels, not its full clock), and the report page of the quickstart's
all-GPU point shows the figures ``dse explain`` gives (worked out by hand in
``tests/mapping/test_breakdown.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import dse
from dse.cli import main
from dse.mapping.base import MappingProblem
from dse.mapping.registry import families
from dse.store.report.collect import point_detail
from dse.store.trace import chrome_trace, mapping_timeline
from tests.mapping.test_breakdown import ALL_GPU_765, genomes_of, spec_problem
from tests.store.test_report import page_data


def energy_objective(problem: MappingProblem, x: np.ndarray) -> tuple[float, int]:
    """The energy the front reports for genome ``x``: (user units, internal pJ)."""
    ev = problem.evaluate(x[None, :], metrics=True)
    internal = int(ev.metrics["energy"][0])
    objective = next((o for o in problem.objectives if o.name == "energy"), None)
    user = float(objective.to_user(np.array([internal]))[0]) if objective is not None else internal * 1e-9
    return user, internal


def check_views(problem: MappingProblem, genomes: np.ndarray) -> None:
    """For every genome: the trace's span energies (pJ) are the breakdown's dynamic and transfer energy, and
    with the devices' idle energy the objective; the report's rows (mJ) add up to the objective."""
    for x in np.asarray(genomes, dtype=np.int64):
        _, internal = energy_objective(problem, x)
        costs = problem.decode(x).breakdown()
        timeline = mapping_timeline(problem, x)
        assert timeline is not None
        spans = {"device": 0, "link": 0}
        for s in timeline.spans:
            spans[s.kind] += s.args["energy_pJ"]
        assert spans["device"] == costs.dynamic_energy and spans["link"] == costs.transfer_energy
        assert spans["device"] + spans["link"] + costs.idle_energy == internal, (problem.name, x.tolist())
        doc = chrome_trace(timeline)  # the same figures in the file's events
        assert sum(e["args"]["energy_pJ"] for e in doc["traceEvents"] if e["ph"] == "X") + costs.idle_energy == internal
        rows = point_detail(problem, x)["breakdown"]
        assert {r["resource"] for r in rows} >= set(problem.tables.device_names)
        assert sum(r["energy"] + r["idle_energy"] for r in rows) == pytest.approx(internal * 1e-9, rel=1e-12)


@pytest.mark.parametrize("platform", ["server_cpu_gpu_fpga_dvfs", "server_cpu_gpu_fpga"])
def test_quickstart_trace_and_report_rows_add_up(platform: str) -> None:
    problem = spec_problem("quickstart", platform=platform)
    check_views(problem, genomes_of(problem, front=False)[:12])


@pytest.mark.parametrize("name", ["pipeline", "dag", "split"])
def test_example_traces_and_report_rows_add_up(name: str) -> None:
    for seed in range(6):  # pipeline seeds 2 and 5 have DVFS levels; some dag seeds the TF send rule
        problem = families()[name].examples(seed)
        check_views(problem, genomes_of(problem, front=False)[:8])


def test_catalog_dag_and_split_traces_add_up() -> None:
    for problem in (dse.load_problem("topcuoglu2002"), dse.load_problem("split_gemm")):
        check_views(problem, genomes_of(problem, front=False)[:6])


def test_multimodel_report_rows_are_the_whole_run() -> None:
    """The rows of a multimodel point come from the simulation's totals, not from the (windowed) frames."""
    problem = families()["multimodel"].examples(0)
    for x in genomes_of(problem, front=False)[:4]:
        rows = point_detail(problem, x)["breakdown"]
        assert sum(r["energy"] + r["idle_energy"] for r in rows) == pytest.approx(
            energy_objective(problem, x)[1] * 1e-9, rel=1e-12)


def test_trace_of_the_all_gpu_point_at_765_mhz() -> None:
    """Each op's span spends 49,665 mW x its time at 765 MHz (by hand: tests/mapping/test_breakdown.py), not
    its full-clock energy: 61,187,528,325 pJ in all, 43,120,175,000 pJ of idle energy beside."""
    problem = dse.load_problem("quickstart")
    timeline = mapping_timeline(problem, np.array(ALL_GPU_765))
    assert timeline is not None
    times = {"l0.combine": 596_667, "l0.aggregate": 45_967, "l1.aggregate": 45_967, "l1.combine": 419_452,
             "l2.combine": 122_044, "l2.aggregate": 1_884, "log_softmax": 24}
    assert {s.name: s.args["energy_pJ"] for s in timeline.spans} == {op: 49_665 * t for op, t in times.items()}
    assert {s.track for s in timeline.spans} == {"gpu"}
    assert sum(s.args["energy_pJ"] for s in timeline.spans) == 61_187_528_325


def test_report_page_of_the_all_gpu_point_matches_explain(tmp_path: Path, capsys) -> None:
    """``dse report`` of a front holding the all-GPU point: the page's rows for it (gpu 61.187528325 mJ of
    dynamic and 43.120175 mJ of idle energy, the cpu and the fpga nothing and no clock; by hand:
    tests/mapping/test_breakdown.py) add up to the point's 104.307703325 mJ/item and to what ``dse explain``
    prints for it."""
    folder = tmp_path / "quickstart"
    folder.mkdir()
    genome = list(ALL_GPU_765)
    point = {"solver": "cpsat", "proven": True, "feasible": True, "genome": genome,
             "objectives": {"throughput_items_per_s": 1e9 / 1_232_005, "energy_mj_per_item": 104.307703325}}
    objectives = [{"name": "throughput", "unit": "items/s", "sense": "max", "column": "throughput_items_per_s"},
                  {"name": "energy", "unit": "mJ/item", "sense": "min", "column": "energy_mj_per_item"}]
    (folder / "front.json").write_text(json.dumps({"problem": "quickstart", "fronts": [
        {"problem": "quickstart", "solver": "cpsat", "status": "optimal", "complete": True, "exact": True,
         "objectives": objectives, "points": [point], "baselines": {}}]}))
    assert main(["report", str(folder)]) == 0
    detail = page_data(folder / "report.html")["details"][" ".join(map(str, genome))]
    rows = {r["resource"]: r for r in detail["breakdown"]}
    assert set(rows) == {"cpu", "gpu", "fpga"} and detail["unit"] == "ms" and detail["breakdown_per"] == "item"
    assert rows["gpu"]["energy"] == pytest.approx(61.187528325) and rows["gpu"]["idle_energy"] == pytest.approx(43.120175)
    assert rows["gpu"]["level"] == "765 MHz" and rows["gpu"]["busy"] == pytest.approx(1.232005)
    for idle in ("cpu", "fpga"):
        assert (rows[idle]["energy"], rows[idle]["idle_energy"], rows[idle]["level"]) == (0.0, 0.0, None)
    total = sum(r["energy"] + r["idle_energy"] for r in rows.values())
    assert total == pytest.approx(point["objectives"]["energy_mj_per_item"])
    spans = detail["timeline"]["spans"]
    assert sum(s["args"]["energy_pJ"] for s in spans) * 1e-9 == pytest.approx(rows["gpu"]["energy"])
    capsys.readouterr()
    assert main(["explain", "quickstart", "--genome", " ".join(map(str, genome))]) == 0
    said = capsys.readouterr().out
    assert "energy 104.31 mJ/item" in said and "(ops 61.2 mJ, transfers 0 mJ, idle 43.1 mJ)" in said
    assert "(ops 61.2 mJ, transfers 0 mJ, idle 43.1 mJ)" in detail["explain"]
    assert f"{rows['gpu']['energy']:.3g}" == "61.2" and f"{rows['gpu']['idle_energy']:.3g}" == "43.1"
