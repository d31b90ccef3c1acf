"""Write a benchmark's rows as a CSV file: ``write_rows(path, rows)``."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def write_rows(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Write ``rows`` to ``path`` (its folder made if missing), the first row's keys as the header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
