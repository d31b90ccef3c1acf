"""The analytic per-layer latency and energy model of a PE-array accelerator, and the cost tables of a
scenario's layer blocks on a system (the ``accelerator`` cost model of the ``multimodel`` family).

Per layer on accelerator ``a`` (see ``docs/family-multimodel.md`` for worked examples):

* the PE array is ``rows x cols`` with ``rows = 2**floor(log2(sqrt(pes)))`` and ``cols = pes // rows``
  (1024 PEs: 32 x 32; 3072: 32 x 96);
* the dataflow maps two products of loop dimensions onto the array (the rest run in time):
  weight-stationary ``rows <- C`` (input channels reduced), ``cols <- K`` (output channels);
  output-stationary ``rows <- Y``, ``cols <- X`` (output pixels); row-stationary
  ``rows <- R x C`` (filter rows of several input channels), ``cols <- Y`` (output rows).
  For a depthwise layer ``C`` reduced is 1 and ``K`` is its channel count;
* compute cycles ``= ceil(D_rows / rows) x ceil(D_cols / cols) x MACs / (D_rows x D_cols)``;
  utilization ``= MACs / (cycles x pes)``;
* off-chip bytes (int8): weights + inputs + outputs when they fit the on-chip buffer, else the
  weights are tiled into half the buffer and the inputs are re-read once per tile:
  ``W + I x ceil(W / (buffer / 2)) + O``;
* bandwidth: ``min(offchip_bw, shared_bw x pes / total_pes)`` (the shared memory split by PE share);
* time ``= max(cycles / f, bytes / bandwidth)`` (compute and transfers overlap);
* energy ``= active_w x time + bytes x dram_pj_per_byte``; idle power is charged by the simulator;
* an accelerator that declares ``node_nm`` is costed access by access instead (:mod:`dse.cost.pe_energy`:
  MAC, register file, network and buffer energies by node), and declared ``buffer_bw_gbps`` /
  ``noc_bw_gbps`` bound its time by the on-chip traffic; off-chip bytes count ``word_bits`` per element;
* fission (the Planaria-style scheduler): an accelerator is cut into ``pods`` equal sub-arrays; a
  block on ``k`` of them is costed as above on an accelerator with ``k / pods`` of the PEs, buffer,
  off-chip bandwidth and active power (:func:`sub_accelerator`).

Tables are integers: time in ns (rounded up), energy in pJ (rounded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from dse.cost import CostTables
from dse.cost.pe_energy import access_counts, chip_energy_pj, traffic_time_ns
from dse.errors import SpecError
from dse.model.accelerators import (
    Accelerator,
    Layer,
    Model,
    Scenario,
    System,
    array_shape,
    spatial_dims,
)

#: Sub-arrays an accelerator is cut into for spatial (Planaria-style) scheduling.
PODS = 4


@dataclass(frozen=True)
class LayerCost:
    """One layer on one accelerator: cycles, bytes moved off chip, time (ns) and energy (pJ), as floats."""

    cycles: int
    utilization: float
    offchip_bytes: int
    compute_ns: float
    memory_ns: float
    time_ns: float
    energy_pj: float


def compute_cycles(layer: Layer, acc: Accelerator) -> int:
    """Cycles of ``layer`` on ``acc``'s PE array (see the module docstring)."""
    rows, cols = array_shape(acc.pes)
    d_rows, d_cols = spatial_dims(layer, acc.dataflow)
    temporal = layer.macs // (d_rows * d_cols)
    return math.ceil(d_rows / rows) * math.ceil(d_cols / cols) * temporal


def offchip_bytes(layer: Layer, buffer_bytes: float) -> int:
    """Bytes moved off chip: everything once if it fits the buffer, else inputs re-read per weight tile."""
    w, i, o = layer.weight_bytes, layer.input_bytes, layer.output_bytes
    if w + i + o <= buffer_bytes:
        return w + i + o
    return w + i * math.ceil(w / (buffer_bytes / 2)) + o


def effective_bandwidth_gbps(acc: Accelerator, system: System) -> float:
    """``acc``'s off-chip bandwidth in GB/s: its own link, capped by its PE share of the shared memory."""
    return min(acc.offchip_bw_gbps, system.shared_bw_gbps * acc.pes / system.total_pes)


def layer_cost(layer: Layer, acc: Accelerator, system: System) -> LayerCost:
    """Latency and energy of ``layer`` on ``acc`` within ``system``."""
    cycles = compute_cycles(layer, acc)
    word_bytes = acc.word_bits / 8
    moved = math.ceil(offchip_bytes(layer, acc.buffer_kib * 1024 / word_bytes) * word_bytes)
    compute_ns = cycles * 1e3 / acc.freq_mhz
    memory_ns = moved / effective_bandwidth_gbps(acc, system)  # bytes / (GB/s) = ns
    time_ns = max(compute_ns, memory_ns)
    energy = acc.active_w * time_ns * 1e3 + moved * system.dram_pj_per_byte  # W x ns = 1e3 pJ
    # hook: per-access energy and on-chip traffic limits (dse.cost.pe_energy), where the accelerator declares them
    if acc.node_nm is not None or acc.buffer_bw_gbps is not None or acc.noc_bw_gbps is not None:
        counts = access_counts(layer, acc)
        time_ns = max(time_ns, traffic_time_ns(counts, acc))
        if acc.node_nm is not None:
            energy = chip_energy_pj(counts, acc) + moved * system.dram_pj_per_byte
    return LayerCost(cycles, layer.macs / (cycles * acc.pes), moved, compute_ns, memory_ns, time_ns, energy)


def sub_accelerator(acc: Accelerator, k: int, pods: int) -> Accelerator:
    """``k`` of ``pods`` equal sub-arrays of ``acc``: that share of its PEs, buffer, bandwidth and power."""
    share = k / pods
    return replace(acc, name=f"{acc.name}[{k}/{pods}]", pes=max(1, acc.pes * k // pods),
                   buffer_kib=acc.buffer_kib * share, offchip_bw_gbps=acc.offchip_bw_gbps * share,
                   idle_w=acc.idle_w * share, active_w=acc.active_w * share,
                   buffer_bw_gbps=None if acc.buffer_bw_gbps is None else acc.buffer_bw_gbps * share,
                   noc_bw_gbps=None if acc.noc_bw_gbps is None else acc.noc_bw_gbps * share)


def block_ranges(n_layers: int, n_blocks: int) -> list[tuple[int, int]]:
    """Contiguous ``[start, stop)`` layer ranges of ``n = min(n_layers, n_blocks)`` blocks, cut at ``k n_layers // n``."""
    n = max(1, min(n_layers, n_blocks))
    bounds = [k * n_layers // n for k in range(n + 1)]
    return [(bounds[k], bounds[k + 1]) for k in range(n)]


@dataclass(frozen=True, eq=False)
class MultiModelTables(CostTables):
    """Cost tables whose ops are ``(model, block)`` pairs, with the scenario and system they came from.

    ``model_of_op[i]`` and ``block_of_op[i]``: the model index and block index of op ``i``;
    ``model_ops[m]``: the op indices of model ``m`` in block order; ``pod_time[op, acc, k - 1]`` and
    ``pod_energy``: the block on ``k`` of :data:`PODS` sub-arrays of the accelerator (``None`` for tables
    built from explicit costs; the simulator then scales time by ``pods / k``).
    """

    scenario: Scenario | None = None
    system: System | None = None
    model_of_op: tuple[int, ...] = ()
    block_of_op: tuple[int, ...] = ()
    model_ops: tuple[tuple[int, ...], ...] = field(default=())
    pod_time: np.ndarray | None = None
    pod_energy: np.ndarray | None = None


class AcceleratorCostModel:
    """Scenario on a system -> :class:`MultiModelTables` (ops ``MODEL/bBLOCK``, devices the accelerators).

    ``blocks_per_model``: preemption points; each model's layers are cut into this many
    contiguous blocks (fewer when it has fewer layers).
    """

    def __init__(self, blocks_per_model: int = 4) -> None:
        if isinstance(blocks_per_model, bool) or not isinstance(blocks_per_model, int) or not 1 <= blocks_per_model <= 1000:
            raise SpecError("cost_model", "blocks_per_model", blocks_per_model, "must be an integer in [1, 1000]")
        self.blocks_per_model = blocks_per_model

    def tables(self, workload: Scenario, platform: System) -> MultiModelTables:
        scenario, system = workload, platform
        if not isinstance(scenario, Scenario) or not isinstance(system, System):
            raise SpecError("cost_model", "accelerator", type(workload).__name__,
                            "the accelerator cost model needs a multimodel scenario and an accelerator system")
        time_rows, energy_rows, out_bytes, blocks = [], [], [], []
        pod_time, pod_energy = [], []
        subs = [[sub_accelerator(acc, k, PODS) for k in range(1, PODS + 1)] for acc in system.accelerators]
        for model in scenario.models:
            ranges = block_ranges(len(model.layers), self.blocks_per_model)
            blocks.append(len(ranges))
            for start, stop in ranges:
                costs = [[layer_cost(layer, acc, system) for acc in system.accelerators]
                         for layer in model.layers[start:stop]]
                time_rows.append([math.ceil(sum(c[a].time_ns for c in costs)) for a in range(len(system.accelerators))])
                energy_rows.append([round(sum(c[a].energy_pj for c in costs)) for a in range(len(system.accelerators))])
                out_bytes.append(model.layers[stop - 1].output_bytes)
                pods = [[[layer_cost(layer, sub, system) for layer in model.layers[start:stop]] for sub in row]
                        for row in subs]
                pod_time.append([[math.ceil(sum(c.time_ns for c in k_costs)) for k_costs in row] for row in pods])
                pod_energy.append([[round(sum(c.energy_pj for c in k_costs)) for k_costs in row] for row in pods])
        tables = block_tables(scenario, system, blocks, time_rows, energy_rows, out_bytes)
        return replace(tables, pod_time=np.array(pod_time, dtype=np.int64).reshape(tables.n_ops, tables.n_dev, PODS),
                       pod_energy=np.array(pod_energy, dtype=np.int64).reshape(tables.n_ops, tables.n_dev, PODS))


def block_tables(scenario: Scenario, system: System, blocks: list[int], time_ns: list[list[int]],
                 energy_pj: list[list[int]], out_bytes: list[int] | None = None) -> MultiModelTables:
    """:class:`MultiModelTables` from explicit per-block costs: ``blocks[m]`` blocks for model ``m``, then one row
    per block (models in order) of ``time_ns`` and ``energy_pj`` per accelerator. Idle power from ``system``."""
    names: list[str] = []
    model_of: list[int] = []
    block_of: list[int] = []
    model_ops: list[tuple[int, ...]] = []
    for m, model in enumerate(scenario.models):
        ops = []
        for b in range(blocks[m]):
            ops.append(len(names))
            names.append(f"{model.name}/b{b}")
            model_of.append(m)
            block_of.append(b)
        model_ops.append(tuple(ops))
    n_ops, n_dev = len(names), len(system.accelerators)
    out_bytes = out_bytes if out_bytes is not None else [0] * n_ops
    edges = [(ops[k], ops[k + 1]) for ops in model_ops for k in range(len(ops) - 1)]
    return MultiModelTables(
        op_names=tuple(names),
        device_names=tuple(a.name for a in system.accelerators),
        time=np.array(time_ns, dtype=np.int64).reshape(n_ops, n_dev),
        energy=np.array(energy_pj, dtype=np.int64).reshape(n_ops, n_dev),
        mem=np.zeros((n_ops, n_dev), dtype=np.int64),
        allowed=np.ones((n_ops, n_dev), dtype=bool),
        edges=np.array(edges, dtype=np.int64).reshape(len(edges), 2),
        edge_bytes=np.array([out_bytes[s] for s, _ in edges], dtype=np.int64),
        transfer_time=np.zeros((len(edges), n_dev, n_dev), dtype=np.int64),
        transfer_energy=np.zeros((len(edges), n_dev, n_dev), dtype=np.int64),
        idle_power_mw=np.array([round(a.idle_w * 1e3) for a in system.accelerators], dtype=np.int64),
        mem_capacity=np.array([round(a.buffer_kib * 1024) for a in system.accelerators], dtype=np.int64),
        device_kinds=tuple("npu" for _ in system.accelerators),
        op_classes=tuple("conv" for _ in names),
        scenario=scenario,
        system=system,
        model_of_op=tuple(model_of),
        block_of_op=tuple(block_of),
        model_ops=tuple(model_ops),
    )


def model_latency_ns(model: Model, acc: Accelerator, system: System) -> float:
    """One frame of ``model`` alone on ``acc`` (ns)."""
    return sum(layer_cost(layer, acc, system).time_ns for layer in model.layers)
