"""The ``split`` family (POAS): one GEMM's rows split over CPU cores, CUDA cores and tensor cores; time
against energy. :mod:`~dse.mapping.split.inputs` reads its GEMM and devices,
:mod:`~dse.mapping.split.model` builds its cost tables, :mod:`~dse.mapping.split.contention` the
slowdown of devices that share memory, :mod:`~dse.mapping.split.cpsat` the exact model."""

from __future__ import annotations

from dse.mapping.split.problem import (
    FAMILY,
    SPLIT_OBJECTIVES,
    SplitMapping,
    SplitProblem,
    example_problem,
)

__all__ = ["FAMILY", "SPLIT_OBJECTIVES", "SplitMapping", "SplitProblem", "example_problem"]
