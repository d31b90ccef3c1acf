"""PE-array energy from per-access energies and on-chip traffic limits (dse.cost.pe_energy), by hand."""

from __future__ import annotations

import dataclasses

import pytest

from dse.cost.accelerator import layer_cost
from dse.cost.pe_energy import (
    access_counts,
    chip_energy_pj,
    mac_energy_pj,
    reduction_passes,
    traffic_time_ns,
)
from dse.model.accelerators import Accelerator, Layer, System
from dse.runs import accuracy as acc_mod

# 1 image, 4 filters of 2 channels, 4 x 4 output, 3 x 3 filter: 4 * 2 * 16 * 9 = 1152 MACs.
LAYER = Layer("l", "CONV", 1, 4, 2, 4, 4, 3, 3)


def test_mac_energy_from_the_published_figures() -> None:
    # Horowitz 45 nm: 8-bit multiply 0.2 pJ + add 0.03 pJ; 16 bits: 0.2 * 4 + 0.03 * 2 = 0.86 pJ.
    assert mac_energy_pj(8, 45) == pytest.approx(0.23)
    assert mac_energy_pj(16, 45) == pytest.approx(0.86)
    # 65 nm: scaled by 65 / 45.
    assert mac_energy_pj(16, 65) == pytest.approx(0.86 * 65 / 45)


def test_access_counts_row_stationary_by_hand() -> None:
    # 4 PEs: a 2 x 2 array. Row-stationary passes over C: PE sets of R = 3 rows by min(Y, 2) = 2 columns:
    # 4 // 6 = 0 -> 1 channel per pass; the 1 x 4 x 4 input planes fit half the buffer many times over:
    # 1 channel per pass, 2 passes. Weights 4 * 2 * 9 = 72 read per column tile of Y (4 / 2 = 2 tiles),
    # inputs 2 * 16 = 32 once, outputs 4 * 16 = 64 written and read back per pass (2 * 2 - 1 = 3 times):
    # 144 + 32 + 192 = 368 buffer words; RF 4 per MAC.
    a = Accelerator("a", 4, "rs", node_nm=45, word_bits=16)
    assert reduction_passes(LAYER, a) == 2
    counts = access_counts(LAYER, a)
    assert (counts.macs, counts.rf, counts.buffer, counts.noc) == (1152, 4608, 368, 368)
    # energy: 0.86 pJ * (1152 + 4608 * 1 + 368 * 2 + 368 * 6) = 0.86 * 8704
    assert chip_energy_pj(counts, a) == pytest.approx(0.86 * 8704)


def test_row_stationary_passes_follow_the_buffer_capacity() -> None:
    # 8 channels of 64 x 64 planes (4096 elements), 1 x 1 filters, 168 PEs (8 x 21): 168 // (1 * 21) = 8
    # PE sets. An 8 KiB buffer of bytes holds half = 4096 elements: one plane, one channel per pass, 8
    # passes; a 64 KiB buffer holds 8 planes in its half: all 8 channels in one pass.
    layer = Layer("l", "CONV", 1, 16, 8, 64, 64, 1, 1)
    assert reduction_passes(layer, Accelerator("a", 168, "rs", buffer_kib=8)) == 8
    assert reduction_passes(layer, Accelerator("a", 168, "rs", buffer_kib=64)) == 1
    # weight-stationary: row tiles of C = 8 over 8 rows: 1 pass
    assert reduction_passes(layer, Accelerator("a", 168, "ws", buffer_kib=8)) == 1


def test_traffic_limit_by_hand() -> None:
    a = Accelerator("a", 4, "rs", word_bits=16, buffer_bw_gbps=1.0)
    counts = access_counts(LAYER, a)
    assert traffic_time_ns(counts, a) == pytest.approx(736.0)  # 368 words * 2 bytes / 1 GB/s
    assert traffic_time_ns(counts, dataclasses.replace(a, buffer_bw_gbps=None)) == 0.0
    # the limit binds in layer_cost: 1152 MACs over 4 PEs take far less than 736 ns at 1 GHz
    cost = layer_cost(LAYER, a, System("s", (a,), 128.0))
    assert cost.time_ns == pytest.approx(736.0)


def test_without_a_node_the_flat_power_model_is_unchanged() -> None:
    a = Accelerator("a", 4, "rs", active_w=1.0)
    cost = layer_cost(LAYER, a, System("s", (a,), 128.0, dram_pj_per_byte=0.0))
    assert cost.energy_pj == pytest.approx(1.0 * cost.time_ns * 1e3)


def test_pe_array_fits_read_only_the_fit_part_and_match_the_declared_values() -> None:
    from dse.runs.accuracy_fit import fit_buffer_bandwidth, fit_idle_power

    rows = acc_mod.load_measurements()
    scrambled = [dataclasses.replace(m, value=m.value * 7) if m.split == "holdout" else m for m in rows]
    declared = [m.device.system.accelerators[0] for m in rows if m.device.id == "eyeriss"]
    bandwidth = fit_buffer_bandwidth(rows, "eyeriss")
    assert {a.buffer_bw_gbps for a in declared} == {bandwidth}
    assert fit_buffer_bandwidth(scrambled, "eyeriss") == bandwidth
    idle = fit_idle_power(rows, "eyeriss")
    assert {a.idle_w for a in declared} == {idle}
    assert fit_idle_power(scrambled, "eyeriss") == idle
