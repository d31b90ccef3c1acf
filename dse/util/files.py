"""Writing result files so that a kill mid-write never leaves half of one; checking an output folder."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from dse.errors import OutputError, SpecError


def _umask() -> int:
    """The process's file-creation mask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def replace_atomically(path: str | Path, write: Callable[[str], object]) -> None:
    """Call ``write(tmp_path)`` on a temporary file beside ``path``, then rename it over ``path``: a kill
    mid-write leaves the old file or the new one, never half of one (its mode as a plain open() gives:
    0666 less the umask), and two writers never share a
    temporary file. The temporary file is removed when ``write`` raises; an :class:`OSError` (a full disk, no
    permission) becomes :class:`~dse.errors.OutputError` naming ``path``, other errors propagate."""
    path = Path(path)
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
        os.close(fd)
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private (0600); files are written as open() would
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc} (nothing written)") from None
    finally:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)


def check_writable_file(path: str | Path, source: str = "command line", field: str = "--out") -> None:
    """Check, before any work, that file ``path`` can be written: not a folder, its folder made and
    writable; :class:`SpecError` (exit 2) naming ``source`` and ``field`` otherwise."""
    path = Path(path)
    if path.is_dir():
        raise SpecError(source, field, str(path), "is a folder; give a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise SpecError(source, field, str(path), f"cannot write there: {exc.strerror or exc}") from None


#: The file a command writes beside results that a stop by signal cut short.
PARTIAL_MARKER = "partial.json"


def mark_partial(folder: str | Path, info: dict[str, object]) -> Path:
    """Write ``folder/partial.json`` (``{"complete": false, ...info}``) saying the folder's results are partial
    (what finished, what did not, the signal); returns its path."""
    path = Path(folder) / PARTIAL_MARKER
    text = json.dumps({"complete": False, **info}, indent=1, default=str)
    replace_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return path


def clear_partial(folder: str | Path) -> None:
    """Remove ``folder/partial.json`` left by an earlier, interrupted run into the same folder."""
    path = Path(folder) / PARTIAL_MARKER
    if path.is_file():
        path.unlink()


def check_out_folder(out: Path, flag: str = "--out") -> None:
    """Create folder ``out`` and check it is writable; SpecError (exit 2) naming ``flag`` otherwise."""
    where = "command line"
    if out.exists() and not out.is_dir():
        raise SpecError(where, flag, str(out), "is a file; give a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise SpecError(where, flag, str(out), f"cannot write there: {exc.strerror or exc}") from None
