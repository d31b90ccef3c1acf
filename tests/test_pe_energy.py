"""PE-array energy from per-access energies and on-chip traffic limits (dse.pe_energy), by hand."""

from __future__ import annotations

import dataclasses

import pytest

from dse import accuracy as acc_mod
from dse.accelerator_cost import layer_cost
from dse.accelerators import Accelerator, Layer, System
from dse.pe_energy import access_counts, chip_energy_pj, mac_energy_pj, traffic_time_ns

# 1 image, 4 filters of 2 channels, 4 x 4 output, 3 x 3 filter: 4 * 2 * 16 * 9 = 1152 MACs.
LAYER = Layer("l", "CONV", 1, 4, 2, 4, 4, 3, 3)


def test_mac_energy_from_the_published_figures() -> None:
    # Horowitz 45 nm: 8-bit multiply 0.2 pJ + add 0.03 pJ; 16 bits: 0.2 * 4 + 0.03 * 2 = 0.86 pJ.
    assert mac_energy_pj(8, 45) == pytest.approx(0.23)
    assert mac_energy_pj(16, 45) == pytest.approx(0.86)
    # 65 nm: scaled by 65 / 45.
    assert mac_energy_pj(16, 65) == pytest.approx(0.86 * 65 / 45)


def test_access_counts_row_stationary_by_hand() -> None:
    # 4 PEs: a 2 x 2 array; rows <- R * C = 6 (3 tiles), cols <- Y = 4 (2 tiles).
    # weights 4*2*9 = 72 read per column tile (x2), inputs 2*16 = 32 once, outputs 4*16 = 64 written and
    # read back per row tile (2 * 3 - 1 = 5 times): 144 + 32 + 320 = 496 buffer words; RF 4 per MAC.
    a = Accelerator("a", 4, "rs", node_nm=45, word_bits=16)
    counts = access_counts(LAYER, a)
    assert (counts.macs, counts.rf, counts.buffer, counts.noc) == (1152, 4608, 496, 496)
    # energy: 0.86 pJ * (1152 + 4608 * 1 + 496 * 2 + 496 * 6) = 0.86 * 9728
    assert chip_energy_pj(counts, a) == pytest.approx(0.86 * 9728)


def test_traffic_limit_by_hand() -> None:
    a = Accelerator("a", 4, "rs", word_bits=16, buffer_bw_gbps=1.0)
    counts = access_counts(LAYER, a)
    assert traffic_time_ns(counts, a) == pytest.approx(992.0)  # 496 words * 2 bytes / 1 GB/s
    assert traffic_time_ns(counts, dataclasses.replace(a, buffer_bw_gbps=None)) == 0.0
    # the limit binds in layer_cost: 1152 MACs over 4 PEs take far less than 992 ns at 1 GHz
    cost = layer_cost(LAYER, a, System("s", (a,), 128.0))
    assert cost.time_ns == pytest.approx(992.0)


def test_without_a_node_the_flat_power_model_is_unchanged() -> None:
    a = Accelerator("a", 4, "rs", active_w=1.0)
    cost = layer_cost(LAYER, a, System("s", (a,), 128.0, dram_pj_per_byte=0.0))
    assert cost.energy_pj == pytest.approx(1.0 * cost.time_ns * 1e3)


def test_idle_fit_reads_only_the_fit_part_and_matches_the_declared_value() -> None:
    from dse.accuracy_fit import fit_idle_power

    rows = acc_mod.load_measurements()
    fitted = fit_idle_power(rows, "eyeriss")
    declared = {m.device.system.accelerators[0].idle_w for m in rows if m.device.id == "eyeriss"}
    assert declared == {fitted}
    scrambled = [dataclasses.replace(m, value=m.value * 7) if m.split == "holdout" else m for m in rows]
    assert fit_idle_power(scrambled, "eyeriss") == fitted
