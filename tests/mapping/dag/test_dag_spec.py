"""The dag family through specs and the CLI, on Topcuoglu et al. 2002's published example."""

from __future__ import annotations

import numpy as np

import dse
from dse import cli
from dse.inputs import catalog
from dse.mapping.dag.validate import validate_schedule

SPEC = catalog.problems_dir() / "topcuoglu2002.yaml"


def test_published_heft_and_cpop_makespans_from_the_spec() -> None:
    problem = dse.load_problem(SPEC)
    # Topcuoglu et al. 2002, Fig. 2-3: HEFT 80, CPOP 86
    assert dse.solve(problem, "heuristic:heft").points[0].internal == (80,)
    assert dse.solve(problem, "heuristic:cpop").points[0].internal == (86,)


def test_nsga2_schedule_is_valid_and_no_worse_than_heft() -> None:
    problem = dse.load_problem(SPEC)
    front = dse.solve(problem, "nsga2", time_limit=10, seed=0, pop_size=40, generations=30)
    (point,) = front.points
    assert point.internal[0] <= 80
    s = problem.schedule(np.array(point.genome))
    assert s.makespan == point.internal[0]
    assert validate_schedule(problem, s.device, s.start, s.finish, s.release) == []


def test_cli_writes_makespan_column_and_gantt(tmp_path, capsys) -> None:
    import pandas as pd

    code = cli.main(["solve", str(SPEC), "--solver", "heuristic:heft", "--out", str(tmp_path), "--gantt", "--quiet"])
    assert code == 0, capsys.readouterr().err
    frame = pd.read_csv(tmp_path / "front.csv")
    assert frame["makespan_tu"].tolist() == [80]
    assert (tmp_path / "gantt.png").stat().st_size > 1000
