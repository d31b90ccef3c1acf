"""Certificates of fronts: how far a front can be from the true Pareto front (:class:`~dse.pareto.Certificate`).

A solver that proves things (CP-SAT) knows, when it stops, a set of *open boxes*: regions of objective
space, each with a lower corner proven by its bounds, that together hold every Pareto point it has
not found. Every such point is dominated by (or equal to) its box's lower corner, so the true front's
hypervolume is at most the hypervolume of the found points together with those corners, and at
least that of the found points. :func:`front_certificate` turns the boxes into that certificate, up to
the problem's reference point (:mod:`dse.pareto`: the feasible baselines' worst values, 10% worse).

A box's lower corner is the larger, in every objective, of what the solver proved there and of what
the problem's family proves for every feasible mapping within the box
(:meth:`~dse.mapping.base.MappingProblem.objective_lower_bounds`: e.g. no mapping spends less energy
than its ops' cheapest energies and the idle power over the least period, none is faster than the
devices' loads allow). A box the family proves empty is closed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from dse.mapping.base import MappingProblem
from dse.pareto import (
    Certificate,
    hypervolume,
    minimization_signs,
    reference_internal,
    user_reference,
)

__all__ = ["Box", "bounded_boxes", "box_stakes", "front_certificate", "hypervolume", "reference_point",
           "single_certificate", "unbounded_certificate"]

#: A box: its lower corner (proven: no Pareto point in the box is better in any objective) and its
#: exclusive upper corner (None: unbounded in that objective), in internal units.
Box = tuple[Sequence[float], Sequence[float | None]]

#: Open boxes whose lower corners get the family's bounds within the box itself (each costs the family
#: a small computation, e.g. two linear programs); the others, and every box once
#: :data:`BOX_BOUNDS_SECONDS` have been spent, get the family's bounds over the whole problem.
BOX_BOUNDS_LIMIT = 64
BOX_BOUNDS_SECONDS = 2.0


def _user_min(problem: MappingProblem, internal: np.ndarray) -> np.ndarray:
    """Internal (n, k) values -> user units in minimization form (maximized objectives negated); an
    internal ``-inf`` (nothing known) stays ``-inf``."""
    signs = minimization_signs(problem.objectives)
    internal = np.asarray(internal, dtype=np.float64).reshape(-1, len(problem.objectives))
    if not len(internal):
        return np.zeros((0, len(problem.objectives)))
    unknown = np.isneginf(internal)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        user = problem.user_objectives(np.where(unknown, 0.0, internal)).astype(np.float64) * signs
    return np.where(unknown | np.isnan(user), -np.inf, user)


def reference_point(problem: MappingProblem, found: np.ndarray) -> np.ndarray | None:
    """The problem's reference point (:mod:`dse.pareto`) in user units and minimization form: from the
    feasible baselines, or from the ``found`` internal values when none is feasible; None without either."""
    baselines = problem.baselines()
    rows = np.zeros((0, len(problem.objectives)), dtype=np.int64)
    if baselines:
        ev = problem.evaluate(np.array(list(baselines.values()), dtype=np.int64))
        rows = ev.F[ev.feasible]
    internal = reference_internal(rows, np.asarray(found).reshape(-1, len(problem.objectives)))
    if internal is None:
        return None
    return user_reference(problem.objectives, internal) * minimization_signs(problem.objectives)


def box_stakes(problem: MappingProblem, boxes: Sequence[Box], reference: np.ndarray | None) -> np.ndarray:
    """Per open box, what its search may win the certificate: the volume of objective space (user units, in
    minimization form, cut at ``reference``, :func:`reference_point`) between its lower and upper corners,
    where the bound counts hypervolume that no found point reaches (the boxes hold no dominated point).
    0 for a box past the reference; 1 for every box where there is no reference or some volume is not
    finite (nothing to tell them apart)."""
    if not boxes:
        return np.zeros(0)
    if reference is None:
        return np.ones(len(boxes))
    lowers = _user_min(problem, np.array([list(lo) for lo, _ in boxes], dtype=np.float64))
    upper = np.array([[np.nan if h is None else float(h) for h in hi] for _, hi in boxes])
    uppers = np.where(np.isnan(upper), reference, np.minimum(_user_min(problem, np.where(np.isnan(upper), 1, upper)),
                                                               reference))
    with np.errstate(invalid="ignore", over="ignore"):
        volume = np.prod(np.clip(uppers - lowers, 0.0, None), axis=1)
    return volume if np.isfinite(volume).all() else np.ones(len(boxes))


def bounded_boxes(problem: MappingProblem, boxes: Sequence[Box],
                  everywhere: Sequence[float] | None = None, bounds: bool = True) -> list[Box]:
    """``boxes`` with every lower corner raised to the problem's objective bounds within the box (the first
    :data:`BOX_BOUNDS_LIMIT` boxes within :data:`BOX_BOUNDS_SECONDS`; the others to the bounds over the
    whole problem, ``everywhere``: computed here unless the solver did before its search); boxes the
    bounds prove empty are left out. ``bounds`` False: none is computed (the boxes as they are)."""
    if not boxes or not bounds:
        return list(boxes)
    if everywhere is None:
        everywhere = problem.objective_lower_bounds()
    if any(math.isinf(b) and b > 0 for b in everywhere):
        return []  # no feasible mapping at all
    start = time.monotonic()
    out: list[Box] = []
    for k, (lower, upper) in enumerate(boxes):
        at_most = [None if u is None else math.floor(u) - 1 for u in upper]
        within = (problem.objective_lower_bounds(at_most)
                  if k < BOX_BOUNDS_LIMIT and time.monotonic() - start < BOX_BOUNDS_SECONDS else everywhere)
        raised = [max(float(lo), float(b)) for lo, b in zip(lower, within, strict=True)]
        if any(u is not None and r > u - 1 for r, u in zip(raised, upper, strict=True)):
            continue  # proven empty
        out.append((raised, upper))
    return out


def front_certificate(problem: MappingProblem, found: np.ndarray, boxes: Sequence[Box],
                      everywhere: Sequence[float] | None = None, bounds: bool = True) -> Certificate:
    """The certificate of a front whose points have internal values ``found`` (feasible, (n, k)) and whose
    solver left ``boxes`` open (none: the front is proven complete), each box's lower corner raised to the
    problem's own bounds (:func:`bounded_boxes`; ``everywhere``: those over the whole problem, when the
    solver computed them before its search, which keeps the work after a stop short; ``bounds`` False: no
    bound at all, the boxes as the solver left them)."""
    found = np.asarray(found, dtype=np.int64).reshape(-1, len(problem.objectives))
    boxes = bounded_boxes(problem, boxes, everywhere, bounds)
    reference = reference_point(problem, found)
    if reference is None:  # nothing found and no feasible baseline: nothing to measure against
        if not boxes:
            return Certificate(gap=0.0, proven=True, hypervolume=0.0, hypervolume_bound=0.0, infeasible=True)
        return Certificate(gap=1.0, proven=False, hypervolume=0.0, hypervolume_bound=None)
    signs = minimization_signs(problem.objectives)
    mine = _user_min(problem, found)
    lowers = _user_min(problem, np.array([list(lo) for lo, _ in boxes], dtype=np.float64))
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
    return Certificate(gap=float(gap), proven=not boxes, hypervolume=reached,
                       hypervolume_bound=bound if np.isfinite(bound) else None,
                       reference=tuple(float(v) for v in reference * signs), region=tuple(region))


def unbounded_certificate(problem: MappingProblem, found: np.ndarray, bounds: bool = True) -> Certificate:
    """The certificate of a front whose solver proved nothing (e.g. its model was never built): the whole
    objective space is open, bounded only by the problem's own objective bounds (no bound, gap 100%,
    where the family states none, or with ``bounds`` False: a run out of time or stopped skips them)."""
    found = np.asarray(found, dtype=np.int64).reshape(-1, len(problem.objectives))
    if len(problem.objectives) == 1:
        return single_certificate(problem, int(found[:, 0].min()) if len(found) else None, None, False, bounds)
    k = len(problem.objectives)
    return front_certificate(problem, found, [([-math.inf] * k, [None] * k)], bounds=bounds)


def single_certificate(problem: MappingProblem, value: int | None, bound: float | None, proven: bool,
                       own_bound: bool = True) -> Certificate:
    """The certificate of a one-objective solve: the value found, its bound (the larger of the solver's
    ``bound`` and the problem's own, :meth:`~dse.mapping.base.MappingProblem.objective_lower_bounds`),
    their relative gap (in user units); ``own_bound`` False leaves the problem's own out."""
    if value is None:
        return Certificate(gap=1.0, proven=False)
    objective = problem.objectives[0]
    user_value = float(objective.to_user(np.array([float(value)]))[0])
    (own,) = problem.objective_lower_bounds() if own_bound else (-math.inf,)
    if math.isfinite(own):
        bound = own if bound is None or not np.isfinite(bound) else max(float(bound), own)
    if bound is None or not np.isfinite(bound):
        return Certificate(gap=1.0, proven=False, value=user_value)
    low = min(float(bound), float(value))
    with np.errstate(divide="ignore", invalid="ignore"):
        user_bound = float(objective.to_user(np.array([low]))[0])
    gap = 0.0 if proven else abs(user_value - user_bound) / max(abs(user_value), 1e-12)
    return Certificate(gap=float(gap) if np.isfinite(gap) else 1.0, proven=proven, value=user_value,
                       bound=user_bound)
