"""Problem families: each turns cost tables plus objectives and constraints into a MappingProblem.

One subpackage per family (:mod:`~dse.mapping.dag`, :mod:`~dse.mapping.pipeline`,
:mod:`~dse.mapping.split`, :mod:`~dse.mapping.multimodel`), independent of each other; beside them
what they share: the problem base (:mod:`~dse.mapping.base`), the family registry
(:mod:`~dse.mapping.registry`, where each family registers itself), constraint components
(:mod:`~dse.mapping.constraints`), the CP-SAT helpers (:mod:`~dse.mapping.cpsat_common`) and the
population arrays (:mod:`~dse.mapping.population`).
"""

from __future__ import annotations

from dse.mapping.base import DecodedMapping, Evaluation, Formulation, MappingProblem, Objective
from dse.mapping.constraints import Constraint
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
    "families",
    "family",
]
