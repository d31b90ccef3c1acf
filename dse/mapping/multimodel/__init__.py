"""The ``multimodel`` family (DREAM): real-time multi-model scheduling on a multi-accelerator system."""

from __future__ import annotations

from dse.mapping.multimodel.problem import (
    FAMILY,
    MULTIMODEL_OBJECTIVES,
    MultiModelMapping,
    MultiModelOptions,
    MultiModelProblem,
    ScenarioSettings,
    TimelineEntry,
    apply_timeline,
    example_problem,
    example_scenario,
)

__all__ = ["FAMILY", "MULTIMODEL_OBJECTIVES", "MultiModelMapping", "MultiModelOptions", "MultiModelProblem",
           "ScenarioSettings", "TimelineEntry", "apply_timeline", "example_problem", "example_scenario"]
