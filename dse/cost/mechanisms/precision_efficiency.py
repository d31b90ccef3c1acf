"""Per-op-class compute efficiency by precision class, declared per device: ``precision_efficiency``.

:mod:`dse.cost.mechanisms.efficiency` gives one fraction of peak per op class. A runtime's tensor-core
GEMMs reach a different share of the peak of each precision: an FP8 GEMM runs against a peak twice the
FP16 one (the data sheets' FP8 and FP16 columns), but its operands are quantised and rescaled around the
kernel while its tiles are fed at the same memory rate, so it reaches a smaller share of that doubled
peak (NVIDIA's TensorRT runtime for large language models, ``docs/source/precision.md`` of its
repository, "Quantization and Dequantization (Q/DQ)": scaling factors applied around each quantised
linear layer, and the ``FP8_QDQ`` mode; NVIDIA Transformer Engine documentation, "Using FP8 with
Transformer Engine": per-tensor scaling factors and amax history kept for every FP8 GEMM). The rationale
gives the direction, not the size: the fractions are fitted. ``precision_efficiency`` declares the
fraction per op class and precision class (:data:`PRECISION_CLASS`: fp8, fp16 for fp16 and bf16, int8,
fp32), e.g. ``{gemm: {fp8: 0.45, fp16: 0.75}}``; an op whose precision class the device lists takes that
fraction instead of its op class's, every other op keeps ``compute_efficiency`` or the kind default. The
language-model rows' values are fitted per runtime over the fit rows of every GPU that runs it
(``dse.runs.llm_fit``).
"""

from __future__ import annotations

from dse.model.platform import PRECISION_CLASS, Device

__all__ = ["PRECISION_CLASS", "precision_efficiency"]


def precision_efficiency(device: Device, op_class: str, precision: str, default: float | None) -> float | None:
    """``device``'s declared fraction of peak for ``op_class`` at ``precision``'s class; ``default`` where
    it declares none (a class the device kind cannot run, ``None``, stays unrunnable)."""
    if default is None:
        return None
    declared = device.precision_efficiency.get(op_class, {})
    return declared.get(PRECISION_CLASS.get(precision, precision), default)
