"""Collective communication over a device's links, declared per device: ``intra_node_gbps``,
``intra_node_latency_us``, ``inter_node_gbps`` and ``inter_node_latency_us``.

A ``collective`` op (tensor parallelism's all-reduces, expert parallelism's all-to-alls, a pipeline
stage's send, an all-gather of outputs: the workload builders make them) moves ``output_bytes`` per call
over the links of a group of ``features["ranks"]`` devices spanning ``features["nodes"]`` nodes, and
is repeated ``features["calls"]`` times (decode steps). Its time is the link time of the algorithm,
with ``B`` the message, ``n`` the ranks, ``bw`` the per-device bandwidth in one direction and ``a`` the
per-step latency (the standard alpha-beta model; Thakur, Rabenseifner and Gropp, "Optimization of
collective communication operations in MPICH", IJHPCA 2005; NCCL's ring and tree algorithms, NCCL
documentation "Collective Operations" and NVIDIA's "Massively scale your deep learning training with
NCCL 2.4", 2019, for the double binary tree):

* all-reduce, ring: ``2 (n - 1) / n x B / bw + 2 (n - 1) x a`` (a reduce-scatter and an all-gather,
  ``n - 1`` steps each, ``B / n`` per step);
* all-reduce, tree: ``2 x B / bw + 2 x ceil(log2 n) x a`` (reduce up and broadcast down a pipelined
  binary tree: logarithmic latency, the whole message through each link twice);
* all-gather (``B`` the gathered result) and all-to-all (``B`` what one device holds before the
  exchange): ``(n - 1) / n x B / bw + (n - 1) x a``;
* send (a pipeline stage's activations to the next stage): ``B / bw + a``.

A group inside one node uses the node's links (NVLink or PCIe: ``intra_node_*``); a group across
nodes is limited by the slower of the two and pays the network's latency (``inter_node_*``: an
InfiniBand or Ethernet NIC per device), as a flat ring over all its members does. A device that
declares no bandwidth for the links a collective needs cannot run it (``None``).
"""

from __future__ import annotations

import math

from dse.model.collectives import ALGORITHMS, COLLECTIVE_CLASS, COLLECTIVES
from dse.model.platform import Device
from dse.model.workload import Op

__all__ = ["ALGORITHMS", "COLLECTIVES", "COLLECTIVE_CLASS", "collective_op_seconds", "collective_seconds",
           "link_figures"]


def link_figures(device: Device, nodes: float) -> tuple[float, float] | None:
    """(bytes per second, seconds per step) of the links a group spanning ``nodes`` nodes uses on
    ``device``; ``None`` when the device declares no bandwidth for them."""
    if nodes > 1:
        if device.inter_node_gbps <= 0:
            return None
        bandwidth = device.inter_node_gbps if device.intra_node_gbps <= 0 else min(
            device.intra_node_gbps, device.inter_node_gbps)
        return bandwidth * 1e9, max(device.inter_node_latency_us, device.intra_node_latency_us) * 1e-6
    if device.intra_node_gbps <= 0:
        return None
    return device.intra_node_gbps * 1e9, device.intra_node_latency_us * 1e-6


def collective_seconds(kind: str, message_bytes: float, ranks: int, bandwidth: float, latency: float,
                       algorithm: str = "ring") -> float:
    """Seconds of one ``kind`` collective (:data:`COLLECTIVES`) of ``message_bytes`` over ``ranks``
    devices with ``bandwidth`` bytes/s and ``latency`` s per step (the formulas of the module docstring);
    0 for a group of one. Raises ``ValueError`` for an unknown kind or algorithm."""
    n = ranks
    if n <= 1:
        return 0.0
    if kind == "all_reduce":
        if algorithm == "ring":
            return 2 * (n - 1) / n * message_bytes / bandwidth + 2 * (n - 1) * latency
        if algorithm == "tree":
            return 2 * message_bytes / bandwidth + 2 * math.ceil(math.log2(n)) * latency
        raise ValueError(f"unknown all-reduce algorithm {algorithm!r}; algorithms: {', '.join(ALGORITHMS)}")
    if kind in ("all_gather", "all_to_all"):
        return (n - 1) / n * message_bytes / bandwidth + (n - 1) * latency
    if kind == "send":
        return message_bytes / bandwidth + latency
    raise ValueError(f"unknown collective {kind!r}; collectives: {', '.join(COLLECTIVES)}")


def collective_op_seconds(op: Op, device: Device) -> float | None:
    """Link seconds of collective ``op`` on ``device`` over all its calls; ``None`` when the device
    declares no bandwidth for the links the op's group needs."""
    ranks = int(op.features.get("ranks", 1))
    if ranks <= 1:
        return 0.0
    figures = link_figures(device, op.features.get("nodes", 1.0))
    if figures is None:
        return None
    kind = COLLECTIVES[int(op.features.get("collective", 0))]
    algorithm = ALGORITHMS[int(op.features.get("algorithm", 0))]
    once = collective_seconds(kind, op.output_bytes, ranks, figures[0], figures[1], algorithm)
    return op.features.get("calls", 1.0) * once
