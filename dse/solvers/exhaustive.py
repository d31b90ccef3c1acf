"""Exhaustive search: every genome, evaluated in vectorized chunks (tiny instances only)."""

from __future__ import annotations

import time

import numpy as np
from pydantic import Field

from dse.errors import SpaceTooLargeError
from dse.mapping.base import MappingProblem
from dse.pareto import INFEASIBLE, INTERRUPTED, OPTIMAL, ParetoSet, SolveStats, nondominated
from dse.solvers.common import result
from dse.solvers.context import SolveContext
from dse.solvers.registry import Solver, SolverOptions, register_solver

DEFAULT_MAX_SPACE = 5_000_000
#: Genomes in the first chunk; chunks double up to ``chunk`` while one takes under ``CHUNK_S / 2`` seconds,
#: so a family that scores a genome by simulation (seconds per thousand) still checks for a stop and its
#: time limit several times a second.
FIRST_CHUNK = 16
CHUNK_S = 0.25


def genomes_from_index(index: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Mixed-radix decode of flat indices into genomes (first gene varies slowest)."""
    radix = (upper - lower + 1).astype(np.int64)
    out = np.empty((len(index), len(radix)), dtype=np.int64)
    rest = index.astype(np.int64)
    for j in range(len(radix) - 1, -1, -1):
        out[:, j] = rest % radix[j] + lower[j]
        rest //= radix[j]
    return out


def solve_exhaustive(problem: MappingProblem, ctx: SolveContext, options: ExhaustiveOptions) -> ParetoSet:
    """The exact front by enumeration; every point proven when the enumeration completes.

    Genomes are evaluated in chunks that start at :data:`FIRST_CHUNK` and grow to ``options.chunk`` while a
    chunk takes under half of :data:`CHUNK_S`; the context's stopping rule is asked between chunks. The
    enumeration is deterministic: ``ctx.seed`` plays no part.

    Raises :class:`SpaceTooLargeError` when the space exceeds ``options.max_space``.
    On a time limit or Ctrl-C, returns the front of the genomes seen so far
    (status ``time_limit`` / ``interrupted``, nothing proven).
    """
    size = problem.space_size
    if size > options.max_space:
        raise SpaceTooLargeError(
            f"exhaustive search refused: {size:,} genomes exceed the bound of {options.max_space:,} "
            f"(raise max_space or use cpsat/nsga2)"
        )
    lower, upper = problem.lower, problem.upper
    best_X = np.zeros((0, problem.n_genes), dtype=np.int64)
    best_F = np.zeros((0, len(problem.objectives)), dtype=np.int64)
    status, seen = OPTIMAL, 0
    step = min(FIRST_CHUNK, options.chunk)
    first = 0
    try:
        while first < size:
            stop = ctx.stop_status()
            if stop is not None:
                status = stop
                break
            began = time.monotonic()
            X = genomes_from_index(np.arange(first, min(first + step, size)), lower, upper)
            first += len(X)
            ev = problem.evaluate(X)
            seen += len(X)
            if time.monotonic() - began < CHUNK_S / 2:  # grow while a chunk stays well under CHUNK_S
                step = min(step * 2, options.chunk)
            X, F = np.vstack([best_X, X[ev.feasible]]), np.vstack([best_F, ev.F[ev.feasible]])
            keep = nondominated(F)
            best_X, best_F = X[keep], F[keep]
            ctx.progress.update(f"{seen:,}/{size:,} genomes, {len(best_X)} front points")
    except KeyboardInterrupt:
        status = INTERRUPTED
    if status == OPTIMAL and len(best_X) == 0:
        status = INFEASIBLE
    order = np.lexsort(best_F.T[::-1]) if len(best_F) else np.zeros(0, dtype=np.int64)
    stats = SolveStats(wall_s=ctx.elapsed(), evaluations=seen)
    return result(problem, best_X[order], "exhaustive", status, stats, proven=status == OPTIMAL, exact=True)


class ExhaustiveOptions(SolverOptions):
    """Exhaustive search's settings."""

    max_space: int = Field(default=DEFAULT_MAX_SPACE, ge=1, description="the most genomes it accepts to enumerate")
    chunk: int = Field(default=65_536, ge=1, description="genomes evaluated at once")


register_solver(Solver(
    "exhaustive", solve_exhaustive, options=ExhaustiveOptions, exact=True,
    description=f"every genome, evaluated in vectorized chunks; refuses spaces over {DEFAULT_MAX_SPACE:,} genomes",
))
