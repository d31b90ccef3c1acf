"""One number parser: ``1e+07``, ``1e7`` and ``1.0e+07`` are numbers in every spec field (issue 43, item 6).

The expected values are the numbers as written (hand-checked); PyYAML alone reads the first two, and
``1.0e7``, as text (YAML 1.1), which the old loader kept.
"""

from __future__ import annotations

import pytest

from dse.inputs.builders import build
from dse.util.numbers import parse_number
from dse.util.yamlio import load_yaml_text


@pytest.mark.parametrize(("text", "number"), [
    ("1e+07", 1e7), ("1e7", 1e7), ("1.0e+07", 1e7), ("1.0e7", 1e7), ("-2.5E-3", -0.0025), (".5e3", 500.0),
    (" 12 ", 12), ("1_000", 1000), ("+3", 3),
])
def test_decimal_text_is_its_number(text: str, number: float) -> None:
    value = parse_number(text)
    assert value == number
    assert type(value) is type(number)


@pytest.mark.parametrize("text", ["inf", "nan", "1e7x", "x1e7", "1e", "e7", "", "1.2.3", "0x10"])
def test_other_text_is_left_for_the_field_to_refuse(text: str) -> None:
    assert parse_number(text) == text


def test_yaml_reads_exponents_without_a_dot_as_numbers() -> None:
    doc = load_yaml_text("a: 1e+07\nb: 1e7\nc: 1.0e+07\nd: 1.0e7\ne: [-2E+3, .5e3]\nf: '1e7'\ng: 1e7x\n"
                         "h: 2024e1-01\ni: 12\n", "t.yaml")
    assert doc == {"a": 1e7, "b": 1e7, "c": 1e7, "d": 1e7, "e": [-2000.0, 500.0], "f": "1e7", "g": "1e7x",
                   "h": "2024e1-01", "i": 12}
    assert all(type(doc[k]) is float for k in "abcd")


def test_a_builder_parameter_given_as_text_is_a_number() -> None:
    """``random_pipeline``'s ``n_ops`` is an int: ``"1.2e+01"`` is 12 ops, as 12 is."""
    assert build("random_pipeline", n_ops="1.2e+01", seed=0).n_ops == build("random_pipeline", n_ops=12, seed=0).n_ops
