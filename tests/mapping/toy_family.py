"""A toy fifth family for ``test_new_family.py``, which copies this file into a temporary copy of
``dse/`` as ``dse/mapping/toy/__init__.py``; nothing imports it from here.

Genome: a device per op (independent ops, every device allowed). Objectives: ``load``, the busiest
device's summed time, and ``energy``, the summed energy, both from the cost tables. It writes its
exact CP-SAT model (so ``Family.exact`` reads true without being set) and registers with nothing
but what every family gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dse.cost import CostTables
from dse.cost.synthetic import random_tables
from dse.mapping.base import DecodedMapping, Formulation, MappingProblem, Objective
from dse.mapping.population import Population
from dse.mapping.registry import Family, register_family

TOY_OBJECTIVES = ("load", "energy")


@dataclass
class ToyMapping(DecodedMapping):
    """One toy mapping: its devices and quantities."""

    ops: dict[str, str]
    quantities: dict[str, int]

    def __post_init__(self) -> None:
        self.schedule = ()
        self.constraint_slack = {}

    def values(self) -> dict[str, int]:
        return dict(self.quantities)

    def explain(self) -> str:
        return f"load {self.quantities['load']} tu, energy {self.quantities['energy']} pJ"

    def assignment(self) -> dict[str, str]:
        return dict(self.ops)


class ToyProblem(MappingProblem):
    """Independent ops, each on one device."""

    family = "toy"

    def __init__(self, tables: CostTables, name: str = "toy") -> None:
        self.tables, self.name, self.constraints = tables, name, ()
        self.objectives = tuple(Objective(o, "tu" if o == "load" else "pJ", "min", o, "tu",
                                          lambda v: np.asarray(v, dtype=float)) for o in TOY_OBJECTIVES)

    @property
    def gene_names(self) -> tuple[str, ...]:
        return tuple(f"device[{op}]" for op in self.tables.op_names)

    @property
    def lower(self) -> np.ndarray:
        return np.zeros(self.tables.n_ops, dtype=np.int64)

    @property
    def upper(self) -> np.ndarray:
        return np.full(self.tables.n_ops, self.tables.n_dev - 1, dtype=np.int64)

    def _quantities(self, X: np.ndarray) -> dict[str, np.ndarray]:
        ops = np.arange(self.tables.n_ops)
        time, energy = self.tables.time[ops, X], self.tables.energy[ops, X]
        load = np.stack([np.where(X == d, time, 0).sum(axis=1) for d in range(self.tables.n_dev)], axis=1)
        return {"load": load.max(axis=1).astype(np.int64), "energy": energy.sum(axis=1).astype(np.int64)}

    def kernel(self, X: np.ndarray, metrics: bool) -> Population:
        return Population(self.flat, X.T.copy(), self._quantities(X))

    def decode(self, x: np.ndarray) -> ToyMapping:
        x = self.checked_genomes(x)[0]
        quantities = {k: int(v[0]) for k, v in self._quantities(x[None, :]).items()}
        return ToyMapping({op: self.tables.device_names[int(d)] for op, d in zip(self.tables.op_names, x,
                                                                                 strict=True)}, quantities)

    def cpsat(self, include: Sequence[str] | None = None, seeds: Sequence[np.ndarray] = (),
              deadline: float | None = None) -> Formulation:
        from ortools.sat.python import cp_model

        t, e = self.tables.time, self.tables.energy
        n, m = t.shape
        model = cp_model.CpModel()
        x = [[model.new_bool_var(f"x{i}_{d}") for d in range(m)] for i in range(n)]
        for row in x:
            model.add_exactly_one(row)
        load = model.new_int_var(0, int(t.sum()), "load")
        model.add_max_equality(load, [sum(int(t[i, d]) * x[i][d] for i in range(n)) for d in range(m)])
        energy = model.new_int_var(0, int(e.sum()), "energy")
        model.add(energy == sum(int(e[i, d]) * x[i][d] for i in range(n) for d in range(m)))

        def to_genome(solver: cp_model.CpSolver) -> np.ndarray:
            return np.array([next(d for d in range(m) if solver.value(x[i][d])) for i in range(n)], dtype=np.int64)

        def hint(genome: np.ndarray) -> None:
            model.clear_hints()
            for i in range(n):
                for d in range(m):
                    model.add_hint(x[i][d], int(genome[i]) == d)

        return Formulation(model, [load, energy], to_genome, hint)


def example_problem(seed: int) -> ToyProblem:
    """3 or 4 ops on 2 or 3 devices, random integer costs."""
    rng = np.random.default_rng(seed)
    tables = random_tables(seed, n_ops=int(rng.integers(3, 5)), n_dev=int(rng.integers(2, 4)), disallow=0.0)
    return ToyProblem(tables, name=f"toy_{seed}")


FAMILY = register_family(Family(
    name="toy",
    problem_class=ToyProblem,
    build=lambda inputs: ToyProblem(inputs.tables, name=inputs.name),
    objectives=TOY_OBJECTIVES,
    default_objectives=TOY_OBJECTIVES,
    examples=example_problem,
    limits=frozenset(),
    description="a toy: independent ops, the busiest device's load vs the energy",
))
