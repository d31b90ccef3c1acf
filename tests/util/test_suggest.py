"""One "did you mean" rule for names a user types: solvers, spec files and catalog problems."""

from __future__ import annotations

import pytest

import dse
from dse import cli
from dse.solvers.registry import UnknownSolverError
from dse.util.suggest import did_you_mean, nearest


def test_nearest_names_by_hand() -> None:
    assert nearest("quickstrat", ["quickstart", "split_gemm", "dype_drift"]) == ["quickstart"]
    assert nearest("CPSTA", ["cpsat", "nsga2"]) == ["cpsat"]
    assert nearest("zzz", ["cpsat", "nsga2"]) == []
    assert did_you_mean("zzz", ["cpsat"]) == ""
    assert did_you_mean("nsga", ["cpsat", "nsga2"]) == " (did you mean 'nsga2'?)"


def test_a_heuristic_of_another_family_says_which_family_has_it() -> None:
    problem = dse.load_problem("quickstart")
    with pytest.raises(UnknownSolverError, match="'heuristic:heft' exists for the dag family, not for pipeline"):
        dse.solve(problem, "heuristic:heft", time_limit=1)


def test_a_mistyped_solver_gets_the_nearest_name() -> None:
    problem = dse.load_problem("topcuoglu2002")
    with pytest.raises(UnknownSolverError, match=r"did you mean 'cpsat'\?"):
        dse.solve(problem, "cpsta", time_limit=1)
    with pytest.raises(UnknownSolverError, match=r"did you mean 'heuristic:heft'"):
        dse.solve(problem, "heuristic:heeft", time_limit=1)


def test_solve_help_lists_every_registered_solver(capsys: pytest.CaptureFixture) -> None:
    from dse.solvers.registry import solvers

    with pytest.raises(SystemExit):
        cli.main(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in solvers():
        if name != "heuristic":
            assert name in text
    assert "heuristic:NAME" in text


@pytest.mark.parametrize(("typed", "suggested"), [("quickstrat", "'quickstart'"),
                                                  ("problems/quickstart.yml", "'problems/quickstart.yaml'")])
def test_a_mistyped_spec_gets_the_nearest_file_or_catalog_problem(typed: str, suggested: str,
                                                                  capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["validate", typed]) == 2
    err = capsys.readouterr().err
    assert "file not found" in err and "did you mean" in err and suggested in err
    assert len(err.strip().splitlines()) == 1
