"""Approximate fronts with pymoo's NSGA-II on the integer genome, evaluated a population at a time.

Operators: uniform crossover and random-reset mutation (genes are categorical
device indices or priorities), the family's ``repair``, duplicate elimination.
An archive keeps every feasible nondominated genome seen, so the result is
the best front found so far whenever the run stops (generation budget, time
limit or Ctrl-C). Same seed and same generation budget give the same result;
a time limit caps the run and may cut it at a different generation. The run itself is
:mod:`dse.solvers.evolution` (shared with the ``memetic`` solver); with a Dask client it runs as islands
on the client's workers (:mod:`dse.solvers.nsga2_islands`); this module registers it.
"""


from __future__ import annotations

from dse.mapping.base import MappingProblem
from dse.pareto import ParetoSet
from dse.solvers.context import CALLBACK, CLIENT, RESUME, SEEDS, SolveContext
from dse.solvers.evolution import Nsga2Options, initial_population, solve_nsga2
from dse.solvers.nsga2_islands import IslandOptions, solve_nsga2_islands
from dse.solvers.registry import Solver, register_solver

__all__ = ["IslandOptions", "Nsga2Options", "initial_population", "run_nsga2", "solve_nsga2"]


def run_nsga2(problem: MappingProblem, ctx: SolveContext, options: IslandOptions) -> ParetoSet:
    """The ``nsga2`` solver: one population in this process (:func:`solve_nsga2`), or with a Dask
    ``ctx.client`` islands on its workers (:func:`~dse.solvers.nsga2_islands.solve_nsga2_islands`)."""
    if ctx.client is not None:
        return solve_nsga2_islands(problem, ctx, options, ctx.client)
    return solve_nsga2(problem, ctx, options)


register_solver(Solver(
    "nsga2", run_nsga2, options=IslandOptions, inputs=frozenset({RESUME, SEEDS, CALLBACK, CLIENT}), in_all=True,
    imports=("pymoo.algorithms.moo.nsga2", "pymoo.indicators.hv"),
    description="pymoo's NSGA-II on the integer genome, seeded with the family's heuristics; any size, nothing proven",
))
