"""Problem families: each turns cost tables plus objectives and constraints into a MappingProblem."""

from __future__ import annotations

from dse.mapping.base import Constraint, Evaluation, Formulation, MappingProblem, Objective
from dse.mapping.pipeline import PipelineMapping, PipelineProblem

__all__ = [
    "Constraint",
    "Evaluation",
    "Formulation",
    "MappingProblem",
    "Objective",
    "PipelineMapping",
    "PipelineProblem",
]
