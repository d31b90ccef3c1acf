"""JSON text that people can read and machines write fast: objects and lists of objects one entry a line,
indented; every list of plain values (a genome, an objective vector) on one line.

``json.dumps(doc, indent=2)`` puts each number of a list on its own line and runs json's pure-Python
encoder: a front of 2,000-gene genomes then takes seconds and tens of megabytes. Here each one-line part
goes through the C encoder.
"""

from __future__ import annotations

import json
from typing import Any


def readable_json(value: Any, indent: int = 2, _level: int = 0) -> str:
    """``value`` (JSON data: dicts, lists, strings, numbers, booleans, None) as JSON text: a non-empty dict,
    or a list whose first item is a dict or list, spreads over indented lines; anything else is one line
    (a list of numbers, or a mixed list led by a plain value: still valid JSON). Parses back to
    ``value`` (``json.loads``). Raises ``TypeError`` or ``ValueError`` as :func:`json.dumps` does."""
    pad, inner = " " * (indent * _level), " " * (indent * (_level + 1))
    if isinstance(value, dict) and value:
        items = (f"{inner}{json.dumps(str(k))}: {readable_json(v, indent, _level + 1)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and value and isinstance(value[0], (dict, list)):  # lists here hold one kind
        return "[\n" + ",\n".join(inner + readable_json(v, indent, _level + 1) for v in value) + "\n" + pad + "]"
    return json.dumps(value)
