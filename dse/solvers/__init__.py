"""Solvers behind one entry point, :func:`solve`.

``cpsat`` (exact, proven), ``nsga2`` (approximate, any size), ``exhaustive``
(tiny instances), ``memetic`` and ``lns`` (dag) and ``heuristic:NAME`` (a family's classic heuristics)
all return a :class:`~dse.pareto.ParetoSet`, take a ``seed`` and a ``time_limit``
and return the best set found so far when time runs out. Each is ``run(problem, ctx, options)``: a
:class:`~dse.solvers.context.SolveContext` (:mod:`dse.solvers.context`) and its options model; solvers
register in :mod:`dse.solvers.registry`.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from dse.errors import InfeasibleError, SpecError
from dse.mapping.base import PROBLEM_HINT, MappingProblem
from dse.pareto import INFEASIBLE, INTERRUPTED, ParetoSet
from dse.solvers.checkpoint import Checkpoint
from dse.solvers.context import (
    CALLBACK,
    CHECKPOINT,
    CLIENT,
    RESUME,
    SEEDS,
    StepCallback,
    solve_context,
)
from dse.solvers.registry import (
    Solver,
    UnknownSolverError,
    check_options,
    collect_seeds,
    lookup,
    solvers,
)
from dse.util.arguments import expect
from dse.util.interrupt import stop_requested
from dse.util.limits import check_seed, check_time_limit
from dse.util.progress import Progress

__all__ = ["INFEASIBLE_NOTE", "UnknownSolverError", "solve", "solvers"]

#: How the note that diagnoses a solve with no feasible point begins (:func:`diagnosed`); ``dse solve`` exits 3
#: with that note as its message.
INFEASIBLE_NOTE = "infeasible: "

#: Per problem its diagnoses by whether infeasibility was proven (``dse solve --solver all`` diagnoses once).
_DIAGNOSES: weakref.WeakKeyDictionary[MappingProblem, dict[bool, str]] = weakref.WeakKeyDictionary()


def solve(
    problem: MappingProblem,
    solver: str = "cpsat",
    time_limit: float = 60.0,
    seed: int = 0,
    progress: bool | Progress | None = None,
    *,
    resume: Sequence[np.ndarray] = (),
    seeds: Sequence[np.ndarray] = (),
    callback: StepCallback | None = None,
    client: Any = None,
    checkpoint: Checkpoint | None = None,
    **options: Any,
) -> ParetoSet:
    """Solve ``problem`` with ``solver`` and return its Pareto set.

    ``solver``: a registered name (``cpsat``, ``nsga2``, ``exhaustive``, ...) or
    ``heuristic:NAME``. ``progress``: True/False forces terminal progress
    on/off; None shows it when stderr is a terminal. ``options`` are the solver's settings
    (``dse.solvers.registry.solvers()[name].options`` lists them; the rest keep that model's defaults).
    ``resume`` (the genomes of a previous front to continue from), ``seeds`` (extra starting genomes)
    ``callback(step, elapsed_s, front_X, front_F)`` (after each step; True stops) and ``client`` (a Dask
    ``distributed.Client``: ``cpsat`` farms its regions out to the cluster,
    :mod:`dse.solvers.cpsat_distributed`; ``nsga2``, ``memetic`` and ``lns`` run islands there) and ``checkpoint`` (a :class:`~dse.solvers.checkpoint.Checkpoint`:
    ``cpsat``'s box search keeps its state there and goes on from a previous one) go to the solvers that
    read them (:mod:`dse.solvers.context`).

    Raises ``TypeError`` when ``problem`` is not a :class:`~dse.mapping.base.MappingProblem` (a spec
    path or a spec: build the problem with :func:`dse.load_problem` first) or ``solver`` is not a
    string; :class:`UnknownSolverError` (a ``ValueError``) for an unknown name,
    listing the known ones; :class:`~dse.errors.SpecError` (a ``ValueError``)
    for a ``seed`` outside [0, 2**31 - 1] or a ``time_limit`` that is not a
    number of seconds in (0, 30 days] (as a spec or the command line), an
    ``options`` setting the solver does not know or outside its range, or a ``resume``, ``seeds``
    or ``callback`` the solver does not read; and
    ``NotImplementedError`` when the solver does not support the problem
    (e.g. ``cpsat`` without an exact formulation). A front with no feasible point carries the problem's
    diagnosis in its ``notes`` (:func:`diagnosed`), the line ``dse solve`` exits with.

    Example::

        front = dse.solve(problem, solver="cpsat", time_limit=30, seed=0)
    """
    expect(problem, MappingProblem, "dse.solve", "problem", PROBLEM_HINT)
    expect(solver, str, "dse.solve", "solver", "a solver's name, e.g. 'cpsat'")
    time_limit = check_time_limit(time_limit, "dse.solve", "time_limit")
    seed = check_seed(seed, "dse.solve", "seed")
    if checkpoint is not None:
        expect(checkpoint, Checkpoint, "dse.solve", "checkpoint", "dse.solvers.checkpoint.Checkpoint(write_to, key)")
    entries = lookup(solver, problem)
    if solver == "all" or len(entries) != 1:
        raise UnknownSolverError(f"dse.solve runs one solver; {solver!r} names {len(entries)}: "
                                 "call it once per solver")
    entry, fixed = entries[0]
    reason = entry.supports(problem)
    if reason is not None:
        raise NotImplementedError(reason)
    settings = check_options(entry, options, fixed=fixed)
    _check_inputs(entry, {RESUME: f"{len(resume)} genomes" if len(resume) else None,
                          SEEDS: f"{len(seeds)} genomes" if len(seeds) else None,
                          CALLBACK: "a function" if callback is not None else None,
                          CLIENT: "a Dask client" if client is not None else None,
                          CHECKPOINT: "a checkpoint" if checkpoint is not None else None})
    reporter = progress if isinstance(progress, Progress) else Progress(entry.name, enabled=progress)
    entry.preload(problem)
    with solve_context(seed, time_limit, reporter, resume=resume, seeds=seeds, callback=callback,
                       client=client, checkpoint=checkpoint) as ctx:
        front = entry.run(problem, ctx, settings)
    return diagnosed(problem, front)


def diagnosed(problem: MappingProblem, front: ParetoSet) -> ParetoSet:
    """``front``, with one more note when it holds no feasible point and was not interrupted: ``infeasible:``
    and :meth:`problem.diagnose <dse.mapping.base.MappingProblem.diagnose>` (which constraint cannot be met
    and by how much), given the family's heuristic and baseline genomes and whether the solver proved that
    no feasible mapping exists (status ``infeasible``; a diagnosis proven for the problem by an earlier front
    serves every later one). A front that has the note already, and one whose diagnosis a stop request
    (Ctrl-C, SIGTERM) cuts short, are returned as they are."""
    if (front.status == INTERRUPTED or stop_requested() or any(p.feasible for p in front.points)
            or any(n.startswith(INFEASIBLE_NOTE) for n in front.notes)):
        return front
    known = _DIAGNOSES.setdefault(problem, {})
    proven = front.status == INFEASIBLE or True in known
    if proven not in known:
        try:
            line = problem.diagnose(candidates=collect_seeds(problem), proven=proven)
        except InfeasibleError as exc:  # a static check proves it (an op no device can run, a deadline below
            line = str(exc)             # the critical path): its own line
        except KeyboardInterrupt:  # stopped while diagnosing: the front as the solver left it
            return front
        if stop_requested():  # its searches were cut short: not a diagnosis
            return front
        known[proven] = line
    return dataclasses.replace(front, notes=(*front.notes, INFEASIBLE_NOTE + known[proven]))


def _check_inputs(entry: Solver[Any], given: dict[str, str | None]) -> None:
    """:class:`SpecError` naming the first input of ``given`` (name: what was given, None: nothing) that
    ``entry`` does not read."""
    for name, what in given.items():
        if what is not None and name not in entry.inputs:
            reads = f"it reads {', '.join(sorted(entry.inputs))}" if entry.inputs else "it reads none of them"
            raise SpecError("dse.solve", name, what, f"{entry.name} does not read {name} ({reads})")
