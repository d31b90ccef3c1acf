"""Operator fusion declared per device: ``fused_op_classes``.

Inference runtimes fuse element-wise ops, activations and similar epilogues into the kernel that
produces their input (TensorRT's layer fusion catalog: docs.nvidia.com/deeplearning/tensorrt/latest/
performance/fusion-catalog.html). On a device that declares an op's class fused, an op of that
class with at least one producer costs only its arithmetic: its pass over memory and its own launch
are gone, because it runs inside its producer's kernel on data the producer still holds.

The tables are per (op, device) and cannot see where the producer is mapped; the rule assumes the
producer runs on the same device, as it does when a family keeps a chain together. An op without a
producer is never fused.
"""

from __future__ import annotations

from dse.model.platform import Device
from dse.model.workload import Op

#: Op classes a device may declare fused (epilogue-like ops with one output per input element).
FUSIBLE_CLASSES = ("elementwise", "pool", "norm", "reduce")


def fused_parts(op: Op, device: Device, has_producer: bool,
                parts: tuple[float, float, float]) -> tuple[float, float, float]:
    """``(compute, memory, launch)`` seconds of ``op`` on ``device`` after fusion: ``(compute, 0, 0)``
    when the device fuses the op's class and the op has a producer, else ``parts`` unchanged."""
    if has_producer and op.op_class in device.fused_op_classes:
        return (parts[0], 0.0, 0.0)
    return parts
