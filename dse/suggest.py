"""One "did you mean" rule for every name a user types: the nearest known names by similarity."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: Most suggestions given.
MAX_SUGGESTIONS = 3
#: Least similarity (difflib's ratio, 0-1) for a name to be suggested.
CUTOFF = 0.6


def nearest(name: str, known: Iterable[str], n: int = MAX_SUGGESTIONS) -> list[str]:
    """The known names closest to ``name`` (case-insensitive), best first; empty when none is close.

    Example: ``nearest("quickstrat", ["quickstart", "split_gemm"])`` -> ``["quickstart"]``.
    """
    names = sorted(set(known))
    lowered = {k.lower(): k for k in names}
    close = difflib.get_close_matches(str(name).lower(), list(lowered), n=n, cutoff=CUTOFF)
    return [lowered[c] for c in close]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x' or 'y'?)"`` for the nearest known names, or ``""`` when none is close."""
    close = nearest(name, known)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
