"""Seeded random cost tables for tests and benchmarks (independent of any cost model)."""

from __future__ import annotations

import numpy as np

from dse.cost import CostTables


def random_tables(seed: int, n_ops: int | None = None, n_dev: int | None = None,
                  disallow: float = 0.1, max_preds: int = 2) -> CostTables:
    """A random DAG (each op after the first has 0..max_preds earlier producers) with random integer costs.

    Without ``n_ops``/``n_dev`` the sizes are drawn in 2..8 ops and 2..3 devices.
    """
    rng = np.random.default_rng(seed)
    n = int(n_ops or rng.integers(2, 9))
    m = int(n_dev or rng.integers(2, 4))
    edges = []
    for i in range(1, n):
        k = rng.integers(0, min(max_preds, i) + 1)
        for s in rng.choice(i, size=k, replace=False):
            edges.append((int(s), i))
    edges_arr = np.array(edges, dtype=np.int64).reshape(-1, 2)
    e = len(edges_arr)
    allowed = rng.random((n, m)) >= disallow
    allowed[np.arange(n), rng.integers(0, m, n)] = True
    transfer_time = rng.integers(0, 30, size=(e, m, m)).astype(np.int64)
    transfer_energy = rng.integers(0, 50, size=(e, m, m)).astype(np.int64)
    diag = np.arange(m)
    transfer_time[:, diag, diag] = 0
    transfer_energy[:, diag, diag] = 0
    return CostTables(
        op_names=tuple(f"op{i}" for i in range(n)),
        device_names=tuple(f"dev{d}" for d in range(m)),
        time=rng.integers(1, 100, size=(n, m)).astype(np.int64),
        energy=rng.integers(0, 500, size=(n, m)).astype(np.int64),
        mem=rng.integers(0, 40, size=(n, m)).astype(np.int64),
        allowed=allowed,
        edges=edges_arr,
        edge_bytes=rng.integers(0, 100, size=e).astype(np.int64),
        transfer_time=transfer_time,
        transfer_energy=transfer_energy,
        idle_power_mw=rng.integers(0, 4, size=m).astype(np.int64),
        mem_capacity=rng.integers(40, 160, size=m).astype(np.int64),
        time_unit="ns",
        seconds_per_time_unit=1e-9,
        device_kinds=tuple(["cpu", "gpu", "fpga"][d % 3] for d in range(m)),
        op_classes=tuple(["gemm", "spmm", "elementwise"][i % 3] for i in range(n)),
    )
