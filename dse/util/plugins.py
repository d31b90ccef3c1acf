"""Loading the modules that register families, solvers and heuristics (built-in and third-party)."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from importlib.metadata import entry_points

_lock = threading.RLock()
_done: set[str] = set()
_in_progress: set[str] = set()


def load_plugins(modules: Iterable[str], group: str) -> None:
    """Import each of ``modules``, then every entry point of the entry-point ``group`` (their import registers
    them). Raises whatever a failing import raises."""
    for module in modules:
        importlib.import_module(module)
    for point in entry_points(group=group):
        point.load()


def load_plugins_once(group: str, modules: Iterable[str]) -> None:
    """:func:`load_plugins` for ``group`` the first time it is called, thread-safely.

    Other threads wait until the first load has finished (so none sees a half-filled
    registry); a call from inside a plugin's own import returns at once. A failed
    load is retried by the next call.
    """
    if group in _done:
        return
    with _lock:
        if group in _done or group in _in_progress:
            return
        _in_progress.add(group)
        try:
            load_plugins(modules, group)
            _done.add(group)
        finally:
            _in_progress.discard(group)
