"""Certify any front: how far it can be from the true Pareto front, with CP-SAT's proofs.

:func:`certify` takes a front from any solver (NSGA-II, memetic search, a heuristic, a user's own
genomes), hands its mappings to CP-SAT's search-region boxes as found points (they split the region
before the first solve), lets CP-SAT close boxes and find better points within the time limit, and
returns the combined front with its :class:`~dse.pareto.Certificate`. Points with the objective values
of a given mapping keep its solver's name (``given`` for bare genomes); points CP-SAT adds are marked
``cpsat``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from dse.mapping.base import PROBLEM_HINT, MappingProblem
from dse.pareto import ParetoSet
from dse.solvers.context import solve_context
from dse.solvers.cpsat import CPSAT, solve_cpsat
from dse.solvers.registry import check_options
from dse.util.arguments import expect, expect_items
from dse.util.limits import check_seed, check_time_limit
from dse.util.progress import Progress


def certify(problem: MappingProblem, front: ParetoSet | Sequence[Sequence[int]] | Sequence[np.ndarray],
            time_limit: float = 60.0,
            seed: int = 0, workers: int | None = None, progress: Progress | None = None) -> ParetoSet:
    """The nondominated union of ``front`` (a :class:`ParetoSet` or genomes) and what CP-SAT finds within
    ``time_limit`` seconds, with its certificate (``certificate()``): solver ``certify``, status as
    CP-SAT's (``optimal`` when the union is proven to be the whole front).

    Raises ``TypeError`` when ``problem`` is not a problem or ``front`` neither a front nor genomes,
    ``ValueError`` when ``front`` is a front of another problem, ``NotImplementedError`` when the
    problem's family has no exact formulation, :class:`~dse.errors.GenomeError` when a genome does not
    fit the problem (:class:`~dse.errors.GenomeTypeError` when a gene is not an integer), and
    :class:`~dse.errors.SpecError` for a time limit, seed or number of workers out of range.

    Example::

        approx = dse.solve(problem, "nsga2", time_limit=10)
        certified = dse.certify(problem, approx, time_limit=30)
        print(certified.certificate().describe())
    """
    expect(problem, MappingProblem, "dse.certify", "problem", PROBLEM_HINT)
    time_limit = check_time_limit(time_limit, "dse.certify", "time_limit")
    seed = check_seed(seed, "dse.certify", "seed")
    reason = problem.exact_unsupported()
    if reason is not None:
        raise NotImplementedError(reason)
    if isinstance(front, ParetoSet) and front.problem != problem.name:
        raise ValueError(f"dse.certify: the front solves {front.problem!r}, not {problem.name!r}")
    points = front.points if isinstance(front, ParetoSet) else ()
    raw = [p.genome for p in points] if isinstance(front, ParetoSet) else expect_items(
        front, (Sequence, np.ndarray), "dse.certify", "front", "a ParetoSet or a list of genomes")
    genomes = [problem.checked_genomes(g)[0] for g in raw]
    labels = [p.solver for p in points] if points else ["given"] * len(genomes)
    given = problem.evaluate(np.array(genomes, dtype=np.int64).reshape(-1, problem.n_genes)).F
    origin = {tuple(int(v) for v in row): label for row, label in zip(given, labels, strict=True)}
    options = check_options(CPSAT, {} if workers is None else {"workers": workers}, "dse.certify")
    CPSAT.preload()
    with solve_context(seed, time_limit, progress, resume=genomes) as ctx:
        found = solve_cpsat(problem, ctx, options)
    relabelled = tuple(dataclasses.replace(p, solver=origin.get(tuple(p.internal), "cpsat")) for p in found.points)
    note = f"certified {len(genomes)} given mappings with CP-SAT in {found.stats.wall_s:.1f} s"
    return dataclasses.replace(found, points=relabelled, solver="certify", notes=(*found.notes, note))
