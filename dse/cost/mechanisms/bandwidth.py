"""Per-op-class memory-bandwidth efficiency declared per device: ``bandwidth_efficiency``.

The roofline model charges a dense op's bytes at ``mem_bw x efficiency``, the efficiency per device
kind (:data:`dse.cost.BANDWIDTH_EFFICIENCY`, 0.85 on a GPU: a streaming copy). A kernel that reads
memory in another pattern reaches another fraction: an attention kernel that reads a cache of keys
and values in blocks, one thread block per query head and sequence, gets a share of the bandwidth
that depends on the kernel. A device may declare the fraction per op class, fitted on the fit part
of the measurements (``docs/accuracy.md``); without it nothing changes. Sparse ops keep their own
rule (:mod:`dse.cost.mechanisms.sparse_reuse`).
"""

from __future__ import annotations

from dse.model.platform import Device


def declared_bandwidth(device: Device, op_class: str, default: float) -> float:
    """``device``'s declared fraction of peak bandwidth for ``op_class``; ``default`` (the kind's) without one."""
    return device.bandwidth_efficiency.get(op_class, default)
