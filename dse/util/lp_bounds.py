"""Lower bounds from linear programs that hold whatever the LP solver's tolerances.

HiGHS (through ``scipy.optimize.linprog``) solves a :class:`LinearProgram` in floating point, within
its tolerances; its optimum may lie a little above the true one. :func:`minimum_at_least` therefore
reads only the solver's *dual values* and evaluates, itself, the Lagrangian lower bound they give
(weak duality: for any ``y >= 0`` and any ``z``, ``min_x c x + y (A_ub x - b_ub) + z (A_eq x - b_eq)``
over the variables' box is at most the LP's minimum), less a margin for the rounding of that
evaluation. The bound holds for any duals; good duals only make it tight. An LP that HiGHS calls
infeasible counts as infeasible only when the same reasoning proves it: the least total violation
of its rows (a phase-one program) is bounded above zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse  # type: ignore[import-untyped, unused-ignore]

#: Relative margin taken off every evaluated bound: far above float64 rounding over a million terms
#: (about 1e-10), far below any unit a bound is rounded to afterwards.
MARGIN = 1e-9


@dataclass(frozen=True, eq=False)
class LinearProgram:
    """``minimize c @ x`` subject to ``A_ub @ x <= b_ub``, ``A_eq @ x == b_eq`` and ``lower <= x <= upper``;
    every bound finite (the Lagrangian over an unbounded box can be minus infinity)."""

    c: np.ndarray
    A_ub: sparse.csr_matrix
    b_ub: np.ndarray
    A_eq: sparse.csr_matrix
    b_eq: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self) -> None:
        if not (np.isfinite(self.lower).all() and np.isfinite(self.upper).all()):
            raise ValueError("every variable of a LinearProgram needs finite bounds")


def lagrangian_bound(lp: LinearProgram, y_ub: np.ndarray, y_eq: np.ndarray) -> float:
    """``min`` over the variables' box of the Lagrangian with multipliers ``y_ub`` (clipped to >= 0) and
    ``y_eq``, less :data:`MARGIN` of the magnitude of its terms: at most the LP's minimum (weak duality),
    or ``-inf`` when the multipliers are not finite."""
    y_ub = np.maximum(np.asarray(y_ub, dtype=np.float64), 0.0)
    y_eq = np.asarray(y_eq, dtype=np.float64)
    if not (np.isfinite(y_ub).all() and np.isfinite(y_eq).all()):
        return -math.inf
    reduced = lp.c + lp.A_ub.T @ y_ub + lp.A_eq.T @ y_eq
    at = np.where(reduced >= 0, lp.lower, lp.upper)
    value = float(reduced @ at - y_ub @ lp.b_ub - y_eq @ lp.b_eq)
    size = np.maximum(np.abs(lp.lower), np.abs(lp.upper))
    magnitude = float((np.abs(lp.c) + abs(lp.A_ub).T @ y_ub + abs(lp.A_eq).T @ np.abs(y_eq)) @ size
                      + y_ub @ np.abs(lp.b_ub) + np.abs(y_eq) @ np.abs(lp.b_eq))
    return value - MARGIN * magnitude - MARGIN


def minimum_at_least(lp: LinearProgram) -> float:
    """A number no greater than the minimum of ``lp``: the Lagrangian bound of HiGHS' duals; ``inf`` when
    the program is proven infeasible; ``-inf`` when the solver gives no answer (nothing is claimed)."""
    from scipy.optimize import linprog  # type: ignore[import-untyped, unused-ignore]

    bounds = np.column_stack([lp.lower, lp.upper])
    result = linprog(lp.c, A_ub=lp.A_ub, b_ub=lp.b_ub, A_eq=lp.A_eq, b_eq=lp.b_eq, bounds=bounds,
                     method="highs")
    if result.status == 0:
        return lagrangian_bound(lp, -result.ineqlin.marginals, -result.eqlin.marginals)
    if result.status == 2:
        return math.inf if _proven_infeasible(lp) else -math.inf
    return -math.inf


def _proven_infeasible(lp: LinearProgram) -> bool:
    """Whether the least total violation of ``lp``'s rows over its box is proven above zero: the phase-one
    program ``min sum(s)`` with ``A_ub x - s <= b_ub``, ``A_eq x + s+ - s- == b_eq``, ``s >= 0``, bounded
    by the Lagrangian of its duals (clipped to [0, 1] and [-1, 1], so that no slack lowers it)."""
    from scipy import sparse  # type: ignore[import-untyped, unused-ignore]
    from scipy.optimize import linprog  # type: ignore[import-untyped, unused-ignore]

    n_ub, n_eq = lp.A_ub.shape[0], lp.A_eq.shape[0]
    n = len(lp.c)
    A_ub = sparse.hstack([lp.A_ub, -sparse.identity(n_ub), sparse.csr_matrix((n_ub, 2 * n_eq))]).tocsr()
    A_eq = sparse.hstack([lp.A_eq, sparse.csr_matrix((n_eq, n_ub)), sparse.identity(n_eq),
                          -sparse.identity(n_eq)]).tocsr()
    c = np.concatenate([np.zeros(n), np.ones(n_ub + 2 * n_eq)])
    bounds = np.vstack([np.column_stack([lp.lower, lp.upper]),
                        np.column_stack([np.zeros(n_ub + 2 * n_eq), np.full(n_ub + 2 * n_eq, np.inf)])])
    result = linprog(c, A_ub=A_ub, b_ub=lp.b_ub, A_eq=A_eq, b_eq=lp.b_eq, bounds=bounds, method="highs")
    if result.status != 0:
        return False
    y_ub = np.clip(-result.ineqlin.marginals, 0.0, 1.0)
    y_eq = np.clip(-result.eqlin.marginals, -1.0, 1.0)
    violation = LinearProgram(np.zeros(n), lp.A_ub, lp.b_ub, lp.A_eq, lp.b_eq, lp.lower, lp.upper)
    return lagrangian_bound(violation, y_ub, y_eq) > 0.0
