"""The compile stamp (:mod:`dse.util.jit`) is keyed on the kernel modules' sources, not on every module.

numba keys each cached kernel on its own source file; the stamp that says every kernel is compiled for
this environment follows the same rule, so an edit to a module without kernels (a docstring of the CLI)
leaves it valid, while an edit to a kernel module makes it stale; like numba's cache, it belongs to one
copy of the package (numba caches a kernel per source path). The kernel modules are one declared
list, :data:`dse.util.jit.KERNEL_MODULES`; a scan of the package checks that it names every module that
compiles kernels (calls ``compile_functions``) or imports numba, and nothing else.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dse
from dse.util import jit

PACKAGE = Path(dse.__file__).resolve().parent
NON_KERNEL_MODULES = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
                            if path.relative_to(PACKAGE).as_posix() not in jit.KERNEL_MODULES)


def _compiles_kernels(tree: ast.AST) -> bool:
    """Whether a module calls ``compile_functions`` or imports numba (to decorate or compile with it)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            name = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
            if name == "compile_functions":
                return True
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "numba" for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numba":
            return True
    return False


def _copy_of_the_package(tmp_path: Path) -> Path:
    """A copy of the package's sources under ``tmp_path/dse`` (no caches); returns its root."""
    root = tmp_path / "dse"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _edit(path: Path) -> None:
    """Change a module's text without changing what it does: its first line gets a comment."""
    path.write_text("# edited\n" + path.read_text())


def test_the_kernel_modules_are_exactly_those_that_compile_kernels() -> None:
    scanned = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
                     if _compiles_kernels(ast.parse(path.read_text(), str(path))))
    assert sorted(jit.KERNEL_MODULES) == scanned
    # the scan finds the modules the kernels are written in (by hand: each calls compile_functions)
    assert {"mapping/dag/structure.py", "mapping/dag/bounds.py", "mapping/dag/chain_bound.py",
            "heuristics/base.py", "solvers/local_search.py"} <= set(scanned)


def test_the_scan_sees_a_new_kernel_module() -> None:
    """A module added with a numba decorator or a compile_functions call would fail the test above."""
    assert _compiles_kernels(ast.parse("import numba\n\n@numba.njit\ndef f(x):\n    return x\n"))
    assert _compiles_kernels(ast.parse("from numba import njit\n"))
    assert _compiles_kernels(ast.parse("def k():\n    return jit.compile_functions(globals(), ('f',))\n"))
    assert not _compiles_kernels(ast.parse("import numpy\nfrom dse.util.jit import may_compile\n"))


@pytest.mark.parametrize("module", jit.KERNEL_MODULES)
def test_an_edit_to_a_kernel_module_changes_the_digest(tmp_path: Path, module: str) -> None:
    root = _copy_of_the_package(tmp_path)
    before = jit.kernel_sources_digest(root)
    assert before == jit.kernel_sources_digest(PACKAGE)  # the copy's sources are the package's
    _edit(root / module)
    assert jit.kernel_sources_digest(root) != before


def test_an_edit_to_any_other_module_leaves_the_digest(tmp_path: Path) -> None:
    root = _copy_of_the_package(tmp_path)
    before = jit.kernel_sources_digest(root)
    assert "cli/app.py" in NON_KERNEL_MODULES and "util/rounding.py" in NON_KERNEL_MODULES
    for module in NON_KERNEL_MODULES:
        _edit(root / module)
    assert jit.kernel_sources_digest(root) == before


def _environment_key(root: Path, cache: Path) -> str:
    """``environment_key()`` of the package copy at ``root``, computed in a fresh process."""
    code = ("import dse, dse.util.jit as jit; from pathlib import Path; "
            "print(Path(dse.__file__).resolve().parent); print(jit.environment_key())")
    env = {**os.environ, "PYTHONPATH": str(root.parent), "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", code], cwd=root.parent, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    imported, key = done.stdout.split()
    assert Path(imported) == root.resolve()  # the copy, not the package under test
    return key


@pytest.mark.slow
def test_the_environment_key_follows_the_kernel_sources_only(tmp_path: Path) -> None:
    root = _copy_of_the_package(tmp_path / "copy")
    cache = tmp_path / "numba-cache"
    key = _environment_key(root, cache)
    app = root / "cli" / "app.py"  # a docstring of the command line: no kernel reads it
    app.write_text(app.read_text().replace('"""', '"""An edited docstring. ', 1))
    assert _environment_key(root, cache) == key
    _edit(root / "mapping" / "dag" / "structure.py")
    assert _environment_key(root, cache) != key


@pytest.mark.slow
def test_copies_of_the_package_sharing_a_cache_folder_have_stamps_of_their_own(tmp_path: Path) -> None:
    """numba caches a kernel per source path, so one copy's compiled kernels are not the other's."""
    cache = tmp_path / "numba-cache"
    one, other = _copy_of_the_package(tmp_path / "one"), _copy_of_the_package(tmp_path / "other")
    assert jit.kernel_sources_digest(one) == jit.kernel_sources_digest(other)
    assert _environment_key(one, cache) != _environment_key(other, cache)
