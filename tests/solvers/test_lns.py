"""The large-neighbourhood search (``lns``): pinned windows keep the other tasks' devices, the search
reaches the brute-force optimum on tiny instances once its windows cover the schedule, never returns
worse than its best seed, and keeps the incumbent when stopped."""

from __future__ import annotations

import signal

import numpy as np
import pandas as pd
import pytest

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.solvers.registry import collect_seeds, solvers
from tests.heuristics.test_tf_rules_exact import tf_tiny
from tests.mapping.dag.test_dag_cpsat import brute_force
from tests.solvers.test_interrupts import _interrupt_soon


def best_seed(problem: DagProblem) -> int:
    ev = problem.evaluate(np.array(collect_seeds(problem)))
    return int(ev.F[ev.feasible, 0].min())


def test_pinned_keeps_the_other_tasks_devices_and_the_lazy_transfer_tables() -> None:
    problem = DagProblem(random_tables(3, n_ops=8, n_dev=3, disallow=0.0), ("makespan",), memory=False)
    genome = collect_seeds(problem)[0]
    free = np.zeros(problem.n_tasks, dtype=bool)
    free[[2, 5]] = True
    window = problem.pinned(genome, free)
    assert window.tables.allowed[~free].sum(axis=1).tolist() == [1] * 6
    assert (window.tables.allowed[~free].argmax(axis=1) == genome[: problem.n_tasks][~free]).all()
    assert (window.tables.allowed[free] == problem.tables.allowed[free]).all()
    rated = problem.tables.replaced(transfer_time=None, transfer_energy=None)
    assert not rated.replaced(allowed=window.tables.allowed).__dict__["_transfer_time_explicit"]


@pytest.mark.parametrize("seed", range(4))
def test_reaches_the_optimum_on_tiny_instances(seed: int) -> None:
    """Golden value: brute force over every assignment and order (TF send rule on odd seeds). With no
    local search first, only the windows can close the gap from the best seed; the windows widen until
    one frees every task, whose optimal solve proves the incumbent optimal and ends the search."""
    problem = tf_tiny(seed) if seed % 2 else DagProblem(random_tables(seed, n_ops=5, n_dev=3, max_preds=3),
                                                        ("makespan",), memory=False)
    _, F = brute_force(problem)
    front = dse.solve(problem, "lns", time_limit=4.0, seed=0, warm_share=0.0, step_seconds=1.0, workers=1)
    assert front.points[0].internal[0] == F[:, 0].min() <= best_seed(problem)
    assert front.status == "optimal" and front.points[0].proven
    assert "windows re-solved" in front.stats.message


def test_refuses_what_it_cannot_search() -> None:
    reason = solvers()["lns"].supports(DagProblem(random_tables(1, n_ops=4, n_dev=2), ("makespan", "energy")))
    assert reason is not None and "one objective" in reason


def test_a_stop_request_keeps_the_incumbent() -> None:
    problem = DagProblem(random_tables(11, n_ops=80, n_dev=4, disallow=0.0, max_preds=3), ("makespan",),
                         memory=False)
    before = signal.getsignal(signal.SIGINT)
    timer = _interrupt_soon(2.0)
    front = dse.solve(problem, solver="lns", time_limit=60, seed=0, progress=False)
    timer.cancel()
    assert front.status == "interrupted" and front.stats.wall_s < 10.0
    assert front.points[0].internal[0] <= best_seed(problem)
    assert signal.getsignal(signal.SIGINT) is before


def test_cli_runs_it_on_a_spec(tmp_path, capsys) -> None:
    """Topcuoglu et al. 2002's example: HEFT's published 80; the windows reach CP-SAT's proven optimum."""
    from dse import cli

    code = cli.main(["solve", "problems/topcuoglu2002.yaml", "--solver", "lns", "--time-limit", "4",
                     "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    frame = pd.read_csv(tmp_path / "out" / "front.csv")
    proven = dse.solve(dse.load_problem("problems/topcuoglu2002.yaml"), solver="cpsat", time_limit=20, seed=0,
                       progress=False)
    assert proven.status == "optimal"
    assert set(frame["solver"]) == {"lns"} and len(frame) == 1
    assert frame["makespan_tu"].iloc[0] == proven.points[0].internal[0] < 80


def test_no_feasible_schedule_returns_no_point() -> None:
    """A deadline below the critical path: no schedule meets it, so the incumbent is never returned (and
    the memetic local search under it reports progress without a makespan)."""

    problem = DagProblem(random_tables(5, n_ops=5, n_dev=2, disallow=0.0), ("makespan",), memory=False, deadline=1)
    front = dse.solve(problem, "lns", time_limit=1.0, seed=0, step_seconds=0.3, workers=1)
    assert len(front) == 0 and front.status == "time_limit"
    assert len(dse.solve(problem, "memetic", time_limit=0.5, seed=0)) == 0
