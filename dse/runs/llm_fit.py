"""The fit of the LLM rows' device mechanisms on the fit part of ``models/measurements/llm_*.yaml``.

Per device, a grid search over four declared mechanism fields: ``compute_efficiency.gemm`` (the
fraction of the precision's peak the runtime's GEMMs reach), ``bandwidth_efficiency.attention`` (the
fraction of peak bandwidth the attention kernels reach: decode attention reading the KV cache),
``launch_overhead_us`` (per kernel) and ``call_overhead_us`` (per call of the workload), choosing the
point with the smallest mean ``|log(predicted / measured)|`` over the device's *fit* rows of the
``llm`` builder. Held-out rows are never read. Each row's ops are costed once with the four fields
neutral (efficiencies 1, overheads 0) and the grid recombines the parts: an op's time is
``max(compute / e_c, memory / e_b) + kernels x launch``, and the workload's is the sum plus the call
overhead, as the ``pipeline`` family's period of a one-device mapping (``tests/runs/test_llm_fit.py``
checks the recombination against :func:`dse.runs.accuracy.predict`).

``docs/accuracy.md`` ("LLM rows") gives the result, declared on the devices of
``models/measurements/llm_tensorrt.yaml``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dse.cost import RooflineCostModel
from dse.inputs.builders import build
from dse.runs.accuracy import Measurement

#: The grid of each fitted field.
GRID: dict[str, tuple[float, ...]] = {
    "gemm": tuple(round(float(x), 2) for x in np.arange(0.30, 0.951, 0.05)),
    "attention_bandwidth": (0.5, 0.6, 0.7, 0.85, 1.0),
    "launch_overhead_us": (0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 50.0),
    "call_overhead_us": (0.0, 1000.0, 2000.0, 3000.0, 4000.0),
}


@dataclass(frozen=True)
class LlmFit:
    """The chosen values for one device and the mean ``|log(predicted / measured)|`` they reach."""

    device: str
    gemm: float
    attention_bandwidth: float
    launch_overhead_us: float
    call_overhead_us: float
    score: float


@dataclass(frozen=True)
class _Parts:
    """One row's ops costed with the fitted fields neutral: compute and memory seconds, launches, class."""

    row: Measurement
    compute: np.ndarray
    memory: np.ndarray
    kernels: np.ndarray
    is_gemm: np.ndarray
    is_attention: np.ndarray


def llm_fit_rows(rows: Sequence[Measurement], device: str) -> list[Measurement]:
    """The rows the fit of ``device`` reads: fit part, that device, the ``llm`` builder."""
    return [m for m in rows if m.split == "fit" and m.device.id == device and m.builder == "llm"]


def _neutral_parts(m: Measurement) -> _Parts:
    device = dataclasses.replace(m.device.device, compute_efficiency={**m.device.device.compute_efficiency, "gemm": 1.0},
                                 bandwidth_efficiency={**m.device.device.bandwidth_efficiency, "attention": 1.0},
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
    return _Parts(m, np.asarray([p[0] for p in parts]), np.asarray([p[1] for p in parts]),
                  np.asarray([op.features.get("kernels", 1.0) for op in workload.ops]),
                  classes == "gemm", classes == "attention")


def recombined(parts: _Parts, gemm: float, attention_bandwidth: float, launch_us: float, call_us: float) -> float:
    """The row's metric (latency or throughput) at the given field values, from its neutral parts."""
    compute = np.where(parts.is_gemm, parts.compute / gemm, parts.compute)
    memory = np.where(parts.is_attention, parts.memory / attention_bandwidth, parts.memory)
    seconds = float(np.maximum(compute, memory).sum() + parts.kernels.sum() * launch_us * 1e-6 + call_us * 1e-6)
    m = parts.row
    return m.items / seconds if m.metric == "throughput_per_s" else seconds


def fit_llm_device(rows: Sequence[Measurement], device: str) -> LlmFit | None:
    """The grid point of :data:`GRID` with the smallest mean ``|log(predicted / measured)|`` over
    :func:`llm_fit_rows` of ``device``; ``None`` when it has no such rows."""
    chosen = [_neutral_parts(m) for m in llm_fit_rows(rows, device)]
    if not chosen:
        return None
    best: LlmFit | None = None
    for point in itertools.product(*GRID.values()):
        score = float(np.mean([abs(np.log(recombined(p, *point) / p.row.value)) for p in chosen]))
        if best is None or score < best.score:
            gemm, bandwidth, launch, call = point
            best = LlmFit(device, gemm, bandwidth, launch, call, score)
    return best
