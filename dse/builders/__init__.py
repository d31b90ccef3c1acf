"""Workload builders: workloads computed from architecture definitions and data statistics.

``build(name, **params)`` looks the builder up in :data:`BUILDERS` and checks
its parameters, raising :class:`~dse.errors.SpecError` (field ``builder`` or
the parameter's name) instead of a ``TypeError``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from dse.builders.gcn import gcn
from dse.builders.gemm import gemm
from dse.builders.random_dag import random_pipeline
from dse.errors import SpecError
from dse.workload import Workload

BUILDERS: dict[str, Callable[..., Workload]] = {
    "gcn": gcn,
    "gemm": gemm,
    "random_pipeline": random_pipeline,
}

try:  # DNN chains
    from dse.builders.dnn import bert_base, mobilenetv2, resnet50

    BUILDERS.update(resnet50=resnet50, mobilenetv2=mobilenetv2, bert_base=bert_base)
except ImportError:  # pragma: no cover - optional module
    pass


def build(name: str, **params: Any) -> Workload:
    """Run builder ``name`` with ``params``; raises :class:`SpecError` for unknown names or bad parameters."""
    if name not in BUILDERS:
        raise SpecError("workload", "builder", name, f"unknown builder; builders: {', '.join(sorted(BUILDERS))}")
    fn = BUILDERS[name]
    signature = inspect.signature(fn)
    for key, value in params.items():
        if key not in signature.parameters:
            raise SpecError("workload", key, value, f"{name} takes {', '.join(signature.parameters)}")
        default = signature.parameters[key].default
        if isinstance(default, bool) and not isinstance(value, bool):
            raise SpecError("workload", key, value, "must be true or false")
        if isinstance(default, int | float) and not isinstance(default, bool):
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise SpecError("workload", key, value, "must be a number")
    try:
        return fn(**params)
    except SpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise SpecError("workload", name, params, str(exc)) from None


def positive(field: str, value: float) -> None:
    """Raise :class:`SpecError` unless ``value`` > 0."""
    if value is None or value <= 0:
        raise SpecError("workload", field, value, "must be > 0")
