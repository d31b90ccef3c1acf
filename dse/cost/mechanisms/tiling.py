"""Tile and wave quantization of tiled kernels, and split-K on small ones: ``compute_units`` and ``gemm_tile``.

A GPU computes a GEMM (and a convolution as an implicit GEMM) in output tiles of ``gemm_tile`` x
``gemm_tile`` elements, one tile per streaming multiprocessor at a time; the tiles run in waves of
``compute_units`` (the SM count). When an op has fewer tiles than SMs, or its last wave is partial, the
idle SMs are lost: the op reaches ``tiles / (waves x compute_units)`` of the rate the device's
efficiency describes. This is NVIDIA's "tile quantization" and "wave quantization" (NVIDIA Deep
Learning Performance Guide, "Matrix Multiplication Background": docs.nvidia.com/deeplearning/
performance/dl-performance-matrix-multiplication).

**Split-K.** When an op has fewer output tiles than compute units, a GEMM library may split the
reduction dimension ``K`` into ``s`` slices, each computed by its own thread block into a partial
output, and sum the partials in a reduction pass (CUTLASS: ``cutlass::gemm::device::GemmSplitKParallel``,
"GEMM performing a reduction over K partitions in parallel", with its ``reduction/kernel/reduce_split_k.h``
pass; nvidia.github.io/cutlass/device_2gemm__splitk__parallel_8h.html). The ``tiles x s`` work units then
fill more SMs, and the pass costs ``s`` partial outputs of ``M x N`` FP32 accumulators written and read
back, ``2 x s x M x N x 4`` bytes at the device's dense bandwidth, after the GEMM (serial time, like a
launch). The slice count is bounded by ``s_max = min(ceil(units / tiles), max(1, K // tile))`` (enough
slices to give every SM a unit, none thinner than one tile edge of ``K``). ``K`` is read from the op:
``flops / (2 x outputs)`` (a GEMM's ``2MNK / MN``; a convolution's ``C x R x S``).

**The library takes the fastest split.** Of ``s = 1 .. s_max`` the model takes the one with the least
estimated kernel time ``compute(s) + reduction(s)``, ``compute(s)`` being the op's FLOPs at the device's
peak rate over the busy fraction of its SMs (smallest ``s`` on ties), as cuBLASLt's heuristic query
returns the algorithms "sorted in order of increasing estimated compute time"
(``cublasLtMatmulAlgoGetHeuristic``, cuBLAS documentation, docs.nvidia.com/cuda/cublas) and TensorRT
times its tactics and keeps the fastest (TensorRT developer guide, "Optimizing Builder Performance",
timing cache). A split is taken only where the compute it saves exceeds its reduction pass. The op's
memory time is left out of the choice: a GEMM on a few SMs cannot draw the device's bandwidth either,
so a library splits a small memory-bound GEMM for its parallelism too. (Cross-validation on the fit
rows chose this over putting ``max(compute, memory)`` in the choice and over the earlier rule, the
split that keeps most SMs busy: ``docs/accuracy.md``.) The choice uses the peak rate, not the fitted
efficiency, so a fit that varies the efficiency leaves the chosen split unchanged.

``compute_units`` comes from the device's data sheet; ``gemm_tile`` is fitted per device class on the
fit part of the measurements (``dse.runs.accuracy_fit.fit_gemm_tile``, ``docs/accuracy.md``). Without both
(0) nothing changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dse.model.platform import Device
from dse.model.workload import Op
from dse.util.rounding import ceil_int

#: Op classes computed as tiled (implicit) GEMMs.
TILED_CLASSES = ("gemm", "conv")
#: Bytes of one split-K partial-output element (FP32 accumulators).
ACCUMULATOR_BYTES = 4.0


@dataclass(frozen=True)
class Tiling:
    """How a tiled op occupies a device: ``utilization``, the fraction of its compute units busy over
    the op's waves, in (0, 1]; ``slices``, the split-K slice count (1: not split); ``reduction_bytes``,
    the bytes of the split-K reduction pass (0 when not split)."""

    utilization: float = 1.0
    slices: int = 1
    reduction_bytes: float = 0.0


def _busy(work_units: int, units: int) -> float:
    return work_units / (math.ceil(work_units / units) * units)


def tiling(op: Op, device: Device, element_bytes: float, split_k: bool = True,
           reduction_bytes_per_s: float = math.inf) -> Tiling:
    """The :class:`Tiling` of ``op`` on ``device``: its output tiles' wave utilization and, with
    ``split_k`` and fewer tiles than compute units, the split of ``K`` with the least estimated compute
    plus reduction time (``reduction_bytes_per_s``: the rate of the reduction pass); the neutral
    ``Tiling()`` when the device declares no ``compute_units`` or ``gemm_tile`` or the op is not tiled."""
    units, tile = device.compute_units, device.gemm_tile
    if units <= 0 or tile <= 0 or op.op_class not in TILED_CLASSES:
        return Tiling()
    outputs = op.output_bytes / element_bytes
    if outputs <= 0:
        return Tiling()
    tiles = ceil_int(outputs / tile ** 2)
    if not split_k or tiles >= units:
        return Tiling(_busy(tiles, units))
    depth = int(op.flops / (2.0 * outputs))
    bound = min(math.ceil(units / tiles), max(1, depth // tile))
    peak = device.peak_flops(op.precision) or 0.0
    ideal = op.flops / peak if peak > 0 else 0.0

    def reduction(s: int) -> float:
        return 2.0 * s * outputs * ACCUMULATOR_BYTES if s > 1 else 0.0

    def estimate(s: int) -> float:
        return ideal / _busy(tiles * s, units) + reduction(s) / reduction_bytes_per_s

    slices = min(range(1, bound + 1), key=lambda s: (estimate(s), s))
    return Tiling(_busy(tiles * slices, units), slices, reduction(slices))


def tile_utilization(op: Op, device: Device, element_bytes: float) -> float:
    """The fraction of ``device``'s compute units ``op``'s output tiles keep busy over its waves without
    split-K, in (0, 1]; 1 when the device declares no ``compute_units`` or ``gemm_tile`` or the op is not
    tiled."""
    return tiling(op, device, element_bytes, split_k=False).utilization
