"""Writing result files so that a kill mid-write never leaves half of one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def replace_atomically(path: str | Path, write: Callable[[str], object]) -> None:
    """Call ``write(tmp_path)`` on a temporary file beside ``path``, then rename it over ``path``: a kill
    mid-write leaves the old file or the new one, never half of one, and two writers never share a
    temporary file. The temporary file is removed when ``write`` raises (the error propagates)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
