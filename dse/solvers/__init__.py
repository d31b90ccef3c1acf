"""Solvers behind one entry point, :func:`solve`.

``cpsat`` (exact, proven), ``nsga2`` (approximate, any size) and
``exhaustive`` (tiny instances) all return a :class:`~dse.pareto.ParetoSet`,
take a ``seed`` and a ``time_limit`` and return the best set found so far
when time runs out.
"""

from __future__ import annotations

from typing import Any

from dse.mapping.base import MappingProblem
from dse.pareto import ParetoSet
from dse.progress import Progress

SOLVERS = ("cpsat", "nsga2", "exhaustive")


def solve(
    problem: MappingProblem,
    solver: str = "cpsat",
    time_limit: float = 60.0,
    seed: int = 0,
    progress: bool | Progress | None = None,
    **options: Any,
) -> ParetoSet:
    """Solve ``problem`` with ``solver`` and return its Pareto set.

    ``progress``: True/False forces terminal progress on/off; None shows it
    when stderr is a terminal. Extra ``options`` go to the solver function.
    Raises ``ValueError`` for an unknown solver name.

    Example::

        front = dse.solve(problem, solver="cpsat", time_limit=30, seed=0)
    """
    reporter = progress if isinstance(progress, Progress) else Progress(solver, enabled=progress)
    if solver == "cpsat":
        from dse.solvers.cpsat import solve_cpsat

        return solve_cpsat(problem, time_limit=time_limit, seed=seed, progress=reporter, **options)
    if solver == "nsga2":
        from dse.solvers.nsga2 import solve_nsga2

        return solve_nsga2(problem, time_limit=time_limit, seed=seed, progress=reporter, **options)
    if solver == "exhaustive":
        from dse.solvers.exhaustive import solve_exhaustive

        return solve_exhaustive(problem, time_limit=time_limit, seed=seed, progress=reporter, **options)
    if solver.startswith("heuristic:"):
        from dse.solvers.heuristic import solve_heuristic

        return solve_heuristic(problem, solver.split(":", 1)[1], time_limit=time_limit, seed=seed)
    raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)} or heuristic:NAME")
