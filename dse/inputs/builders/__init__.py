"""Workload builders: workloads computed from architecture definitions and data statistics.

:data:`BUILDERS` maps a name to a function returning a
:class:`~dse.model.workload.Workload`; :func:`build` looks one up, checks the
parameters against the function's signature and type hints, and raises
:class:`~dse.errors.SpecError` (source ``workload.builder``, field
``builder`` or the parameter's name) instead of a ``TypeError``. A parameter
that asks for more than :data:`~dse.model.workload.MAX_OPS` ops or
:data:`~dse.model.workload.MAX_EDGES` edges is refused, naming it, before anything is
built (:func:`dse.inputs.builders.gemm.require_size`).

* ``resnet50``, ``mobilenetv2``, ``bert_base``, ``bert_large``: :mod:`dse.inputs.builders.dnn`;
* ``gcn``: :mod:`dse.inputs.builders.gcn`;
* ``gemm``: :mod:`dse.inputs.builders.gemm`;
* ``random_pipeline``: :mod:`dse.inputs.builders.random_dag`;
* ``llm``: :mod:`dse.inputs.builders.llm` (models from :mod:`dse.inputs.builders.llm_config`);
* ``graphsage``, ``gin``, ``cg``, ``pagerank``, ``spmm``: :mod:`dse.inputs.builders.sparse`.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

from dse.errors import SpecError

# modules, not their functions: ``dse.inputs.builders.gcn`` and ``dse.inputs.builders.gemm`` stay the modules
from dse.inputs.builders import dnn, gcn, gemm, llm, random_dag, sparse
from dse.inputs.builders.gemm import SOURCE
from dse.model.workload import Workload
from dse.util.numbers import parse_number
from dse.util.suggest import did_you_mean

__all__ = ["BUILDERS", "SOURCE", "build"]

BUILDERS: dict[str, Callable[..., Workload]] = {
    "resnet50": dnn.resnet50,
    "mobilenetv2": dnn.mobilenetv2,
    "bert_base": dnn.bert_base,
    "bert_large": dnn.bert_large,
    "gcn": gcn.gcn,
    "gemm": gemm.gemm,
    "random_pipeline": random_dag.random_pipeline,
    "llm": llm.llm,
    **sparse.SPARSE_BUILDERS,
}


def _accepted(annotation: Any) -> tuple[type, ...]:
    """The plain types an annotation admits (``int | None`` -> ``(int, NoneType)``)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return tuple(t for arg in typing.get_args(annotation) for t in _accepted(arg))
    return (annotation,) if isinstance(annotation, type) else ()


def _coerce(builder: str, key: str, value: Any, annotation: Any) -> Any:
    """``value`` as the annotated type; raises :class:`SpecError` naming ``key`` if it is not one."""
    accepted = _accepted(annotation)
    if not accepted:
        return value
    if int in accepted or float in accepted:
        value = parse_number(value)
    if value is None:
        if type(None) in accepted:
            return None
    elif isinstance(value, bool):
        if bool in accepted:
            return value
    elif int in accepted and isinstance(value, int | float):
        if isinstance(value, int) or float(value).is_integer():
            return int(value)
    elif float in accepted and isinstance(value, int | float):
        return float(value)
    elif str in accepted and isinstance(value, str):
        return value
    names = " or ".join(
        {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(t, "null")
        for t in accepted
    )
    raise SpecError(SOURCE, key, value, f"{builder}: must be {names}")


def build(name: str, **params: Any) -> Workload:
    """Run builder ``name`` with ``params`` and return its workload.

    Raises :class:`SpecError` with field ``builder`` for an unknown name, and
    with the parameter's name for an unknown parameter, a value of the wrong
    type or an invalid value (non-positive size, unknown dataset, ...).
    """
    if name not in BUILDERS:
        raise SpecError(SOURCE, "builder", name, f"unknown builder{did_you_mean(name, BUILDERS)}; builders: {', '.join(sorted(BUILDERS))}")
    fn = BUILDERS[name]
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    kwargs = {}
    for key, value in params.items():
        if key not in signature.parameters:
            raise SpecError(SOURCE, key, value,
                            f"unknown parameter of {name}; parameters: {', '.join(signature.parameters)}")
        kwargs[key] = _coerce(name, key, value, hints.get(key))
    try:
        return fn(**kwargs)
    except SpecError:
        raise
    except (TypeError, ValueError, ArithmeticError) as exc:  # a builder bug or an unforeseen input
        raise SpecError(SOURCE, name, params, str(exc)) from None
