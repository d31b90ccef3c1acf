"""One "did you mean" rule for every name a user types: the nearest known names by edit distance.

The distance counts the single-character insertions, deletions, substitutions and swaps of two
neighbouring characters that turn one name into the other (case ignored): ``quickstrat`` is one swap
from ``quickstart``, ``power`` two insertions from ``power_w``. A known name is close when it is no
farther than :func:`max_distance` from the typed name, or when one of the two begins with the other
(``power`` and ``power_w``); of the close names, the nearest are suggested.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Most suggestions given.
MAX_SUGGESTIONS = 3


def distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) that turn ``a`` into ``b``.

    Example: ``distance("gnc", "gcn")`` -> 1, ``distance("power", "power_w")`` -> 2.
    """
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def max_distance(name: str) -> int:
    """The farthest a known name may be from ``name`` to be close: 1 edit for names of up to 4 characters,
    2 for longer ones, one more per 6 characters past 12 (long names hold more typos)."""
    return 1 if len(name) <= 4 else 2 + max(0, len(name) - 12) // 6


def _close(typed: str, known: str, edits: int) -> bool:
    shorter = min(len(typed), len(known))
    return edits <= max_distance(typed) or (shorter >= 3 and (known.startswith(typed) or typed.startswith(known)))


def nearest(name: str, known: Iterable[str], n: int = MAX_SUGGESTIONS) -> list[str]:
    """The known names nearest to ``name`` (case-insensitive), at most ``n``, all at the smallest distance
    found; empty when none is close (see the module's rule). The name itself, as typed, is never suggested
    (the same name in other case is: ``Quickstart`` -> ``quickstart``).

    Example: ``nearest("quickstrat", ["quickstart", "split_gemm"])`` -> ``["quickstart"]``.
    """
    typed = str(name).lower()
    scored = sorted((d, k) for k in set(map(str, known)) if k != str(name)
                    and _close(typed, k.lower(), d := distance(typed, k.lower())))
    if not scored:
        return []
    best = scored[0][0]
    return [k for d, k in scored if d == best][:n]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x' or 'y'?)"`` for the nearest known names, or ``""`` when none is close."""
    close = nearest(name, known)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
