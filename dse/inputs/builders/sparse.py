"""Irregular workloads as pipelines: GraphSAGE-mean and GIN layers, conjugate gradient, PageRank.

Every builder takes its input either as a catalog ``dataset`` (published
statistics, :mod:`dse.inputs.datasets`) or as ``dataset="custom"`` with ``rows``,
``nnz``, ``row_cv`` (and ``width`` where a dense width applies); any
statistic may be overridden. Sparse products are ``spmm`` ops (an SpMV is an
``spmm`` of width 1) whose features carry ``density``, ``degree_skew`` (the
row-length CV), ``rows``, ``nnz`` and ``width``: what the data-aware and the
calibrated cost models read.

Op orders follow the reference implementations:

* ``graphsage``: PyTorch Geometric's ``SAGEConv`` with mean aggregation,
  ``out = lin_l(mean_j x_j) + lin_r(x_i)``: aggregate (mean SpMM on the input
  width), ``lin_l`` and ``lin_r`` (GEMMs), then the sum; ReLU folded in;
* ``gin``: PyG's ``GINConv``, ``out = mlp((1 + eps) x_i + sum_j x_j)``:
  aggregate (sum SpMM), the ``(1 + eps)`` self term (elementwise), then a
  two-layer MLP (GEMM, GEMM);
* ``cg``: one unpreconditioned conjugate-gradient iteration per repetition
  (Saad, *Iterative Methods for Sparse Linear Systems*, Alg. 6.18):
  ``q = A p`` (SpMV), ``alpha = rr / (p . q)`` (dot), ``x += alpha p`` and
  ``r -= alpha q`` (axpys), ``rr' = r . r`` (dot), ``p = r + beta p`` (xpay);
* ``spmm``: one sparse product on its own (an SpMV at width 1), as sparse libraries benchmark it;
* ``pagerank``: power iterations ``x' = d A^T D^-1 x + (1 - d) / n`` (SpMV,
  elementwise damping) with the L1 change as convergence test (reduce).

Bytes: an SpMM moves its CSR arrays, one gathered input row of ``width`` per
nonzero and the dense output (as :func:`dse.inputs.builders.message_passing.spmm_op`); a dot
reads two vectors, an axpy reads two and writes one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from dse.errors import SpecError
from dse.inputs.builders.gemm import (
    SOURCE,
    bytes_per_element,
    gemm_op,
    require_positive,
    require_size,
)
from dse.inputs.builders.message_passing import (
    INDEX_BYTES,
    aggregate_ops,
    check_aggregation,
    spmm_op,
)
from dse.inputs.datasets import dataset as lookup
from dse.model.workload import Op, Workload


def _input(dataset: str, rows: int | None, nnz: int | None, row_cv: float | None,
           width: int | None) -> tuple[int, int, float, int, int]:
    """(rows, nnz, row_cv, feature width, classes) of the builder's input; raises :class:`SpecError`."""
    if dataset == "custom":
        missing = [k for k, v in dict(rows=rows, nnz=nnz).items() if v is None]
        if missing:
            raise SpecError(SOURCE, missing[0], None, "required with dataset: custom")
        stats: dict[str, float | int | None] = dict(rows=rows, nnz=nnz, row_cv=0.0, width=width or 1, classes=1)
    else:

        d = lookup(dataset, SOURCE, "dataset")
        stats = dict(rows=d.rows, nnz=d.nnz, row_cv=d.row_cv, width=d.features, classes=d.classes)
    given = dict(rows=rows, nnz=nnz, row_cv=row_cv, width=width)
    stats.update({k: v for k, v in given.items() if v is not None})
    require_positive(rows=stats["rows"], nnz=stats["nnz"], width=stats["width"])
    n, z, cv = int(stats["rows"] or 0), int(stats["nnz"] or 0), float(stats["row_cv"] or 0.0)
    if cv < 0:
        raise SpecError(SOURCE, "row_cv", cv, "must be >= 0")
    if z > n * n:
        raise SpecError(SOURCE, "nnz", z, f"a {n} x {n} matrix holds at most {n * n} nonzeros")
    return n, z, cv, int(stats["width"] or 1), int(stats["classes"] or 1)


def _sparse(name: str, n: int, nnz: int, width: int, precision: str, row_cv: float) -> Op:
    op = spmm_op(name, n, nnz, width, precision, row_cv)
    features = {**op.features, "rows": float(n), "nnz": float(nnz), "width": float(width)}
    return Op(op.name, op.op_class, op.flops, op.bytes_moved, op.resident_bytes, op.output_bytes, op.precision,
              features)


def _aggregate(name: str, n: int, nnz: int, width: int, precision: str, row_cv: float, aggregation: str,
               reduce: str) -> list[Op]:
    """One aggregation's ops (:func:`~dse.inputs.builders.message_passing.aggregate_ops`), the fused one with its
    ``rows``, ``nnz`` and ``width`` features."""
    if aggregation == "fused":
        return [_sparse(name, n, nnz, width, precision, row_cv)]
    return aggregate_ops(name, n, nnz, width, precision, row_cv, aggregation, reduce=reduce)


def _vector_op(name: str, op_class: str, n: int, reads: int, writes: int, flops_per_row: float,
               precision: str, output_rows: int | None = None) -> Op:
    bpe = bytes_per_element(precision)
    out_rows = n if output_rows is None else output_rows
    return Op(name, op_class, flops=flops_per_row * n, bytes_moved=float((reads * n + writes * out_rows) * bpe),
              output_bytes=float(out_rows * bpe), precision=precision)


def _layer_widths(in_width: int, hidden: int, classes: int, layers: int) -> list[int]:
    return [in_width] + [hidden] * (layers - 1) + [classes]


def graphsage(dataset: str = "cora", layers: int = 2, hidden: int = 64, rows: int | None = None,
              nnz: int | None = None, row_cv: float | None = None, width: int | None = None,
              classes: int | None = None, precision: str = "fp32", aggregation: str = "fused") -> Workload:
    """A ``layers``-layer GraphSAGE-mean network (PyG ``SAGEConv``), 4 ops per layer (``fused``).

    ``aggregation="gather_scatter"``: each mean aggregation is PyG's gather and scatter-mean
    (:mod:`dse.inputs.builders.message_passing`), and the ReLU between layers is an element-wise op.

    Raises :class:`SpecError` for an unknown dataset, precision or aggregation, a non-positive size or too
    many layers.
    """
    bytes_per_element(precision)
    check_aggregation(aggregation)
    require_positive(layers=layers, hidden=hidden)
    require_size("layers", layers, 6 * layers, 7 * layers)
    n, z, cv, w, c = _input(dataset, rows, nnz, row_cv, width)
    widths = _layer_widths(w, hidden, classes or c, layers)
    ops: list[Op] = []
    edges: list[tuple[int, int]] = []
    prev = None
    for layer in range(layers):
        f_in, f_out = widths[layer], widths[layer + 1]
        aggregate = _aggregate(f"l{layer}.aggregate", n, z, f_in, precision, cv, aggregation, "mean")
        base = len(ops)
        last_aggregate = base + len(aggregate) - 1
        ops += [*aggregate,
                gemm_op(f"l{layer}.lin_neigh", n, f_out, f_in, precision),
                gemm_op(f"l{layer}.lin_self", n, f_out, f_in, precision),
                _vector_op(f"l{layer}.sum", "elementwise", n * f_out, 2, 1, 1.0, precision)]
        neigh, self_, total = last_aggregate + 1, last_aggregate + 2, last_aggregate + 3
        edges += [(i, i + 1) for i in range(base, last_aggregate)]
        edges += [(last_aggregate, neigh), (neigh, total), (self_, total)]
        if prev is not None:
            edges += [(prev, base), (prev, self_)]
        prev = total
        if aggregation == "gather_scatter" and layer < layers - 1:  # BasicGNN's ReLU between layers
            ops.append(_vector_op(f"l{layer}.act", "elementwise", n * f_out, 1, 1, 1.0, precision))
            edges.append((total, len(ops) - 1))
            prev = len(ops) - 1
    return Workload(f"graphsage-{dataset}-{layers}l", tuple(ops), tuple(edges),
                    description=f"GraphSAGE-mean (PyG SAGEConv) on {dataset}: {n} rows, {z} nonzeros, widths {widths}")


def gin(dataset: str = "cora", layers: int = 2, hidden: int = 64, rows: int | None = None, nnz: int | None = None,
        row_cv: float | None = None, width: int | None = None, classes: int | None = None,
        precision: str = "fp32", aggregation: str = "fused") -> Workload:
    """A ``layers``-layer GIN (PyG ``GINConv`` with a 2-layer MLP) as a chain of 4 ops per layer (``fused``).

    ``aggregation="gather_scatter"``: each sum aggregation is PyG's gather and scatter-add
    (:mod:`dse.inputs.builders.message_passing`), ``(1 + eps) x + aggregate`` two kernels, and the MLP's ReLU and
    the ReLU between layers element-wise ops.

    Raises :class:`SpecError` for an unknown dataset, precision or aggregation, a non-positive size or too
    many layers.
    """
    bytes_per_element(precision)
    check_aggregation(aggregation)
    require_positive(layers=layers, hidden=hidden)
    require_size("layers", layers, 7 * layers, 7 * layers)
    n, z, cv, w, c = _input(dataset, rows, nnz, row_cv, width)
    widths = _layer_widths(w, hidden, classes or c, layers)
    pyg = aggregation == "gather_scatter"
    ops: list[Op] = []
    for layer in range(layers):
        f_in, f_out = widths[layer], widths[layer + 1]
        ops += _aggregate(f"l{layer}.aggregate", n, z, f_in, precision, cv, aggregation, "sum")
        combine = _vector_op(f"l{layer}.self", "elementwise", n * f_in, 2, 1, 2.0, precision)
        if pyg:  # (1 + eps) * x, then + aggregate: two kernels, the intermediate written and read once more
            combine = replace(combine, bytes_moved=combine.bytes_moved + 2 * n * f_in * bytes_per_element(precision),
                              features={"kernels": 2.0})
        ops += [combine, gemm_op(f"l{layer}.mlp1", n, hidden, f_in, precision)]
        if pyg:
            ops.append(_vector_op(f"l{layer}.mlp_act", "elementwise", n * hidden, 1, 1, 1.0, precision))
        ops.append(gemm_op(f"l{layer}.mlp2", n, f_out, hidden, precision))
        if pyg and layer < layers - 1:
            ops.append(_vector_op(f"l{layer}.act", "elementwise", n * f_out, 1, 1, 1.0, precision))
    chain = tuple((i, i + 1) for i in range(len(ops) - 1))
    return Workload(f"gin-{dataset}-{layers}l", tuple(ops), chain,
                    description=f"GIN (PyG GINConv) on {dataset}: {n} rows, {z} nonzeros, widths {widths}")


def cg(dataset: str = "thermal2", iterations: int = 1, rows: int | None = None, nnz: int | None = None,
       row_cv: float | None = None, precision: str = "fp64") -> Workload:
    """``iterations`` conjugate-gradient iterations on ``A`` (6 ops each: SpMV, 2 dots, 3 vector updates).

    Raises :class:`SpecError` for an unknown dataset or precision, a non-positive size or too many iterations.
    """
    bytes_per_element(precision)
    require_positive(iterations=iterations)
    require_size("iterations", iterations, 6 * iterations, 7 * iterations)
    n, z, cv, _, _ = _input(dataset, rows, nnz, row_cv, 1)
    ops: list[Op] = []
    edges: list[tuple[int, int]] = []
    prev = None
    for it in range(iterations):
        b = len(ops)
        ops += [_sparse(f"i{it}.spmv", n, z, 1, precision, cv),
                _vector_op(f"i{it}.dot_pq", "reduce", n, 2, 0, 2.0, precision, output_rows=1),
                _vector_op(f"i{it}.axpy_x", "elementwise", n, 2, 1, 2.0, precision),
                _vector_op(f"i{it}.axpy_r", "elementwise", n, 2, 1, 2.0, precision),
                _vector_op(f"i{it}.dot_rr", "reduce", n, 1, 0, 2.0, precision, output_rows=1),
                _vector_op(f"i{it}.xpay_p", "elementwise", n, 2, 1, 2.0, precision)]
        edges += [(b, b + 1), (b + 1, b + 2), (b + 1, b + 3), (b, b + 3), (b + 3, b + 4), (b + 4, b + 5),
                  (b + 3, b + 5)]
        if prev is not None:
            edges += [(prev, b)]
        prev = b + 5
    return Workload(f"cg-{dataset}-{iterations}it", tuple(ops), tuple(edges),
                    description=f"conjugate gradient on {dataset}: {n} rows, {z} nonzeros "
                                f"({z * (INDEX_BYTES + bytes_per_element(precision)) / 2**20:.3g} MiB CSR), "
                                f"{iterations} iterations, {precision}")


def pagerank(dataset: str = "web-google", iterations: int = 2, rows: int | None = None, nnz: int | None = None,
             row_cv: float | None = None, precision: str = "fp32") -> Workload:
    """``iterations`` PageRank power iterations as a chain of 3 ops each (SpMV, damping, L1 change).

    Raises :class:`SpecError` for an unknown dataset or precision, a non-positive size or too many iterations.
    """
    bytes_per_element(precision)
    require_positive(iterations=iterations)
    require_size("iterations", iterations, 3 * iterations, 3 * iterations)
    n, z, cv, _, _ = _input(dataset, rows, nnz, row_cv, 1)
    ops: list[Op] = []
    edges: list[tuple[int, int]] = []
    for it in range(iterations):
        b = len(ops)
        ops += [_sparse(f"i{it}.spmv", n, z, 1, precision, cv),
                _vector_op(f"i{it}.damp", "elementwise", n, 1, 1, 2.0, precision),
                _vector_op(f"i{it}.change", "reduce", n, 2, 0, 2.0, precision, output_rows=1)]
        edges += [(b, b + 1), (b + 1, b + 2)]
        if it:
            edges += [(b - 2, b)]  # the next SpMV reads the damped vector
    return Workload(f"pagerank-{dataset}-{iterations}it", tuple(ops), tuple(edges),
                    description=f"PageRank on {dataset}: {n} nodes, {z} edges, {iterations} iterations")


def spmm(dataset: str = "thermal2", width: int = 1, rows: int | None = None, nnz: int | None = None,
         row_cv: float | None = None, precision: str = "fp64") -> Workload:
    """One sparse product ``A @ X`` (CSR ``A``, dense ``X`` of ``width`` columns; ``width`` 1 is an SpMV)
    as a single ``spmm`` op, the kernel the sparse libraries benchmark on their own.

    Raises :class:`SpecError` for an unknown dataset or precision or a non-positive size.
    """
    bytes_per_element(precision)
    require_positive(width=width)
    n, z, cv, _, _ = _input(dataset, rows, nnz, row_cv, 1)
    op = _sparse("spmm", n, z, width, precision, cv)
    return Workload(f"spmm-{dataset}-w{width}", (op,), (),
                    description=f"sparse product on {dataset}: {n} rows, {z} nonzeros, width {width}, {precision}")


#: The builders of this module by name (see :data:`dse.inputs.builders.BUILDERS`).
SPARSE_BUILDERS: dict[str, Callable[..., Workload]] = {"graphsage": graphsage, "gin": gin, "cg": cg,
                                                       "pagerank": pagerank, "spmm": spmm}
