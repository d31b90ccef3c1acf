"""Sparse traffic with reuse, declared per device: ``cache_mib``.

An SpMM (an SpMV is one of width 1) gathers one dense input row of ``width`` elements per nonzero.
Without reuse every gather goes to device memory: ``nnz x width`` elements, the builders' bound
(:func:`dse.inputs.builders.message_passing.spmm_op`). When the dense input the op gathers from (``rows x width``
elements) fits the device's last-level cache, each input row comes from memory once and every
further gather of it hits the cache: the gathered traffic is ``rows x width`` elements, read as a
stream, so the transaction-size penalty of scattered gathers (the roofline's ``gather`` factor) no
longer applies. The row-length skew of the input (``degree_skew``, the coefficient of variation of
nonzeros per row, read from the input's statistics) still divides the rate, as before.

The rule is the cache-blocking argument of Williams et al., "Optimization of sparse matrix-vector
multiplication on emerging multicore platforms" (SC 2007, cache blocking): the source vector's
traffic is compulsory (read once) when it fits the cache, and grows with the nonzeros when it does not. A device
declares its last-level cache in MiB from its data sheet; without it (0) nothing changes.

Row-length skew and the sparse bandwidth: the roofline divides a sparse op's rates by
``1 + s x degree_skew`` (``s`` per device kind, :data:`dse.cost.SKEW_SENSITIVITY`) and charges its bytes
at a fraction of peak bandwidth (:data:`dse.cost.SPARSE_BANDWIDTH_EFFICIENCY`). A device may declare
its own ``skew_sensitivity`` and ``sparse_bandwidth_efficiency``, fitted on measured sparse products
of the fit part (``dse.runs.accuracy_fit.fit_sparse``, ``docs/accuracy.md``), with ``degree_skew`` taken
from the input's own row-length statistics.
"""

from __future__ import annotations

from dse.model.platform import Device

#: Bytes in a MiB.
MIB = 1 << 20


def reused_bytes(device: Device, rows: float, nnz: float, width: float, element_bytes: float,
                 bytes_moved: float) -> float | None:
    """``bytes_moved`` with the gathered traffic counted once (``rows x width`` elements instead of
    ``nnz x width``) when the dense input (``rows x width x element_bytes``) fits ``device``'s declared
    cache; ``None`` when the device declares no cache or the input does not fit (no reuse)."""
    working_set = rows * width * element_bytes
    if device.cache_mib <= 0 or working_set > device.cache_mib * MIB:
        return None
    gathered = nnz * width * element_bytes
    return max(0.0, bytes_moved - gathered) + working_set


def declared_skew_sensitivity(device: Device, default: float) -> float:
    """``device``'s declared slow-down per unit of row-length CV; ``default`` (the kind's) without one."""
    return default if device.skew_sensitivity is None else device.skew_sensitivity


def declared_sparse_bandwidth(device: Device, default: float) -> float:
    """``device``'s declared fraction of peak bandwidth for sparse ops; ``default`` (the kind's) without one."""
    return default if device.sparse_bandwidth_efficiency is None else device.sparse_bandwidth_efficiency
