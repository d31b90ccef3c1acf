"""Writing result files so that a kill mid-write never leaves half of one; checking an output folder."""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from dse.errors import OutputError, SpecError


def _umask() -> int:
    """The process's file-creation mask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: What an output path may not be: it is refused, never replaced (a device node replaced by a regular file
#: breaks the system; a FIFO or a socket is another program's input).
_SPECIAL_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                  (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def output_refusal(path: str | Path) -> str | None:
    """Why ``path`` may not be replaced by a result file, or None when it may (it does not exist, or it is
    a regular file with a write permission bit): a device node, a FIFO, a socket, a folder, a read-only file
    (by its mode bits, so that a read-only file is kept even for root), or a name the system refuses."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a name too long, a loop of symlinks, a component that is a file
        if exc.errno == errno.ENOTDIR:
            return None  # the folder cannot be made: said by whoever makes it
        return f"cannot use it: {exc.strerror or exc}"
    for test, kind in _SPECIAL_KINDS:
        if test(info.st_mode):
            return f"is {kind}; give a regular file"
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):
        return "is a read-only file; it is kept (make it writable or give another name)"
    return None


def _sync(path: str) -> None:
    """Flush ``path``'s data to the disk; an error the disk reports late (ENOSPC, EIO, EDQUOT) raises here."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(folder: Path) -> None:
    """Flush the rename into ``folder`` (best effort: some filesystems cannot sync a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def replace_atomically(path: str | Path, write: Callable[[str], object]) -> None:
    """Call ``write(tmp_path)`` on a temporary file beside ``path``, flush it to the disk (fsync), then rename
    it over ``path``: a kill or a full disk mid-write leaves the old file or the new one, never half of one
    (its mode as a plain open() gives: 0666 less the umask), and two writers never share a temporary file.

    Raises :class:`~dse.errors.OutputError` (exit 2) naming ``path`` when ``path`` is a device node, a FIFO, a
    socket, a folder or a read-only file (refused, left as it is: :func:`output_refusal`) and when an
    :class:`OSError` (no space, an I/O error, a quota, no permission) comes from the write, the flush or the
    rename; the temporary file is removed. Other errors of ``write`` propagate."""
    path = Path(path)
    refusal = output_refusal(path)
    if refusal is not None:
        raise OutputError(f"cannot write {path}: it {refusal} (nothing written)")
    tmp = ""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:40]}-", suffix=path.suffix[:20])
        os.close(fd)
        write(tmp)
        _sync(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private (0600); files are written as open() would
        os.replace(tmp, path)
        tmp = ""
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc} (nothing written)") from None
    finally:
        if tmp and os.path.lexists(tmp):
            os.unlink(tmp)
    _sync_folder(path.parent)


def _write_all(tmp: str, data: bytes) -> None:
    """Write ``data`` into file ``tmp`` with ``os.write`` (a short write is continued; an error raises)."""
    fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through :func:`replace_atomically` (checked, synced, renamed into place);
    returns the path. Raises :class:`~dse.errors.OutputError` as it does."""
    replace_atomically(path, lambda tmp: _write_all(tmp, data))
    return Path(path)


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` as :func:`write_bytes` does; returns the path."""
    return write_bytes(path, text.encode("utf-8"))


def check_writable_file(path: str | Path, source: str = "command line", field: str = "--out") -> None:
    """Check, before any work, that file ``path`` can be written: a new name or a writable regular file (not a
    folder, a device node, a FIFO, a socket: :func:`output_refusal`), its folder made and writable; :class:`SpecError` (exit 2) naming ``source`` and ``field`` otherwise."""
    path = Path(path)
    refusal = output_refusal(path)
    if refusal is not None:
        raise SpecError(source, field, str(path), refusal)
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
    write_text(path, text)
    return path


def clear_partial(folder: str | Path) -> None:
    """Remove ``folder/partial.json`` left by an earlier, interrupted run into the same folder."""
    path = Path(folder) / PARTIAL_MARKER
    if path.is_file():
        path.unlink()


def check_out_folder(out: Path, flag: str = "--out") -> None:
    """Create folder ``out`` and check it is writable; SpecError (exit 2) naming ``flag`` otherwise."""
    where = "command line"
    try:
        if out.exists() and not out.is_dir():
            raise SpecError(where, flag, str(out), "is a file; give a folder")
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise SpecError(where, flag, str(out), f"cannot write there: {exc.strerror or exc}") from None
