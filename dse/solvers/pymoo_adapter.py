"""pymoo's view of a mapping problem (whole-population evaluation), the family's repair, and random-reset
mutation: the pieces :func:`dse.solvers.nsga2.solve_nsga2` hands to pymoo's NSGA-II (imported when it runs)."""

from __future__ import annotations

import numpy as np
from pymoo.core.mutation import Mutation
from pymoo.core.problem import Problem
from pymoo.core.repair import Repair

from dse.mapping.base import MappingProblem


class PymooAdapter(Problem):
    """pymoo view of a MappingProblem: whole-population evaluation."""

    def __init__(self, problem: MappingProblem) -> None:
        self.mp = problem
        self.evaluations = 0
        super().__init__(
            n_var=problem.n_genes,
            n_obj=len(problem.objectives),
            n_ieq_constr=len(problem.constraints),
            xl=problem.lower.astype(float),
            xu=problem.upper.astype(float),
            vtype=int,
        )

    def _evaluate(self, X: np.ndarray, out: dict, *args: object, **kwargs: object) -> None:
        X = self.mp.repair(np.rint(X).astype(np.int64))
        ev = self.mp.evaluate(X)
        self.evaluations += len(X)
        out["F"] = ev.F.astype(float)
        if self.n_ieq_constr:
            out["G"] = ev.G


class FamilyRepair(Repair):
    """The family's repair on pymoo's float genomes."""

    def _do(self, problem: PymooAdapter, X: np.ndarray, **kwargs: object) -> np.ndarray:
        return problem.mp.repair(np.rint(X).astype(np.int64)).astype(float)


class RandomResetMutation(Mutation):
    """Each gene is redrawn uniformly within its bounds with probability ``rate`` (default 1/n)."""

    def __init__(self, rate: float | None = None) -> None:
        super().__init__()
        self.rate = rate

    def _do(self, problem: Problem, X: np.ndarray, random_state: np.random.Generator | None = None,
            **kwargs: object) -> np.ndarray:
        rng = random_state if random_state is not None else np.random.default_rng()
        rate = self.rate if self.rate is not None else 1.0 / problem.n_var
        mask = rng.random(X.shape) < rate
        fresh = rng.integers(problem.xl.astype(np.int64), problem.xu.astype(np.int64) + 1, size=X.shape)
        return np.where(mask, fresh, X)
