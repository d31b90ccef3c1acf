"""Progress lines on the terminal for long solves (stderr, throttled).

Silent when ``quiet`` is set or stderr is not a terminal, unless forced.
"""

from __future__ import annotations

import sys
import time


class Progress:
    """Prints ``[label] message`` at most every ``every_s`` seconds."""

    def __init__(self, label: str, enabled: bool | None = None, every_s: float = 1.0) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.every_s = every_s
        self._last = 0.0
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def due(self) -> bool:
        """True when the next ``update`` would print (lets callers skip costly messages)."""
        return self.enabled and time.monotonic() - self._last >= self.every_s

    def update(self, message: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if force or now - self._last >= self.every_s:
            self._last = now
            print(f"[{self.label} {self.elapsed():6.1f}s] {message}", file=sys.stderr, flush=True)


def silent() -> Progress:
    return Progress("", enabled=False)
