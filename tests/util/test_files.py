"""Atomic replacement of result files (``dse.util.files``)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from dse.errors import OutputError, SpecError
from dse.util.files import check_writable_file, output_refusal, replace_atomically, write_text


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "front.json"
    target.write_text("old")

    def half_then_fail(tmp: str) -> None:
        Path(tmp).write_text("half of the new")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_atomically(target, half_then_fail)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["front.json"]


def test_a_write_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "library.json"
    target.write_text("old")
    replace_atomically(target, lambda tmp: Path(tmp).write_text("new"))
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["library.json"]


def test_replaced_files_follow_the_umask(tmp_path) -> None:
    """front.csv, front.json, pareto.png and library.json were written 0600 (mkstemp's private mode)."""
    import os
    import stat

    from dse.util.files import replace_atomically

    old = os.umask(0o022)
    try:
        replace_atomically(tmp_path / "a.txt", lambda tmp: open(tmp, "w").write("x"))
        assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644
        os.umask(0o077)
        replace_atomically(tmp_path / "b.txt", lambda tmp: open(tmp, "w").write("x"))
        assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o600
    finally:
        os.umask(old)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO, errno.EDQUOT])
def test_an_error_the_disk_reports_at_the_flush_keeps_the_old_file(tmp_path: Path, monkeypatch, code: int) -> None:
    """A full disk often shows only when the data is flushed (delayed allocation): the error of fsync is
    the write's error, and the half-flushed file never takes the final name."""
    target = tmp_path / "front.csv"
    target.write_text("old")

    def failing_fsync(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OutputError, match=f"cannot write {target}: {os.strerror(code)}") as caught:
        write_text(target, "new " * 10_000)
    assert caught.value.exit_code == 2
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["front.csv"]


def test_an_error_of_a_write_call_is_one_error_naming_the_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "schema.json"
    real_write = os.write
    calls = []

    def full_after_the_first(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data[:100])  # a short write: the rest is written by the next call

    monkeypatch.setattr(os, "write", full_after_the_first)
    with pytest.raises(OutputError, match="No space left on device"):
        write_text(target, "x" * 1000)
    assert not target.exists() and not list(tmp_path.iterdir())


def test_a_fifo_a_folder_and_a_read_only_file_are_refused_and_kept(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    read_only = tmp_path / "kept.json"
    read_only.write_text("kept")
    read_only.chmod(0o444)
    for path, words in ((fifo, "FIFO"), (folder, "folder"), (read_only, "read-only")):
        with pytest.raises(OutputError, match=words):
            write_text(path, "new")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and folder.is_dir() and read_only.read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "kept.json", "pipe"]


def test_a_character_device_is_refused_and_stays_a_device() -> None:
    """``/dev/null`` is given as an output path only: it is refused before anything is made beside it."""
    with pytest.raises(OutputError, match="character device"):
        write_text("/dev/null", "new")
    with pytest.raises(SpecError, match="character device"):
        check_writable_file("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_name_too_long_for_the_system_is_one_error() -> None:
    assert "File name too long" in (output_refusal("n" * 5000) or "")


def test_write_text_writes_the_bytes_given(tmp_path: Path) -> None:
    target = tmp_path / "a.dot"
    write_text(target, "digraph {\n  a -> b;\n}\n")
    assert target.read_bytes() == b"digraph {\n  a -> b;\n}\n"
