"""Atomic replacement of result files (``dse.util.files``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dse.util.files import replace_atomically


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
