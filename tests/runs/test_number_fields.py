"""Numbers in spec files (issue 43, item 6): ``1e+07`` is a number in every field, a table cost model's
link bounds are unit-free (positive and finite), and a bad value's message names the file, the field and
the value. Expected tables by hand: a table cost model's time is ``ceil(device_cost * scale)``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dse
from dse.errors import SpecError

SPEC = """name: numbers
family: dag
platform:
  name: two
  devices:
    - {{name: p1, kind: generic, speed: 1e+03, mem_bw_gbps: 1, mem_gib: 1, idle_w: 0, active_w: 1}}
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


def _spec(tmp_path: Path, bandwidth: str = "1", cost_model: str = "{name: table, scale: 1e+07}") -> Path:
    path = tmp_path / "numbers.yaml"
    path.write_text(SPEC.format(bandwidth=bandwidth, cost_model=cost_model))
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
