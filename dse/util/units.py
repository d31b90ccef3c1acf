"""The units outputs show (docs/units.md): one unit per quantity in every command's tables and reports.

Every column of an output file names its unit at its end (``energy_j_per_item``, ``edp_j_s``,
``duration_s``): :func:`column_unit` reads it back. A table computed in other units (a simulator's summary
in joules per item) is converted where it is shown: :func:`in_output_units` renames each column by its
unit suffix and scales its values, and :func:`shown_units_note` says so beside the table.
"""

from __future__ import annotations

from typing import Any

#: Column suffix -> (the suffix outputs use, the factor to it): energy per item is shown in mJ.
OUTPUT_UNITS: dict[str, tuple[str, float]] = {"_j_per_item": ("_mj_per_item", 1e3)}

#: Column suffix -> the unit it names; the longest suffix that ends a column's name wins (``edp_j_s``: J s).
COLUMN_UNITS: dict[str, str] = {
    "_items_per_s": "items/s", "_per_s": "1/s", "_mj_per_item": "mJ/item", "_j_per_item": "J/item",
    "_j_s": "J s", "_pj": "pJ", "_mj": "mJ", "_j": "J", "_ns": "ns", "_us": "us", "_ms": "ms", "_s": "s",
    "_mw": "mW", "_w": "W", "_gib": "GiB", "_tu": "tu", "_x": "x", "_pct": "%", "_frames": "frames",
}


def column_unit(column: str) -> str:
    """The unit ``column``'s name ends in (``energy_j_per_item`` -> ``J/item``, ``edp_j_s`` -> ``J s``,
    ``duration_s`` -> ``s``); ``""`` for a column that is a count, a ratio, a score, a flag or a label
    (``switches``, ``uxcost``, ``drop_rate``), whose name carries no unit."""
    name = str(column).lower()
    suffix = max((s for s in COLUMN_UNITS if name.endswith(s)), key=len, default=None)
    return COLUMN_UNITS[suffix] if suffix is not None else ""


def in_output_units(table: Any) -> Any:
    """A copy of the pandas DataFrame ``table`` with each column whose name ends in a suffix of
    :data:`OUTPUT_UNITS` scaled and renamed (``energy_j_per_item`` -> ``energy_mj_per_item``, x 1000);
    the other columns unchanged.

    Example: a summary with ``energy_j_per_item`` 0.025 shows ``energy_mj_per_item`` 25.
    """
    shown = table.copy()
    for column in list(shown.columns):
        for suffix, (output, factor) in OUTPUT_UNITS.items():
            if str(column).endswith(suffix):
                shown[column] = shown[column] * factor
                shown = shown.rename(columns={column: str(column)[: -len(suffix)] + output})
    return shown


def shown_units_note(table: Any, file: str) -> str | None:
    """One line for under the table :func:`in_output_units` makes of ``table`` (read from ``file``): which
    columns it shows in other units than the file holds them; None when it shows every column as it is.

    Example: ``summary.csv has energy_j_per_item in J/item; shown here as energy_mj_per_item in mJ/item``.
    """
    pairs = [(str(c), str(c)[: -len(suffix)] + output) for c in table.columns
             for suffix, (output, _) in OUTPUT_UNITS.items() if str(c).endswith(suffix)]
    if not pairs:
        return None
    held = ", ".join(f"{c} in {column_unit(c)}" for c, _ in pairs)
    shown = ", ".join(f"{s} in {column_unit(s)}" for _, s in pairs)
    return f"{file} has {held}; shown here as {shown}"
