"""Loading the modules that register families, solvers and heuristics (built-in and third-party)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from importlib.metadata import entry_points


def load_plugins(modules: Iterable[str], group: str) -> None:
    """Import each of ``modules``, then every entry point of the entry-point ``group`` (their import registers
    them). Raises whatever a failing import raises."""
    for module in modules:
        importlib.import_module(module)
    for point in entry_points(group=group):
        point.load()
