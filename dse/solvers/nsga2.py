"""Approximate fronts with pymoo's NSGA-II on the integer genome, evaluated a population at a time.

Operators: uniform crossover and random-reset mutation (genes are categorical
device indices or priorities), the family's ``repair``, duplicate elimination.
An archive keeps every feasible nondominated genome seen, so the result is
the best front found so far whenever the run stops (generation budget, time
limit or Ctrl-C). Same seed and same generation budget give the same result;
a time limit caps the run and may cut it at a different generation. The run itself is
:mod:`dse.solvers.evolution` (shared with the ``memetic`` solver); this module registers it.
"""


from __future__ import annotations

from dse.solvers.context import CALLBACK, RESUME, SEEDS
from dse.solvers.evolution import Nsga2Options, initial_population, solve_nsga2
from dse.solvers.registry import Solver, register_solver

__all__ = ["Nsga2Options", "initial_population", "solve_nsga2"]

register_solver(Solver(
    "nsga2", solve_nsga2, options=Nsga2Options, inputs=frozenset({RESUME, SEEDS, CALLBACK}), in_all=True,
    imports=("pymoo.algorithms.moo.nsga2", "pymoo.indicators.hv"),
    description="pymoo's NSGA-II on the integer genome, seeded with the family's heuristics; any size, nothing proven",
))
