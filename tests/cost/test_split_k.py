"""Split-K on GEMMs with fewer output tiles than compute units (dse.cost.mechanisms.tiling), by hand."""

from __future__ import annotations

import pytest

from dse.cost import RooflineCostModel
from dse.cost.mechanisms.tiling import tiling
from dse.inputs.builders.gemm import gemm_op
from dse.model.platform import Device

#: the dense bandwidth efficiency of the gpu kind (dse.cost.roofline.BANDWIDTH_EFFICIENCY)
DENSE = 0.85


def _gpu(units: int, bandwidth_gbps: float = 10_000.0) -> Device:
    # fp16 100 TFLOP/s; no class defaults (a Device built directly): gemm efficiency 0.75 (the gpu kind's),
    # dense bandwidth efficiency 0.85, launch 5 us; output tiles of 64 x 64
    return Device("g", "gpu", {"fp16": 100.0}, bandwidth_gbps, 16.0, 10.0, 110.0, compute_units=units, gemm_tile=64)


def _tiling(m: int, n: int, k: int, device: Device):
    """The tiling the cost model chooses, given the reduction pass's rate (dense bandwidth)."""
    return tiling(gemm_op("g", m, n, k, "fp16"), device, 2.0, True, device.mem_bw_gbps * 1e9 * DENSE)


def test_a_compute_bound_gemm_is_split_and_pays_the_reduction_by_hand() -> None:
    """64 x 128 x 1024 fp16 on 4 units, 10,000 GB/s: 8,192 outputs = 2 tiles; K = 1024 -> 16 tile edges, so
    up to min(ceil(4 / 2), 16) = 2 slices. Estimates at the 100 TFLOP/s peak: unsplit 16,777,216 FLOP over
    half the units = 335.544 ns; 2 slices fill the 4 units, 167.772 ns, plus the reduction, 2 slices x
    8,192 FP32 partials written and read = 131,072 B at 8,500 GB/s = 15.420 ns: 183.192 ns, so 2. Memory
    (64 x 1024 + 1024 x 128 + 64 x 128) x 2 B = 409,600 B at 8,500 GB/s = 48.188 ns. The op's time:
    compute at the kind's 0.75 efficiency, all units busy, 223.696 ns; serial 5 us launch + 15.420 ns."""
    split = _tiling(64, 128, 1024, _gpu(4))
    assert (split.slices, split.utilization, split.reduction_bytes) == (2, 1.0, 131_072.0)
    compute, memory, serial = RooflineCostModel().op_time_parts(gemm_op("g", 64, 128, 1024, "fp16"), _gpu(4))
    assert compute == pytest.approx(223.696e-9, rel=1e-5)
    assert memory == pytest.approx(48.188e-9, rel=1e-4)
    assert serial == pytest.approx(5e-6 + 15.420e-9, rel=1e-6)
    unsplit = RooflineCostModel(split_k=()).op_time_parts(gemm_op("g", 64, 128, 1024, "fp16"), _gpu(4))
    assert unsplit is not None and unsplit[0] == pytest.approx(447.392e-9, rel=1e-5) and unsplit[2] == 5e-6


def test_a_split_whose_reduction_costs_more_than_it_saves_is_not_taken() -> None:
    """The same GEMM at 500 GB/s: 2 slices would save 335.544 - 167.772 = 167.772 ns of compute at peak and
    cost a reduction of 131,072 B at 425 GB/s = 308.405 ns, so 1 slice, half the units busy: compute at
    0.75 efficiency 447.392 ns, memory 409,600 B at 425 GB/s = 963.765 ns, serial the 5 us launch alone.
    At 1,000 GB/s the pass costs 154.202 ns, less than it saves: split (the op's memory time, 481.882 ns,
    is left out of the choice)."""
    slow = _gpu(4, bandwidth_gbps=500.0)
    assert (_tiling(64, 128, 1024, slow).slices, _tiling(64, 128, 1024, slow).utilization) == (1, 0.5)
    compute, memory, serial = RooflineCostModel().op_time_parts(gemm_op("g", 64, 128, 1024, "fp16"), slow)
    assert compute == pytest.approx(447.392e-9, rel=1e-5)
    assert memory == pytest.approx(963.765e-9, rel=1e-5)
    assert serial == 5e-6
    assert _tiling(64, 128, 1024, _gpu(4, bandwidth_gbps=1000.0)).slices == 2


def test_split_k_takes_the_fastest_slice_count() -> None:
    """3 tiles (192 x 64 output) on 10 units, K = 1024 (16 edges): up to ceil(10 / 3) = 4 slices. At peak
    the GEMM is 251.658 ns over all units; its memory 548,864 B at 8,500 GB/s = 64.572 ns; each slice adds
    2 x 12,288 x 4 = 98,304 B of reduction, 11.565 ns. Estimates: 1 -> 3 / 10 busy: 838.861 ns; 2 -> 6 / 10:
    419.430 + 23.130 = 442.560; 3 -> 9 / 10: 279.620 + 34.695 = 314.315; 4 -> 12 units = 2 waves, 12 / 20:
    419.430 + 46.260 = 465.690. The model takes 3, not the bound 4. With K = 128 (2 edges) at most 2
    slices: 104.858 ns unsplit against 52.429 + 23.130 = 75.559 ns: 2 (6 / 10 busy)."""
    deep = _tiling(192, 64, 1024, _gpu(10))
    assert (deep.slices, deep.utilization) == (3, pytest.approx(0.9))
    shallow = _tiling(192, 64, 128, _gpu(10))
    assert (shallow.slices, shallow.utilization) == (2, pytest.approx(0.6))


def test_no_split_when_the_tiles_fill_the_units_or_k_is_one_tile() -> None:
    """5 tiles on 4 units are split by nobody (2 waves, 5 / 8 busy); 2 tiles with K = 64 (one edge)
    cannot be split (2 / 4 busy); a device without a unit count is untouched."""
    many = _tiling(320, 64, 1024, _gpu(4))
    assert (many.slices, many.utilization, many.reduction_bytes) == (1, 5 / 8, 0.0)
    thin = _tiling(64, 128, 64, _gpu(4))
    assert (thin.slices, thin.utilization) == (1, 0.5)
    assert _tiling(64, 128, 1024, _gpu(0)).slices == 1
