"""A fifth family is a subpackage and one registry line: a toy family (``toy_family.py``: a device per
independent op, load vs energy, with its exact CP-SAT model) added to a copy of ``dse/`` in a temporary
folder, which the subprocesses here import instead of the checkout (``PYTHONPATH``):

* ``lint-imports``, with a copy of the repository's ``pyproject.toml`` unedited, keeps every contract;
* :func:`dse.testing.check_family` passes for it (``Family.exact`` true without being set);
* the same toy importing another family breaks the families' independence contract.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOY = Path(__file__).with_name("toy_family.py")
#: The environment's lint-imports (beside its Python), the one ``make test`` runs.
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
REGISTRY_LINE = '    "multimodel": "dse.mapping.multimodel.problem",\n'


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """A folder holding a copy of ``dse/`` with the toy family added, and a copy of ``pyproject.toml``."""
    folder = tmp_path_factory.mktemp("with_toy")
    shutil.copytree(ROOT / "dse", folder / "dse", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "dse" / "mapping" / "toy").mkdir()
    shutil.copy(TOY, folder / "dse" / "mapping" / "toy" / "__init__.py")
    registry = folder / "dse" / "mapping" / "registry.py"
    text = registry.read_text()
    assert text.count(REGISTRY_LINE) == 1
    registry.write_text(text.replace(REGISTRY_LINE, REGISTRY_LINE + '    "toy": "dse.mapping.toy",\n'))
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")
    return folder


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(folder)}
    return subprocess.run(list(args), cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def _lint(folder: Path) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS is not None, "lint-imports is not installed (pip install -e '.[dev]')"
    return _run(folder, LINT_IMPORTS, "--config", str(folder / "pyproject.toml"), "--no-cache")


def test_the_copy_differs_by_the_toy_package_and_one_line(copy: Path) -> None:
    original = (ROOT / "dse" / "mapping" / "registry.py").read_text().splitlines()
    changed = (copy / "dse" / "mapping" / "registry.py").read_text().splitlines()
    assert [line for line in changed if line not in original] == ['    "toy": "dse.mapping.toy",']
    assert len(changed) == len(original) + 1
    assert (copy / "pyproject.toml").read_text() == (ROOT / "pyproject.toml").read_text()


def test_the_contracts_hold_with_the_toy_family(copy: Path) -> None:
    done = _lint(copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.slow
def test_the_family_checks_pass_for_the_toy_family(copy: Path) -> None:
    script = (
        "import dse, dse.testing\n"
        "from dse.mapping.registry import families\n"
        f"assert dse.__file__.startswith({str(copy)!r}), dse.__file__\n"
        "assert families()['toy'].exact\n"
        "dse.testing.check_family('toy', seeds=range(3))\n"
        "print('toy keeps the contract')\n"
    )
    done = _run(copy, sys.executable, "-c", script)
    assert done.returncode == 0, done.stderr
    assert "toy keeps the contract" in done.stdout


def test_the_contracts_catch_the_toy_family_importing_another(copy: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(copy, broken)
    toy = broken / "dse" / "mapping" / "toy" / "__init__.py"
    toy.write_text(toy.read_text().replace("from dse.mapping.base import",
                                           "import dse.mapping.pipeline.problem  # noqa: F401\n"
                                           "from dse.mapping.base import"))
    done = _lint(broken)
    assert done.returncode != 0
    assert "Families are independent of each other" in done.stdout and "BROKEN" in done.stdout
    assert "dse.mapping.toy -> dse.mapping.pipeline" in done.stdout.replace("\n", " ")
