"""The ``pipeline`` family (DyPe): ops of a chain in stages on devices, with DVFS levels; throughput
against energy (and latency). :mod:`~dse.mapping.pipeline.cpsat` holds the exact model."""

from __future__ import annotations

from dse.mapping.pipeline.problem import (
    FAMILY,
    PIPELINE_OBJECTIVES,
    PipelineMapping,
    PipelineProblem,
    example_problem,
)

__all__ = ["FAMILY", "PIPELINE_OBJECTIVES", "PipelineMapping", "PipelineProblem", "example_problem"]
