"""Pieces every solver shares: the front of a population, baselines, the result object, the front of a
run cut short."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from dse.mapping.base import MappingProblem
from dse.mapping.cpsat_common import ModelBuildTimeout
from dse.pareto import (
    INTERRUPTED,
    OPTIMAL,
    TIME_LIMIT,
    FoundBy,
    ParetoPoint,
    ParetoSet,
    SolveStats,
    make_points,
    nondominated,
)
from dse.solvers.certificate import unbounded_certificate
from dse.solvers.context import SolveContext


def front_of(problem: MappingProblem, X: np.ndarray, F: np.ndarray | None = None,
             feasible: np.ndarray | None = None) -> np.ndarray:
    """Genomes of the distinct nondominated feasible rows of ``X`` (evaluated if ``F`` is None)."""
    X = np.asarray(X, dtype=np.int64).reshape(-1, problem.n_genes)
    if F is None or feasible is None:
        ev = problem.evaluate(X)
        F, feasible = ev.F, ev.feasible
    X, F = X[feasible], F[feasible]
    keep = nondominated(F)
    order = np.lexsort(F[keep].T[::-1])
    return X[keep][order]


def baseline_points(problem: MappingProblem, also: np.ndarray | None = None,
                    solver: str = "") -> tuple[dict[str, ParetoPoint], list[ParetoPoint]]:
    """The problem's baselines (single devices, static partition) as labelled points, those of identical
    figures as one (:func:`merge_alike`); with ``also`` (genomes), those genomes as points of ``solver`` too,
    evaluated in the same call (a population evaluates faster than its genomes one by one)."""
    named = problem.baselines()
    extra = np.zeros((0, problem.n_genes), dtype=np.int64) if also is None else np.asarray(also, dtype=np.int64)
    extra = extra.reshape(-1, problem.n_genes)
    if not named and not len(extra):
        return {}, []
    genomes = np.vstack([extra, *named.values()]) if named else extra
    points = make_points(problem, genomes, solver="baseline")
    mine = [dataclasses.replace(p, solver=solver) for p in points[: len(extra)]]
    baselines = dict(zip(named.keys(), points[len(extra):], strict=True))
    return merge_alike(baselines, problem.baseline_classes()), mine


def merge_alike(baselines: dict[str, ParetoPoint], classes: dict[str, str]) -> dict[str, ParetoPoint]:
    """``baselines`` with those of one class (``classes``, by name: the single-device baselines of one
    device kind, :meth:`~dse.mapping.base.MappingProblem.baseline_classes`) whose figures are identical
    (objectives, metrics, feasibility) as one entry: the first one's point, under a name that says which
    others it stands for (:func:`alike_name`: ``only cpu0 (alike: cpu1-cpu127)``), in the order of the
    first ones. A name missing from ``classes`` is a class of its own.

    Each figure, each plot and the reference point read the baselines' values only, and those are kept:
    on 128 CPUs and 128 GPUs two baselines are stored, printed and drawn instead of 256 (evaluating them
    all, which tells which are alike, takes 40 ms there; storing them took 0.1 s and 5 MB of front.json,
    drawing them 0.2 s)."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for name, point in baselines.items():
        key = (classes.get(name, name), point.feasible, *point.objectives.items(), *point.metrics.items())
        groups.setdefault(key, []).append(name)
    return {alike_name(names): baselines[names[0]] for names in groups.values()}


def alike_name(names: Sequence[str]) -> str:
    """``names[0]``, followed by the others it stands for when there are any: the first word they all share
    left out and runs of numbered names written as ranges (``only cpu0`` and ``only cpu1`` ... ``only cpu9``:
    ``only cpu0 (alike: cpu1-cpu9)``)."""
    first, others = names[0], list(names[1:])
    if not others:
        return first
    lead = first[: first.find(" ") + 1]
    if not all(name.startswith(lead) for name in others):
        lead = ""
    return f"{first} (alike: {', '.join(_ranges([name[len(lead):] for name in others]))})"


def _ranges(names: Sequence[str]) -> list[str]:
    """``names`` with each run of three or more consecutive numbers after one stem (``gpu1``, ``gpu2``,
    ``gpu3``) written as ``gpu1-gpu3``."""
    out: list[str] = []
    run: list[str] = []
    for name in [*names, ""]:  # "" ends the last run
        if run and _next_in_run(run[-1], name):
            run.append(name)
            continue
        out += [f"{run[0]}-{run[-1]}"] if len(run) >= 3 else run
        run = [name]
    return out


def _next_in_run(previous: str, name: str) -> bool:
    """Whether ``name`` is ``previous`` with its trailing number (written without leading zeros) plus one."""
    a, b = re.fullmatch(r"(.*?)(0|[1-9]\d*)", previous), re.fullmatch(r"(.*?)(0|[1-9]\d*)", name)
    return bool(a and b and a[1] == b[1] and int(b[2]) == int(a[2]) + 1)


def result(
    problem: MappingProblem,
    genomes: np.ndarray,
    solver: str,
    status: str,
    stats: SolveStats,
    proven: list[bool] | bool = False,
    notes: tuple[str, ...] = (),
    points: list[ParetoPoint] | None = None,
    baselines: dict[str, ParetoPoint] | None = None,
    exact: bool = False,
    found_by: Sequence[FoundBy | None] | None = None,
) -> ParetoSet:
    """Wrap front genomes as a :class:`ParetoSet` sorted by the internal objectives (``points``: those
    genomes already made into points by :func:`~dse.pareto.make_points`, so they are not evaluated twice;
    ``baselines``: the problem's baseline points when already made, see :func:`baseline_points`; ``exact``:
    made by an exact solver, see :class:`~dse.pareto.ParetoSet`; ``found_by``: who found each genome, in a
    distributed run)."""
    points = make_points(problem, genomes, solver, proven, found_by) if points is None else list(points)
    points.sort(key=lambda p: p.internal)
    complete = status == OPTIMAL
    return ParetoSet(
        problem=problem.name,
        objectives=problem.objectives,
        points=tuple(points),
        solver=solver,
        status=status,
        complete=complete,
        stats=stats,
        baselines=baseline_points(problem)[0] if baselines is None else baselines,
        notes=notes,
        exact=exact,
    )


#: The message of a CP-SAT run stopped before its model was built (:func:`unsearched`).
STOPPED_BEFORE_BUILD = "stopped before the model was built"


def unsearched(problem: MappingProblem, ctx: SolveContext, status: str, message: str,
               seeds: Sequence[np.ndarray] = ()) -> ParetoSet:
    """The front of a CP-SAT run that ended before its search (a stop, or a model build that used up the
    time limit): the feasible, nondominated ``seeds`` it was handed or computed (none proven), so a found
    mapping is never lost, with a certificate that proves no bound (the problem's own objective bounds only
    while the run still has time and no stop was requested)."""
    X = front_of(problem, np.array(seeds, dtype=np.int64)) if len(seeds) else np.zeros((0, problem.n_genes),
                                                                                      dtype=np.int64)
    kept = f"; kept the {len(X)} best of {len(seeds)} heuristic or resumed mappings" if len(seeds) else ""
    # the problem's own bounds take seconds to minutes on a large problem: not once the limit or a stop came
    bounds = ctx.stop_status() is None
    skipped = "" if bounds else "; the problem's own objective bounds were not computed (no time left)"
    stats = SolveStats(wall_s=ctx.elapsed(), message=message + kept + skipped)
    front = result(problem, X, "cpsat", status, stats, exact=True)
    return dataclasses.replace(front, certified=unbounded_certificate(problem, front.internal(), bounds))


def build_timed_out(problem: MappingProblem, exc: ModelBuildTimeout, ctx: SolveContext,
                    seeds: Sequence[np.ndarray] = ()) -> ParetoSet:
    """The front of a CP-SAT run whose model build used up the time limit (status ``time_limit``) or was
    stopped (``interrupted``), see :func:`unsearched`."""
    return unsearched(problem, ctx, INTERRUPTED if exc.stopped else TIME_LIMIT, str(exc), seeds)


def with_seeds(problem: MappingProblem, X: np.ndarray, proven: Sequence[bool],
               seeds: Sequence[np.ndarray]) -> tuple[np.ndarray, list[bool]]:
    """The nondominated feasible rows of ``X`` (a solver's front, ``proven`` per row) and ``seeds``
    together, ``X``'s rows first on equal values: what a cut-short solver returns, never less than the
    seeds it was handed. Seeds are not proven."""
    if not len(seeds):
        return X, list(proven)
    S = problem.repair(np.array(seeds, dtype=np.int64).reshape(-1, problem.n_genes))
    both = np.vstack([X.reshape(-1, problem.n_genes), S])
    flags = [*proven, *([False] * len(S))]
    ev = problem.evaluate(both)
    rows = np.flatnonzero(ev.feasible)
    keep = rows[nondominated(ev.F[rows])]
    return both[keep], [flags[k] for k in keep]

