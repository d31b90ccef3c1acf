"""Tile and wave quantization of tiled kernels, declared per device: ``compute_units`` and ``gemm_tile``.

A GPU computes a GEMM (and a convolution as an implicit GEMM) in output tiles of ``gemm_tile`` x
``gemm_tile`` elements, one tile per streaming multiprocessor at a time; the tiles run in waves of
``compute_units`` (the SM count). When an op has fewer tiles than SMs, or its last wave is partial, the
idle SMs are lost: the op reaches ``tiles / (waves x compute_units)`` of the rate the device's
efficiency describes. This is NVIDIA's "tile quantization" and "wave quantization" (NVIDIA Deep
Learning Performance Guide, "Matrix Multiplication Background": docs.nvidia.com/deeplearning/
performance/dl-performance-matrix-multiplication). It is what makes small-batch GEMMs slow: a
384 x 768 output is 18 tiles of 128 x 128 on a GPU of 108 SMs (``docs/accuracy.md`` gives the
measured evidence).

``compute_units`` comes from the device's data sheet; ``gemm_tile`` is fitted per device class on the
fit part of the measurements (``dse.runs.accuracy_fit.fit_gemm_tile``, ``docs/accuracy.md``). Without both
(0) nothing changes.
"""

from __future__ import annotations

import math

from dse.model.platform import Device
from dse.model.workload import Op
from dse.util.rounding import ceil_int

#: Op classes computed as tiled (implicit) GEMMs.
TILED_CLASSES = ("gemm", "conv")


def tile_utilization(op: Op, device: Device, element_bytes: float) -> float:
    """The fraction of ``device``'s compute units ``op``'s output tiles keep busy over its waves, in
    (0, 1]; 1 when the device declares no ``compute_units`` or ``gemm_tile`` or the op is not tiled."""
    if device.compute_units <= 0 or device.gemm_tile <= 0 or op.op_class not in TILED_CLASSES:
        return 1.0
    outputs = op.output_bytes / element_bytes
    if outputs <= 0:
        return 1.0
    tiles = ceil_int(outputs / device.gemm_tile ** 2)
    waves = math.ceil(tiles / device.compute_units)
    return tiles / (waves * device.compute_units)
