"""Pieces every solver shares: the front of a population, baselines, the result object."""

from __future__ import annotations

import dataclasses

import numpy as np

from dse.mapping.base import MappingProblem
from dse.pareto import ParetoPoint, ParetoSet, SolveStats, make_points, nondominated


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
    """The problem's baselines (single devices, static partition) as labelled points; with ``also``
    (genomes), those genomes as points of ``solver`` too, evaluated in the same call (a population
    evaluates faster than its genomes one by one)."""
    named = problem.baselines()
    extra = np.zeros((0, problem.n_genes), dtype=np.int64) if also is None else np.asarray(also, dtype=np.int64)
    extra = extra.reshape(-1, problem.n_genes)
    if not named and not len(extra):
        return {}, []
    genomes = np.vstack([extra, *named.values()]) if named else extra
    points = make_points(problem, genomes, solver="baseline")
    mine = [dataclasses.replace(p, solver=solver) for p in points[: len(extra)]]
    return dict(zip(named.keys(), points[len(extra):], strict=True)), mine


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
) -> ParetoSet:
    """Wrap front genomes as a :class:`ParetoSet` sorted by the internal objectives (``points``: those
    genomes already made into points by :func:`~dse.pareto.make_points`, so they are not evaluated twice;
    ``baselines``: the problem's baseline points when already made, see :func:`baseline_points`)."""
    points = make_points(problem, genomes, solver, proven) if points is None else list(points)
    points.sort(key=lambda p: p.internal)
    complete = status == "optimal"
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
    )
