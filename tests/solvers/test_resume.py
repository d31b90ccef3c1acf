"""``dse solve --resume DIR``: a previous run's front seeds NSGA-II and lets CP-SAT continue.

Runs are interrupted the way a user interrupts them: a SIGINT to this process (see
:mod:`dse.util.interrupt`), sent from the NSGA-II callback at a fixed generation so the test is
deterministic, or a CP-SAT time limit. Golden fronts come from exhaustive search.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest
import yaml

import dse
from dse import cli
from dse.cost.synthetic import random_tables
from dse.mapping.pipeline import PipelineProblem
from dse.pareto import ParetoSet, read_front_genomes
from dse.runs.spec import build_problem, load_spec
from dse.solvers.context import solve_context
from dse.solvers.cpsat import CpsatOptions, solve_cpsat_boxes

SPEC = {
    "name": "resume",
    "family": "pipeline",
    "platform": "edge_soc",
    "workload": {"builder": "random_pipeline", "n_ops": 12, "seed": 3},
    "objectives": ["throughput", "energy"],
    "solver": {"name": "nsga2", "time_limit_s": 5, "seed": 0, "options": {"nsga2": {"generations": 5}}},
}


def _genomes(front: ParetoSet) -> list[np.ndarray]:
    return [np.array(p.genome) for p in front.points]


def _weakly_dominates_all(new: np.ndarray, old: np.ndarray) -> bool:
    """Every row of ``old`` is matched or beaten in every objective by some row of ``new`` (minimization)."""
    return bool(np.all(np.any(np.all(new[None, :, :] <= old[:, None, :], axis=2), axis=1)))


def _interrupt_at(generation: int):
    def callback(gen: int, elapsed: float, X: np.ndarray, F: np.ndarray) -> None:
        if gen == generation:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does; the solver stops after this generation

    return callback


def test_cli_resume_reads_the_previous_front_and_never_loses_it(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    first, second = tmp_path / "first", tmp_path / "second"
    problem = build_problem(load_spec(spec))
    first.mkdir()
    dse.solve(problem, "nsga2", seed=0, generations=3, patience=None).to_json(first / "front.json")  # one front's JSON
    assert cli.main(["solve", str(spec), "--quiet", "--out", str(second), "--resume", str(first),
                     "--solver", "nsga2"]) == 0
    old = np.array([p["internal"] for p in json.loads((first / "front.json").read_text())["points"]])
    new = np.array([p["internal"] for p in json.loads((second / "front.json").read_text())["fronts"][0]["points"]])
    assert _weakly_dominates_all(new, old)
    assert read_front_genomes(first / "front.json")


def test_cli_resume_rejects_a_missing_or_foreign_front(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    assert cli.main(["solve", str(spec), "--quiet", "--resume", str(tmp_path / "nowhere")]) == 2
    assert "--resume" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "front.json").write_text(json.dumps({"problem": "x", "fronts": [{"points": [{"genome": [0, 1]}]}]}))
    assert cli.main(["solve", str(spec), "--quiet", "--resume", str(other)]) == 2
    err = capsys.readouterr().err
    assert "does not fit this problem" in err and "Traceback" not in err
    (other / "front.json").write_text("{not json")
    assert cli.main(["solve", str(spec), "--quiet", "--resume", str(other)]) == 2


@pytest.mark.parametrize("seed", range(2))
def test_interrupted_and_resumed_nsga2_ends_no_worse(seed: int) -> None:
    """Same total budget (generations) with and without an interruption half-way, on a small seeded
    instance whose exact front (exhaustive search) both must reach."""
    problem = PipelineProblem(random_tables(seed, n_ops=7, n_dev=3), ("throughput", "energy"), memory=False)
    exact = dse.solve(problem, "exhaustive")
    budget = 30
    whole = dse.solve(problem, "nsga2", seed=seed, pop_size=30, generations=budget, patience=None)
    part = dse.solve(problem, "nsga2", seed=seed, pop_size=30, generations=budget, patience=None,
                       callback=_interrupt_at(budget // 2))
    assert part.status == "interrupted" and part.stats.generations == budget // 2
    resumed = dse.solve(problem, "nsga2", seed=seed, pop_size=30, generations=budget - part.stats.generations,
                          patience=None, resume=_genomes(part))
    assert _weakly_dominates_all(resumed.internal(), part.internal())
    assert _weakly_dominates_all(resumed.internal(), whole.internal())
    assert sorted(map(tuple, resumed.internal().tolist())) == sorted(map(tuple, exact.internal().tolist()))


def test_resumed_nsga2_keeps_a_front_it_cannot_improve_in_one_generation() -> None:
    """Resuming from the exact front with a budget of one generation returns that front (the archive
    starts from it), even though one generation from random genomes would not find it."""
    problem = PipelineProblem(random_tables(5, n_ops=8, n_dev=3), ("throughput", "energy"), memory=False)
    exact = dse.solve(problem, "exhaustive")
    resumed = dse.solve(problem, "nsga2", seed=0, pop_size=10, generations=1, patience=None, use_heuristic_seeds=False,
                          resume=_genomes(exact))
    assert sorted(map(tuple, resumed.internal().tolist())) == sorted(map(tuple, exact.internal().tolist()))


@pytest.mark.parametrize("objectives", [("throughput", "energy"), ("throughput", "energy", "latency")])
def test_cpsat_resume_continues_to_the_complete_front(objectives: tuple[str, ...]) -> None:
    """A CP-SAT run that had found half the front, resumed: the complete proven front, as exhaustive search
    gives it, in fewer solver calls than a fresh run of the same driver (the old points are not searched
    again)."""
    problem = PipelineProblem(random_tables(4, n_ops=5, n_dev=3), objectives, memory=False)
    exact = dse.solve(problem, "exhaustive")
    with solve_context(seed=0, time_limit=30) as ctx:
        fresh = solve_cpsat_boxes(problem, ctx, CpsatOptions(workers=2))
    assert fresh.status == "optimal" and len(fresh) >= 4
    half = _genomes(fresh)[: len(fresh) // 2]  # the points an interrupted run had found
    resumed = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2, resume=half)
    assert resumed.status == "optimal" and resumed.complete and all(p.proven for p in resumed.points)
    assert sorted(map(tuple, resumed.internal().tolist())) == sorted(map(tuple, exact.internal().tolist()))
    assert resumed.stats.solver_calls < fresh.stats.solver_calls
