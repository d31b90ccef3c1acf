"""CP-SAT building blocks shared by the families' exact models.

The phases every model goes through the same way: the build deadline (:func:`check_build_time`),
which constraint components are modelled and adding them (:func:`modelled_constraints`,
:func:`add_constraint_components`), the best seed to hint (:func:`best_feasible_seed`) and hinting
the assignment literals (:func:`hint_assignment`), integer bounds of the objectives
(:func:`fastest_times`, :func:`work_bound`, :func:`costliest_total`), variables equal to a sum
(:func:`sum_variable`), device-use literals and idle energy (:func:`used_literals`, :func:`idle_term`),
the objective variables in the problem's order (:func:`objective_variables`) and reading the
assignment back (:func:`assigned_devices`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from dse.errors import DseError
from dse.util.interrupt import cut_status

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


class ModelledProblem(Protocol):
    """What the shared phases read of a family's problem (a :class:`~dse.mapping.base.MappingProblem`,
    named structurally: the shared modules sit below the problem base)."""

    @property
    def constraints(self) -> Sequence[Any]: ...

    @property
    def objectives(self) -> Sequence[Any]: ...

    def evaluate(self, X: np.ndarray) -> Any: ...


class ModelBuildTimeout(DseError):
    """Building the CP-SAT model took the whole time limit, or was stopped (``stopped``: a stop request);
    ``where`` says how far it got."""

    def __init__(self, where: str, stopped: bool = False) -> None:
        self.where = where
        self.stopped = stopped
        why = "a stop was requested" if stopped else "the time limit ran out"
        super().__init__(f"the CP-SAT model was still being built when {why} ({where})")


class ModelTooLarge(ModelBuildTimeout):
    """The CP-SAT model would be too large to build at all; ``where`` says how large and what to use instead.
    A :class:`ModelBuildTimeout`, so the drivers report it the same way (an empty front, status
    ``time_limit``, the reason in the message)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.stopped = False
        DseError.__init__(self, f"the CP-SAT model was not built: {where}")


def check_build_time(deadline: float | None, where: str) -> None:
    """Raise :class:`ModelBuildTimeout` once ``time.monotonic()`` passes ``deadline`` (None: no limit) or a
    stop was requested (:func:`~dse.util.interrupt.cut_status`: the run's token, or the enclosing
    :func:`~dse.util.interrupt.work_limits` block's deadline); ``stopped`` tells the two apart. The
    builders call it between phases and in every loop over ops, edges or devices."""
    state = cut_status()
    if state is not None:
        raise ModelBuildTimeout(where, stopped=state)
    if deadline is not None and time.monotonic() > deadline:
        raise ModelBuildTimeout(where)


def modelled_constraints(problem: ModelledProblem, include: Sequence[str] | None) -> set[str]:
    """The names of the constraint components to model: ``include``, or every one of the problem's (None)."""
    return {c.name for c in problem.constraints} if include is None else set(include)


def add_constraint_components(problem: ModelledProblem, names: set[str], ctx: Any) -> None:
    """Let each of the problem's constraint components named in ``names`` add itself to the model of
    ``ctx`` (a :class:`~dse.mapping.constraints.ModelContext`), in the problem's order."""
    for constraint in problem.constraints:
        if constraint.name in names:
            constraint.add_to_model(ctx)


def objective_variables(problem: ModelledProblem, values: Mapping[str, Any]) -> list[Any]:
    """The model's variable of each of the problem's objectives (``values`` by objective name), in the
    problem's objective order."""
    return [values[o.name] for o in problem.objectives]


def best_feasible_seed(problem: ModelledProblem, seeds: Sequence[np.ndarray]) -> np.ndarray | None:
    """The feasible seed with the smallest first objective (the first such on ties); None when no seed
    is feasible or none is given."""
    if not len(seeds):
        return None
    X = np.array(seeds, dtype=np.int64)
    ev = problem.evaluate(X)
    ok = np.flatnonzero(ev.feasible)
    return X[ok[np.argmin(ev.F[ok, 0])]] if len(ok) else None


def hint_assignment(model: cp_model.CpModel, x: Mapping[tuple[int, int], cp_model.IntVar],
                    device: np.ndarray) -> None:
    """Hint every assignment literal ``x[i, d]``: 1 where op ``i`` runs on ``device[i] == d``, else 0."""
    for (i, d), lit in x.items():
        model.add_hint(lit, int(device[i] == d))


def fastest_times(allowed: np.ndarray, time_table: np.ndarray) -> np.ndarray:
    """Per op its least time over its allowed devices (int64, length ``n_ops``)."""
    return np.where(allowed, time_table, np.iinfo(np.int64).max).min(axis=1)


def work_bound(fastest: np.ndarray, n_dev: int) -> int:
    """The work bound: every op at its fastest time, spread evenly over ``n_dev`` devices (rounded up)."""
    return -(-int(fastest.sum()) // n_dev)


def costliest_total(allowed: np.ndarray, table: np.ndarray) -> int:
    """The sum over ops of their largest ``table`` entry over their allowed devices: no mapping costs more."""
    return int(np.where(allowed, table, 0).max(axis=1).sum())


def sum_variable(model: cp_model.CpModel, terms: Sequence[Any], lower: int, upper: int,
                 name: str) -> cp_model.IntVar:
    """A new variable ``name`` in ``[lower, upper]`` constrained to equal the sum of ``terms``."""
    var = model.new_int_var(lower, upper, name)
    model.add(var == sum(terms))
    return var


def used_literals(model: cp_model.CpModel, x: dict[tuple[int, int], cp_model.IntVar], n: int, m: int) -> list:
    """``used[d]`` is true exactly when some op ``i`` has ``x[i, d]`` true."""
    used = []
    for d in range(m):
        check_build_time(None, f"device-use literal {d} of {m}")
        u = model.new_bool_var(f"used[{d}]")
        col = [x[i, d] for i in range(n) if (i, d) in x]
        for lit in col:
            model.add_implication(lit, u)
        model.add(sum(col) >= u)
        used.append(u)
    return used


def idle_term(model: cp_model.CpModel, used: cp_model.IntVar, idle_mw: int, duration: cp_model.IntVar,
              horizon: int, name: str) -> cp_model.IntVar:
    """A variable equal to ``idle_mw * duration`` when ``used``, else 0 (idle energy in pJ)."""
    term = model.new_int_var(0, idle_mw * horizon, name)
    model.add(term == idle_mw * duration).only_enforce_if(used)
    model.add(term == 0).only_enforce_if(used.Not())
    return term


def assigned_devices(solver: cp_model.CpSolver, x: dict[tuple[int, int], cp_model.IntVar], n: int) -> np.ndarray:
    """The device whose ``x[i, d]`` literal is true, per op (int64 array of length ``n``)."""
    devices = np.zeros(n, dtype=np.int64)
    for (i, d), lit in x.items():
        if solver.boolean_value(lit):
            devices[i] = d
    return devices
