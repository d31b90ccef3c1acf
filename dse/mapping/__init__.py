"""Problem families: each turns cost tables plus objectives and constraints into a MappingProblem.

Families register themselves in :mod:`dse.mapping.registry`; constraint
components live in :mod:`dse.mapping.constraints`.
"""

from __future__ import annotations

from dse.mapping.base import DecodedMapping, Evaluation, Formulation, MappingProblem, Objective
from dse.mapping.constraints import Constraint
from dse.mapping.pipeline import PipelineMapping, PipelineProblem
from dse.mapping.registry import Family, Metric, families, family

__all__ = [
    "Constraint",
    "DecodedMapping",
    "Evaluation",
    "Family",
    "Formulation",
    "MappingProblem",
    "Metric",
    "Objective",
    "PipelineMapping",
    "PipelineProblem",
    "families",
    "family",
]
