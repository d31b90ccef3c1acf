"""CP-SAT building blocks shared by the families' exact models."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from dse.errors import DseError

if TYPE_CHECKING:
    from ortools.sat.python import cp_model


class ModelBuildTimeout(DseError):
    """Building the CP-SAT model took the whole time limit; ``where`` says how far it got."""

    def __init__(self, where: str) -> None:
        self.where = where
        super().__init__(f"the CP-SAT model was still being built when the time limit ran out ({where})")


class ModelTooLarge(ModelBuildTimeout):
    """The CP-SAT model would be too large to build at all; ``where`` says how large and what to use instead.
    A :class:`ModelBuildTimeout`, so the drivers report it the same way (an empty front, status
    ``time_limit``, the reason in the message)."""

    def __init__(self, where: str) -> None:
        self.where = where
        DseError.__init__(self, f"the CP-SAT model was not built: {where}")


def check_build_time(deadline: float | None, where: str) -> None:
    """Raise :class:`ModelBuildTimeout` once ``time.monotonic()`` passes ``deadline`` (None: no limit)."""
    if deadline is not None and time.monotonic() > deadline:
        raise ModelBuildTimeout(where)


def used_literals(model: cp_model.CpModel, x: dict[tuple[int, int], cp_model.IntVar], n: int, m: int) -> list:
    """``used[d]`` is true exactly when some op ``i`` has ``x[i, d]`` true."""
    used = []
    for d in range(m):
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
