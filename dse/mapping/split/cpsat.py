"""CP-SAT model of the ``split`` family over the same per-part integer tables as the evaluator.

Variables: ``b[d, c]`` (device ``d`` takes ``c`` chunks), exactly one per
device; ``chunks[d] = sum c * b[d, c]``; busy, link, memory and dynamic
energy of a device are the table entries its literal selects;
``used[p]`` (any device of pool ``p`` takes rows: ``B`` is sent once);
``makespan = max(busy[d], pool link[p])``; ``energy = dynamic + idle_total * makespan``
(a constant times a variable: linear).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from dse.mapping.base import Formulation
from dse.mapping.constraints import ModelContext
from dse.mapping.cpsat_common import check_build_time

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from dse.mapping.split.problem import SplitProblem


def build_split_model(problem: SplitProblem, include: Sequence[str] | None = None,
                      deadline: float | None = None) -> Formulation:
    """Build the model; ``include`` names the constraints to model (default: all of the problem's).

    Raises :class:`~dse.mapping.cpsat_common.ModelBuildTimeout` past ``deadline``."""
    from ortools.sat.python import cp_model
    p = problem.parts
    names = {c.name for c in problem.constraints} if include is None else set(include)
    n_dev, T = len(p.devices), p.total
    model = cp_model.CpModel()
    b = {(d, c): model.new_bool_var(f"b[{d},{c}]") for d in range(n_dev) for c in range(T + 1)}
    chunks, busy, energy_terms = [], [], []
    horizon = int(max(p.time.max(initial=0), p.link.max(axis=1).sum() + p.pool_b_link.sum())) + 1
    for d in range(n_dev):
        check_build_time(deadline, f"device {d} of {n_dev}")
        lits = [b[d, c] for c in range(T + 1)]
        model.add_exactly_one(lits)
        x = model.new_int_var(0, T, f"chunks[{d}]")
        model.add(x == sum(c * b[d, c] for c in range(1, T + 1)))
        chunks.append(x)
        t = model.new_int_var(0, int(p.time[d].max()), f"busy[{d}]")
        model.add(t == sum(int(p.time[d, c]) * b[d, c] for c in range(T + 1) if p.time[d, c]))
        busy.append(t)
        energy_terms += [int(p.energy[d, c]) * b[d, c] for c in range(T + 1) if p.energy[d, c]]
    loads = list(busy)
    pool_mem = {}
    for j, pool in enumerate(p.pool_names):
        members = [int(d) for d in np.flatnonzero(p.pool == j)]
        used = model.new_bool_var(f"used[{pool}]")  # any device of the pool takes rows: B is sent once
        model.add_max_equality(used, [1 - b[d, 0] for d in members])
        link = model.new_int_var(0, horizon, f"link[{pool}]")
        model.add(link == sum(int(p.link[d, c]) * b[d, c] for d in members for c in range(T + 1) if p.link[d, c])
                  + int(p.pool_b_link[j]) * used)
        if p.pool_b_energy[j]:
            energy_terms.append(int(p.pool_b_energy[j]) * used)
        loads.append(link)
        cap = int(p.mem[members].max(axis=1).sum())  # a bound for the variable; the constraint is PoolMemory
        mem = model.new_int_var(0, cap, f"pool_mem[{j}]")
        model.add(mem == sum(int(p.mem[d, c]) * b[d, c] for d in members for c in range(T + 1) if p.mem[d, c]))
        pool_mem[f"pool_mem[{j}]"] = mem
    makespan = model.new_int_var(0, horizon, "makespan")
    model.add_max_equality(makespan, loads)
    max_energy = int(p.energy.max(axis=1).sum() + p.pool_b_energy.sum()) + p.idle_mw_total * horizon
    energy = model.new_int_var(0, max_energy, "energy")
    model.add(energy == sum(energy_terms) + p.idle_mw_total * makespan)
    chunk_sum = model.new_int_var(0, T * n_dev, "chunk_sum")
    model.add(chunk_sum == sum(chunks))

    quantities = {"makespan": makespan, "energy": energy, "chunk_sum": chunk_sum, **pool_mem}
    ctx = ModelContext(model, problem.tables, {}, quantities)
    for constraint in problem.constraints:
        if constraint.name in names:
            constraint.add_to_model(ctx)
    values = {"time": makespan, "energy": energy}
    objective_vars = [values[o.name] for o in problem.objectives]

    def to_genome(solver: cp_model.CpSolver) -> np.ndarray:
        return np.array([solver.value(x) for x in chunks], dtype=np.int64)

    def hint(genome: np.ndarray) -> None:
        model.clear_hints()
        genome = np.asarray(genome, dtype=np.int64)
        for (d, c), var in b.items():
            model.add_hint(var, int(genome[d] == c))

    notes = [f"{len(b)} part literals over {n_dev} devices and {T} chunks"]
    return Formulation(model, objective_vars, to_genome, hint, notes, dict(quantities))
