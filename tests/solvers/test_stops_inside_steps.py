"""The stopping rule inside one long step (``dse.util.interrupt.cut_point``): the seed heuristics of a
CP-SAT run and its model build end at the next check once a stop is requested or the time limit ends,
and the run returns what it had (the seeds found so far), with the status that says why."""

from __future__ import annotations

import time

import pytest

import dse
import dse.heuristics as heuristics
from dse.cost.synthetic import random_tables
from dse.heuristics import base
from dse.mapping.dag import DagProblem
from dse.mapping.dag import cpsat as dag_cpsat
from dse.util.interrupt import Cut, active_token, cut_point, work_limits


def _problem() -> DagProblem:
    return DagProblem(random_tables(3, n_ops=12, n_dev=3, max_preds=2), ("makespan", "energy"), memory=False)


def test_cut_point_follows_the_work_deadline_and_the_token() -> None:
    cut_point("outside every block: never")
    with work_limits(time.monotonic() - 1.0), pytest.raises(Cut) as late:
        cut_point("past the deadline")
    assert not late.value.stopped and "past the deadline" in str(late.value)
    token = dse.solvers.context.StopToken()
    token.request()
    with work_limits(token=token), pytest.raises(Cut) as stopped:
        cut_point()
    assert stopped.value.stopped


def test_seed_heuristics_past_the_deadline_run_only_the_first_and_are_not_cached(monkeypatch) -> None:
    """Past the deadline only the first heuristic (HEFT) runs, to its end: a time limit too short for any
    search still returns its schedule; a stop request cuts even that one (the next test)."""
    problem = _problem()
    ran: list[str] = []
    real = heuristics.run
    monkeypatch.setattr(heuristics, "run", lambda p, name: ran.append(name) or real(p, name))
    with work_limits(time.monotonic() - 1.0):
        assert len(heuristics.seed_genomes(problem)) == 1
    assert ran == ["heft"]
    assert len(heuristics.seed_genomes(problem)) >= 1 and len(ran) == 1 + len(heuristics.names())


def test_a_stop_during_the_seed_heuristics_ends_them_and_keeps_the_seeds_found(monkeypatch) -> None:
    """Before, every one of the 27 heuristics ran after the stop (minutes on a 2,000-task graph on 256
    devices); now the list ends after the heuristic that was running, and its seed is kept."""
    problem = _problem()
    ran: list[str] = []
    real = heuristics.run

    def stopping_second(p: DagProblem, name: str):
        ran.append(name)
        if len(ran) == 2:  # what SIGINT's handler does, while the second heuristic runs
            token = active_token()
            assert token is not None
            token.request()
        return real(p, name)

    monkeypatch.setattr(heuristics, "run", stopping_second)
    front = dse.solve(problem, "cpsat", time_limit=60, seed=0)
    assert len(ran) == 2 < len(heuristics.names())
    assert front.status == "interrupted"
    assert len(front) >= 1 and "heuristic or resumed mappings" in front.stats.message


def test_a_stop_during_the_model_build_ends_the_build(monkeypatch) -> None:
    """The build checks between its phases: a stop while the task bounds are computed ends it before the
    first task's variables, with status interrupted and the phase it reached (before, the whole model was
    built and handed to the search)."""
    problem = _problem()
    real = dag_cpsat.load_task_device_bounds
    built: list[int] = []
    real_tasks = dag_cpsat._task_variables

    def stop_then_bounds(p: DagProblem, **options):
        token = active_token()
        assert token is not None
        token.request()
        return real(p, **options)

    monkeypatch.setattr(dag_cpsat, "load_task_device_bounds", stop_then_bounds)
    monkeypatch.setattr(dag_cpsat, "_task_variables", lambda *a: built.append(1) or real_tasks(*a))
    front = dse.solve(problem, "cpsat", time_limit=60, seed=0, hints=False)
    assert front.status == "interrupted"
    assert "still being built when a stop was requested (the task bounds computed)" in front.stats.message
    assert built == []


def test_the_time_limit_during_the_model_build_ends_it_with_status_time_limit(monkeypatch) -> None:
    problem = _problem()
    real = dag_cpsat.load_task_device_bounds

    def slow_bounds(p: DagProblem, **options):  # the deadline passes while the bounds are computed
        later = time.monotonic() + 1e6
        monkeypatch.setattr(time, "monotonic", lambda: later)
        return real(p, **options)

    monkeypatch.setattr(dag_cpsat, "load_task_device_bounds", slow_bounds)
    front = dse.solve(problem, "cpsat", time_limit=5, seed=0, hints=False)
    monkeypatch.undo()
    assert front.status == "time_limit"
    assert "the time limit ran out (the task bounds computed)" in front.stats.message


def test_a_stop_while_the_list_kernel_loads_ends_heft_before_it_runs(monkeypatch) -> None:
    """Loading the compiled list-scheduling kernel takes up to a second on a cold process; before, a stop
    requested meanwhile still ran HEFT to its end (seconds on a 2,000-task graph on 256 devices)."""
    problem = _problem()
    token = dse.solvers.context.StopToken()
    real = base._list_kernel

    def loading_while_stopped():
        token.request()  # what SIGINT's handler does while the kernel loads
        return real()

    monkeypatch.setattr(base, "_list_kernel", loading_while_stopped)
    with work_limits(token=token), pytest.raises(Cut) as cut:
        heuristics.run(problem, "heft")
    assert cut.value.stopped and "list scheduling" in str(cut.value)
