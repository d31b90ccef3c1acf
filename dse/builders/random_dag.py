"""Seeded random pipelines of realistic op sizes, for tests and benchmarks."""

from __future__ import annotations

import numpy as np

from dse.errors import SpecError
from dse.workload import Op, Workload


def random_pipeline(n_ops: int = 16, seed: int = 0, max_preds: int = 2, sparse_share: float = 0.3) -> Workload:
    """A layered random DAG: each op after the first has 1..max_preds earlier producers.

    Classes are drawn among gemm, conv, spmm and elementwise; FLOPs, bytes and sizes
    are log-uniform over realistic ranges. Deterministic for a seed.
    """
    if n_ops < 1:
        raise SpecError("workload", "n_ops", n_ops, "must be >= 1")
    if max_preds < 1:
        raise SpecError("workload", "max_preds", max_preds, "must be >= 1")
    rng = np.random.default_rng(seed)

    def logu(lo: float, hi: float) -> float:
        return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))

    ops, edges = [], []
    for i in range(n_ops):
        cls = "spmm" if rng.random() < sparse_share else str(rng.choice(["gemm", "conv", "elementwise"]))
        features = {}
        if cls == "spmm":
            features = {"density": logu(1e-4, 1e-1), "degree_skew": float(rng.uniform(0.0, 3.0))}
        flops = logu(1e6, 1e9) if cls == "elementwise" else logu(1e8, 5e11)
        ops.append(Op(f"op{i}", cls, flops=flops, bytes_moved=logu(1e5, 5e8), resident_bytes=logu(1e4, 1e9),
                      output_bytes=logu(1e4, 5e7), features=features))
        if i:
            for s in rng.choice(i, size=min(i, int(rng.integers(1, max_preds + 1))), replace=False):
                edges.append((int(s), i))
    return Workload(f"random-{n_ops}-{seed}", tuple(ops), tuple(edges))
