"""A dense GEMM, whole or split into independent row blocks joined by a gather."""

from __future__ import annotations

from dse.builders.gcn import BYTES
from dse.errors import SpecError
from dse.workload import Op, Workload


def gemm(m: int = 4096, n: int = 4096, k: int = 4096, precision: str = "fp16", tiles: int = 1) -> Workload:
    """C[m, n] = A[m, k] @ B[k, n]: 2mnk FLOPs, (mk + kn + mn) elements moved.

    With ``tiles`` > 1, ``tiles`` row blocks (the last takes the remainder) feed one
    ``memcpy`` gather op. Raises :class:`SpecError` for non-positive sizes.
    """
    for field, value in (("m", m), ("n", n), ("k", k), ("tiles", tiles)):
        if value < 1:
            raise SpecError("workload", field, value, "must be >= 1")
    if precision not in BYTES:
        raise SpecError("workload", "precision", precision, f"one of {', '.join(BYTES)}")
    if tiles > m:
        raise SpecError("workload", "tiles", tiles, f"at most m = {m} row blocks")
    bpe = BYTES[precision]
    rows = [m // tiles + (1 if i < m % tiles else 0) for i in range(tiles)]
    ops = [
        Op(f"gemm{i}" if tiles > 1 else "gemm", "gemm", flops=2.0 * r * n * k,
           bytes_moved=float((r * k + k * n + r * n) * bpe), resident_bytes=float(k * n * bpe),
           output_bytes=float(r * n * bpe), precision=precision)
        for i, r in enumerate(rows)
    ]
    edges: tuple[tuple[int, int], ...] = ()
    if tiles > 1:
        ops.append(Op("gather", "memcpy", bytes_moved=2.0 * m * n * bpe, output_bytes=float(m * n * bpe),
                      precision=precision))
        edges = tuple((i, tiles) for i in range(tiles))
    return Workload(f"gemm-{m}x{n}x{k}", tuple(ops), edges)
