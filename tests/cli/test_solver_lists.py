"""Where a problem is known, the solver names offered are those that take it; one named that does not says
why, in one line naming the file or flag and the value (exit 2).

The expected lists come from the solvers' documented scope (docs/solvers.md): ``memetic`` and ``lns`` work
on the dag family alone (list-scheduled finish times), ``cpsat`` needs an exact formulation, which the
multimodel family has not; every solver takes a dag problem.
"""

from __future__ import annotations

import pytest

import dse
from dse.runs.spec import build_problem, load_spec
from dse.solvers import registry
from tests.conftest import run_cli, write_yaml


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def test_an_unknown_solver_lists_only_those_that_take_the_problem(tmp_path, capsys) -> None:
    code, _, err = run_cli(capsys, "solve", "quickstart", "--solver", "foo", "--out", str(tmp_path / "o"))
    line = _one_line(err)
    assert code == 2 and "field '--solver' = 'foo'" in line, line
    assert line.endswith("known solvers for this problem: cpsat, exhaustive, nsga2, all "
                         "(lns and memetic do not apply to it)"), line


def test_a_solver_named_on_the_command_line_that_does_not_apply_says_why(tmp_path, capsys) -> None:
    code, out, err = run_cli(capsys, "solve", "quickstart", "--solver", "memetic", "--out", str(tmp_path / "o"))
    line = _one_line(err)
    assert code == 2 and out == "" and not (tmp_path / "o" / "front.csv").exists()
    assert "command line: field '--solver' = 'memetic': solver 'memetic' does not apply to this pipeline " \
           "problem: the memetic search's moves need list-scheduled finish times" in line, line
    assert line.endswith("solvers for it: cpsat, exhaustive, nsga2, all"), line


def test_a_solver_named_in_the_spec_that_does_not_apply_names_the_file(tmp_path, capsys) -> None:
    spec = load_spec("quickstart")
    path = write_yaml(tmp_path / "q.yaml", {"name": "q", "family": "pipeline", "platform": spec.platform.name,
                                            "workload": {"builder": "gcn", "dataset": "cora", "layers": 3,
                                                         "hidden": 64},
                                            "solver": {"name": "lns", "time_limit_s": 2}})
    code, _, err = run_cli(capsys, "solve", str(path), "--out", str(tmp_path / "o"))
    line = _one_line(err)
    assert code == 2 and f"{path}: field 'solver.name' = 'lns': solver 'lns' does not apply" in line, line


def test_a_dag_problem_takes_every_solver(tmp_path, capsys) -> None:
    code, _, err = run_cli(capsys, "solve", "topcuoglu2002", "--solver", "foo", "--out", str(tmp_path / "o"))
    line = _one_line(err)
    assert code == 2 and "known solvers for this problem: cpsat, exhaustive, lns, memetic, nsga2, all, " \
           "heuristic:NAME" in line and "do not apply" not in line, line


@pytest.mark.parametrize(("problem", "solvers"), [
    ("quickstart", "solvers cpsat, exhaustive, nsga2, all (lns and memetic do not apply to it)"),
    ("xr_vr_gaming", "solvers exhaustive, nsga2, all (cpsat, lns and memetic do not apply to it)"),
    ("topcuoglu2002", "solvers cpsat, exhaustive, lns, memetic, nsga2, all"),
])
def test_validate_lists_the_solvers_that_take_the_problem(capsys, problem: str, solvers: str) -> None:
    code, out, _ = run_cli(capsys, "validate", problem)
    assert code == 0 and out.splitlines()[0].endswith(solvers), out  # later lines: notes on the constraints


def test_dse_solve_refuses_a_solver_that_does_not_apply_with_the_alternatives() -> None:
    problem = build_problem(load_spec("xr_vr_gaming"))
    with pytest.raises(NotImplementedError) as info:  # as dse.solve always raised for such a solver
        dse.solve(problem, "cpsat", time_limit=1)
    assert isinstance(info.value, registry.SolverNotApplicableError)
    assert str(info.value) == ("solver 'cpsat' does not apply to this multimodel problem: the multimodel family "
                               "has no exact formulation; solvers for it: exhaustive, nsga2, all")
