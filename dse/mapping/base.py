"""The contract every problem family implements (see DESIGN.md, layer 3).

A :class:`MappingProblem` exposes an integer genome, objectives and
constraints, a population-vectorized ``evaluate`` and a ``decode`` that
explains one mapping. Families that can be solved exactly also provide
``cpsat()`` returning a :class:`Formulation` over the same integer tables.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dse.cost import CostTables


@dataclass(frozen=True)
class Objective:
    """One objective. ``internal`` values are integers minimized by every solver.

    ``to_user`` converts an internal value to the user's unit (e.g. a period
    in ns to a throughput in items/s); ``sense`` is the user's direction.
    """

    name: str
    unit: str
    sense: str  # "min" or "max", in user terms
    internal_name: str
    internal_unit: str
    to_user: Callable[[np.ndarray], np.ndarray]

    @property
    def column(self) -> str:
        """Column name in tables and CSV files, e.g. ``throughput_items_per_s``."""
        return f"{self.name}_{self.unit.replace('/', '_per_').replace(' ', '_')}".lower()


@dataclass(frozen=True)
class Constraint:
    """A ``value <= limit`` constraint in internal units (``unit``)."""

    name: str
    limit: float
    unit: str
    description: str = ""


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Result of evaluating a population.

    ``F``: (pop, n_obj) int64 internal objective values (minimize);
    ``G``: (pop, n_con) float, feasible iff every entry <= 0 (normalized
    violations, pymoo's convention); ``metrics``: name -> (pop,) arrays.
    """

    F: np.ndarray
    G: np.ndarray
    metrics: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def feasible(self) -> np.ndarray:
        if self.G.shape[1] == 0:
            return np.ones(len(self.F), dtype=bool)
        return (self.G <= 0).all(axis=1)


@dataclass
class Formulation:
    """A CP-SAT model of a family, ready for any generic CP-SAT driver.

    ``objective_vars[i]`` is an integer variable constrained to equal the
    i-th objective's internal value, in the problem's objective order.
    ``to_genome(solver)`` reads a genome from a solved solver, ``hint(genome)``
    adds a solution hint.
    """

    model: Any
    objective_vars: list[Any]
    to_genome: Callable[[Any], np.ndarray]
    hint: Callable[[np.ndarray], None]
    notes: list[str] = field(default_factory=list)
    named_vars: dict[str, Any] = field(default_factory=dict)


class MappingProblem(ABC):
    """A mapping problem over an integer genome ``lower <= x <= upper``."""

    name: str
    tables: CostTables
    objectives: tuple[Objective, ...]
    constraints: tuple[Constraint, ...]

    @property
    @abstractmethod
    def gene_names(self) -> tuple[str, ...]: ...

    @property
    @abstractmethod
    def lower(self) -> np.ndarray: ...

    @property
    @abstractmethod
    def upper(self) -> np.ndarray: ...

    @property
    def n_genes(self) -> int:
        return len(self.gene_names)

    @property
    def space_size(self) -> int:
        """Number of distinct genomes (an exact Python int)."""
        size = 1
        for lo, hi in zip(self.lower, self.upper, strict=True):
            size *= int(hi) - int(lo) + 1
        return size

    def repair(self, X: np.ndarray) -> np.ndarray:
        """Map any genome into a valid one (default: clip to bounds)."""
        return np.clip(X, self.lower, self.upper)

    @abstractmethod
    def evaluate(self, X: np.ndarray, metrics: bool = False) -> Evaluation:
        """Evaluate a population ``X`` of shape (pop, n_genes)."""

    @abstractmethod
    def decode(self, x: np.ndarray) -> Any:
        """A mapping object for one genome, with an ``explain()`` method."""

    def cpsat(self) -> Formulation:
        """The exact CP-SAT formulation; raises ``NotImplementedError`` where none exists."""
        raise NotImplementedError(f"{type(self).__name__} has no exact formulation")

    def baselines(self) -> dict[str, np.ndarray]:
        """Named reference genomes (single devices, static partitions)."""
        return {}

    def heuristic_seeds(self) -> list[np.ndarray]:
        """Genomes to seed approximate solvers with."""
        return list(self.baselines().values())

    def user_objectives(self, F: np.ndarray) -> np.ndarray:
        """Internal (pop, n_obj) values -> user units, column by column."""
        F = np.atleast_2d(F)
        return np.column_stack([obj.to_user(F[:, i]) for i, obj in enumerate(self.objectives)])

    def check_feasible(self) -> None:
        """Raise :class:`~dse.errors.InfeasibleError` when a constraint can never be met (default: no check)."""
        return None
