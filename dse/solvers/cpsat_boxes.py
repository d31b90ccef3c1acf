"""The search-region boxes of the exact solver, shared by the serial run (:mod:`dse.solvers.cpsat`) and the
distributed one (:mod:`dse.solvers.cpsat_distributed`): :class:`CpSatRunner` (one formulation solved under
changing objective bounds), :func:`search_box` (the lexicographic minimization of one box), the
splitting of the local upper bounds by a new point (:func:`split_boxes`, :func:`split_with_lowers`) and
what a proof that some box is empty tells the others (:func:`proven_empty`, :func:`close_box`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.base import Formulation, MappingProblem
from dse.solvers.certificate import Box
from dse.solvers.cpsat_single import default_workers
from dse.util.interrupt import StopToken, run_cpsat
from dse.util.rounding import ceil_int

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

__all__ = ["BOX_FLOOR_S", "CpSatRunner", "Solve", "box_budget", "box_priority", "box_shares", "certificate_boxes",
           "close_box", "empty_box", "found_points",
           "proven_empty", "search_box", "split_boxes", "split_with_lowers"]

#: The fewest seconds a box's search is given when the time left is shared out over many open boxes.
BOX_FLOOR_S = 1.0


@dataclass
class Solve:
    """One CP-SAT solve: its status, the genome and objective values found (None: none), the objective bound."""

    status: int
    genome: np.ndarray | None
    values: tuple[int, ...] | None
    bound: float


class CpSatRunner:
    """Solves one Formulation repeatedly under changing objective bounds."""

    def __init__(self, form: Formulation, seed: int, workers: int | None, deterministic: bool,
                 token: StopToken | None = None) -> None:
        self.form = form
        self.token = token or StopToken()
        self.seed = seed
        self.workers = workers or default_workers()
        self.deterministic = deterministic
        self.calls = 0
        self._bounds = {}
        for var in form.objective_vars:
            dom = list(form.model.proto.variables[var.index].domain)
            self._bounds[var.index] = (dom[0], dom[-1])

    def lower(self, var: cp_model.IntVar) -> int:
        return self._bounds[var.index][0]

    def upper(self, var: cp_model.IntVar) -> int:
        return self._bounds[var.index][1]

    def set_upper(self, var: cp_model.IntVar, upper: int | None) -> None:
        """Restrict ``var`` to ``[lower, upper]`` (``None``: its original domain); ``upper >= lower``."""
        lo, hi = self._bounds[var.index]
        dom = self.form.model.proto.variables[var.index].domain
        dom.clear()
        dom.extend([lo, hi if upper is None else min(hi, upper)])

    def proven_bound(self, var: cp_model.IntVar, solve: Solve) -> int:
        """The least value of ``var`` that ``solve`` (a minimization of ``var``) leaves possible: its optimum
        when proven, else its objective bound, never below the variable's own lower bound."""
        from ortools.sat.python import cp_model
        if solve.status == cp_model.OPTIMAL and solve.values is not None:
            return int(solve.values[self.form.objective_vars.index(var)])
        bound = solve.bound if np.isfinite(solve.bound) else self.lower(var)
        return max(self.lower(var), ceil_int(bound))

    def minimize(self, var: cp_model.IntVar, time_limit: float, hint: np.ndarray | None) -> Solve:
        from ortools.sat.python import cp_model
        model = self.form.model
        model.minimize(var)
        if hint is not None:
            self.form.hint(hint)
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.max_time_in_seconds = max(0.01, time_limit)
        params.random_seed = int(self.seed)
        params.num_workers = self.workers
        if self.deterministic:
            params.interleave_search = True
        self.calls += 1
        status = run_cpsat(solver, model, self.token)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            genome = self.form.to_genome(solver)
            values = tuple(int(solver.value(v)) for v in self.form.objective_vars)
            return Solve(status, genome, values, solver.best_objective_bound)
        if status == cp_model.UNKNOWN:  # cut short before any solution: the bound proven so far still holds,
            # unless CP-SAT ended INFEASIBLE and a stop kept it from being confirmed (run_cpsat): nothing proven
            proven = solver.response_proto.status == cp_model.UNKNOWN
            return Solve(status, None, None, solver.best_objective_bound if proven else float("nan"))
        return Solve(status, None, None, float("nan"))


def split_boxes(boxes: list[tuple[int, ...]], z: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The local upper bounds after point ``z``: every box holding ``z`` (``z < u``) splits into one child per
    objective (``u`` with ``u_j := z_j``); only the maximal boxes are kept (the others lie inside them)."""
    kept = [u for u in boxes if not all(zj < uj for zj, uj in zip(z, u, strict=True))]
    hit = [u for u in boxes if all(zj < uj for zj, uj in zip(z, u, strict=True))]
    children = {u[:j] + (z[j],) + u[j + 1:] for u in hit for j in range(len(z))}
    candidates = kept + sorted(children - set(kept))
    arr = np.array(candidates, dtype=np.int64).reshape(len(candidates), len(z))
    inside = np.all(arr[:, None, :] <= arr[None, :, :], axis=2) & np.any(arr[:, None, :] < arr[None, :, :], axis=2)
    return [candidates[k] for k in np.flatnonzero(~inside.any(axis=1))]


def split_with_lowers(boxes: list[tuple[int, ...]], lowers: dict[tuple[int, ...], tuple[int, ...]],
                       z: tuple[int, ...]) -> tuple[list[tuple[int, ...]], dict[tuple[int, ...], tuple[int, ...]]]:
    """:func:`split_boxes` with each box's proven lower corner: a new box lies inside every old box above
    it, so it inherits the largest of their lower corners."""
    new = split_boxes(boxes, z)
    out = {}
    for c in new:
        holders = [lowers[u] for u in boxes if all(cj <= uj for cj, uj in zip(c, u, strict=True))]
        out[c] = tuple(int(v) for v in np.max(np.array(holders), axis=0))
    return new, out


def certificate_boxes(boxes: Sequence[tuple[int, ...]], lowers: dict[tuple[int, ...], tuple[int, ...]],
                      top: tuple[int, ...]) -> list[Box]:
    """The open ``boxes`` as a certificate takes them (:data:`~dse.solvers.certificate.Box`): each its lower
    corner and its upper corner, None where it reaches past every value (``top``)."""
    return [(lowers[u], tuple(None if uj >= tj else uj for uj, tj in zip(u, top, strict=True))) for u in boxes]


def box_priority(box: tuple[int, ...], share: float) -> tuple[float, ...]:
    """The order in which open boxes are searched, smallest first: the largest share of the time first
    (:func:`box_shares`), then the box reaching furthest in objective 1 (the order before shares)."""
    return (-share, *(-v for v in box))


def empty_box(box: tuple[int, ...], lower: tuple[int, ...]) -> bool:
    """Whether the box ``f < box`` holds no point at or above its proven lower corner ``lower``."""
    return any(u - 1 < low for u, low in zip(box, lower, strict=True))


def box_budget(remaining: float, share: float, at_least: float = 0.0) -> float:
    """A box search's seconds: its ``share`` (0 to 1) of the ``remaining`` seconds, and ``at_least`` (twice
    the budget the same box last ran out of, so that a hard box's searches together cost at most about
    twice its last one), never under :data:`BOX_FLOOR_S` nor over what remains. One open box has share 1
    and gets everything; boxes that end early leave their time to the others."""
    return min(remaining, max(remaining * share, BOX_FLOOR_S, at_least))


def box_shares(stakes: np.ndarray) -> np.ndarray:
    """Each box's share of the time left: in proportion to its stake (what its search may win the
    certificate, :func:`~dse.solvers.certificate.box_stakes`), or equal when no box has any."""
    total = float(np.sum(stakes))
    return stakes / total if total > 0 else np.full(len(stakes), 1.0 / max(len(stakes), 1))


def close_box(boxes: list[tuple[int, ...]], lowers: dict[tuple[int, ...], tuple[int, ...]],
              closed: tuple[int, ...]) -> tuple[list[tuple[int, ...]], dict[tuple[int, ...], tuple[int, ...]]]:
    """The open ``boxes`` and their lower corners once the region ``f < closed`` is proven to hold no
    feasible mapping. A box ``f < u`` with ``u_k <= closed_k`` in every objective but ``j`` holds no point
    with ``f_j < closed_j`` (it would lie in the closed region), so its lower corner rises to ``closed_j``
    there; a box with ``u <= closed`` in every objective is empty. Boxes their corners leave empty are
    dropped, the others keep their order."""
    out: dict[tuple[int, ...], tuple[int, ...]] = {}
    for u in boxes:
        low = lowers[u]
        over = [j for j, (a, b) in enumerate(zip(u, closed, strict=True)) if a > b]
        if not over:
            continue  # inside the closed region
        if len(over) == 1:
            j = over[0]
            low = (*low[:j], max(low[j], closed[j]), *low[j + 1:])
        if not empty_box(u, low):
            out[u] = low
    return list(out), out


def proven_empty(runner: CpSatRunner, box: tuple[int, ...], first: int,
                 solves: Sequence[Solve]) -> list[tuple[int, ...]]:
    """The regions that the solves of :func:`search_box` (``box``, objective ``first`` minimized first)
    prove empty, as upper corners for :func:`close_box`: the whole box when the head solve proved it
    infeasible; else the part of the box better in objective ``first`` than the head's proven bound, and
    per later step, with the objectives before it at most their found values, the part better in that
    step's objective than its proven bound."""
    from ortools.sat.python import cp_model
    if not solves:
        return []
    objs = runner.form.objective_vars
    if solves[0].status == cp_model.INFEASIBLE:
        return [box]
    order = [first, *(j for j in range(len(objs)) if j != first)]
    regions = []
    corner = list(box)
    for j, solve in zip(order, solves, strict=False):
        if solve.status == cp_model.INFEASIBLE:
            regions.append(tuple(corner))
            break
        bound = runner.proven_bound(objs[j], solve)
        regions.append(tuple((*corner[:j], min(corner[j], bound), *corner[j + 1:])))
        if solve.values is None:
            break
        corner[j] = min(corner[j], int(solve.values[j]) + 1)  # the later steps keep it at most its value
    return regions


def search_box(runner: CpSatRunner, box: tuple[int, ...], remaining: Callable[[], float],
               hint: np.ndarray | None, first: int = 0) -> list[Solve]:
    """The lexicographic minimization of the box ``f < box``: objective ``first``, then the others in
    order, each locked at its optimum before the next (a point it ends on is nondominated in the whole
    problem). Returns the solves, the head solve first, until one finds nothing or a stop comes;
    ``remaining()`` gives each solve its seconds. The objectives' domains are restored on return."""
    objs = runner.form.objective_vars
    order = [first, *(j for j in range(len(objs)) if j != first)]
    for v, u in zip(objs, box, strict=True):
        runner.set_upper(v, u - 1)
    try:
        head = runner.minimize(objs[first], remaining(), hint)
        solves = [head]
        if head.genome is not None and head.values is not None:
            runner.set_upper(objs[first], head.values[first])
            for j in order[1:]:
                if runner.token.stopped:
                    break
                step = runner.minimize(objs[j], max(remaining(), 0.01), solves[-1].genome)
                if step.genome is None or step.values is None:
                    break
                solves.append(step)
                runner.set_upper(objs[j], step.values[j])
    finally:
        for v in objs:
            runner.set_upper(v, None)
    return solves


def found_points(problem: MappingProblem, genomes: Sequence[np.ndarray],
                 top: tuple[int, ...]) -> list[tuple[np.ndarray, tuple[int, ...]]]:
    """The feasible ``genomes`` (repaired; a previous front's, say) with their objective values, those
    inside the region ``f < top``, in the given order: points found already, which split the region."""
    if not len(genomes):
        return []
    R = problem.repair(np.array(genomes, dtype=np.int64).reshape(-1, problem.n_genes))
    ev = problem.evaluate(R)
    out = []
    for row in np.flatnonzero(ev.feasible):
        z = tuple(int(val) for val in ev.F[row])
        if all(zj < uj for zj, uj in zip(z, top, strict=True)):
            out.append((R[row], z))
    return out
