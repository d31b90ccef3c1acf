"""A dense GEMM, whole or split into independent row blocks joined by a concat.

Also home of the helpers the other builders share: element widths per
precision, the :class:`~dse.errors.SpecError` source and the dense GEMM op.
"""

from __future__ import annotations

from dse.errors import SpecError
from dse.model.dtypes import BYTES
from dse.model.workload import MAX_EDGES, MAX_OPS, Op, Workload

__all__ = ["BYTES", "SOURCE", "bytes_per_element", "gemm", "gemm_op", "require_positive", "require_size"]

#: ``source`` of every :class:`SpecError` a builder raises.
SOURCE = "workload.builder"



def bytes_per_element(precision: str) -> int:
    """Element width of ``precision``; raises :class:`SpecError` (field ``precision``) if unknown."""
    if precision not in BYTES:
        raise SpecError(SOURCE, "precision", precision, f"must be one of {', '.join(BYTES)}")
    return BYTES[precision]


def require_positive(**values: float | None) -> None:
    """Raise :class:`SpecError` naming the first keyword whose value is not > 0."""
    for field, value in values.items():
        if value is None or value <= 0:
            raise SpecError(SOURCE, field, value, "must be > 0")


def require_size(field: str, value: object, n_ops: int, n_edges: int = 0) -> None:
    """Raise :class:`SpecError` naming ``field`` when the workload it asks for would hold more than
    :data:`~dse.model.workload.MAX_OPS` ops or :data:`~dse.model.workload.MAX_EDGES` edges.

    Builders call it with the sizes they are about to build, before allocating anything.
    """
    if n_ops > MAX_OPS:
        raise SpecError(SOURCE, field, value, f"would build {n_ops} ops; a workload holds at most {MAX_OPS}")
    if n_edges > MAX_EDGES:
        raise SpecError(SOURCE, field, value, f"would build up to {n_edges} edges; a workload holds at most {MAX_EDGES}")


def gemm_op(name: str, m: int, n: int, k: int, precision: str, features: dict | None = None) -> Op:
    """C[m, n] = A[m, k] @ B[k, n] as one op; B counts as resident (weights).

    ``flops`` = 2mnk; ``bytes_moved`` = (mk + kn + mn) elements; ``output_bytes`` = mn elements.
    """
    bpe = bytes_per_element(precision)
    return Op(
        name=name,
        op_class="gemm",
        flops=2.0 * m * n * k,
        bytes_moved=float((m * k + k * n + m * n) * bpe),
        resident_bytes=float(k * n * bpe),
        output_bytes=float(m * n * bpe),
        precision=precision,
        features=dict(features or {}),
    )


def gemm(m: int = 4096, n: int = 4096, k: int = 4096, precision: str = "fp16", tiles: int = 1) -> Workload:
    """C[m, n] = A[m, k] @ B[k, n]: 2mnk FLOPs, (mk + kn + mn) elements moved.

    With ``tiles`` > 1, the rows of A and C are split into ``tiles`` blocks (sizes
    differ by at most one row); each block is an independent ``gemm`` op that
    reads all of B, and the blocks feed one ``memcpy`` op (``concat``) that
    writes C contiguously (reads and writes mn elements). Returns a
    :class:`Workload` of 1 or ``tiles + 1`` ops.

    Raises :class:`SpecError` for a non-positive size, ``tiles`` > ``m``, more
    than :data:`~dse.model.workload.MAX_OPS` ops or an unknown precision.
    """
    require_positive(m=m, n=n, k=k, tiles=tiles)
    bpe = bytes_per_element(precision)
    if tiles > m:
        raise SpecError(SOURCE, "tiles", tiles, f"at most m = {m} row blocks")
    require_size("tiles", tiles, tiles + 1, tiles)
    if tiles == 1:
        return Workload(f"gemm-{m}x{n}x{k}", (gemm_op("gemm", m, n, k, precision),),
                        description=f"GEMM {m}x{n}x{k} at {precision}")
    rows = [m // tiles + (1 if i < m % tiles else 0) for i in range(tiles)]
    ops = [gemm_op(f"gemm{i}", r, n, k, precision) for i, r in enumerate(rows)]
    ops.append(Op("concat", "memcpy", bytes_moved=2.0 * m * n * bpe, output_bytes=float(m * n * bpe),
                  precision=precision))
    edges = tuple((i, tiles) for i in range(tiles))
    return Workload(f"gemm-{m}x{n}x{k}-t{tiles}", tuple(ops), edges,
                    description=f"GEMM {m}x{n}x{k} at {precision} in {tiles} row blocks")
