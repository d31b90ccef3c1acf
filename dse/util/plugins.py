"""Loading the modules that register families, solvers and heuristics (built-in and third-party).

The installed distributions' entry points are read once per process (one scan of their metadata, about
20 ms on a development environment, instead of one per registry and lookup).
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

_lock = threading.RLock()
_done: set[str] = set()
_in_progress: set[str] = set()


@functools.cache
def _all_entry_points() -> Any:
    """Every entry point of every installed distribution, read once (``importlib.metadata.entry_points()``:
    its groups can be selected from)."""
    return entry_points()


def group_entry_points(group: str, name: str | None = None) -> list[EntryPoint]:
    """The entry points of ``group`` (only those called ``name`` when given), in the installed order."""
    return [point for point in _all_entry_points().select(group=group) if name is None or point.name == name]


def load_plugins(modules: Iterable[str], group: str) -> None:
    """Import each of ``modules``, then every entry point of the entry-point ``group`` (their import registers
    them). Raises whatever a failing import raises."""
    for module in modules:
        importlib.import_module(module)
    for point in group_entry_points(group):
        point.load()


def load_plugins_once(group: str, modules: Iterable[str], name: str | None = None) -> None:
    """Import each of ``modules``, then the entry points of the entry-point ``group`` (only those called
    ``name`` when given), each the first time a call asks for it, thread-safely.

    Other threads wait until the first load has finished (so none sees a half-filled
    registry); a call from inside a plugin's own import returns at once. A failed import
    is retried by the next call.
    """
    loads: list[tuple[str, Callable[[], object]]] = [
        *((module, functools.partial(importlib.import_module, module)) for module in modules),
        *((f"{group}:{point.name}={point.value}", point.load) for point in group_entry_points(group, name))]
    if all(key in _done for key, _ in loads):
        return
    with _lock:
        if any(key in _in_progress for key, _ in loads):
            return
        for key, load in loads:
            if key in _done:
                continue
            _in_progress.add(key)
            try:
                load()
                _done.add(key)
            finally:
                _in_progress.discard(key)
