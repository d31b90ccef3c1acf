"""Compile every kernel once for this environment: ``python -m dse.solvers.warmup``.

Runs each compiled kernel (the dag decoder with and without insertion and the TF send rule, the
heuristics' list scheduler, the lower bounds, the chain bound's block enumeration, the memetic
search's moves) on tiny instances, so numba compiles them and caches them on disk, then writes the
stamp that tells :mod:`dse.util.jit` the cache is warm. ``make demo`` runs it; a solve that meets a cold
cache inside its time limit starts it in the background (see :mod:`dse.util.jit`).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from dse.cost import TableCostModel
from dse.cost.synthetic import random_tables
from dse.inputs.builders.stg_generator import stg_random_graph
from dse.inputs.importers.identical import identical_platform
from dse.mapping.dag import DagProblem
from dse.mapping.dag import structure as dag_structure
from dse.mapping.dag.bounds import communication_bound, destructive_bound
from dse.mapping.dag.chain_bound import Block, BlockModel, block_costs, chain_bound
from dse.solvers import local_search
from dse.solvers.registry import collect_seeds
from dse.util.jit import cache_is_warm, compile_functions, holding_lock, set_announce, write_stamp


def _problems() -> list[DagProblem]:
    """Tiny problems covering the kernels' argument types: explicit transfer tables and per-pair rates,
    with and without insertion, with and without the TF send rule."""
    explicit = random_tables(0, n_ops=6, n_dev=2)
    graph = stg_random_graph(10, "sameprob", 0)
    rates = TableCostModel().tables(graph, identical_platform(2))
    problems = [DagProblem(explicit, ("makespan",), memory=False, insertion=insertion, tensor_per_device=tf)
                for insertion in (False, True) for tf in (False, True)]
    problems.append(DagProblem(rates, ("makespan",), memory=False, name=graph.name))
    return problems


def compile_all() -> float:
    """Compile (or load from the cache) every kernel by running it once; returns the seconds it took."""
    start = time.monotonic()
    compile_functions(vars(dag_structure), dag_structure.KERNEL_NAMES)
    for problem in _problems():
        seeds = np.array(collect_seeds(problem), dtype=np.int64)
        problem.evaluate(seeds)
        communication_bound(problem)
        destructive_bound(problem, upper=int(problem.evaluate(seeds[:1]).F[0, 0]), time_limit=5.0)
        chain_bound(problem, upper=int(problem.evaluate(seeds[:1]).F[0, 0]), time_limit=5.0)
        tables = problem.tables
        if tables.n_edges:
            entry, exit_ = (int(v) for v in tables.edges[0])
            model = BlockModel.of(problem, Block(entry, exit_, ()), tables.time)
            block_costs(problem, model, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
        x = seeds[0]
        fastest = np.argsort(tables.time, axis=1, kind="stable")[:, :2]
        path = local_search.critical_path(problem, x)
        local_search.neighbours(problem, x, path, np.random.default_rng(0), 4, fastest)
    return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    """Compile every kernel and write the stamp; prints one line unless ``--quiet``."""
    parser = argparse.ArgumentParser(prog="python -m dse.solvers.warmup", description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    parser.add_argument("--force", action="store_true", help="compile even when the stamp says it is done")
    args = parser.parse_args(argv)
    if cache_is_warm() and not args.force:
        if not args.quiet:
            print("the dag kernels are compiled and cached for this environment", file=sys.stderr)
        return 0
    set_announce(lambda message: None)  # this command says it itself
    if not args.quiet:
        print("compiling the dag kernels once for this environment (10-40 s; cached afterwards)...",
              file=sys.stderr, flush=True)
    with holding_lock():
        seconds = compile_all()
        write_stamp(seconds)
    if not args.quiet:
        print(f"kernels compiled and cached in {seconds:.1f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
