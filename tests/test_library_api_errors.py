"""Hostile arguments to the library's public functions (``dse.__all__`` and the methods of
docs/python.md): each is the project's own error (``TypeError`` naming the expected type and what to
call, ``ValueError`` naming the value, ``GenomeError``), never an internal ``AttributeError`` from
deep inside, and never a silent number or mapping."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest

import dse
from dse.errors import GenomeError
from tests.cli.test_cli import write_spec

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> tuple[dse.ParetoSet, object]:
    folder = tmp_path_factory.mktemp("tiny")
    problem = dse.load_problem(write_spec(folder))
    return dse.solve(problem, "cpsat", time_limit=10, seed=0), problem


@pytest.fixture(scope="module")
def other_front(tmp_path_factory: pytest.TempPathFactory) -> dse.ParetoSet:
    """A front of another problem with the same objectives (only its name and constraints differ)."""
    folder = tmp_path_factory.mktemp("other")
    problem = dse.load_problem(write_spec(folder, name="other", constraints={"memory": True, "power_w": 1000}))
    return dse.solve(problem, "cpsat", time_limit=10, seed=0)


@pytest.mark.parametrize("given", ["quickstart", Path("problems/quickstart.yaml")])
def test_solve_of_a_spec_path_is_a_type_error_that_says_what_to_call(given: object) -> None:
    with pytest.raises(TypeError, match=r"dse\.solve: problem must be of type MappingProblem.*dse\.load_problem"):
        dse.solve(given, "cpsat", time_limit=1)  # type: ignore[arg-type]


def test_solve_of_a_spec_instead_of_a_problem_is_a_type_error(tmp_path: Path) -> None:
    spec = dse.load_spec(write_spec(tmp_path))
    with pytest.raises(TypeError, match=r"got ProblemSpec .*dse\.build_problem\(spec\)"):
        dse.solve(spec, "cpsat", time_limit=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"dse\.certify: problem must be of type MappingProblem"):
        dse.certify(spec, [], time_limit=1)  # type: ignore[arg-type]


def test_solve_with_a_solver_that_is_not_a_name_is_a_type_error(solved) -> None:
    _, problem = solved
    with pytest.raises(TypeError, match=r"dse\.solve: solver must be of type str, got int 3"):
        dse.solve(problem, 3, time_limit=1)  # type: ignore[arg-type]


def test_build_and_load_problem_of_the_wrong_type_name_what_they_take() -> None:
    with pytest.raises(TypeError, match=r"dse\.build_problem: spec must be of type ProblemSpec, got str"):
        dse.build_problem("quickstart")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"dse\.load_spec: path must be of type str or Path, got int 3"):
        dse.load_problem(3)  # type: ignore[arg-type]


def test_compare_of_fronts_of_different_problems_is_a_value_error(solved, other_front) -> None:
    front, _ = solved
    with pytest.raises(ValueError, match=r"different problems \('tiny'.*'other'"):
        front.compare(other_front)
    with pytest.raises(TypeError, match=r"ParetoSet\.compare: other must be of type ParetoSet"):
        front.compare("nsga2")  # type: ignore[arg-type]


@pytest.mark.parametrize("ref, error, message", [
    ([1.0], ValueError, r"ref has 1 value, one per objective is 2"),
    ([float("nan"), 1.0], ValueError, r"must be finite"),
    ([1.0, float("inf")], ValueError, r"must be finite"),
    ([1.0, 2.0, 3.0], ValueError, r"ref has 3 values"),
    ("12", TypeError, r"ref must be a sequence of 2 numbers, got str"),
    ([True, 1.0], TypeError, r"ref must hold numbers, got bool"),
])
def test_hypervolume_of_a_bad_reference_is_an_error_never_zero(solved, ref, error, message) -> None:
    front, _ = solved
    assert front.hypervolume() > 0  # the front does measure something: 0.0 would have been a wrong answer
    with pytest.raises(error, match=message):
        front.hypervolume(ref)


@pytest.mark.parametrize("r, error", [("t", TypeError), ([True], TypeError), (float("nan"), ValueError),
                                      (-0.1, ValueError)])
def test_robust_and_stable_of_a_bad_relative_error_name_the_argument(solved, r, error) -> None:
    front, _ = solved
    with pytest.raises(error, match=r"ParetoSet\.robust: r "):
        front.robust(r)
    with pytest.raises(error, match=r"ParetoSet\.stable: r "):
        front.stable(r)


def test_plot_fronts_of_bad_arguments_name_the_expected_type(solved) -> None:
    front, _ = solved
    with pytest.raises(TypeError, match=r"dse\.plot_fronts: ax must be of type Axes, got str 'x'"):
        dse.plot_fronts([front], ax="x")
    with pytest.raises(TypeError, match=r"fronts must be a sequence of ParetoSet.*\[front\]"):
        dse.plot_fronts(front)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"fronts\[1\] must be of type ParetoSet, got str"):
        dse.plot_fronts([front, "nsga2"])  # type: ignore[list-item]


@pytest.mark.parametrize("genes, shown", [
    (lambda g: g + 0.5, "float64 "),             # fractions were truncated to another mapping
    (lambda g: np.full_like(g, np.nan, dtype=float), "float64 nan"),
    (lambda g: np.ones_like(g, dtype=bool), "bool True"),  # booleans were taken as devices 0 and 1
    (lambda g: [str(v) for v in g], "str"),
])
def test_decode_and_evaluate_of_genes_that_are_not_integers_are_type_errors(solved, genes, shown) -> None:
    front, problem = solved
    genome = genes(np.asarray(front.points[0].genome, dtype=np.int64))
    for call in (problem.decode, problem.evaluate):
        with pytest.raises(TypeError, match=f"genes must be integers, got {shown}") as caught:
            call(genome)
        assert isinstance(caught.value, GenomeError)  # the command line's exit 2


def test_genes_of_integer_value_in_floats_are_those_integers(solved) -> None:
    front, problem = solved
    genome = np.asarray(front.points[0].genome, dtype=np.int64)
    assert (problem.evaluate(genome.astype(float)).F == problem.evaluate(genome).F).all()


def test_certify_refuses_fractional_genes_and_a_front_of_another_problem(solved, other_front) -> None:
    front, problem = solved
    genome = np.asarray(front.points[0].genome, dtype=float) + 0.5
    with pytest.raises(TypeError, match="genes must be integers"):
        dse.certify(problem, [genome], time_limit=1)
    with pytest.raises(ValueError, match=r"dse\.certify: the front solves 'other', not 'tiny'"):
        dse.certify(problem, other_front, time_limit=1)
    with pytest.raises(TypeError, match=r"dse\.certify: front must be a sequence"):
        dse.certify(problem, "genomes", time_limit=1)  # type: ignore[arg-type]
