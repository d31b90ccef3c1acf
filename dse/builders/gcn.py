"""Graph convolutional network inference as a pipeline (Kipf & Welling, ICLR 2017).

Each layer is an ``spmm`` aggregation (A_hat @ H, CSR with self-loops) and a
``gemm`` combination (H @ W, ReLU folded in). As PyTorch Geometric does, a
layer combines first when it narrows the features (out < in), so the sparse
product runs on the narrower matrix; otherwise it aggregates first. A final
``elementwise`` log-softmax closes the pipeline.

Dataset statistics (nodes, directed edges, features, classes) are the
Planetoid figures reported by PyTorch Geometric's dataset table. Degree skew
is the coefficient of variation of node degree: our estimates from the
published degree distributions (mean degree 3.9 / 2.7 / 4.5, maximum 168 /
99 / 171 for Cora / Citeseer / Pubmed); override with ``degree_skew``.
"""

from __future__ import annotations

from dse.errors import SpecError
from dse.workload import Op, Workload

DATASETS: dict[str, dict[str, float]] = {
    "cora": dict(nodes=2708, edges=10556, features=1433, classes=7, degree_skew=1.3),
    "citeseer": dict(nodes=3327, edges=9104, features=3703, classes=6, degree_skew=1.2),
    "pubmed": dict(nodes=19717, edges=88648, features=500, classes=3, degree_skew=1.6),
}

BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "fp64": 8}
INDEX_BYTES = 4


def _spmm(name: str, n: int, nnz: int, width: int, bpe: int, skew: float) -> Op:
    csr = nnz * (INDEX_BYTES + bpe) + (n + 1) * INDEX_BYTES
    return Op(
        name=name,
        op_class="spmm",
        flops=2.0 * nnz * width,
        bytes_moved=float(csr + nnz * width * bpe + n * width * bpe),  # CSR + gathered rows + output
        resident_bytes=float(csr),
        output_bytes=float(n * width * bpe),
        features={"density": nnz / (n * n), "degree_skew": skew},
    )


def _gemm(name: str, n: int, f_in: int, f_out: int, bpe: int) -> Op:
    return Op(
        name=name,
        op_class="gemm",
        flops=2.0 * n * f_in * f_out,
        bytes_moved=float((n * f_in + f_in * f_out + n * f_out) * bpe),
        resident_bytes=float(f_in * f_out * bpe),
        output_bytes=float(n * f_out * bpe),
    )


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
) -> Workload:
    """A ``layers``-layer GCN chain on ``dataset`` (statistics overridable); raises :class:`SpecError`."""
    if dataset not in DATASETS:
        raise SpecError("workload", "dataset", dataset, f"known datasets: {', '.join(DATASETS)}")
    if precision not in BYTES:
        raise SpecError("workload", "precision", precision, f"one of {', '.join(BYTES)}")
    stats = dict(DATASETS[dataset])
    for key, value in (("nodes", nodes), ("edges", edges), ("features", features), ("classes", classes),
                       ("degree_skew", degree_skew)):
        if value is not None:
            stats[key] = value
    for key in ("nodes", "features", "classes"):
        if stats[key] <= 0:
            raise SpecError("workload", key, stats[key], "must be > 0")
    if stats["edges"] < 0 or stats["degree_skew"] < 0:
        raise SpecError("workload", "edges" if stats["edges"] < 0 else "degree_skew",
                        min(stats["edges"], stats["degree_skew"]), "must be >= 0")
    if layers < 1 or hidden < 1:
        raise SpecError("workload", "layers" if layers < 1 else "hidden", min(layers, hidden), "must be >= 1")
    n = int(stats["nodes"])
    nnz = int(stats["edges"]) + n  # self-loops of A_hat
    bpe = BYTES[precision]
    widths = [int(stats["features"])] + [hidden] * (layers - 1) + [int(stats["classes"])]
    ops: list[Op] = []
    for layer in range(layers):
        f_in, f_out = widths[layer], widths[layer + 1]
        combine = _gemm(f"l{layer}.combine", n, f_in, f_out, bpe)
        if f_out < f_in:
            ops += [combine, _spmm(f"l{layer}.aggregate", n, nnz, f_out, bpe, stats["degree_skew"])]
        else:
            ops += [_spmm(f"l{layer}.aggregate", n, nnz, f_in, bpe, stats["degree_skew"]), combine]
    out = n * widths[-1] * bpe
    ops.append(Op("log_softmax", "elementwise", flops=5.0 * n * widths[-1], bytes_moved=2.0 * out,
                  output_bytes=float(out)))
    ops = [Op(**{**op.__dict__, "precision": precision}) for op in ops]
    edges_list = tuple((i, i + 1) for i in range(len(ops) - 1))
    return Workload(f"gcn-{dataset}-{layers}l", tuple(ops), edges_list,
                    description=f"GCN on {dataset}: {n} nodes, {nnz} nonzeros with self-loops")
