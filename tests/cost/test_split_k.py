"""Split-K on GEMMs with fewer output tiles than compute units (dse.cost.mechanisms.tiling), by hand."""

from __future__ import annotations

import pytest

from dse.cost import RooflineCostModel
from dse.cost.mechanisms.tiling import tiling
from dse.inputs.builders.gemm import gemm_op
from dse.model.platform import Device


def _gpu(units: int) -> Device:
    # fp16 100 TFLOP/s, 1000 GB/s; no class defaults (a Device built directly): gemm efficiency 0.75 (the gpu
    # kind's), dense bandwidth efficiency 0.85, launch 5 us; output tiles of 64 x 64
    return Device("g", "gpu", {"fp16": 100.0}, 1000.0, 16.0, 10.0, 110.0, compute_units=units, gemm_tile=64)


def test_split_k_fills_the_units_and_pays_the_reduction_by_hand() -> None:
    """64 x 128 x 1024 fp16 on 4 units: 8,192 outputs = 2 tiles; K = 1024 -> 16 tile edges, so up to
    min(ceil(4 / 2), 16) = 2 slices: 2 x 2 = 4 work units, one full wave. Compute 2 x 64 x 128 x 1024 =
    16,777,216 FLOP at 75e12 = 223.696 ns (447.392 ns unsplit, half the units idle). Reduction: 2 slices x
    8,192 FP32 partials written and read = 2 x 2 x 8,192 x 4 = 131,072 B at 850 GB/s = 154.202 ns, after
    the 5 us launch. Memory (64 x 1024 + 1024 x 128 + 64 x 128) x 2 B = 409,600 B at 850 GB/s = 481.882 ns."""
    op = gemm_op("g", 64, 128, 1024, "fp16")
    split = tiling(op, _gpu(4), 2.0)
    assert (split.slices, split.utilization, split.reduction_bytes) == (2, 1.0, 131_072.0)
    compute, memory, serial = RooflineCostModel().op_time_parts(op, _gpu(4))
    assert compute == pytest.approx(223.696e-9, rel=1e-5)
    assert memory == pytest.approx(481.882e-9, rel=1e-5)
    assert serial == pytest.approx(5e-6 + 154.202e-9, rel=1e-6)
    unsplit = RooflineCostModel(split_k=()).op_time_parts(op, _gpu(4))
    assert unsplit is not None and unsplit[0] == pytest.approx(447.392e-9, rel=1e-5) and unsplit[2] == 5e-6


def test_split_k_takes_the_slice_count_that_fills_the_waves_best() -> None:
    """3 tiles (192 x 64 output) on 10 units, K = 1024 (16 edges): up to ceil(10 / 3) = 4 slices. Busy
    fraction per slice count: 1 -> 3 / 10, 2 -> 6 / 10, 3 -> 9 / 10, 4 -> 12 units = 2 waves -> 12 / 20. The
    model takes 3 (0.9), not the bound 4 (0.6). With K = 128 (2 edges) at most 2 slices: 6 / 10."""
    deep = tiling(gemm_op("g", 192, 64, 1024, "fp16"), _gpu(10), 2.0)
    assert (deep.slices, deep.utilization) == (3, pytest.approx(0.9))
    shallow = tiling(gemm_op("g", 192, 64, 128, "fp16"), _gpu(10), 2.0)
    assert (shallow.slices, shallow.utilization) == (2, pytest.approx(0.6))


def test_no_split_when_the_tiles_fill_the_units_or_k_is_one_tile() -> None:
    """5 tiles on 4 units are split by nobody (2 waves, 5 / 8 busy); 2 tiles with K = 64 (one edge)
    cannot be split (2 / 4 busy); a device without a unit count is untouched."""
    many = tiling(gemm_op("g", 320, 64, 1024, "fp16"), _gpu(4), 2.0)
    assert (many.slices, many.utilization, many.reduction_bytes) == (1, 5 / 8, 0.0)
    thin = tiling(gemm_op("g", 64, 128, 64, "fp16"), _gpu(4), 2.0)
    assert (thin.slices, thin.utilization) == (1, 0.5)
    assert tiling(gemm_op("g", 64, 128, 1024, "fp16"), _gpu(0), 2.0).slices == 1
