"""The large-neighbourhood search's windows: CP-SAT re-solves a window of one schedule with every other task
on its device (:func:`repair_window`), one window after another (:func:`search_windows`), in this process
(:mod:`dse.solvers.lns`) or in an island's epoch on a Dask worker (:mod:`dse.solvers.lns_islands`).

A window is a random interval ``width`` of the incumbent's makespan wide; the tasks that run in it are
*free*. A better schedule becomes the incumbent; a window proven optimal widens the next ones by a
quarter (up to the whole schedule), one left unfinished narrows them by a fifth. A window that frees every
task is the whole problem: once it is proven optimal, so is the incumbent, and the windows end there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.cpsat_common import ModelBuildTimeout
from dse.util.interrupt import StopToken, run_cpsat

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

__all__ = ["LAST_WINDOW_S", "MIN_WIDTH", "START_WIDTH", "Windows", "repair_window", "search_windows"]

#: Narrowest and starting window, as shares of the incumbent's makespan.
MIN_WIDTH = 0.05
START_WIDTH = 0.25
#: No window starts with fewer seconds left.
LAST_WINDOW_S = 0.05


def repair_window(problem: DagProblem, incumbent: np.ndarray, free: np.ndarray, step_seconds: float,
                  wall_seconds: float, seed: int, workers: int, token: StopToken,
                  deterministic_s: float | None = None) -> tuple[np.ndarray | None, bool]:
    """CP-SAT on ``problem`` with the tasks outside ``free`` on their ``incumbent`` devices, built and
    solved within ``step_seconds`` and never past ``wall_seconds`` (and, given ``deterministic_s``, within
    that much of CP-SAT's deterministic time): ``(genome or None, proven)``, the genome only when it is
    better than the incumbent (feasible where the incumbent is not, else shorter)."""
    from ortools.sat.python import cp_model

    window = problem.pinned(incumbent, free)
    try:  # the build counts against the window's seconds (a large window may not fit them)
        form = window.cpsat(seeds=[incumbent], deadline=time.monotonic() + min(step_seconds, wall_seconds))
    except ModelBuildTimeout:
        return None, False
    form.model.minimize(form.objective_vars[0])
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.max_time_in_seconds = max(0.01, min(step_seconds, wall_seconds))
    if deterministic_s is not None:
        params.max_deterministic_time = deterministic_s
    params.random_seed = seed
    params.num_workers = workers
    status = run_cpsat(solver, form.model, token)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, False
    found = form.to_genome(solver)
    ev = problem.evaluate(np.stack([found, incumbent]))
    better = bool(ev.feasible[0] and (not ev.feasible[1] or ev.F[0, 0] < ev.F[1, 0]))  # feasibility first
    return (found if better else None), status == cp_model.OPTIMAL


@dataclass(frozen=True)
class Windows:
    """What a run of windows ended on: the ``incumbent``, the ``width`` of its next window, the windows
    re-solved, those that ``improved`` the incumbent, and whether one that freed every task was proven
    optimal (``whole``: the incumbent is optimal)."""

    incumbent: np.ndarray
    width: float
    windows: int
    improved: int
    whole: bool


def search_windows(problem: DagProblem, incumbent: np.ndarray, rng: np.random.Generator, width: float,
                   step_seconds: float, workers: int, token: StopToken, go_on: Callable[[int], bool],
                   remaining: Callable[[], float], report: Callable[[str], None] | None = None,
                   deterministic_s: float | None = None) -> Windows:
    """Windows of ``incumbent``'s schedule (module docstring), the first ``width`` of its makespan wide, one
    after another while ``go_on(windows so far)`` and more than :data:`LAST_WINDOW_S` of the ``remaining()``
    seconds are left, each solved by CP-SAT with ``workers`` search workers within ``step_seconds`` (and
    ``deterministic_s`` of deterministic time when given), stopped through ``token``; the windows'
    positions and CP-SAT's seeds are drawn from ``rng``. ``report`` gets a line after each window.
    Returns the :class:`Windows` it ended on."""
    windows = improved = 0
    whole = False
    best = float(problem.evaluate(incumbent[None, :]).F[0, 0])
    while go_on(windows) and remaining() > LAST_WINDOW_S:
        schedule = problem.schedule(incumbent, insertion=False)
        span = max(int(schedule.makespan), 1)
        low = rng.uniform(0.0, max(1.0 - width, 0.0)) * span
        free = (schedule.finish >= low) & (schedule.start <= low + width * span)
        found, proven = repair_window(problem, incumbent, free, step_seconds, remaining(),
                                      int(rng.integers(1 << 30)), workers, token, deterministic_s)
        windows += 1
        if found is not None:
            incumbent, improved = found, improved + 1
            best = float(problem.evaluate(incumbent[None, :]).F[0, 0])
        if report is not None:
            report(f"window {windows} ({int(free.sum())} tasks free), makespan {int(best):,}")
        if proven and free.all():  # the whole problem, solved to optimality: nothing left to search
            whole = True
            break
        width = min(1.0, width * 1.25) if proven else max(MIN_WIDTH, width * 0.8)
    return Windows(incumbent, width, windows, improved, whole)
