"""The one number parser of every spec field: a decimal number written as text (``1e+07``, ``1e7``,
``1.0e+07``, ``-2.5E-3``, ``.5``, ``5.``, ``010``) is that number, wherever it comes from.

One grammar, :data:`DECIMAL_PATTERN`: every finite decimal notation Python's ``float()`` reads (with
YAML 1.1's laxer underscores: any after the first digit). It is used three ways:

* :mod:`dse.util.yamlio` reads the forms YAML 1.1 takes for text (``1e+07``, ``1e7``, ``-.5``: an
  exponent without a dot or sign, a sign before a leading dot) as floats with :data:`FLOAT_PATTERN`,
  and ``010`` as ten, not YAML 1.1's octal eight (:data:`LEADING_ZERO_INTEGER`);
* :func:`parse_number` turns such text into a number where a spec's value reaches a check of its own
  rather than a pydantic float field (which parses such text itself): cost model parameters, workload
  builder parameters;
* :func:`finite_float` reads a number of another tool's file (DOT, the TF paper's CSV).

``inf`` and ``nan`` are no decimal numbers: they stay text, and every numeric field refuses them.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Digits: underscores allowed after the first (YAML 1.1 allows them anywhere there; Python between digits).
_DIGITS = r"[0-9][0-9_]*"
_EXPONENT = rf"[eE][-+]?{_DIGITS}"
#: A decimal number: an optional sign, digits with an optional dot and fraction or a dot and digits, an
#: optional exponent (``12``, ``-2.5E-3``, ``.5``, ``5.``, ``1e7``, ``1_000``; ``1e999`` too, which is
#: past the float range: infinite, for the field's check to refuse).
DECIMAL_PATTERN = re.compile(rf"[-+]?(?:{_DIGITS}(?:\.[0-9_]*)?|\.{_DIGITS})(?:{_EXPONENT})?")
#: The decimal numbers that are no integers (a dot or an exponent), anchored at the end (PyYAML's
#: resolvers match at the start only).
FLOAT_PATTERN = re.compile(rf"[-+]?(?:{_DIGITS}\.[0-9_]*(?:{_EXPONENT})?|\.{_DIGITS}(?:{_EXPONENT})?"
                           rf"|{_DIGITS}{_EXPONENT})$")
#: An integer written with a leading zero (``010``, ``-007``): YAML 1.1 reads it as octal.
LEADING_ZERO_INTEGER = re.compile(r"[-+]?0[0-9_]+")


def parse_number(value: Any) -> Any:
    """``value`` as a number when it is text holding a decimal number (an ``int`` when it has neither dot
    nor exponent, else a ``float``); any other value unchanged, for the field's own check to refuse."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not DECIMAL_PATTERN.fullmatch(text):
        return value
    text = text.replace("_", "")
    return int(text) if text.lstrip("+-").isdigit() else float(text)


def finite_float(text: str) -> float | None:
    """``text`` (surrounding blanks ignored) as a float when it is a decimal number whose value is finite;
    ``None`` otherwise (not a number, ``inf``, ``nan``, or past the float range such as ``1e999``)."""
    number = parse_number(text)
    if isinstance(number, str):
        return None
    try:
        value = float(number)
    except OverflowError:  # an integer past the float range
        return None
    return value if math.isfinite(value) else None
