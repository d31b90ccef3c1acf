"""The ``serving`` family: LLM serving deployments (pools of GPUs with TP, PP, replicas, batch limit,
role, clock and precision), throughput against energy per token under SLOs, memory and power.
:mod:`~dse.mapping.serving.inputs` reads the workload, fleet and search space,
:mod:`~dse.mapping.serving.table` costs every pool option once, :mod:`~dse.mapping.serving.cpsat` is the
exact model."""

from __future__ import annotations

from dse.mapping.serving.problem import (
    FAMILY,
    SERVING_OBJECTIVES,
    ServingMapping,
    ServingProblem,
    example_problem,
)

__all__ = ["FAMILY", "SERVING_OBJECTIVES", "ServingMapping", "ServingProblem", "example_problem"]
