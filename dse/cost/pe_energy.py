"""PE-array energy from per-access energies, and the on-chip traffic limits on a layer's time.

A PE array that declares its technology node (``node_nm`` on the accelerator) is costed access by
access instead of with a flat active power:

* **energy per MAC** at 45 nm from Horowitz, "Computing's energy problem (and what we can do about
  it)", ISSCC 2014, Fig. 1.1.9: an 8-bit integer multiply 0.2 pJ and add 0.03 pJ (a 32-bit multiply
  3.1 pJ and add 0.1 pJ). A ``b``-bit MAC is a multiply scaled by ``(b / 8)^2`` (an array multiplier's
  partial-product count; the table's own 32-bit multiply, 3.1 pJ against 0.2 x 16 = 3.2 pJ, checks the
  rule) plus an add scaled by ``b / 8``: 0.23 pJ at 8 bits, 0.86 pJ at 16 bits;
* **between nodes** the energy per operation scales with the node's feature size (``node_nm / 45``):
  switched capacitance scales linearly with the device dimensions (Dennard et al., "Design of
  ion-implanted MOSFET's with very small physical dimensions", IEEE JSSC 9(5), 1974, Table I), the supply
  voltage held (both nodes run near 1 V);
* **storage and movement** relative to one MAC, from Chen, Emer, Sze, "A Spatial Architecture for
  Energy-Efficient Dataflow for Convolutional Neural Networks", ISCA 2016, Table IV (a commercial 65 nm
  process): register file (0.5 KB) 1x, inter-PE network (array, 1-2 mm) 2x, global buffer (> 100 KB)
  6x (DRAM 200x; off-chip energy here stays the system's declared ``dram_pj_per_byte``).

Access counts come from the layer's dataflow (:func:`access_counts`): every MAC reads its operands
and updates its partial sum in the register file as far as the dataflow keeps them there
(:data:`RF_ACCESSES_PER_MAC`); the global buffer serves the weights once per column tile of the
array, the inputs once, and writes and reads back the partial sums once per pass over the reduction
(:func:`reduction_passes`: for row-stationary, as many channels per pass as PE sets fit the array
and input planes fit half the buffer), and every buffer word crosses the network on chip.

Traffic limits (:func:`traffic_time_ns`): a layer takes at least its buffer traffic over the buffer's
declared bandwidth (``buffer_bw_gbps``) and its network traffic over the network's (``noc_bw_gbps``);
undeclared, no limit. Leakage and clock power are the accelerator's ``idle_w``, charged over time by
whoever integrates it (the simulator, :mod:`dse.runs.accuracy`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dse.model.accelerators import Accelerator, Layer, array_shape, spatial_dims

#: Horowitz (ISSCC 2014), 45 nm, 0.9 V: 8-bit integer multiply and add, pJ.
MULT_8BIT_PJ_45NM = 0.2
ADD_8BIT_PJ_45NM = 0.03
#: Node of the Horowitz figures (nm).
REFERENCE_NODE_NM = 45.0
#: Chen, Emer, Sze (ISCA 2016, Table IV): energy of one access relative to one MAC.
RF_PER_MAC = 1.0
NOC_PER_MAC = 2.0
BUFFER_PER_MAC = 6.0
#: Register-file accesses per MAC by dataflow (Sze, Chen, Yang, Emer, "Efficient Processing of Deep
#: Neural Networks: A Tutorial and Survey", Proc. IEEE 105(12), 2017, Sec. V-A): weight-stationary keeps
#: the weight (one read), output-stationary the partial sum (read and write), row-stationary all three
#: operands (two reads, the partial sum read and written).
RF_ACCESSES_PER_MAC = {"ws": 1, "os": 2, "rs": 4}


@dataclass(frozen=True)
class AccessCounts:
    """Accesses of one layer at each level, in words of the accelerator's ``word_bits``."""

    macs: int
    rf: int
    noc: int
    buffer: int


def mac_energy_pj(word_bits: int, node_nm: float) -> float:
    """Energy of one ``word_bits`` integer MAC at ``node_nm`` (pJ), by the rules of the module docstring."""
    width = word_bits / 8
    return (MULT_8BIT_PJ_45NM * width**2 + ADD_8BIT_PJ_45NM * width) * node_nm / REFERENCE_NODE_NM


def reduction_passes(layer: Layer, acc: Accelerator) -> int:
    """Passes over the reduction whose partial sums go back to the buffer between them.

    Weight- and output-stationary: one per row tile of the array over the reduced dimension.
    Row-stationary: ``ceil(C / c)`` with ``c`` the input channels reduced in one pass, the fewest of
    (a) the PE sets of ``R`` rows by ``min(Y, cols)`` columns that fit the array, one channel each
    (``pes // (R * min(Y, cols))``, at least 1), and (b) the channels whose input planes
    (``N x Y x X`` elements) fit half the buffer (at least 1), as the off-chip rule gives half the
    buffer to one operand."""
    rows, cols = array_shape(acc.pes)
    if acc.dataflow != "rs":
        return math.ceil(spatial_dims(layer, acc.dataflow)[0] / rows)
    sets = max(1, acc.pes // (layer.r * min(layer.y, cols)))
    buffer_words = acc.buffer_kib * 1024 * 8 / acc.word_bits
    fit = max(1, int(buffer_words / 2 // (layer.n * layer.y * layer.x)))
    return math.ceil(layer.reduce_channels / min(sets, fit, layer.reduce_channels))


def access_counts(layer: Layer, acc: Accelerator) -> AccessCounts:
    """Accesses of ``layer`` on ``acc`` at the register file, network and global buffer (see the module
    docstring): weights once per column tile of the array, inputs once, partial sums written and read
    back once per :func:`reduction_passes` (the last written once)."""
    _, cols = array_shape(acc.pes)
    col_tiles = math.ceil(spatial_dims(layer, acc.dataflow)[1] / cols)
    passes = reduction_passes(layer, acc)
    buffer = layer.weight_bytes * col_tiles + layer.input_bytes + layer.output_bytes * (2 * passes - 1)
    return AccessCounts(layer.macs, layer.macs * RF_ACCESSES_PER_MAC[acc.dataflow], buffer, buffer)


def chip_energy_pj(counts: AccessCounts, acc: Accelerator) -> float:
    """Dynamic on-chip energy of ``counts`` on ``acc`` (pJ): MACs, register file, network and buffer."""
    mac = mac_energy_pj(acc.word_bits, acc.node_nm or REFERENCE_NODE_NM)
    return mac * (counts.macs + RF_PER_MAC * counts.rf + NOC_PER_MAC * counts.noc
                  + BUFFER_PER_MAC * counts.buffer)


def traffic_time_ns(counts: AccessCounts, acc: Accelerator) -> float:
    """The least time the on-chip traffic takes (ns): buffer and network words over their declared
    bandwidths (bytes / (GB/s) = ns); 0 for a level with no declared bandwidth."""
    word_bytes = acc.word_bits / 8
    times = [0.0]
    if acc.buffer_bw_gbps is not None:
        times.append(counts.buffer * word_bytes / acc.buffer_bw_gbps)
    if acc.noc_bw_gbps is not None:
        times.append(counts.noc * word_bytes / acc.noc_bw_gbps)
    return max(times)
