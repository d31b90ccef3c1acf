"""The family contract as plain checks, for a family's own tests (as ``optuna.testing`` is for samplers).

A family registered from another package (the ``dse.families`` entry-point group) runs them from its
own test suite::

    from dse.testing import check_family

    def test_my_family_keeps_the_contract():
        check_family("myfamily", seeds=range(5))

:func:`check_family` runs every check on the family's ``examples(seed)`` instances; each check is also a
function of its own, taking a problem (or the registry entry). A broken promise raises
``AssertionError`` naming the family, the problem and what broke; nothing here needs pytest.

The contract:

* ``Family.exact`` matches the problem (``exact_unsupported()`` is None exactly when it is true);
* ``repair`` keeps the shape, lands in bounds and is idempotent (:func:`check_repair`);
* ``decode`` agrees with ``evaluate``: objective quantities, constraint slack, an assignment of every
  op, a description and an explanation (:func:`check_decode`);
* ``decode``, ``evaluate``, ``assignment`` and ``describe`` refuse a genome of the wrong length or with
  a gene out of bounds with a :class:`~dse.errors.GenomeError` naming the gene (never an index error, a
  crash, or a silently wrapped index), ``repair`` one of the wrong length (:func:`check_genome_refusals`);
* exact families: exhaustive search and CP-SAT give the same front, point for point, every CP-SAT
  point proven and re-evaluated to CP-SAT's values (:func:`check_exact_agrees`);
* NSGA-II's front is feasible, re-evaluates to its own values, and never dominates a point of the
  exhaustive front, each of its points being equal to or dominated by one (:func:`check_approximate_front`);
* every declared metric and objective is a column of ``front.csv`` (:func:`check_metric_columns`).
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from dse.errors import GenomeError
from dse.mapping.base import MappingProblem
from dse.mapping.registry import Family, family
from dse.pareto import INFEASIBLE, OPTIMAL, ParetoSet
from dse.runs.runner import write_fronts
from dse.solvers import solve
from dse.solvers.exhaustive import DEFAULT_MAX_SPACE

__all__ = [
    "check_approximate_front",
    "check_decode",
    "check_exact_agrees",
    "check_exact_flag",
    "check_family",
    "check_genome_refusals",
    "check_metric_columns",
    "check_repair",
    "random_rows",
]

#: Seconds each solver of a check may take (the examples are small: they finish in well under one).
CHECK_TIME_LIMIT_S = 30.0


def _where(problem: MappingProblem) -> str:
    return f"family {problem.family!r}, problem {problem.name!r}"


def _fail(problem: MappingProblem, message: str) -> AssertionError:
    return AssertionError(f"{_where(problem)}: {message}")


def random_rows(problem: MappingProblem, seed: int, rows: int = 6) -> np.ndarray:
    """``rows`` seeded integer genomes for :func:`check_repair`, genes drawn from 5 below the lower bound
    to 5 above the upper one (so some are out of bounds)."""
    rng = np.random.default_rng(seed)
    return rng.integers(problem.lower - 5, problem.upper + 6, size=(rows, problem.n_genes))


def check_exact_flag(entry: Family, problem: MappingProblem) -> None:
    """``entry.exact`` is true exactly when ``problem`` (one of its instances) has an exact formulation."""
    if entry.exact != (problem.exact_unsupported() is None):
        raise _fail(problem, f"Family.exact is {entry.exact} but exact_unsupported() says "
                             f"{problem.exact_unsupported()!r}")


def check_repair(problem: MappingProblem, X: np.ndarray) -> None:
    """``problem.repair(X)`` keeps ``X``'s shape, lands within ``lower .. upper`` and is idempotent."""
    X = np.asarray(X, dtype=np.int64)
    R = problem.repair(X)
    if R.shape != X.shape:
        raise _fail(problem, f"repair changed the shape {X.shape} to {R.shape}")
    outside = np.argwhere((R < problem.lower) | (R > problem.upper))
    if len(outside):
        row, gene = outside[0]
        raise _fail(problem, f"repair left gene {gene} of row {row} at {R[row, gene]}, outside "
                             f"{problem.lower[gene]}..{problem.upper[gene]} (input {X[row].tolist()})")
    again = problem.repair(R)
    changed = np.flatnonzero((again != R).any(axis=1))
    if len(changed):
        raise _fail(problem, f"repair is not idempotent: {R[changed[0]].tolist()} repaired again gives "
                             f"{again[changed[0]].tolist()}")


def check_decode(problem: MappingProblem, seed: int = 0, rows: int = 12) -> None:
    """For ``rows`` seeded repaired genomes: ``decode(x).values()`` holds ``evaluate``'s objective values,
    its ``constraint_slack`` the slack of ``evaluate``'s violations, ``assignment()`` names every op, and
    ``describe(x)`` and ``explain()`` say something."""
    rng = np.random.default_rng(seed)
    X = problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(rows, problem.n_genes)))
    ev = problem.evaluate(X)
    for k, x in enumerate(X):
        decoded = problem.decode(x)
        values = decoded.values()
        decoded_F = [values[o.internal_name] for o in problem.objectives]
        if decoded_F != ev.F[k].tolist():
            raise _fail(problem, f"decode gives objectives {decoded_F}, evaluate {ev.F[k].tolist()} for {x.tolist()}")
        slack, expected = decoded.constraint_slack, problem.slack(ev.G[k])
        if set(slack) != set(expected) or not all(
                math.isclose(slack[name], expected[name], rel_tol=1e-6, abs_tol=1e-12) for name in expected):
            raise _fail(problem, f"decode gives constraint slack {slack}, evaluate {expected} for {x.tolist()}")
        ops = set(decoded.assignment())
        if ops != set(problem.tables.op_names):
            raise _fail(problem, f"assignment() names {sorted(ops)}, not the ops {sorted(problem.tables.op_names)}")
        if not problem.describe(x) or not decoded.explain():
            raise _fail(problem, f"describe() or explain() is empty for {x.tolist()}")


def _refuses(problem: MappingProblem, method: str, genome: np.ndarray, pattern: str) -> None:
    """``problem.<method>(genome)`` raises a :class:`GenomeError` whose message matches ``pattern``."""
    try:
        getattr(problem, method)(genome)
    except GenomeError as exc:
        if not re.search(pattern, str(exc)):
            raise _fail(problem, f"{method}({genome.tolist()}) says {str(exc)!r}, which does not match "
                                 f"{pattern!r}") from None
        return
    except Exception as exc:  # noqa: BLE001 - any other error breaks the contract: say which
        raise _fail(problem, f"{method}({genome.tolist()}) raised {type(exc).__name__}: {exc}, "
                             "not a GenomeError") from exc
    raise _fail(problem, f"{method}({genome.tolist()}) accepted a genome that does not fit")


def check_genome_refusals(problem: MappingProblem) -> None:
    """``decode``, ``evaluate``, ``repair``, ``assignment`` and ``describe`` refuse a genome of the wrong
    length (:class:`GenomeError` saying how many genes the problem takes); ``decode``, ``assignment`` and
    ``describe`` one with its first or last gene out of bounds (naming the gene, its name and the value),
    ``evaluate`` a population holding one (naming the genome)."""
    good = problem.repair(problem.lower[None, :])[0]
    length = f"takes {problem.n_genes}"
    for wrong in (good[:-1], np.concatenate([good, good[:1]]), good[:0]):
        for method in ("decode", "evaluate", "repair", "assignment", "describe"):
            _refuses(problem, method, wrong, length)
    for gene in sorted({0, problem.n_genes - 1}):
        for value in (int(problem.lower[gene]) - 1, int(problem.upper[gene]) + 1):
            bad = good.copy()
            bad[gene] = value
            named = f"gene {gene} '{re.escape(problem.gene_names[gene])}' = {value} "
            for method in ("decode", "assignment", "describe"):
                _refuses(problem, method, bad, named)
            _refuses(problem, "evaluate", np.stack([good, bad]), r"\(genome 1\)")


def _values(front: ParetoSet) -> list[tuple[int, ...]]:
    return sorted(map(tuple, front.internal().tolist()))


def check_exact_agrees(problem: MappingProblem, time_limit: float = CHECK_TIME_LIMIT_S) -> ParetoSet:
    """Exhaustive search and CP-SAT (2 workers) give the same front, point for point, both ending
    ``optimal`` or both ``infeasible``; every CP-SAT point is proven, feasible and re-evaluates to CP-SAT's
    values. Returns the exhaustive front. For a family with an exact formulation and an instance small
    enough to enumerate."""
    brute = solve(problem, "exhaustive", time_limit=time_limit, seed=0, progress=False)
    exact = solve(problem, "cpsat", time_limit=time_limit, seed=0, progress=False, workers=2)
    if brute.status not in (OPTIMAL, INFEASIBLE):
        raise _fail(problem, f"exhaustive search ended {brute.status!r} within {time_limit:g} s")
    if exact.status != brute.status:
        raise _fail(problem, f"CP-SAT ended {exact.status!r}, exhaustive search {brute.status!r}")
    if _values(exact) != _values(brute):
        raise _fail(problem, f"CP-SAT's front {_values(exact)} differs from exhaustive search's {_values(brute)}")
    if len(exact):
        unproven = [p.internal for p in exact.points if not p.proven]
        if unproven:
            raise _fail(problem, f"CP-SAT's points {unproven} are not proven on a complete front")
        ev = problem.evaluate(np.array([p.genome for p in exact.points]))
        if not ev.feasible.all() or not np.array_equal(ev.F, exact.internal()):
            raise _fail(problem, f"CP-SAT's points re-evaluate to {ev.F.tolist()} (feasible "
                                 f"{ev.feasible.tolist()}), CP-SAT says {exact.internal().tolist()}")
    return brute


def check_approximate_front(problem: MappingProblem, front: ParetoSet, exact: ParetoSet | None = None) -> None:
    """Every point of ``front`` (an approximate solver's) is feasible and re-evaluates to its values; with
    ``exact``, a finished exact front of the same problem (status ``optimal``, or ``infeasible``: then
    ``front`` must be empty), no point of ``front`` dominates one of ``exact``, and each is equal to or
    dominated by one of ``exact``. Raises ``ValueError`` for an ``exact`` front that did not finish."""
    if exact is not None and exact.status not in (OPTIMAL, INFEASIBLE):
        raise ValueError(f"{_where(problem)}: the exact front to compare with ended {exact.status!r}")
    if not len(front):
        return
    genomes = np.array([p.genome for p in front.points], dtype=np.int64)
    ev = problem.evaluate(genomes)
    if not ev.feasible.all():
        raise _fail(problem, f"{front.solver}'s front holds infeasible mappings "
                             f"{genomes[~ev.feasible].tolist()}")
    if not np.array_equal(ev.F, front.internal()):
        raise _fail(problem, f"{front.solver}'s points re-evaluate to {ev.F.tolist()}, the front says "
                             f"{front.internal().tolist()}")
    if exact is None:
        return
    E = exact.internal()
    for a in front.internal():
        beaten = [e.tolist() for e in E if (a <= e).all() and (a < e).any()]
        if beaten:
            raise _fail(problem, f"{front.solver}'s point {a.tolist()} dominates the exact front's {beaten[0]}")
        if not any((e <= a).all() for e in E):
            raise _fail(problem, f"{front.solver}'s point {a.tolist()} is neither on nor behind the exact "
                                 f"front {E.tolist()}")


def check_metric_columns(entry: Family, problem: MappingProblem, front: ParetoSet) -> None:
    """``front.csv`` written for ``front`` (a front of ``problem``, an instance of ``entry``) has a column
    per declared metric and objective, and the solver, proof, status and genome columns."""
    import pandas as pd

    with tempfile.TemporaryDirectory() as folder:
        write_fronts(Path(folder), problem, [front])
        columns = set(pd.read_csv(Path(folder) / "front.csv").columns)
    expected = {m.column(problem.tables) for m in entry.metrics} | set(front.columns)
    expected |= {"solver", "proven", "status", "genome"}
    if not expected <= columns:
        raise _fail(problem, f"front.csv lacks the columns {sorted(expected - columns)}")


def check_family(name_or_entry: str | Family, seeds: Iterable[int] = range(10), *,
                 time_limit: float = CHECK_TIME_LIMIT_S) -> None:
    """Every check of the module docstring on ``examples(seed)`` for each of ``seeds``: exhaustive search
    where the instance is small enough, CP-SAT against it for an exact family, NSGA-II (a small seeded
    run) against it for every family; the genome refusals on the first instance, the ``front.csv``
    columns with the first non-empty NSGA-II front.

    ``name_or_entry``: a registered family's name or a :class:`~dse.mapping.registry.Family` entry.
    Raises ``AssertionError`` naming the seed, the family and the problem on the first broken promise
    (``KeyError`` for an unknown family name, ``ValueError`` without a seed)."""
    entry = family(name_or_entry) if isinstance(name_or_entry, str) else name_or_entry
    seeds = list(seeds)
    if not seeds:
        raise ValueError("check_family needs at least one seed")
    with_points: tuple[MappingProblem, ParetoSet] | None = None
    for seed in seeds:
        problem = entry.examples(seed)
        try:
            check_exact_flag(entry, problem)
            check_repair(problem, random_rows(problem, seed))
            check_decode(problem, seed)
            if seed == seeds[0]:
                check_genome_refusals(problem)
            exact = None
            if problem.space_size <= DEFAULT_MAX_SPACE:
                exact = (check_exact_agrees(problem, time_limit) if entry.exact else
                         solve(problem, "exhaustive", time_limit=time_limit, seed=0, progress=False))
            approx = solve(problem, "nsga2", time_limit=time_limit, seed=seed, progress=False, pop_size=10,
                           generations=15)
            finished = exact is not None and exact.status in (OPTIMAL, INFEASIBLE)
            check_approximate_front(problem, approx, exact if finished else None)
        except AssertionError as exc:
            raise AssertionError(f"{entry.name} example {seed}: {exc}") from exc
        if with_points is None and len(approx):
            with_points = (problem, approx)
    if with_points is None:
        raise AssertionError(f"{entry.name}: NSGA-II found no feasible mapping in examples {seeds}, so "
                             "front.csv's columns could not be checked")
    check_metric_columns(entry, *with_points)
