"""NSGA-II runs (pymoo) on the integer genome, evaluated a population at a time: the ``nsga2`` solver
and the second phase of the ``memetic`` one.

Operators: uniform crossover and random-reset mutation (genes are categorical
device indices or priorities), the family's ``repair``, duplicate elimination.
An archive keeps every feasible nondominated genome seen, so the result is
the best front found so far whenever the run stops (generation budget, time
limit or Ctrl-C). Same seed and same generation budget give the same result;
a time limit caps the run and may cut it at a different generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from dse.mapping.base import MappingProblem
from dse.pareto import FEASIBLE, INTERRUPTED, UNKNOWN, ParetoSet, SolveStats, nondominated
from dse.solvers.common import result
from dse.solvers.context import SolveContext
from dse.solvers.registry import SolverOptions, collect_seeds

if TYPE_CHECKING:
    from dse.solvers.pymoo_adapter import PymooAdapter


def hypervolume(F: np.ndarray) -> float:
    """Hypervolume of internal objective values, normalized to the front's own range (a progress signal)."""
    from pymoo.indicators.hv import HV

    F = F.astype(float)
    lo, hi = F.min(axis=0), F.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return float(HV(ref_point=np.full(F.shape[1], 1.1))((F - lo) / span))


def initial_population(problem: MappingProblem, pop_size: int, seeds: list[np.ndarray], rng: np.random.Generator,
                       resume: Sequence[np.ndarray] = ()) -> np.ndarray:
    """``resume`` genomes (a previous front, up to the whole population), then seed genomes (deduplicated, up to
    half the population), then uniform random ones (with ``resume``: copies of its genomes with about two genes
    redrawn each); repaired."""
    def distinct(rows: Sequence[np.ndarray]) -> np.ndarray:
        arr = np.array(list(rows), dtype=np.int64).reshape(-1, problem.n_genes)
        first = np.unique(arr, axis=0, return_index=True)[1]
        return arr[np.sort(first)]

    kept = distinct(resume)[:pop_size]
    seeds_arr = distinct([*kept, *seeds])[: max(pop_size // 2, len(kept))]
    rand = rng.integers(problem.lower, problem.upper + 1, size=(pop_size - len(seeds_arr), problem.n_genes))
    if len(kept):  # continuing a run: the rest are neighbours of the previous front, not strangers
        parents = kept[rng.integers(0, len(kept), size=len(rand))]
        rand = np.where(rng.random(rand.shape) < 2.0 / problem.n_genes, rand, parents)
    return problem.repair(np.vstack([seeds_arr, rand]))


def nsga2_algorithm(problem: MappingProblem, options: Nsga2Options, sampling: Any, generations: int,
                    seed: int) -> tuple[Any, PymooAdapter]:
    """pymoo's NSGA-II with this module's operators on ``problem``, set up to run ``generations`` steps
    (the first evaluates ``sampling``: genomes as floats, or a pymoo ``Population`` whose evaluated members
    are not evaluated again) from ``seed``; returns it and the adapter that counts its evaluations."""
    # pymoo loads here, on first use, not in every command that lists the solvers
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.operators.crossover.ux import UX

    from dse.solvers.pymoo_adapter import FamilyRepair, PymooAdapter, RandomResetMutation

    adapter = PymooAdapter(problem)
    algorithm = NSGA2(
        pop_size=options.pop_size,
        sampling=sampling,
        crossover=UX(),
        mutation=RandomResetMutation(options.mutation_rate),
        repair=FamilyRepair(),
        eliminate_duplicates=True,
    )
    algorithm.setup(adapter, termination=("n_gen", generations), seed=seed, verbose=False)
    return algorithm, adapter


def feasible_members(problem: MappingProblem, adapter: PymooAdapter, pop: Any) -> tuple[np.ndarray, np.ndarray]:
    """The genomes (repaired integers) and internal objective values of the feasible members of the pymoo
    population ``pop``."""
    X = problem.repair(np.rint(pop.get("X")).astype(np.int64))
    F = pop.get("F").astype(np.int64)
    G = pop.get("G") if adapter.n_ieq_constr else np.zeros((len(X), 0))
    ok = (G <= 0).all(axis=1) if G.size else np.ones(len(X), dtype=bool)
    return X[ok], F[ok]


def merge_archive(arch_X: np.ndarray, arch_F: np.ndarray, X: np.ndarray,
                  F: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The archive ``arch_X``/``arch_F`` (nondominated) with the feasible ``X``/``F`` added: its nondominated
    rows, the archive's first on equal values, and whether its values changed."""
    cand_X, cand_F = np.vstack([arch_X, X]), np.vstack([arch_F, F])
    keep = nondominated(cand_F)
    changed = len(keep) != len(arch_F) or not np.array_equal(cand_F[keep], arch_F)
    return cand_X[keep], cand_F[keep], changed


def starting_archive(problem: MappingProblem, genomes: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The archive of ``genomes`` (repaired): the feasible nondominated ones and their internal values."""
    arch_X = np.zeros((0, problem.n_genes), dtype=np.int64)
    arch_F = np.zeros((0, len(problem.objectives)), dtype=np.int64)
    if len(genomes):
        R = problem.repair(np.array(genomes, dtype=np.int64).reshape(-1, problem.n_genes))
        ev = problem.evaluate(R)
        keep = nondominated(ev.F[ev.feasible])
        arch_X, arch_F = R[ev.feasible][keep], ev.F[ev.feasible][keep].astype(np.int64)
    return arch_X, arch_F


def solve_nsga2(problem: MappingProblem, ctx: SolveContext, options: Nsga2Options) -> ParetoSet:
    """Run NSGA-II; returns the archive's front as a :class:`ParetoSet` (nothing proven).

    Reads from ``ctx``: ``seeds``, extra starting genomes (the family's heuristic seeds are added unless
    ``options.use_heuristic_seeds`` is false); ``callback(gen, elapsed_s, front_X, front_F)``, called after
    each generation (returning True stops); ``resume`` genomes (a previous run's front, see ``dse solve
    --resume``), which start the population and the archive, so the result is never worse than that
    front (stopped before its first generation, it returns the front of the ``resume`` and seed genomes).
    ``options.patience``: stop once the archive front has not changed for that many generations
    (None: run to the generation budget, the time limit or a stop).
    """
    progress = ctx.progress
    rng = np.random.default_rng(ctx.seed)
    all_seeds = list(ctx.seeds) + (collect_seeds(problem) if options.use_heuristic_seeds else [])
    X0 = initial_population(problem, options.pop_size, all_seeds, rng, ctx.resume)
    algorithm, adapter = nsga2_algorithm(problem, options, X0.astype(float), options.generations, ctx.seed)
    status, gen, stalled = ctx.stop_status() or FEASIBLE, 0, 0
    # the archive starts from the previous front; stopped before the first generation, from every genome
    # it was handed (the seeds too: a run stopped at once still returns the heuristics' mappings)
    arch_X, arch_F = starting_archive(problem, list(ctx.resume) if status == FEASIBLE else [*ctx.resume, *all_seeds])
    try:
        while status == FEASIBLE and algorithm.has_next():
            algorithm.next()
            gen += 1
            arch_X, arch_F, changed = merge_archive(arch_X, arch_F, *feasible_members(problem, adapter, algorithm.pop))
            stalled = 0 if changed else stalled + 1
            if progress.due():
                hv = hypervolume(arch_F) if len(arch_F) else 0.0
                progress.update(f"generation {gen}, {adapter.evaluations:,} evaluations, "
                                f"{len(arch_X)} front points, hypervolume {hv:.4g}")
            if ctx.callback is not None and ctx.callback(gen, ctx.elapsed(), arch_X, arch_F):
                break
            status = ctx.stop_status() or FEASIBLE
            if options.patience is not None and stalled >= options.patience:
                break
    except KeyboardInterrupt:
        status = INTERRUPTED
    if ctx.token.stopped:  # a stop requested as the run ended (a callback's or the last generation's)
        status = INTERRUPTED
    if len(arch_X) == 0 and status == FEASIBLE:
        status = UNKNOWN  # no feasible genome found; not a proof of infeasibility
    order = np.lexsort(arch_F.T[::-1]) if len(arch_F) else np.zeros(0, dtype=np.int64)
    stats = SolveStats(wall_s=ctx.elapsed(), evaluations=adapter.evaluations, generations=gen)
    return result(problem, arch_X[order], "nsga2", status, stats, proven=False)


class Nsga2Options(SolverOptions):
    """NSGA-II's settings."""

    pop_size: int = Field(default=100, ge=1, description="the population")
    generations: int = Field(default=1_000_000, ge=1, description="the most generations (besides the time limit)")
    use_heuristic_seeds: bool = Field(default=True, description="start from the family's heuristic mappings")
    mutation_rate: float | None = Field(default=None, gt=0, le=1,
                                        description="chance a gene is redrawn (null: 1 / genes)")
    patience: int | None = Field(default=60, ge=1, description="stop after this many generations without a "
                                                                "change of the front (null: never)")
