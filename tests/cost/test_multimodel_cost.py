"""The analytic accelerator model on hand-worked layers (arithmetic in the comments)."""

from __future__ import annotations

import pytest

from dse.cost.accelerator import (
    AcceleratorCostModel,
    array_shape,
    block_ranges,
    compute_cycles,
    effective_bandwidth_gbps,
    layer_cost,
    offchip_bytes,
    sub_accelerator,
)
from dse.model.accelerators import Accelerator, Layer, Model, Scenario, System

CONV = Layer("conv", "CONV", 1, 64, 32, 16, 16, 3, 3)  # MACs = 64 x 32 x 16 x 16 x 3 x 3 = 4,718,592
DW = Layer("dw", "DSCONV", 1, 1, 64, 16, 16, 3, 3)      # MACs = 64 x 16 x 16 x 3 x 3 = 147,456


def acc(dataflow: str, pes: int = 1024, **kw) -> Accelerator:
    return Accelerator("a", pes, dataflow, kw.pop("buffer_kib", 2048.0), 128.0, 0.0512, 0.512, **kw)


def test_array_shapes() -> None:
    assert array_shape(1024) == (32, 32)
    assert array_shape(3072) == (32, 96)   # sqrt(3072) = 55.4 -> 32 rows
    assert array_shape(6144) == (64, 96)


@pytest.mark.parametrize("dataflow, cycles, utilization", [
    # ws: rows <- C = 32 (1 fold of 32), cols <- K = 64 (2 folds of 32); temporal = MACs / (32 x 64) = 2304
    #     cycles = 1 x 2 x 2304 = 4608; utilization = 4,718,592 / (4608 x 1024) = 1.0
    ("ws", 4608, 1.0),
    # os: rows <- Y = 16 (1 fold), cols <- X = 16 (1 fold); temporal = MACs / 256 = 18,432 = cycles;
    #     utilization = 4,718,592 / (18,432 x 1024) = 0.25
    ("os", 18_432, 0.25),
    # rs: rows <- R x C = 96 (3 folds of 32), cols <- Y = 16 (1 fold); temporal = MACs / (96 x 16) = 3072;
    #     cycles = 3 x 3072 = 9216; utilization = 4,718,592 / (9216 x 1024) = 0.5
    ("rs", 9216, 0.5),
])
def test_conv_cycles_by_dataflow(dataflow, cycles, utilization) -> None:
    assert compute_cycles(CONV, acc(dataflow)) == cycles
    system = System("s", (acc(dataflow),), 128.0)
    assert layer_cost(CONV, acc(dataflow), system).utilization == pytest.approx(utilization)


def test_depthwise_on_weight_stationary_uses_one_row() -> None:
    # ws: rows <- reduced channels = 1, cols <- 64 channels (2 folds); temporal = 147,456 / 64 = 2304;
    # cycles = 2 x 2304 = 4608; utilization = 147,456 / (4608 x 1024) = 1/32
    a = acc("ws")
    assert compute_cycles(DW, a) == 4608
    assert layer_cost(DW, a, System("s", (a,), 128.0)).utilization == pytest.approx(1 / 32)


def test_time_and_energy_of_a_layer_that_fits_the_buffer() -> None:
    # bytes: W = 64 x 32 x 9 = 18,432; I = 32 x 16 x 16 = 8192; O = 64 x 16 x 16 = 16,384; total 43,008 <= 2 MiB
    # memory time = 43,008 B / 128 GB/s = 336 ns < compute 4608 ns at 1 GHz -> 4608 ns
    # energy = 0.512 W x 4608 ns = 2,359,296 pJ, + 43,008 B x 32 pJ/B = 1,376,256 pJ -> 3,735,552 pJ
    a = acc("ws")
    cost = layer_cost(CONV, a, System("s", (a,), 128.0))
    assert cost.offchip_bytes == 43_008
    assert cost.memory_ns == pytest.approx(336.0)
    assert cost.time_ns == pytest.approx(4608.0)
    assert cost.energy_pj == pytest.approx(3_735_552.0)


def test_spilled_layer_rereads_inputs_per_weight_tile_and_can_be_memory_bound() -> None:
    # 16 KiB buffer < 43,008 B: weights in tiles of 8192 B -> ceil(18,432 / 8192) = 3 input passes:
    # 18,432 + 3 x 8192 + 16,384 = 59,392 B
    assert offchip_bytes(CONV, 16 * 1024) == 59_392
    # at 1 GB/s: memory time 59,392 ns > compute 4608 ns -> memory bound
    a = Accelerator("slow", 1024, "ws", 16.0, 1.0, 0.0, 0.512)
    assert layer_cost(CONV, a, System("s", (a,), 1.0)).time_ns == pytest.approx(59_392.0)


def test_shared_bandwidth_is_split_by_pe_share() -> None:
    little = Accelerator("little", 1024, "ws", 2048.0, 128.0)
    big = Accelerator("big", 3072, "ws", 2048.0, 128.0)
    system = System("bl", (little, big), 128.0)
    # 128 GB/s x 1024 / 4096 = 32; big: min(128, 128 x 3/4 = 96) = 96
    assert effective_bandwidth_gbps(little, system) == 32.0
    assert effective_bandwidth_gbps(big, system) == 96.0


def test_blocks_are_contiguous_and_tables_sum_their_layers() -> None:
    assert block_ranges(10, 4) == [(0, 2), (2, 5), (5, 7), (7, 10)]  # cuts at 10k // 4 = 0, 2, 5, 7, 10
    assert block_ranges(2, 4) == [(0, 1), (1, 2)]
    a = acc("ws")
    system = System("s", (a,), 128.0)
    scenario = Scenario("one", (Model("m", 30.0, (CONV, DW, CONV)),))
    tables = AcceleratorCostModel(blocks_per_model=2).tables(scenario, system)
    assert tables.op_names == ("m/b0", "m/b1")
    # block 0 = conv (4608 ns), block 1 = dw + conv: dw is compute bound (4608 cycles vs its bytes
    # 576 + 16,384 + 16,384 = 33,344 B -> 260.5 ns) -> 4608 + 4608 = 9216 ns
    assert tables.time[:, 0].tolist() == [4608, 9216]
    assert tables.edges.tolist() == [[0, 1]]


def test_sub_array_tables_for_the_spatial_scheduler() -> None:
    # CONV (C = 32, K = 64, temporal 4,718,592 / (32 x 64) = 2304) on k of 4 sub-arrays of a 1024-PE ws array:
    # k = 1: 256 PEs = 16 x 16 -> ceil(32/16) x ceil(64/16) x 2304 = 2 x 4 x 2304 = 18,432 cycles
    # k = 2: 512 PEs = 16 x 32 -> 2 x 2 x 2304 = 9216; k = 3: 768 PEs = 16 x 48 -> 2 x ceil(64/48) x 2304 = 9216
    # (the array shape wastes the third sub-array); k = 4: the whole array, 32 x 32 -> 1 x 2 x 2304 = 4608.
    # At 1 GHz these are ns (memory: 43,008 B at >= 32 GB/s <= 1344 ns, never the bound).
    # Energy at k = 1: 0.512 / 4 W x 18,432 ns = 2,359,296 pJ + 43,008 B x 32 pJ/B = 3,735,552 pJ.
    a = acc("ws")
    tables = AcceleratorCostModel(blocks_per_model=1).tables(Scenario("one", (Model("m", 30.0, (CONV,)),)),
                                                               System("s", (a,), 128.0))
    assert tables.pod_time is not None and tables.pod_energy is not None
    assert tables.pod_time[0, 0].tolist() == [18_432, 9216, 9216, 4608]
    assert tables.pod_time[0, 0, 3] == tables.time[0, 0] and tables.pod_energy[0, 0, 3] == tables.energy[0, 0]
    assert tables.pod_energy[0, 0, 0] == 3_735_552
    assert sub_accelerator(a, 1, 4).pes == 256 and sub_accelerator(a, 3, 4).buffer_kib == 1536.0
