"""Certificates of fronts: how far a front can be from the true Pareto front (:class:`~dse.pareto.Certificate`).

A solver that proves things (CP-SAT) knows, when it stops, a set of *open boxes*: regions of objective
space, each with a lower corner proven by its bounds, that together hold every Pareto point it has
not found. Every such point is dominated by (or equal to) its box's lower corner, so the true front's
hypervolume is at most the hypervolume of the found points together with those corners, and at
least that of the found points. :func:`front_certificate` turns the boxes into that certificate, in
user units (minimization form) up to a reference point: the nadir of the found points and the
problem's feasible baselines, pushed out by 10% of their range.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dse.mapping.base import MappingProblem
from dse.pareto import Certificate

#: A box: its lower corner (proven: no Pareto point in the box is better in any objective) and its
#: exclusive upper corner (None: unbounded in that objective), in internal units.
Box = tuple[Sequence[float], Sequence[float | None]]


def _user_min(problem: MappingProblem, internal: np.ndarray) -> np.ndarray:
    """Internal (n, k) values -> user units in minimization form (maximized objectives negated)."""
    signs = np.array([-1.0 if o.sense == "max" else 1.0 for o in problem.objectives])
    if not len(internal):
        return np.zeros((0, len(problem.objectives)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        user = problem.user_objectives(np.asarray(internal, dtype=np.float64)).astype(np.float64)
    return np.where(np.isnan(user), -np.inf, user) * signs


def hypervolume(points: np.ndarray, reference: np.ndarray) -> float:
    """Hypervolume (minimization) of ``points`` up to ``reference``; rows not below it in every objective
    count for nothing; infinite when a counted row has an infinite coordinate."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, len(reference))
    points = points[(points < reference).all(axis=1)]
    if not len(points):
        return 0.0
    if not np.isfinite(points).all():
        return float("inf")
    from pymoo.indicators.hv import HV

    return float(HV(ref_point=reference)(points))


def reference_point(problem: MappingProblem, found: np.ndarray) -> np.ndarray | None:
    """The certificate's reference (user units, minimization form): nadir of the ``found`` internal values
    and the problem's feasible baselines, pushed out by 10% of their range; None without either."""
    rows = [_user_min(problem, found)]
    baselines = problem.baselines()
    if baselines:
        ev = problem.evaluate(np.array(list(baselines.values()), dtype=np.int64))
        rows.append(_user_min(problem, ev.F[ev.feasible]))
    F = np.vstack(rows)
    F = F[np.isfinite(F).all(axis=1)]
    if not len(F):
        return None
    lo, hi = F.min(axis=0), F.max(axis=0)
    span = np.where(hi > lo, hi - lo, np.maximum(np.abs(hi), 1.0))
    return hi + 0.1 * span


def front_certificate(problem: MappingProblem, found: np.ndarray, boxes: Sequence[Box]) -> Certificate:
    """The certificate of a front whose points have internal values ``found`` (feasible, (n, k)) and whose
    solver left ``boxes`` open (none: the front is proven complete)."""
    found = np.asarray(found, dtype=np.int64).reshape(-1, len(problem.objectives))
    reference = reference_point(problem, found)
    if reference is None:  # nothing found and no feasible baseline: nothing to measure against
        return Certificate(gap=0.0 if not boxes else 1.0, proven=not boxes, hypervolume=0.0,
                           hypervolume_bound=0.0 if not boxes else None)
    signs = np.array([-1.0 if o.sense == "max" else 1.0 for o in problem.objectives])
    mine = _user_min(problem, found)
    lowers = _user_min(problem, np.array([list(lo) for lo, _ in boxes], dtype=np.float64).reshape(-1, len(signs)))
    reached = hypervolume(mine, reference)
    bound = hypervolume(np.vstack([mine, lowers]), reference)
    gap = 0.0 if bound <= 0 or bound == reached else (1.0 if not np.isfinite(bound) else (bound - reached) / bound)
    region = []
    for (_, hi), lower_user in zip(boxes, lowers, strict=True):
        upper = np.array([np.nan if h is None else float(h) for h in hi])
        upper_user = _user_min(problem, np.where(np.isnan(upper), 0, upper)[None, :])[0]
        upper_user = np.where(np.isnan(upper), reference, np.minimum(upper_user, reference))
        base = np.minimum(mine.min(axis=0), reference) if len(mine) else reference
        lower_user = np.where(np.isfinite(lower_user), lower_user, base - (reference - base))  # drawable
        if (lower_user < reference).all():
            region.append((tuple(float(v) for v in lower_user * signs), tuple(float(v) for v in upper_user * signs)))
    return Certificate(gap=float(gap), proven=not boxes, hypervolume=reached, hypervolume_bound=bound,
                       reference=tuple(float(v) for v in reference * signs), region=tuple(region))


def unbounded_certificate(problem: MappingProblem, found: np.ndarray) -> Certificate:
    """The certificate of a front whose solver proved nothing (e.g. its model was never built): the
    hypervolume reached, no bound (gap 100%)."""
    found = np.asarray(found, dtype=np.int64).reshape(-1, len(problem.objectives))
    if len(problem.objectives) == 1:
        return single_certificate(problem, int(found[:, 0].min()) if len(found) else None, None, False)
    reference = reference_point(problem, found)
    if reference is None:
        return Certificate(gap=1.0, proven=False, hypervolume=0.0)
    signs = np.array([-1.0 if o.sense == "max" else 1.0 for o in problem.objectives])
    return Certificate(gap=1.0, proven=False, hypervolume=hypervolume(_user_min(problem, found), reference),
                       reference=tuple(float(v) for v in reference * signs))


def single_certificate(problem: MappingProblem, value: int | None, bound: float | None, proven: bool) -> Certificate:
    """The certificate of a one-objective solve: the value found, its proven bound, their relative gap
    (in user units)."""
    if value is None:
        return Certificate(gap=1.0, proven=False)
    objective = problem.objectives[0]
    user_value = float(objective.to_user(np.array([float(value)]))[0])
    if bound is None or not np.isfinite(bound):
        return Certificate(gap=1.0, proven=False, value=user_value)
    low = min(float(bound), float(value))
    with np.errstate(divide="ignore", invalid="ignore"):
        user_bound = float(objective.to_user(np.array([low]))[0])
    gap = 0.0 if proven else abs(user_value - user_bound) / max(abs(user_value), 1e-12)
    return Certificate(gap=float(gap) if np.isfinite(gap) else 1.0, proven=proven, value=user_value,
                       bound=user_bound)
