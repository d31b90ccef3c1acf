"""The one number parser of every spec field: a decimal number written as text (``1e+07``, ``1e7``,
``1.0e+07``, ``-2.5``) is that number, wherever it comes from.

YAML 1.1, which PyYAML reads, takes ``1e+07`` and ``1e7`` (an exponent without a dot) for strings;
:mod:`dse.util.yamlio` resolves them with :data:`EXPONENT_PATTERN` instead, and :func:`parse_number`
turns such text into a number where a spec's value reaches a check of its own rather than a pydantic
float field (which parses such text itself): cost model parameters, workload builder parameters.
``inf`` and ``nan`` are no decimal numbers and stay text (every numeric field refuses them).
"""

from __future__ import annotations

import re
from typing import Any

#: A decimal number as YAML 1.2 writes one (underscores between digits allowed, as YAML 1.1 does).
DECIMAL_PATTERN = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?")
#: The numbers with an exponent that YAML 1.1 reads as text (no dot, or an unsigned exponent), anchored at
#: the end (PyYAML's resolvers match at the start only).
EXPONENT_PATTERN = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$")


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

