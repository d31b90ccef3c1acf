"""Pydantic's validation errors as one-line :class:`~dse.errors.SpecError` naming the file, field and value;
an unknown field names the nearest known ones (:func:`dse.util.suggest.did_you_mean`)."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from dse.errors import SpecError
from dse.util.suggest import did_you_mean

if TYPE_CHECKING:
    from pydantic import ValidationError


def spec_error_from_validation(source: str, exc: ValidationError, data: Any, model: Any = None) -> SpecError:
    """Turn pydantic's first error into a :class:`SpecError` naming field and value.

    With ``model`` (the pydantic model that was validated), an unknown field names the nearest known
    fields at its place (:func:`dse.util.suggest.did_you_mean`), or lists them; a mistyped required field
    (``idle`` for ``idle_w``) is reported as the unknown name, not as the missing one."""
    errors = exc.errors()
    err = errors[0]
    if err.get("type") == "missing":  # a typo of a required field: the extra name is what the user wrote
        parent = tuple(err.get("loc", ()))[:-1]
        err = next((e for e in errors if e.get("type") == "extra_forbidden"
                    and tuple(e.get("loc", ()))[:-1] == parent), err)
    loc = err.get("loc", ())
    field_name = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc).replace(".[", "[")
    value: Any = err.get("input", None)
    if isinstance(value, Mapping) and loc:
        value = value.get(loc[-1], value) if err.get("type") != "missing" else None
    message = err.get("msg", "invalid value").removeprefix("Value error, ")
    if err.get("type") == "extra_forbidden" and loc:
        message = unknown_field_reason(str(loc[-1]), known_fields(model, tuple(loc[:-1])))
    return SpecError(source, field_name or "<root>", value, message)


def unknown_field_reason(name: str, known: list[str]) -> str:
    """``unknown field (did you mean 'x'?)``, or ``unknown field; fields here: ...`` when none is close."""
    if not known:
        return "unknown field"
    hint = did_you_mean(name, known)
    return f"unknown field{hint}" if hint else f"unknown field; fields here: {', '.join(known)}"


def known_fields(model: Any, loc: tuple[Any, ...]) -> list[str]:
    """The field names (aliases where set) of the pydantic model found at ``loc`` inside ``model``
    (through nested models, lists, mappings and optional types); [] when there is none."""
    def members(annotation: Any) -> list[Any]:
        args = typing.get_args(annotation)
        origin = typing.get_origin(annotation)
        if origin is typing.Union or isinstance(annotation, types.UnionType) or origin is typing.Annotated:
            return [m for a in args for m in members(a)]
        return [annotation]

    current = [model] if model is not None else []
    for part in loc:
        following = []
        for annotation in current:
            origin = typing.get_origin(annotation)
            if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(part, str):
                fields = {f.alias or n: f for n, f in annotation.model_fields.items()}
                if part in fields:
                    following += members(fields[part].annotation)
            elif origin in (list, tuple, set, frozenset) and isinstance(part, int):
                following += [m for a in typing.get_args(annotation)[:1] for m in members(a)]
            elif origin is dict:
                following += [m for a in typing.get_args(annotation)[1:] for m in members(a)]
        current = following
    for annotation in current:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return [f.alias or n for n, f in annotation.model_fields.items()]
    return []
