"""The fit of an LLM runtime's mechanism values on the fit part of ``models/measurements/llm_*.yaml``.

One fit per runtime over the fit rows of every GPU measured under it, never per GPU: a grid search
over ``precision_efficiency.gemm`` per precision class (the share of the precision's peak the
runtime's tensor-core GEMMs reach, :mod:`dse.cost.mechanisms.precision_efficiency`: one value for the
FP8 GEMMs, one for the FP16/BF16 ones, whatever the GPU), ``bandwidth_efficiency.attention`` (the
share of peak bandwidth its decode-attention kernels reach reading the KV cache: one value for all
GPUs), ``launch_overhead_us`` (per kernel) and ``call_overhead_us`` (per call of the workload),
choosing the point with the smallest mean ``|log(predicted / measured)|`` over the runtime's *fit*
rows of the ``llm`` builder (:func:`llm_fit_rows`). Held-out rows are never read.

Each row's ops are costed once with the four fields neutral (efficiencies 1, overheads 0) and the grid
recombines the parts: an op's time is ``max(compute / e_c, memory / e_b) + kernels x launch``, and the
workload's is the sum plus the call overhead, as the ``pipeline`` family's period of a one-device
mapping (``tests/runs/test_llm_fit.py`` checks the recombination against
:func:`dse.runs.accuracy.predict`). Every row's GEMMs are of one precision class, so for a given
attention fraction and overheads the best efficiency of each class is found on that class's rows
alone: the search is exact over the whole grid.

The result is declared in ``models/llm/runtimes/<runtime>.yaml``; ``docs/llm.md`` gives the figures.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dse.cost import RooflineCostModel
from dse.inputs.builders import build
from dse.model.platform import PRECISION_CLASS
from dse.runs.accuracy import Measurement

#: The grid of each fitted field (the GEMM grid for every precision class).
GRID: dict[str, tuple[float, ...]] = {
    "gemm": tuple(round(float(x), 2) for x in np.arange(0.30, 0.951, 0.05)),
    "attention_bandwidth": (0.5, 0.6, 0.7, 0.85, 1.0),
    "launch_overhead_us": (0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 50.0),
    "call_overhead_us": (0.0, 1000.0, 2000.0, 3000.0, 4000.0),
}


@dataclass(frozen=True)
class LlmFit:
    """The chosen values for one runtime (``gemm``: per precision class), the number of fit rows read
    (in all and per precision class) and the mean ``|log(predicted / measured)|`` they reach."""

    runtime: str
    gemm: Mapping[str, float]
    attention_bandwidth: float
    launch_overhead_us: float
    call_overhead_us: float
    rows: int
    rows_per_class: Mapping[str, int]
    score: float


@dataclass(frozen=True)
class _Parts:
    """One row's ops costed with the fitted fields neutral: compute and memory seconds, the serial seconds
    no field scales (a split-K GEMM's reduction pass), launches, class, and the precision class of its
    GEMMs."""

    row: Measurement
    compute: np.ndarray
    memory: np.ndarray
    serial: np.ndarray
    kernels: np.ndarray
    is_gemm: np.ndarray
    is_attention: np.ndarray
    precision_class: str


def llm_fit_rows(rows: Sequence[Measurement], runtime: str = "tensorrt_llm") -> list[Measurement]:
    """The rows the fit of ``runtime`` reads: fit part, the ``llm`` builder, measured under that runtime
    (the measurement files whose ``family`` is the runtime's name), on every GPU."""
    return [m for m in rows if m.split == "fit" and m.builder == "llm" and m.family == runtime]


def _neutral_parts(m: Measurement) -> _Parts:
    d = m.device.device
    neutral = {c: 1.0 for c in set(PRECISION_CLASS.values())}
    device = dataclasses.replace(d, precision_efficiency={**d.precision_efficiency, "gemm": neutral},
                                 bandwidth_efficiency={**d.bandwidth_efficiency, "attention": 1.0},
                                 launch_overhead_us=0.0, call_overhead_us=0.0)
    model = RooflineCostModel()
    parts = []
    workload = build(m.builder or "", **dict(m.params))
    for op in workload.ops:
        found = model.op_time_parts(op, device)
        if found is None:
            raise ValueError(f"{m.id}: op {op.name} cannot run on {m.device.id}")
        parts.append(found)
    classes = np.asarray([op.op_class for op in workload.ops])
    precisions = {PRECISION_CLASS.get(op.precision, op.precision) for op in workload.ops if op.op_class == "gemm"}
    if len(precisions) != 1:
        raise ValueError(f"{m.id}: its GEMMs are of precision classes {sorted(precisions)}, not one")
    return _Parts(m, np.asarray([p[0] for p in parts]), np.asarray([p[1] for p in parts]),
                  np.asarray([p[2] for p in parts]),  # launch 0 here: what is left is the split-K reduction
                  np.asarray([op.features.get("kernels", 1.0) for op in workload.ops]),
                  classes == "gemm", classes == "attention", precisions.pop())


def recombined(parts: _Parts, gemm: float, attention_bandwidth: float, launch_us: float, call_us: float) -> float:
    """The row's metric (latency or throughput) at the given field values, from its neutral parts."""
    compute = np.where(parts.is_gemm, parts.compute / gemm, parts.compute)
    memory = np.where(parts.is_attention, parts.memory / attention_bandwidth, parts.memory)
    seconds = float(np.maximum(compute, memory).sum() + parts.serial.sum() + parts.kernels.sum() * launch_us * 1e-6
                    + call_us * 1e-6)
    m = parts.row
    return m.items / seconds if m.metric == "throughput_per_s" else seconds


def _log_error(parts: _Parts, gemm: float, attention: float, launch: float, call: float) -> float:
    return abs(float(np.log(recombined(parts, gemm, attention, launch, call) / parts.row.value)))


def fit_llm_runtime(rows: Sequence[Measurement], runtime: str = "tensorrt_llm") -> LlmFit | None:
    """The grid point of :data:`GRID` (a GEMM efficiency per precision class, one attention fraction,
    one launch and one call overhead) with the smallest mean ``|log(predicted / measured)|`` over
    :func:`llm_fit_rows` of ``runtime``; ``None`` when it has no such rows. Raises ``ValueError`` for a
    row whose ops a device cannot run or whose GEMMs mix precision classes."""
    chosen = [_neutral_parts(m) for m in llm_fit_rows(rows, runtime)]
    if not chosen:
        return None
    by_class: dict[str, list[_Parts]] = {}
    for p in chosen:
        by_class.setdefault(p.precision_class, []).append(p)
    best: LlmFit | None = None
    for attention, launch, call in itertools.product(
            GRID["attention_bandwidth"], GRID["launch_overhead_us"], GRID["call_overhead_us"]):
        total, gemm = 0.0, {}
        for cls, group in sorted(by_class.items()):
            sums = [sum(_log_error(p, g, attention, launch, call) for p in group) for g in GRID["gemm"]]
            i = int(np.argmin(sums))
            total, gemm[cls] = total + sums[i], GRID["gemm"][i]
        score = total / len(chosen)
        if best is None or score < best.score:
            best = LlmFit(runtime, gemm, attention, launch, call, len(chosen),
                          {c: len(g) for c, g in sorted(by_class.items())}, score)
    return best
