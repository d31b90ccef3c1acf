"""Numbers in spec files (issue 43, item 6): ``1e+07`` is a number in every field, a table cost model's
link bounds are unit-free (positive and finite), and a bad value's message names the file, the field and
the value. Expected tables by hand: a table cost model's time is ``ceil(device_cost * scale)``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dse
from dse.errors import SpecError
from tests.conftest import run_cli

SPEC = """name: numbers
family: dag
platform:
  name: two
  devices:
    - {{name: p1, kind: generic, speed: {speed}, mem_bw_gbps: 1, mem_gib: 1, idle_w: 0, active_w: 1}}
    - {{name: p2, kind: generic, speed: 1e+03, mem_bw_gbps: 1, mem_gib: 1, idle_w: 0, active_w: 1}}
  links: [{{a: p1, b: p2, bandwidth_gbps: {bandwidth}, latency_us: 0}}]
workload:
  name: pair
  ops:
    - {{name: a, device_costs: {{p1: 2, p2: 3}}}}
    - {{name: b, device_costs: {{p1: 5, p2: 1e+00}}, inputs: [{{op: a, bytes: 1e+03}}]}}
cost_model: {cost_model}
objectives: [makespan]
"""


def _spec(tmp_path: Path, bandwidth: str = "1", cost_model: str = "{name: table, scale: 1e+07}",
          speed: str = "1e+03") -> Path:
    path = tmp_path / "numbers.yaml"
    path.write_text(SPEC.format(bandwidth=bandwidth, cost_model=cost_model, speed=speed))
    return path


def test_exponents_without_a_dot_are_numbers_in_every_field(tmp_path: Path) -> None:
    spec = dse.load_spec(_spec(tmp_path, cost_model="{name: table, scale: 1e+07, send_ops: 1e+01}"))
    assert spec.cost_model.scale == 1e7 and spec.cost_model.send_ops == 10.0
    assert [d.speed for d in spec.platform.devices] == [1000.0, 1000.0]
    problem = dse.build_problem(spec)
    np.testing.assert_array_equal(problem.tables.time, [[2 * 10**7, 3 * 10**7], [5 * 10**7, 10**7]])


def test_a_table_cost_model_takes_any_positive_finite_bandwidth(tmp_path: Path) -> None:
    """bandwidth_gbps is size units per time unit there: 1e12 is no more physical than 1."""
    spec = dse.load_spec(_spec(tmp_path, bandwidth="1e+12"))
    assert spec.platform.links[0].bandwidth_gbps == 1e12
    dse.build_problem(spec)


@pytest.mark.parametrize("bandwidth", ["0", "-1", ".inf"])
def test_a_table_cost_model_still_refuses_a_bandwidth_that_is_not_positive_and_finite(
        tmp_path: Path, bandwidth: str) -> None:
    path = _spec(tmp_path, bandwidth=bandwidth)
    with pytest.raises(SpecError) as err:
        dse.load_spec(path)
    assert err.value.source.startswith(str(path)) and err.value.field == "links[0].bandwidth_gbps"


def test_a_physical_cost_model_keeps_its_bandwidth_bound_and_names_the_file(tmp_path: Path) -> None:
    path = _spec(tmp_path, bandwidth="1e+12", cost_model="roofline")
    with pytest.raises(SpecError, match=r"1e\+09") as err:
        dse.load_spec(path)
    assert err.value.source.startswith(str(path))
    assert (err.value.field, err.value.value) == ("links[0].bandwidth_gbps", 1e12)


def test_a_bad_cost_model_parameter_names_the_file_the_field_and_the_value(tmp_path: Path) -> None:
    path = _spec(tmp_path, cost_model="{name: table, scale: -1e+07}")
    with pytest.raises(SpecError, match="> 0") as err:
        dse.load_spec(path)
    assert (err.value.source, err.value.field, err.value.value) == (str(path), "cost_model.scale", -1e7)


@pytest.mark.parametrize(("speed", "bandwidth", "cost_model"), [
    ("1e+03", "1", "{name: table, scale: 1e+07}"),  # scale: 1e+07 and speed: 1e+03
    ("1e3", "1e12", "table"),  # bandwidth_gbps: 1e12 under a table cost model
])
def test_the_cli_takes_each_notation(tmp_path: Path, capsys: pytest.CaptureFixture[str], speed: str,
                                     bandwidth: str, cost_model: str) -> None:
    path = _spec(tmp_path, bandwidth=bandwidth, cost_model=cost_model, speed=speed)
    code, out, err = run_cli(capsys, "validate", str(path))
    assert (code, err) == (0, "") and out.startswith(f"{path}: ok")


@pytest.mark.parametrize(("edit", "words"), [
    ({"speed": "1e999"}, ["(platform)", "devices[0].speed", "= inf", "finite"]),
    ({"speed": "fast"}, ["(platform)", "devices[0].speed", "'fast'", "number"]),
    ({"speed": ".nan"}, ["(platform)", "devices[0].speed", "= nan", "finite"]),
    ({"cost_model": "{name: table, scale: 1e999}"}, ["cost_model.scale", "= inf", "finite"]),
    # under a table cost model a rate has no upper bound, but the int64 tables still refuse what does not fit:
    # an edge of 1,000 size units at 1e-300 per tu takes 1e303 tu (by hand)
    ({"bandwidth": "1e-300", "cost_model": "table"}, ["transfer_time[a -> b, p1 -> p2]", "= 1e+303", "int64"]),
])
def test_the_cli_names_the_file_the_field_and_the_value_of_a_bad_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict[str, str], words: list[str]) -> None:
    path = _spec(tmp_path, **edit)
    code, _, err = run_cli(capsys, "solve", str(path), "--quiet", "--out", str(tmp_path / "out"))
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"error: {path}")
    for word in words:
        assert word in lines[0], (word, lines[0])
