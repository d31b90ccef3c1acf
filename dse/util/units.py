"""The units outputs show (docs/units.md): one unit per quantity in every command's tables and reports.

A table computed in other units (a simulator's summary in joules per item) is converted where it is
shown: :func:`in_output_units` renames each column by its unit suffix and scales its values.
"""

from __future__ import annotations

from typing import Any

#: Column suffix -> (the suffix outputs use, the factor to it): energy per item is shown in mJ.
OUTPUT_UNITS: dict[str, tuple[str, float]] = {"_j_per_item": ("_mj_per_item", 1e3)}


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
