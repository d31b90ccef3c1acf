"""Per-op-class compute efficiency declared per device: ``compute_efficiency``.

The roofline model charges ``flops / (peak * efficiency)``; the default efficiency is per device
kind and op class (:data:`dse.cost.COMPUTE_EFFICIENCY`). A device may declare its own value for an
op class (a fraction of its peak in (0, 1]), e.g. fitted on measured runs: ``docs/accuracy.md``
gives the fit procedure, which uses only the measurements of the fitted part.
"""

from __future__ import annotations

from dse.model.platform import Device


def declared_efficiency(device: Device, op_class: str, default: float | None) -> float | None:
    """``device``'s declared efficiency for ``op_class``; ``default`` where it declares none (a class the
    device kind cannot run, ``None``, stays unrunnable)."""
    if default is None:
        return None
    return device.compute_efficiency.get(op_class, default)
