"""Solvers behind one entry point, :func:`solve`.

``cpsat`` (exact, proven), ``nsga2`` (approximate, any size), ``exhaustive``
(tiny instances) and ``heuristic:NAME`` (a family's classic heuristics) all
return a :class:`~dse.pareto.ParetoSet`, take a ``seed`` and a ``time_limit``
and return the best set found so far when time runs out. Solvers register in
:mod:`dse.solvers.registry`.
"""

from __future__ import annotations

import time
from typing import Any

from dse.mapping.base import MappingProblem
from dse.pareto import ParetoSet
from dse.solvers.registry import UnknownSolverError, check_options, lookup, solvers
from dse.util.jit import time_limit_ends
from dse.util.limits import check_seed, check_time_limit
from dse.util.progress import Progress

__all__ = ["UnknownSolverError", "solve", "solvers"]


def solve(
    problem: MappingProblem,
    solver: str = "cpsat",
    time_limit: float = 60.0,
    seed: int = 0,
    progress: bool | Progress | None = None,
    **options: Any,
) -> ParetoSet:
    """Solve ``problem`` with ``solver`` and return its Pareto set.

    ``solver``: a registered name (``cpsat``, ``nsga2``, ``exhaustive``) or
    ``heuristic:NAME``. ``progress``: True/False forces terminal progress
    on/off; None shows it when stderr is a terminal. Extra ``options`` go to
    the solver.

    Raises :class:`UnknownSolverError` (a ``ValueError``) for an unknown name,
    listing the known ones; :class:`~dse.errors.SpecError` (a ``ValueError``)
    for a ``seed`` outside [0, 2**31 - 1] or a ``time_limit`` that is not a
    number of seconds in (0, 30 days] (as a spec or the command line), or an
    ``options`` setting the solver does not know or outside its range
    (``dse.solvers.registry.solvers()[name].options`` lists them); and
    ``NotImplementedError`` when the solver does not support the problem
    (e.g. ``cpsat`` without an exact formulation).

    Example::

        front = dse.solve(problem, solver="cpsat", time_limit=30, seed=0)
    """
    time_limit = check_time_limit(time_limit, "dse.solve", "time_limit")
    seed = check_seed(seed, "dse.solve", "seed")
    entries = lookup(solver, problem)
    if solver == "all" or len(entries) != 1:
        raise UnknownSolverError(f"dse.solve runs one solver; {solver!r} names {len(entries)}: "
                                 "call it once per solver")
    entry, fixed = entries[0]
    reason = entry.supports(problem)
    if reason is not None:
        raise NotImplementedError(reason)
    options = check_options(entry, options)
    reporter = progress if isinstance(progress, Progress) else Progress(entry.name, enabled=progress)
    with time_limit_ends(time.monotonic() + time_limit):  # no kernel compiles inline past the limit
        return entry.run(problem, time_limit=time_limit, seed=seed, progress=reporter, **fixed, **options)
