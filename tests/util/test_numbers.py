"""One number parser: ``1e+07``, ``1e7``, ``1.0e+07``, ``-.5`` and ``010`` are the numbers they say in every
spec field (issue 43, item 6).

The expected values are the numbers as written (hand-checked); PyYAML alone reads the first two, ``1.0e7``
and ``-.5`` as text and ``010`` as octal 8 (YAML 1.1), which the old loader kept.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

import dse
from dse.inputs.builders import build
from dse.util.numbers import finite_float, parse_number
from dse.util.yamlio import load_yaml_text


@pytest.mark.parametrize(("text", "number"), [
    ("1e+07", 1e7), ("1e7", 1e7), ("1.0e+07", 1e7), ("1.0e7", 1e7), ("-2.5E-3", -0.0025), (".5e3", 500.0),
    (" 12 ", 12), ("1_000", 1000), ("+3", 3), ("-.5", -0.5), ("1e1_0", 1e10), ("010", 10),
])
def test_decimal_text_is_its_number(text: str, number: float) -> None:
    value = parse_number(text)
    assert value == number
    assert type(value) is type(number)


@pytest.mark.parametrize("text", ["inf", "nan", "1e7x", "x1e7", "1e", "e7", "", "1.2.3", "0x10"])
def test_other_text_is_left_for_the_field_to_refuse(text: str) -> None:
    assert parse_number(text) == text


@pytest.mark.parametrize(("text", "number"), [
    # every finite decimal notation Python's float() reads; PyYAML alone (YAML 1.1) reads the rows marked * as text
    ("1e7", 1e7), ("1e+07", 1e7), ("+1e7", 1e7), ("1e-7", 1e-7), ("1.0e+7", 1e7), ("1.0e7", 1e7),  # * but 1.0e+7
    ("1.5E-3", 0.0015), ("-2.5E-3", -0.0025), (".5", 0.5), ("5.", 5.0), ("+5.", 5.0), ("-.5", -0.5),  # * -.5
    ("+.5", 0.5), ("-.5e3", -500.0), ("1.e5", 1e5), ("1_000.5", 1000.5), ("1e1_0", 1e10),  # * +.5 to 1e1_0
    ("1e999", math.inf),  # past the float range: a float, for each field to refuse as not finite
    # integers: a leading zero is decimal, not YAML 1.1's octal (010 was 8); explicit bases as YAML 1.1 reads them
    ("12", 12), ("+3", 3), ("010", 10), ("-010", -10), ("0_10", 10), ("0", 0), ("0x10", 16), ("0b11", 3),
])
def test_yaml_reads_each_decimal_notation_as_its_number(text: str, number: float) -> None:
    value = load_yaml_text(f"v: {text}\n", "t.yaml")["v"]
    assert value == number
    assert type(value) is type(number)


@pytest.mark.parametrize("text", ["nan", "inf", "Infinity", "1.2.3", "1e7x", "e7", "1e", "._5", "09"])
def test_yaml_keeps_other_text(text: str) -> None:
    """No finite decimal number: text, for a numeric field to refuse (``09``: text, as in YAML 1.1, which a
    numeric field reads as 9 and a name keeps)."""
    assert load_yaml_text(f"v: {text}\n", "t.yaml")["v"] == text


@pytest.mark.parametrize(("text", "number"), [
    ("2.5", 2.5), (" 1e+07 ", 1e7), ("-.5", -0.5), ("12", 12.0), ("1e999", None), ("-1e999", None),
    ("9" * 400, None), ("inf", None), ("nan", None), ("0x10", None), ("many", None), ("", None),
])
def test_finite_float_of_another_tools_file(text: str, number: float | None) -> None:
    assert finite_float(text) == number


def test_yaml_reads_exponents_without_a_dot_as_numbers() -> None:
    doc = load_yaml_text("a: 1e+07\nb: 1e7\nc: 1.0e+07\nd: 1.0e7\ne: [-2E+3, .5e3]\nf: '1e7'\ng: 1e7x\n"
                         "h: 2024e1-01\ni: 12\n", "t.yaml")
    assert doc == {"a": 1e7, "b": 1e7, "c": 1e7, "d": 1e7, "e": [-2000.0, 500.0], "f": "1e7", "g": "1e7x",
                   "h": "2024e1-01", "i": 12}
    assert all(type(doc[k]) is float for k in "abcd")


def test_a_builder_parameter_given_as_text_is_a_number() -> None:
    """``random_pipeline``'s ``n_ops`` is an int: ``"1.2e+01"`` is 12 ops, as 12 is."""
    assert build("random_pipeline", n_ops="1.2e+01", seed=0).n_ops == build("random_pipeline", n_ops=12, seed=0).n_ops


def _with(annotation: Any, bad: float) -> Any:
    """A value of ``annotation`` holding ``bad`` where a float goes (in a list, a mapping, a union), or
    None when the annotation holds no float."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is float:
        return bad
    if origin is typing.Annotated:
        return _with(args[0], bad)
    if origin in (list, tuple, set, frozenset) and args:
        inner = _with(args[0], bad)
        return None if inner is None else [inner]
    if origin is dict:
        inner = _with(args[1], bad)
        return None if inner is None else {"k": inner}
    if origin is typing.Union or isinstance(annotation, types.UnionType):
        return next((v for v in (_with(a, bad) for a in args) if v is not None), None)
    return None


def _accepting_non_finite(models: list[type[BaseModel]]) -> list[str]:
    """``Model.field = value`` for each float field of ``models`` whose ``inf`` or ``nan`` is not refused as
    not finite (pydantic's ``finite_number`` error at that field; the other fields may be missing)."""
    found = []
    for model in models:
        for name, info in model.model_fields.items():
            key = info.alias or name
            for bad in (math.inf, math.nan):
                value = _with(info.annotation, bad)
                if value is None:
                    continue
                try:
                    model.model_validate({key: value})
                except ValidationError as exc:
                    if any(e["loc"][:1] == (key,) and e["type"] == "finite_number" for e in exc.errors()):
                        continue
                found.append(f"{model.__module__}.{model.__qualname__}.{key} = {value}")
    return found


def test_every_numeric_field_of_a_pydantic_model_refuses_nan_and_inf() -> None:
    """Spec, platform, workload, calibration and scenario files and solver options: ``.inf`` and ``.nan``
    (and ``1e999``, read as inf) are refused naming the field, wherever a float sits. Result files
    (:mod:`dse.util.result_files`) are set aside: NaN and infinities there are what a solver may write."""
    for module in pkgutil.walk_packages(dse.__path__, "dse."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    models, todo = [], [BaseModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("dse.") and sub.__module__ != "dse.util.result_files":
                models.append(sub)
    assert {"LinkSpec", "OpSpec", "SolverOptions", "ServingScenario"} <= {m.__name__ for m in models}
    assert _accepting_non_finite(models) == []


def test_the_finite_check_finds_a_field_that_takes_inf() -> None:
    class Loose(BaseModel):
        rate: float
        rates: dict[str, list[float | None]] = {}
        bounded: float = Field(default=1.0, ge=0, le=1)  # the bound refuses inf, but not as "not finite"
        name: str = ""

    assert [f.split(".")[-1] for f in _accepting_non_finite([Loose])] == [
        "rate = inf", "rate = nan", "rates = {'k': [inf]}", "rates = {'k': [nan]}", "bounded = inf", "bounded = nan"]
