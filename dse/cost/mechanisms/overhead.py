"""Per-op launch overhead and per-call host overhead declared per device.

* ``launch_overhead_us``: seconds added per kernel launch on the device (a kernel launch and the
  framework's per-op dispatch), once per op or ``op.features["kernels"]`` times for an op that stands for
  several kernels (a builder's gather-scatter aggregation, :mod:`dse.inputs.builders.message_passing`); ``None``
  keeps the device kind's default
  (:data:`dse.cost.LAUNCH_OVERHEAD_S`). It is measured by timing the operator on an input of size 1
  (``docs/accuracy.md`` cites the published figures used).
* ``call_overhead_us``: host and runtime time per call of the whole workload (request handling,
  input copy set-up, the runtime's graph launch), separate from the per-op launch. It is charged once
  per call: split evenly over the workload's entry ops (ops without producers), so a workload run on
  one device pays it exactly once in its period, and a chain once in its latency.
"""

from __future__ import annotations

from dse.model.platform import Device
from dse.model.workload import Workload


def launch_seconds(device: Device, default_s: float, kernels: float = 1.0) -> float:
    """The launch overhead of an op of ``kernels`` kernel launches on ``device`` in seconds: ``kernels`` times
    its declared per-launch overhead, else ``default_s``."""
    declared = device.launch_overhead_us
    return kernels * (default_s if declared is None else declared * 1e-6)


def entry_shares(workload: Workload) -> list[float]:
    """Per op, its share of one call's overhead: ``1 / entries`` for the ops without producers, else 0."""
    has_producer = [False] * workload.n_ops
    for _, d in workload.edges:
        has_producer[d] = True
    entries = has_producer.count(False)
    return [0.0 if fed else 1.0 / entries for fed in has_producer]


def call_seconds(device: Device, share: float) -> float:
    """The part of ``device``'s per-call overhead charged to an op of entry share ``share``."""
    return device.call_overhead_us * 1e-6 * share
