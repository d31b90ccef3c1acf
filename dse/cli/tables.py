"""Text tables fitted to the terminal's width: the figures are never cut.

:func:`fit_table` lays a table (a DataFrame, or a mapping of column names to values: no pandas
needed) out in at most ``width`` columns of text: one text column (a mapping) is wrapped in the room
the figures leave, or under each row when they leave too little; a table of figures too wide for one
block is cut into blocks of whole columns, each opening with a key column (a job id). Figures and
column names are printed whole, whatever the width: a single column wider than the terminal
overflows rather than losing a digit. :func:`terminal_width` is the width to
fit: the terminal's, :data:`DEFAULT_WIDTH` when the output is not a terminal.
"""

from __future__ import annotations

import math
import numbers
import re
import shutil
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Columns a table is fitted to when the output is not a terminal.
DEFAULT_WIDTH = 100
#: Fewest columns a wrapped text column gets beside the figures; with less room it goes under each row.
MIN_TEXT = 30
#: Indent of a text column printed under its row.
UNDER_INDENT = 4
#: Spaces between two columns.
GAP = 2


def terminal_width() -> int:
    """The terminal's width in columns (``COLUMNS`` when set), :data:`DEFAULT_WIDTH` when not a terminal."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


@dataclass(frozen=True)
class _Column:
    """One column as text: its name, its cells, and whether it is aligned to the right (figures)."""

    name: str
    cells: tuple[str, ...]
    right: bool

    @property
    def width(self) -> int:
        return max([len(self.name)] + [len(c) for c in self.cells])

    def text(self, row: int | None) -> str:
        """Row ``row``'s cell (the name when ``row`` is None), padded to the column's width."""
        text = self.name if row is None else self.cells[row]
        return text.rjust(self.width) if self.right else text.ljust(self.width)


def _cell(value: Any, float_format: str) -> str:
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else float_format.format(value)
    return str(value)


def _table(table: Any) -> tuple[dict[str, list[Any]], set[str]]:
    """The columns of ``table`` (a DataFrame, or a mapping of column name to values) as lists by name, and the
    names of those that hold figures (a numeric or boolean dtype; in a mapping, numbers and booleans only)."""
    if isinstance(table, Mapping):
        values = {str(name): list(cells) for name, cells in table.items()}
        return values, {name for name, cells in values.items() if all(isinstance(v, numbers.Real) for v in cells)}
    import pandas as pd

    values = {str(name): table[name].tolist() for name in table.columns}
    return values, {str(name) for name in table.columns
                    if pd.api.types.is_numeric_dtype(table[name]) or pd.api.types.is_bool_dtype(table[name])}


def _lines(columns: Sequence[_Column]) -> list[str]:
    """The header line, then one line a row."""
    gap = " " * GAP
    rows = [None, *range(len(columns[0].cells))]
    return [gap.join(c.text(r) for c in columns).rstrip() for r in rows]


def _blocks(columns: list[_Column], width: int, key: str) -> list[list[_Column]]:
    """The columns cut into groups of whole columns that fit ``width`` where they can, each opening with
    column ``key`` and holding at least one other."""
    keyed = [c for c in columns if c.name == key][:1]
    groups: list[list[_Column]] = []
    for column in (c for c in columns if c not in keyed):
        if groups and sum(c.width + GAP for c in groups[-1]) + column.width <= width:
            groups[-1].append(column)
        else:
            groups.append([*keyed, column])
    return groups or [keyed]


def wrap_text(text: str, width: int) -> list[str]:
    """``text`` on lines of at most ``width`` characters, broken after spaces and commas (a run longer than
    ``width`` without either is cut); every character kept but the spaces at the breaks."""
    lines: list[str] = []
    line = ""
    for piece in re.split(r"(?<=[ ,])", text):
        if len((line + piece).rstrip()) <= width:
            line += piece
            continue
        if line.strip():
            lines.append(line.rstrip())
        line = piece.lstrip()
        while len(line.rstrip()) > width:
            lines.append(line[:width])
            line = line[width:]
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def fit_table(table: Any, width: int, *, wrap: str | None = None, key: str | None = None,
              float_format: str = "{:.5g}", right: Collection[str] = ()) -> str:
    """``table`` (a DataFrame, its index left out, or a mapping of column name to values) as text at most
    ``width`` columns wide wherever its figures allow.

    ``wrap``: a text column (printed last; the table has other columns) wrapped beside the others,
    continuation lines under its start, or on lines of its own under each row (indented) when the
    others leave it fewer than :data:`MIN_TEXT` columns. ``key``: a table wider than ``width`` is cut
    into blocks of whole columns (a blank line between them), each opening with column ``key``. Floats
    are written with ``float_format``; figures are right-aligned, text left-aligned but for the columns
    named in ``right`` (figures already written as text, e.g. percentages).
    """
    values, figures = _table(table)
    texts = [str(v) for v in values.pop(wrap)] if wrap is not None else []
    columns = [_Column(name, tuple(_cell(v, float_format) for v in cells), name in right or name in figures)
               for name, cells in values.items()]
    if wrap is None:
        if key is None or sum(c.width + GAP for c in columns) - GAP <= width:
            return "\n".join(_lines(columns))
        return "\n\n".join("\n".join(_lines(group)) for group in _blocks(columns, width, key))
    header, *rows = _lines(columns)
    left = max(len(line) for line in [header, *rows])
    room = width - left - GAP
    if room < MIN_TEXT:  # beside the figures it would be a sliver: under each row instead
        indent = " " * UNDER_INDENT
        out = [header, indent + wrap]
        for row, text in zip(rows, texts, strict=True):
            out += [row, *(indent + part for part in wrap_text(text, width - UNDER_INDENT))]
        return "\n".join(out)
    gap, pad = " " * GAP, " " * (left + GAP)
    out = [header.ljust(left) + gap + wrap]
    for row, text in zip(rows, texts, strict=True):
        first, *more = wrap_text(text, room)
        out += [row.ljust(left) + gap + first, *(pad + part for part in more)]
    return "\n".join(line.rstrip() for line in out)
