"""Measured costs: ``gemm`` and ``spmm`` ops timed by a calibration's fitted kernel models
(:mod:`dse.cost.calibration.model`) instead of the roofline, on the device kinds a calibration covers."""

from __future__ import annotations

from typing import Any

from dse.model.dtypes import BYTES
from dse.model.platform import Device
from dse.model.workload import Op

#: Device name of a calibration (:mod:`dse.cost.calibration.measure`) that costs each platform device kind:
#: the one table of it (the roofline's calibrated op times and the split family's devices read it).
CALIBRATION_DEVICE = {"cpu": "cpu", "gpu": "cuda", "tensorcore": "tensorcore"}


def _element_bytes(precision: str) -> int:
    return BYTES.get(precision, 4)


def _gemm_dims(op: Op) -> dict[str, float] | None:
    """(m, n, k) of a GEMM op built by :func:`dse.inputs.builders.gemm.gemm_op`: from ``flops = 2mnk``,
    ``output = mn``, ``resident = kn`` and ``bytes_moved = mk + kn + mn`` elements."""
    bpe = BYTES.get(op.precision, 4)
    mn, kn = op.output_bytes / bpe, op.resident_bytes / bpe
    mk = op.bytes_moved / bpe - mn - kn
    mnk = op.flops / 2
    if min(mn, kn, mk, mnk) <= 0 or abs(mn * kn * mk / mnk**2 - 1) > 1e-6:
        return None  # not a plain GEMM's figures: stays analytic
    return {"m": mnk / kn, "n": mnk / mk, "k": mnk / mn}


def _spmm_dims(op: Op) -> dict[str, float] | None:
    """(rows, nnz, width, row_cv) of an SpMM op: its features, or derived from an op built by
    :func:`dse.inputs.builders.message_passing.spmm_op` (``flops = 2 nnz w``, ``output = n w``, ``density = nnz / n^2``)."""
    f = op.features
    if {"rows", "nnz", "width"} <= set(f):
        return {"rows": f["rows"], "nnz": f["nnz"], "width": f["width"], "row_cv": f.get("degree_skew", 0.0)}
    bpe = BYTES.get(op.precision, 4)
    nw, zw, density = op.output_bytes / bpe, op.flops / 2, f.get("density", 0.0)
    if min(nw, zw, density) <= 0:
        return None
    rows = zw / (nw * density)
    return {"rows": rows, "nnz": density * rows * rows, "width": nw / rows, "row_cv": f.get("degree_skew", 0.0)}


def calibrated_seconds(calibration: Any, op: Op, device: Device) -> float | None:
    """Measured-model seconds of ``op`` on ``device`` from ``calibration`` (a
    :class:`dse.cost.calibration.measure.Calibration`), or ``None`` where it does not cover them.

    Covered: ``gemm`` ops (``gemm`` fit) and ``spmm`` ops (``spmv`` fit for width 1 when present,
    else ``spmm``) whose precision was calibrated on the device named by :data:`CALIBRATION_DEVICE`
    for the device's kind. Everything else stays analytic.
    """
    name = CALIBRATION_DEVICE.get(device.kind)
    if name is None or op.op_class not in ("gemm", "spmm"):
        return None
    if op.op_class == "gemm":
        kernel, dims = "gemm", _gemm_dims(op)
    else:
        dims = _spmm_dims(op)
        kernel = "spmv" if dims and round(dims["width"]) == 1 and calibration.has("spmv", name, op.precision) \
            else "spmm"
        if dims is not None:
            dims = {**dims, "cols": dims["rows"]}
            if kernel == "spmv":
                dims.pop("width")
    if dims is None or not calibration.has(kernel, name, op.precision):
        return None
    return max(float(calibration.predict_s(kernel, name, op.precision, **dims)), 1e-9)
