"""The fit of declared per-op-class efficiencies on the fitted part of the measurements.

:func:`fit_efficiency` chooses, for one device class and one op class, the fraction of peak that
brings the cost model closest to the measured rows of the *fit* part (``split: fit``) whose workload
is a single op of that class: the value on a grid of 0.01 steps in ``[0.30, 1.00]`` that minimizes
the median of ``|log(predicted / measured)|``, every other figure of each device as declared. Held-out
rows are never read. The chosen value is then declared on the devices of that class in
``models/measurements/`` (``compute_efficiency``), which ``tests/runs/test_accuracy.py`` checks by re-running
the fit. ``docs/accuracy.md`` describes the procedure and its result.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dse.runs.accuracy import Measurement, predict

#: Candidate efficiencies (fractions of peak).
GRID = tuple(round(x, 2) for x in np.arange(0.30, 1.0001, 0.01))
#: Builders whose workload is a single op of the named op class.
SINGLE_OP_BUILDERS = {"gemm": "gemm"}


def _with_efficiency(m: Measurement, op_class: str, value: float) -> Measurement:
    device = m.device.device
    declared = {**device.compute_efficiency, op_class: value}
    return dataclasses.replace(m, device=dataclasses.replace(
        m.device, device=dataclasses.replace(device, compute_efficiency=declared)))


def fit_rows(rows: Sequence[Measurement], device_class: str, op_class: str) -> list[Measurement]:
    """The rows the fit of ``(device_class, op_class)`` reads: fit part, that class, single-op workloads."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None and SINGLE_OP_BUILDERS.get(m.builder or "") == op_class
            and dict(m.params).get("tiles", 1) == 1]


def fit_efficiency(rows: Sequence[Measurement], device_class: str, op_class: str = "gemm") -> float | None:
    """The efficiency of :data:`GRID` with the smallest median ``|log(predicted / measured)|`` over
    :func:`fit_rows`; ``None`` when there are no such rows."""
    return _efficiency_on(fit_rows(rows, device_class, op_class), op_class)


#: Builders whose workload's arithmetic is almost all one op class: ResNet-50's FLOPs are 99.8%
#: convolutions, BERT-base's at 384 tokens 92% GEMMs (the builders' own op lists). A device class
#: whose fit part holds no single-op row of a class is fitted on these whole-network rows instead.
NETWORK_OP_CLASS = {"resnet50": "conv", "bert_base": "gemm"}


def network_fit_rows(rows: Sequence[Measurement], device_class: str, op_class: str) -> list[Measurement]:
    """The rows :func:`fit_network_efficiency` reads: fit part, that class, whole networks whose
    arithmetic is mostly ``op_class`` (:data:`NETWORK_OP_CLASS`)."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None and NETWORK_OP_CLASS.get(m.builder or "") == op_class]


def fit_network_efficiency(rows: Sequence[Measurement], device_class: str, op_class: str) -> float | None:
    """The efficiency of :data:`GRID` for ``op_class`` with the smallest median
    ``|log(predicted / measured)|`` over :func:`network_fit_rows` (every other op class as declared);
    ``None`` when there are no such rows."""
    return _efficiency_on(network_fit_rows(rows, device_class, op_class), op_class)


def _grid_minimum(grid: Sequence[float], chosen: Sequence[Measurement],
                  variant: Callable[[Measurement, float], Measurement],
                  aggregate: Callable[[list[float]], Any]) -> float:
    """The value of ``grid`` whose ``aggregate`` (``np.median`` or ``np.mean``) of
    ``|log(predicted / measured)|`` over ``chosen``, each row costed as ``variant(row, value)``, is smallest;
    the first such value (a later one must be better by more than 1e-12)."""
    best, best_score = grid[0], math.inf
    for value in grid:
        score = float(aggregate([abs(math.log(predict(variant(m, value)) / m.value)) for m in chosen]))
        if score < best_score - 1e-12:
            best, best_score = value, score
    return best


def _efficiency_on(chosen: Sequence[Measurement], op_class: str) -> float | None:
    if not chosen:
        return None
    return _grid_minimum(GRID, chosen, lambda m, value: _with_efficiency(m, op_class, value), np.median)


#: Candidate global-buffer bandwidths of a PE array, GB/s: 0.5 to 50 in 0.1 steps.
BUFFER_BW_GRID = tuple(round(x * 0.1, 1) for x in range(5, 501))


def _with_accelerator(m: Measurement, **fields: float) -> Measurement:
    system = m.device.system
    acc = dataclasses.replace(system.accelerators[0], **fields)
    return dataclasses.replace(m, device=dataclasses.replace(
        m.device, system=dataclasses.replace(system, accelerators=(acc,))))


def fit_buffer_bandwidth(rows: Sequence[Measurement], device_id: str) -> float | None:
    """The global-buffer bandwidth of :data:`BUFFER_BW_GRID` with the smallest **mean**
    ``|log(predicted / measured)|`` over the fit part's ``latency_s`` rows of the PE array ``device_id``
    (the median is flat over a wide range: the median row is not buffer-bound); ``None`` when there are
    no such rows. Latency does not depend on the idle power, so this fit comes first."""
    chosen = [m for m in rows if m.split == "fit" and m.metric == "latency_s" and m.device.id == device_id
              and m.device.system is not None]
    if not chosen:
        return None
    return _grid_minimum(BUFFER_BW_GRID, chosen, lambda m, value: _with_accelerator(m, buffer_bw_gbps=value),
                         np.mean)


#: Candidate idle (leakage and clock) powers of a PE array, W: 0 to 1 W in 1 mW steps.
IDLE_GRID = tuple(round(x * 1e-3, 3) for x in range(0, 1001))


def fit_idle_power(rows: Sequence[Measurement], device_id: str) -> float | None:
    """The idle power of :data:`IDLE_GRID` with the smallest median ``|log(predicted / measured)|`` over the
    fit part's ``power_w`` rows of the PE array ``device_id`` (every other figure as declared, the energy
    per access of :mod:`dse.cost.pe_energy` included); ``None`` when there are no such rows."""
    chosen = [m for m in rows if m.split == "fit" and m.metric == "power_w" and m.device.id == device_id
              and m.device.system is not None]
    if not chosen:
        return None
    return _grid_minimum(IDLE_GRID, chosen, lambda m, value: _with_accelerator(m, idle_w=value), np.median)



#: Candidate skew sensitivities (slow-down per unit of row-length CV): 0 to 2 in 0.05 steps.
SKEW_GRID = tuple(round(x * 0.05, 2) for x in range(0, 41))
#: Candidate sparse bandwidth efficiencies (fractions of peak bandwidth): 0.10 to 1.00 in 0.01 steps.
SPARSE_BW_GRID = tuple(round(x * 0.01, 2) for x in range(10, 101))


def _with_device(m: Measurement, **fields: float) -> Measurement:
    return dataclasses.replace(m, device=dataclasses.replace(
        m.device, device=dataclasses.replace(m.device.device, **fields)))


def sparse_fit_rows(rows: Sequence[Measurement], device_class: str) -> list[Measurement]:
    """The rows :func:`fit_sparse` reads: fit part, that class, single sparse products."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None and m.builder == "spmm"]


def _best(chosen: Sequence[Measurement], field_name: str, grid: Sequence[float], **fixed: float) -> float:
    """The value of ``field_name`` on ``grid`` with the smallest mean error, the ``fixed`` fields set."""
    return _grid_minimum(grid, chosen, lambda m, value: _with_device(m, **fixed, **{field_name: value}), np.mean)


def fit_sparse(rows: Sequence[Measurement], device_class: str,
               default_sensitivity: float = 1.2) -> tuple[float, float] | None:
    """``(sparse_bandwidth_efficiency, skew_sensitivity)`` for ``device_class`` on :func:`sparse_fit_rows`
    by coordinate descent on the **mean** ``|log(predicted / measured)|`` (with two figures fitted on a
    handful of rows, the median is flat: it ignores the one strongly skewed row that alone sets the
    sensitivity) (every other figure as declared,
    the cache reuse included): the efficiency on :data:`SPARSE_BW_GRID` with the sensitivity at
    ``default_sensitivity`` (the kind's), then the sensitivity on :data:`SKEW_GRID`, then the efficiency
    again; ``None`` when there are no such rows."""
    chosen = sparse_fit_rows(rows, device_class)
    if not chosen:
        return None
    efficiency = _best(chosen, "sparse_bandwidth_efficiency", SPARSE_BW_GRID, skew_sensitivity=default_sensitivity)
    sensitivity = _best(chosen, "skew_sensitivity", SKEW_GRID, sparse_bandwidth_efficiency=efficiency)
    efficiency = _best(chosen, "sparse_bandwidth_efficiency", SPARSE_BW_GRID, skew_sensitivity=sensitivity)
    return efficiency, sensitivity


#: Candidate output-tile edges of tiled GEMMs (0: no tile quantization).
TILE_GRID = (0, 32, 64, 96, 128, 192, 256)


def tile_fit_rows(rows: Sequence[Measurement], device_class: str) -> list[Measurement]:
    """The rows :func:`fit_gemm_tile` reads: fit part, that class, devices that declare their compute
    units, workloads with tiled ops (every builder but the sparse product)."""
    return [m for m in rows if m.split == "fit" and m.device.device_class == device_class
            and m.device.device is not None and m.device.device.compute_units > 0 and m.builder != "spmm"]


def fit_gemm_tile(rows: Sequence[Measurement], device_class: str) -> int | None:
    """The tile edge of :data:`TILE_GRID` with the smallest mean ``|log(predicted / measured)|`` over
    :func:`tile_fit_rows` (every other figure as declared); ``None`` when there are no such rows."""
    chosen = tile_fit_rows(rows, device_class)
    if not chosen:
        return None
    return int(_best(chosen, "gemm_tile", TILE_GRID))
