"""Specs that bring their task graph and devices from files: STG on identical processors, TF-paper CSV."""

from __future__ import annotations

import textwrap

import pytest
import yaml

import dse
from dse.errors import SpecError

STG = """
    4
    0 0 0
    1 3 1 0
    2 2 1 0
    3 4 1 0
    4 1 2 1 2
    5 0 2 3 4
"""

TF_GRAPH = """
    Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations, RAM storage,Device constraint ,name
    1,2;3,,,60,100,9,NO,a
    2,4,1,,10,40,0,NO,b
    3,4,1,,10,60,0,NO,c
    4,,2;3,,5,30,7,NO,d
"""

TF_DEVICES = """
    Id,RAM,#operations,commnication speed,type
    0,1000,10,5;20,CPU
    1,2000,20,40,GPU
    2,3000,40,,GPU
"""


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def spec(tmp_path, **fields):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "family": "dag", "objectives": ["makespan"], **fields}))
    return path


def test_stg_on_identical_processors_by_hand(tmp_path) -> None:
    write(tmp_path, "g.stg", STG)
    problem = dse.load_problem(spec(tmp_path, platform={"identical": 2}, workload={"format": "stg", "path": "g.stg"}))
    front = dse.solve(problem, "cpsat", time_limit=20)
    # By hand: t1 = 3, t2 = 2, t3 = 4 follow the dummy entry; t4 = 1 needs t1 and t2. The work bound
    # is 10 / 2 = 5, but t4 cannot start before t1 and t2 are both done:
    #   t1 | t2 on different processors: both done at 3; t3 then waits on one side -> t3 ends at 2 + 4 = 6;
    #   t1, t2 on one processor: done at 5, t4 ends at 6 (t3 on the other, 0..4);
    #   t3 before t2 on one processor: t2 ends at 6, t4 at 7.
    # So the optimum is 6.
    assert front.status == "optimal" and front.points[0].internal == (6,)


def test_tf_csv_spec_applies_the_paper_rules(tmp_path) -> None:
    write(tmp_path, "g.csv", TF_GRAPH)
    write(tmp_path, "d.csv", TF_DEVICES)
    problem = dse.load_problem(spec(tmp_path, platform={"format": "tfcsv", "path": "d.csv"},
                                    workload={"format": "tfcsv", "path": "g.csv"}))
    assert problem.tensor_per_device
    # the send of a tensor occupies its device for 10 operations: 10 / speed in milli-units
    assert problem.tables.send_time.tolist() == [1000, 500, 250]
    # compute time = #operations / speed, in thousandths of the paper's time unit
    assert problem.tables.time[0].tolist() == [10_000, 5_000, 2_500]
    front = dse.solve(problem, "heuristic:cp+pct")
    assert len(front) == 1 and front.points[0].feasible


def test_identical_shorthand_rejects_bad_counts(tmp_path) -> None:
    write(tmp_path, "g.stg", STG)
    with pytest.raises(SpecError, match="platform.identical"):
        dse.load_problem(spec(tmp_path, platform={"identical": 0}, workload={"format": "stg", "path": "g.stg"}))


def test_unknown_workload_format_names_the_spec_field(tmp_path) -> None:
    write(tmp_path, "g.stg", STG)
    path = spec(tmp_path, platform={"identical": 2}, workload={"format": "xml", "path": "g.stg"})
    with pytest.raises(SpecError) as info:
        dse.load_problem(path)
    assert info.value.source == str(path) and info.value.field == "workload.format" and info.value.value == "xml"
