"""How a graph layer's aggregation runs: one fused sparse product, or PyTorch Geometric's gather-scatter.

``aggregation="fused"`` (the default) is one ``spmm`` op over CSR (:func:`spmm_op`): a
cuSPARSE or DGL kernel, or PyG with a ``SparseTensor`` adjacency. ``aggregation="gather_scatter"`` is
PyG's ``MessagePassing.propagate`` on an ``edge_index`` (int64 source and target per edge), which
materializes one message row per edge (PyG documentation, "Memory-Efficient Aggregations": the
gather-scatter scheme "requires to materialize x_j ... of shape [num_edges, num_features]"). Its
kernels, read in ``torch_geometric/utils/_scatter.py`` (``scatter``) and ``MessagePassing.propagate``:

* ``.gather`` (``embedding``, 1 kernel: ``index_select``): reads the source index (8 bytes per edge) and
  one input row of ``width`` elements per edge, writes the messages (``edges x width``);
* ``.message`` (``elementwise``, 1 kernel, ``weighted`` only: GCN's ``edge_weight.view(-1, 1) * x_j``):
  reads the messages and one weight per edge, writes the messages;
* ``.scatter`` (``embedding``): ``reduce="sum"``: ``new_zeros`` then ``scatter_add_`` (2 kernels): writes
  the output's zeros, reads the target index and the messages, writes the output; ``reduce="mean"``
  adds the edge count per row (``new_zeros``, ``new_ones`` per edge, ``scatter_add_``, ``clamp``) and the
  division (reads and writes the output): 7 kernels.

Every kernel streams its operands through device memory (no reuse between kernels). The number of
kernel launches an op stands for is its ``features["kernels"]`` (the launch overhead is charged per
kernel, :mod:`dse.cost.mechanisms.overhead`).

``gcn_norm_op``: PyG's ``GCNConv`` recomputes its normalization on every call unless ``cached=True``
(``gcn_norm`` in ``torch_geometric/nn/conv/gcn_conv.py``, with ``add_remaining_self_loops`` from
``torch_geometric/utils/loop.py``). Its kernels and traffic per edge, self-loops included:
``ones`` (4 B written), ``row != col`` (16 B read), ``edge_index[:, mask]`` (17 B read, 16 B written,
2 kernels), ``arange`` and ``repeat`` of the loop index (per node, 2 kernels), ``~mask`` (2 B), ``full`` of
the loop weights (per node), ``edge_weight[inv_mask]`` and ``edge_weight[mask]`` (2 kernels each, 5 B read
and 4 B written), the two ``cat`` (20 B read, 20 B written), ``scatter_add`` of the weights by target
(``zeros`` and ``scatter_add``, 12 B read), ``pow_`` (per node), ``masked_fill_`` (2 kernels, per node),
``deg_inv_sqrt[row]`` and ``deg_inv_sqrt[col]`` (12 B read, 4 B written each), two multiplications (8 B
read, 4 B written each): **about 180 bytes per edge in 23 kernels**.
"""

from __future__ import annotations

from dse.errors import SpecError
from dse.inputs.builders.gemm import SOURCE, bytes_per_element
from dse.model.workload import Op

#: Bytes of one CSR index (int32 column indices and row pointers).
INDEX_BYTES = 4
#: The ways an aggregation can run (see the module docstring).
AGGREGATIONS = ("fused", "gather_scatter")
#: Bytes of one ``edge_index`` entry (int64).
EDGE_INDEX_BYTES = 8
#: Kernel launches of PyG's scatter: ``sum`` (zeros, scatter_add_) and ``mean`` (count, clamp, division).
SCATTER_KERNELS = {"sum": 2, "mean": 7}
#: Bytes per edge and kernels of one ``gcn_norm`` call (module docstring).
GCN_NORM_BYTES_PER_EDGE = 180
GCN_NORM_KERNELS = 23


def spmm_op(name: str, n: int, nnz: int, width: int, precision: str, degree_skew: float) -> Op:
    """A_hat (n x n, ``nnz`` nonzeros, CSR) @ X (n x ``width``) as one ``spmm`` op."""
    bpe = bytes_per_element(precision)
    csr = nnz * (INDEX_BYTES + bpe) + (n + 1) * INDEX_BYTES
    return Op(
        name=name,
        op_class="spmm",
        flops=2.0 * nnz * width,
        bytes_moved=float(csr + (nnz + n) * width * bpe),  # CSR + gathered input rows + dense output
        resident_bytes=float(csr),
        output_bytes=float(n * width * bpe),
        precision=precision,
        features={"density": nnz / (n * n), "degree_skew": float(degree_skew)},
    )


def check_aggregation(aggregation: str) -> None:
    """Raises :class:`SpecError` unless ``aggregation`` is one of :data:`AGGREGATIONS`."""
    if aggregation not in AGGREGATIONS:
        raise SpecError(SOURCE, "aggregation", aggregation, f"must be one of {', '.join(AGGREGATIONS)}")


def aggregate_ops(name: str, n: int, nnz: int, width: int, precision: str, degree_skew: float,
                  aggregation: str = "fused", weighted: bool = False, reduce: str = "sum") -> list[Op]:
    """The ops, in chain order, of one aggregation of ``n`` rows of ``width`` over ``nnz`` edges: one
    ``spmm`` op when ``fused``; gather, (weighted) message and scatter when ``gather_scatter``.

    Raises :class:`SpecError` for an unknown aggregation."""
    check_aggregation(aggregation)
    if aggregation == "fused":
        return [spmm_op(name, n, nnz, width, precision, degree_skew)]
    bpe = bytes_per_element(precision)
    messages = float(nnz * width * bpe)
    out = float(n * width * bpe)
    index = float(nnz * EDGE_INDEX_BYTES)
    ops = [Op(f"{name}.gather", "embedding", flops=0.0, bytes_moved=index + 2 * messages,
              output_bytes=messages, precision=precision, features={"kernels": 1.0})]
    if weighted:
        ops.append(Op(f"{name}.message", "elementwise", flops=float(nnz * width),
                      bytes_moved=2 * messages + nnz * bpe, output_bytes=messages, precision=precision,
                      features={"kernels": 1.0}))
    scatter_bytes = index + messages + 2 * out  # zeros written, index and messages read, output written
    if reduce == "mean":  # the edge count per row (ones, index, counts), its clamp, and the division
        scatter_bytes += nnz * bpe + index + 3 * n * bpe + 2 * out
    ops.append(Op(f"{name}.scatter", "embedding", flops=float(nnz * width), bytes_moved=scatter_bytes,
                  output_bytes=out, precision=precision, features={"kernels": float(SCATTER_KERNELS[reduce])}))
    return ops


def gcn_norm_op(name: str, nnz: int, precision: str) -> Op:
    """One call of PyG's ``gcn_norm`` over ``nnz`` edges (self-loops included): an ``elementwise`` op of
    :data:`GCN_NORM_BYTES_PER_EDGE` bytes per edge in :data:`GCN_NORM_KERNELS` kernels."""
    return Op(name, "elementwise", flops=float(4 * nnz), bytes_moved=float(GCN_NORM_BYTES_PER_EDGE * nnz),
              output_bytes=float(nnz * bytes_per_element(precision)), precision=precision,
              features={"kernels": float(GCN_NORM_KERNELS)})
