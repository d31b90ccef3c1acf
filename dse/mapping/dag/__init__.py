"""The ``dag`` family (Mayer et al., TensorFlow partitioning and scheduling): a device and a priority per
task of an op DAG; makespan against energy. :mod:`~dse.mapping.dag.structure` holds the graph arrays and
the compiled list-scheduling decoder, :mod:`~dse.mapping.dag.bounds`, :mod:`~dse.mapping.dag.chain_bound`
and :mod:`~dse.mapping.dag.load_bound` the lower bounds, :mod:`~dse.mapping.dag.cpsat` the exact model
and :mod:`~dse.mapping.dag.validate` an independent check of a schedule."""

from __future__ import annotations

from dse.mapping.dag.problem import (
    DAG_OBJECTIVES,
    FAMILY,
    DagOptions,
    DagProblem,
    DagSchedule,
    example_problem,
)

__all__ = ["DAG_OBJECTIVES", "FAMILY", "DagOptions", "DagProblem", "DagSchedule", "example_problem"]
