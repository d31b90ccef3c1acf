"""Graph convolutional network inference as a pipeline (Kipf & Welling, ICLR 2017).

Layer ``l`` computes ``H' = ReLU(A_hat @ H @ W_l)`` with
``A_hat = D^-1/2 (A + I) D^-1/2`` stored in CSR (self-loops included, so
nnz = directed edges + nodes). Each layer becomes two ops:

* ``l{i}.aggregate`` (``spmm``): A_hat @ X on an X of width w:
  ``flops = 2 * nnz * w``; ``bytes_moved`` = CSR arrays (nnz values + nnz
  column indices + n + 1 row pointers) + the dense input rows gathered, one
  row of w per nonzero (nnz x w, no reuse assumed: an upper bound when X does
  not stay in cache) + the dense output (n x w); ``resident_bytes`` = the CSR
  arrays; features ``density = nnz / n^2`` and ``degree_skew``;
* ``l{i}.combine`` (``gemm``): X @ W (n x f_in by f_in x f_out), bias and ReLU
  (none after the last layer) folded in and not counted; ``resident_bytes`` = W.

Order within a layer (``order``): ``"auto"`` (default) combines first when the
layer narrows the features (f_out < f_in), so the sparse product runs on the
narrower matrix, and aggregates first otherwise; this is the rule of DGL's
``GraphConv``. PyTorch Geometric's ``GCNConv`` always combines first
(``x = x @ weight`` then ``propagate``): ``order="combine_first"``. The two
orders give the same result (matrix products associate) but different work.
A final ``elementwise`` log-softmax closes the chain.

Dataset statistics (nodes, directed edges, features, classes) are the
Planetoid figures of PyTorch Geometric's dataset table (``Planetoid``:
Cora 2,708 / 10,556 / 1,433 / 7; CiteSeer 3,327 / 9,104 / 3,703 / 6;
PubMed 19,717 / 88,648 / 500 / 3). Cora's 10,556 directed edges are the
5,429 undirected citation links of the original release, symmetrised and
deduplicated.

``degree_skew`` is the coefficient of variation (std / mean) of node degree,
self-loops excluded. The built-in values are our estimates, not published
figures: the mean degree, directed edges / nodes, is exact (3.90 / 2.74 / 4.50), and
the standard deviations used (about 5.2 / 3.4 / 7.4) are commonly quoted
for these graphs but were not recomputed from the data here; give
``degree_skew`` (e.g. from :func:`degree_cv` on the real degrees) to override.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dse.errors import SpecError
from dse.inputs.builders.gemm import (
    SOURCE,
    bytes_per_element,
    gemm_op,
    require_positive,
    require_size,
)
from dse.inputs.builders.message_passing import aggregate_ops, check_aggregation, gcn_norm_op
from dse.inputs.datasets import dataset as lookup
from dse.model.workload import Op, Workload

#: Planetoid statistics (PyTorch Geometric dataset table) and estimated degree CV (see module doc).
DATASETS: dict[str, dict[str, float]] = {
    "cora": dict(nodes=2708, edges=10556, features=1433, classes=7, degree_skew=1.3),  # 5.2 / 3.90
    "citeseer": dict(nodes=3327, edges=9104, features=3703, classes=6, degree_skew=1.2),  # 3.4 / 2.74
    "pubmed": dict(nodes=19717, edges=88648, features=500, classes=3, degree_skew=1.6),  # 7.4 / 4.50
}

ORDERS = ("auto", "combine_first", "aggregate_first")
#: When ``A_hat`` is computed: ``once`` (given, cached) or ``per_call`` (PyG ``gcn_norm`` before each layer).
NORMALIZE = ("once", "per_call")


def degree_cv(degrees: Sequence[float]) -> float:
    """Coefficient of variation (population std / mean) of node degrees: the ``degree_skew`` feature."""
    d = np.asarray(degrees, dtype=float)
    if d.size == 0 or d.mean() <= 0:
        raise SpecError(SOURCE, "degrees", list(d[:5]), "need at least one node with a positive degree")
    return float(d.std() / d.mean())


def gcn(
    dataset: str = "cora",
    layers: int = 2,
    hidden: int = 16,
    nodes: int | None = None,
    edges: int | None = None,
    features: int | None = None,
    classes: int | None = None,
    degree_skew: float | None = None,
    precision: str = "fp32",
    order: str = "auto",
    aggregation: str = "fused",
    normalize: str = "once",
) -> Workload:
    """A ``layers``-layer GCN on ``dataset`` as a chain of ``2 * layers + 1`` ops (``fused``).

    ``aggregation="gather_scatter"`` runs each aggregation as PyTorch Geometric's gather, weighted
    message and scatter (:mod:`dse.inputs.builders.message_passing`) and adds each layer's bias (and ReLU but
    after the last layer) as an element-wise op, as ``GCNConv`` and the ``GCN`` model run them;
    ``normalize="per_call"`` adds ``gcn_norm`` before each layer (``GCNConv``'s default ``cached=False``)
    where ``once`` (the default) takes ``A_hat`` as given.

    ``dataset`` is ``cora``, ``citeseer``, ``pubmed``, any other catalog dataset
    (:func:`dse.inputs.datasets.datasets`: ``ogbn-arxiv``, ``reddit``...) or ``custom`` (then give
    ``nodes``, ``edges``, ``features`` and ``classes``; ``degree_skew``
    defaults to 0). Any statistic may be overridden. Widths are
    ``features -> hidden -> ... -> hidden -> classes``.

    Raises :class:`SpecError` for an unknown dataset, precision or order, a
    non-positive size, negative ``edges`` or ``degree_skew``, more edges
    than the graph can hold, or more than :data:`~dse.model.workload.MAX_OPS` ops.
    """
    known = DATASETS.get(dataset)
    if dataset != "custom" and known is None:

        real = lookup(dataset, SOURCE, "dataset")  # any catalog dataset (models/datasets); SpecError if unknown
        known = dict(nodes=real.rows, edges=real.nnz, features=real.features, classes=real.classes,
                     degree_skew=real.row_cv)
    if order not in ORDERS:
        raise SpecError(SOURCE, "order", order, f"must be one of {', '.join(ORDERS)}")
    check_aggregation(aggregation)
    if normalize not in NORMALIZE:
        raise SpecError(SOURCE, "normalize", normalize, f"must be one of {', '.join(NORMALIZE)}")
    bytes_per_element(precision)
    given = dict(nodes=nodes, edges=edges, features=features, classes=classes, degree_skew=degree_skew)
    if dataset == "custom":
        missing = [k for k in ("nodes", "edges", "features", "classes") if given[k] is None]
        if missing:
            raise SpecError(SOURCE, missing[0], None, "required with dataset: custom")
        stats: dict[str, float] = {"degree_skew": 0.0}
    else:
        stats = dict(known or {})
    stats.update({k: v for k, v in given.items() if v is not None})
    require_positive(nodes=stats["nodes"], features=stats["features"], classes=stats["classes"],
                     layers=layers, hidden=hidden)
    require_size("layers", layers, 7 * layers + 1, 7 * layers)
    for key in ("edges", "degree_skew"):
        if stats[key] < 0:
            raise SpecError(SOURCE, key, stats[key], "must be >= 0")
    n = int(stats["nodes"])
    if stats["edges"] > n * (n - 1):
        raise SpecError(SOURCE, "edges", stats["edges"], f"a simple graph of {n} nodes has at most {n * (n - 1)}")
    nnz = int(stats["edges"]) + n  # A + I
    widths = [int(stats["features"])] + [hidden] * (layers - 1) + [int(stats["classes"])]
    ops: list[Op] = []
    bpe = bytes_per_element(precision)
    for layer in range(layers):
        f_in, f_out = widths[layer], widths[layer + 1]
        if normalize == "per_call":
            ops.append(gcn_norm_op(f"l{layer}.gcn_norm", nnz, precision))
        combine = gemm_op(f"l{layer}.combine", n, f_out, f_in, precision)
        first = order == "combine_first" or (order == "auto" and f_out < f_in)
        width = f_out if first else f_in
        aggregate = aggregate_ops(f"l{layer}.aggregate", n, nnz, width, precision, stats["degree_skew"],
                                  aggregation, weighted=True)
        ops += [combine, *aggregate] if first else [*aggregate, combine]
        if aggregation == "gather_scatter":  # the bias add, then ReLU between layers: separate kernels
            kernels = 1 if layer == layers - 1 else 2
            ops.append(Op(f"l{layer}.bias_act", "elementwise", flops=float(kernels * n * f_out),
                          bytes_moved=float(2 * kernels * n * f_out * bpe), output_bytes=float(n * f_out * bpe),
                          precision=precision, features={"kernels": float(kernels)}))
    out = n * widths[-1] * bytes_per_element(precision)
    ops.append(Op("log_softmax", "elementwise", flops=4.0 * n * widths[-1], bytes_moved=2.0 * out,
                  output_bytes=float(out), precision=precision))
    chain = tuple((i, i + 1) for i in range(len(ops) - 1))
    return Workload(
        f"gcn-{dataset}-{layers}l", tuple(ops), chain,
        description=f"GCN (Kipf & Welling 2017) on {dataset}: {n} nodes, {nnz} nonzeros with self-loops, "
                    f"widths {widths}, {precision}",
    )
