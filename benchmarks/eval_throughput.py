"""Evaluation throughput of the pipeline family: vectorized population vs a per-genome Python loop.

Usage: python benchmarks/eval_throughput.py [--pop 10000] [--loop-sample 500] [--repeats 5]

The loop calls ``evaluate`` on one genome at a time, as an elementwise pymoo
problem would; its rate is measured on ``--loop-sample`` genomes. Prints
genomes per second and the ratio, for (ops, devices) = (64, 4) and (512, 8),
with and without the latency deadline (which adds the longest-path pass).
Set OMP/MKL threads to 1 to measure one core (numpy here does not thread these ops).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from stopping import benchmark_stops

from dse.cost.synthetic import random_tables
from dse.mapping.pipeline import PipelineProblem


def rate(fn, count: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pop", type=int, default=10_000)
    parser.add_argument("--loop-sample", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'ops':>5} {'devs':>4} {'deadline':>8} {'vectorized/s':>14} {'loop/s':>10} {'ratio':>7}")
    with benchmark_stops("eval_throughput") as stop:
        for n_ops, n_dev in ((64, 4), (512, 8)):
            tables = random_tables(seed=1, n_ops=n_ops, n_dev=n_dev, disallow=0.0)
            for deadline in (None, 10**9):
                stop.check()
                problem = PipelineProblem(tables, deadline=deadline)
                rng = np.random.default_rng(0)
                X = rng.integers(0, n_dev, size=(args.pop, n_ops))
                vec = rate(lambda X=X, p=problem: p.evaluate(X), args.pop, args.repeats)
                sample = X[: args.loop_sample]
                loop = rate(lambda s=sample, p=problem: [p.evaluate(x[None, :]) for x in s], len(sample), 1)
                print(f"{n_ops:>5} {n_dev:>4} {'yes' if deadline else 'no':>8} {vec:>14,.0f} {loop:>10,.0f} {vec / loop:>7.0f}x")


if __name__ == "__main__":
    main()
