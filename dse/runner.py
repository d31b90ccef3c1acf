"""Running a resolved spec's solvers: one function for ``dse solve`` and for ``dse batch`` jobs.

:func:`run_spec_solvers` runs every solver a spec's ``solver.name`` stands for with the spec's
per-solver options, between stops; :func:`check_some_feasible` turns "no feasible point in any
front" into the problem's diagnosis (exit 3).
"""

from __future__ import annotations

import inspect
import signal
import sys

import numpy as np

from dse import solvers  # solvers.solve looked up at each call (tests and embedders may replace it)
from dse.errors import InfeasibleError, SpecError
from dse.pareto import ParetoSet
from dse.progress import Progress
from dse.solvers.registry import collect_seeds, lookup


def run_spec_solvers(problem, settings, name: str, time_limit: float, seed: int, token, *,
                     quiet: bool = False, on_front=None, resume: list[np.ndarray] | None = None,
                     source: str = "<spec>") -> tuple[list[ParetoSet], list[str]]:
    """Run every solver ``name`` stands for (one name, ``all`` or ``heuristic:NAME``) on ``problem``
    with the spec's per-solver ``settings.options``; returns the fronts found and a note per solver
    skipped. Stops between solvers once ``token`` is stopped; ``on_front(fronts)`` is called after
    every solver; ``resume`` genomes (a previous front) go to every solver that takes a ``resume`` option.
    Raises :class:`~dse.solvers.UnknownSolverError` for an unknown name, and :class:`SpecError` (naming
    ``source``) when every solver skipped the problem and no stop was requested."""
    entries = lookup("all") if name == "all" else lookup(name, problem)
    show = False if quiet else None
    fronts: list[ParetoSet] = []
    skipped: list[str] = []
    for entry, _fixed in entries:
        if token.stopped:
            break
        reason = entry.supports(problem)
        if reason is not None:
            print(f"note: {entry.name} skipped: {reason}", file=sys.stderr)
            skipped.append(f"{entry.name}: {reason}")
            continue
        label = name if name.startswith("heuristic:") else entry.name
        configured = settings.options.get(entry.name)
        options = dict(configured) if isinstance(configured, dict) else {}
        if resume and "resume" in inspect.signature(entry.run).parameters:
            options["resume"] = resume
        if not quiet:
            print(f"[{entry.name}] solving (time limit {time_limit:g} s; Ctrl-C stops and keeps what was found)",
                  file=sys.stderr, flush=True)
        try:
            front = solvers.solve(problem, label, time_limit=time_limit, seed=seed,
                          progress=Progress(entry.name, enabled=show), **options)
        except KeyboardInterrupt:  # a stop that reached us as an exception: keep what the others found
            token.request(signal.SIGINT)
            break
        fronts.append(front)
        if on_front is not None:
            on_front(fronts)
        if front.status == "interrupted":
            token.request()
    if not fronts and skipped and not token.stopped:
        raise SpecError(source, "solver.name", name, "no solver can take this problem: " + "; ".join(skipped))
    return fronts, skipped


def check_some_feasible(problem, fronts: list[ParetoSet]) -> None:
    """Raise :class:`InfeasibleError` with the problem's diagnosis when no front has a feasible point."""
    if not any(p.feasible for f in fronts for p in f.points):
        proven = any(f.status == "infeasible" for f in fronts)
        raise InfeasibleError(f"infeasible: {problem.diagnose(candidates=collect_seeds(problem), proven=proven)}")
