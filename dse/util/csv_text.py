"""CSV text of rows of plain values, as ``pandas.DataFrame(rows).to_csv(index=False)`` writes it, without
importing pandas (about a third of a second of a short command such as ``dse solve --solver heuristic:heft``).

pandas gives each column one type, which sets how its cells are written; :func:`csv_text` follows the
same rule: a column of booleans is written ``True``/``False``; a column of integers as integers; a
column of numbers that holds a float or misses a value (a row without the key, None or NaN) as floats
(``3.0``, Python's shortest round-trip text, ``inf``); any other column as ``str`` of each value. A
missing value is an empty cell. Quoting is the :mod:`csv` module's minimal quoting, lines end with the
platform's line separator: both pandas' defaults.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from typing import Any


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _cells(values: Sequence[Any]) -> list[str]:
    """One column's values as text, by the column's type (module docstring)."""
    present = [v for v in values if not _missing(v)]
    if present and all(isinstance(v, bool) for v in present) and len(present) == len(values):
        return [str(v) for v in values]
    if present and all(_is_number(v) for v in present):
        if len(present) == len(values) and all(isinstance(v, numbers.Integral) for v in present):
            return [str(int(v)) for v in values]
        return ["" if _missing(v) else repr(float(v)) for v in values]
    return ["" if _missing(v) else str(v) for v in values]


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] = ()) -> str:
    """The CSV text of ``rows``: a header of ``columns`` followed by every other key of the rows in the order
    first seen, then one line a row (a key a row lacks is an empty cell)."""
    names = list(dict.fromkeys([*columns, *(key for row in rows for key in row)]))
    cells = [_cells([row.get(name) for row in rows]) for name in names]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=os.linesep)
    writer.writerow(names)
    writer.writerows(zip(*cells, strict=True) if cells else [])
    return out.getvalue()
