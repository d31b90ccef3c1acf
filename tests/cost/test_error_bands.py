"""Error bands from the held-out error and the points that survive them (dse.cost.error_bands), by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dse import cli
from dse.cost import RooflineCostModel
from dse.cost.error_bands import (
    HELD_OUT_DATASHEET_MEDIAN_ERROR,
    HELD_OUT_MEDIAN_ALL,
    HELD_OUT_MEDIAN_ERROR,
    band,
    band_columns,
    problem_bands,
    relative_error,
    robust_indices,
    stable_indices,
)
from dse.inputs.builders import build
from dse.mapping.base import Objective
from dse.mapping.pipeline import PipelineProblem
from dse.model.platform import platform_from_dict
from dse.pareto import ParetoPoint, ParetoSet, SolveStats
from tests.cli.test_cli import write_spec


def test_band_by_hand() -> None:
    # predicted 10 with |pred / true - 1| <= 0.25: true in [10 / 1.25, 10 / 0.75] = [8, 13.33]
    assert band(10.0, 0.25) == pytest.approx((8.0, 40 / 3))
    # a maximized objective in minimization form (negated) keeps its order
    assert band(-10.0, 0.25) == pytest.approx((-40 / 3, -8.0))
    assert band(10.0, 1.0)[1] == float("inf")
    with pytest.raises(ValueError, match="relative error"):
        band(1.0, -0.1)


def test_band_columns_by_hand() -> None:
    cols = band_columns([{"a": 11.0}, {"a": 22.0}], ["a"], [0.1, 0.1])
    assert cols["a_lo"] == pytest.approx([10.0, 20.0])  # 11 / 1.1, 22 / 1.1
    assert cols["a_hi"] == pytest.approx([11 / 0.9, 22 / 0.9])


def test_relative_error_of_device_kinds() -> None:
    assert relative_error(["gpu"]) == HELD_OUT_MEDIAN_ERROR["gpu"]
    assert relative_error(["npu"]) == HELD_OUT_MEDIAN_ERROR["pe_array"]
    # a point takes the largest of its devices' errors; a kind with no class (fpga) the all-rows median
    assert relative_error(["gpu", "cpu"]) == max(HELD_OUT_MEDIAN_ERROR["gpu"], HELD_OUT_MEDIAN_ERROR["cpu"])
    assert relative_error(["gpu", "fpga"]) == max(HELD_OUT_MEDIAN_ERROR["gpu"], HELD_OUT_MEDIAN_ALL)
    assert relative_error([]) == HELD_OUT_MEDIAN_ALL


def test_declared_errors_are_the_measured_held_out_medians() -> None:
    from dse.runs.accuracy import accuracy

    report = accuracy()
    for device_class, value in HELD_OUT_MEDIAN_ERROR.items():
        group = report.group("holdout", "device_class", device_class)
        assert group is not None and group.median == pytest.approx(value, abs=5e-4)
    for device_class, value in HELD_OUT_DATASHEET_MEDIAN_ERROR.items():
        group = report.group("holdout", "device_class", device_class, "datasheet")
        assert group is not None and group.median == pytest.approx(value, abs=5e-4), device_class
    overall = report.group("holdout")
    assert overall is not None and overall.median == pytest.approx(HELD_OUT_MEDIAN_ALL, abs=5e-4)


# Hand-built case, two minimized objectives: A = (10, 10), B = (12, 12) (dominated by A), C = (10.5, 9).
F = np.array([[10.0, 10.0], [12.0, 12.0], [10.5, 9.0]])


def test_dominance_with_certainty_by_hand() -> None:
    # r = 0.05: A's worst case 10 / 0.95 = 10.53 <= B's best case 12 / 1.05 = 11.43 in both: A certainly
    # dominates B, so B is not robust; A and C stay (mutually nondominated, nothing certain).
    assert robust_indices(F, [0.05] * 3) == [0, 2]
    # r = 0.1: A's worst 11.11 > B's best 10.91: B may be Pareto-optimal after all.
    assert robust_indices(F, [0.1] * 3) == [0, 1, 2]
    # r = 0: the plain nondominated set.
    assert robust_indices(F, [0.0] * 3) == stable_indices(F, [0.0] * 3) == [0, 2]


def test_stable_points_by_hand() -> None:
    # r = 0.05: C's best case (10 / 1, ...) = (10.5 / 1.05, 9 / 1.05) = (10, 8.57) <= A's worst (10.53, 10.53):
    # C may dominate A. A's best y 10 / 1.05 = 9.52 > C's worst y 9 / 0.95 = 9.47: nothing may dominate C.
    assert stable_indices(F, [0.05] * 3) == [2]


def _objective(name: str, sense: str) -> Objective:
    return Objective(name, "u", sense, name, "u", lambda v: v)


def test_pareto_set_robust_and_stable_with_a_maximized_objective_and_a_baseline() -> None:
    # throughput (max) and energy (min): P = (100, 10), Q = (90, 5) on the front; baseline R = (60, 20).
    objs = (_objective("throughput", "max"), _objective("energy", "min"))

    def point(t: float, e: float) -> ParetoPoint:
        return ParetoPoint((0,), (0, 0), {"throughput_u": t, "energy_u": e})

    front = ParetoSet("p", objs, (point(100, 10), point(90, 5)), "x", "optimal", True, SolveStats(0.0),
                      baselines={"only_one": point(60, 20)})
    assert [p.objectives["throughput_u"] for p in front.robust(0.1)] == [100, 90]
    # Q's best throughput 90 / 0.9 = 100 >= P's worst 100 / 1.1 = 90.9 and Q's best energy 5 / 1.1 < P's
    # worst 10 / 0.9: Q may dominate P. P's best energy 10 / 1.1 = 9.09 > Q's worst 5 / 0.9 = 5.56: Q stays.
    assert [p.objectives["throughput_u"] for p in front.stable(0.1)] == [90]
    # r = 0.5: P's best (throughput 200, energy 6.67) may dominate Q's worst (60, 10) and Q's best (180, 3.33)
    # P's worst (66.7, 20): each may dominate the other, so neither is stable.
    assert front.stable(0.5) == ()
    # the baselines count as other points: S = (200, 2) in its worst case (181.8, 2.22) still beats P's and
    # Q's best cases (111.1, 9.09) and (100, 4.55) at r = 0.1, so neither front point is robust.
    better = ParetoSet("p", objs, front.points, "x", "optimal", True, SolveStats(0.0),
                       baselines={"better": point(200, 2)})
    assert better.robust(0.1) == ()


def test_solve_writes_band_columns(tmp_path, capsys) -> None:
    spec = write_spec(tmp_path, solver={"name": "cpsat", "time_limit_s": 10, "seed": 0})
    assert cli.main(["solve", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0, capsys.readouterr()
    frame = pd.read_csv(tmp_path / "out" / "front.csv")
    for column in ("throughput_items_per_s", "energy_mj_per_item"):
        assert {f"{column}_lo", f"{column}_hi"} <= set(frame.columns)
        r = frame[column] / frame[f"{column}_lo"] - 1  # value / lo = 1 + r
        assert np.allclose(r, r.iloc[0]) and 0 < r.iloc[0] < 1
        assert np.allclose(frame[f"{column}_hi"], frame[column] / (1 - r.iloc[0]))


#: A GPU as its data sheet gives it (no fitted field declared), and an FPGA (no device class).
_GPU = {"name": "g", "kind": "gpu", "peak_tflops": {"fp16": 100}, "mem_bw_gbps": 1000, "mem_gib": 16,
        "idle_w": 10, "active_w": 110, "compute_units": 4}
_FPGA = {"name": "f", "kind": "fpga", "peak_tflops": {"fp16": 2}, "mem_bw_gbps": 400, "mem_gib": 8,
         "idle_w": 5, "active_w": 50}


def _bands(*devices: dict, **platform: object) -> dict[str, tuple[str, float]]:
    links = [{"a": devices[0]["name"], "b": d["name"], "bandwidth_gbps": 10, "latency_us": 1} for d in devices[1:]]
    tables = RooflineCostModel().tables(build("gemm", m=256, n=256, k=256), platform_from_dict(
        {"name": "p", "devices": list(devices), "links": links, **platform}))
    problem = PipelineProblem(tables, ("throughput", "energy"))
    return {b.device: (b.path, b.relative_error) for b in problem_bands(problem)}


def test_error_bands_follow_the_path_of_each_device() -> None:
    """A data-sheet-only GPU takes the gpu class's data-sheet-only median; the same GPU declaring its own
    fitted efficiency the as-declared one; an FPGA (no class) and a GPU on ``mechanisms: none`` the median
    of all rows. A point's error is the largest of its devices'."""
    assert _bands(_GPU, _FPGA) == {"g": ("data sheet only", HELD_OUT_DATASHEET_MEDIAN_ERROR["gpu"]),
                                   "f": ("kind defaults", HELD_OUT_MEDIAN_ALL)}
    fitted = {**_GPU, "compute_efficiency": {"gemm": 0.8}}
    assert _bands(fitted) == {"g": ("fitted", HELD_OUT_MEDIAN_ERROR["gpu"])}
    assert _bands(_GPU, mechanisms="none") == {"g": ("kind defaults", HELD_OUT_MEDIAN_ALL)}


def test_front_json_lists_each_devices_band_and_path(tmp_path, capsys) -> None:
    import json

    spec = write_spec(tmp_path, solver={"name": "cpsat", "time_limit_s": 10, "seed": 0})
    assert cli.main(["solve", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0, capsys.readouterr()
    doc = json.loads((tmp_path / "out" / "front.json").read_text())
    bands = doc["error_bands"]
    assert bands and all({"device", "device_class", "path", "relative_error", "basis"} <= set(b) for b in bands)
    assert all(b["path"] in ("fitted", "data sheet only", "kind defaults") for b in bands)
    frame = pd.read_csv(tmp_path / "out" / "front.csv")
    column = "throughput_items_per_s"
    r = float((frame[column] / frame[f"{column}_lo"] - 1).iloc[0])
    assert r == pytest.approx(max(b["relative_error"] for b in bands))
