"""Every notebook in notebooks/ runs top to bottom without error, started the way Jupyter and nbconvert
start it (working folder: notebooks/), and leaves nothing behind in the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

SKIPPED_FOLDERS = {".venv", ".git", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis",
                   ".ipynb_checkpoints", "benchmarks"}


def _files(root: Path) -> set[Path]:
    """Every file under ``root`` outside the folders tools write to (environment, caches, git); those folders
    are not walked (the environment alone holds tens of thousands of files)."""
    found: set[Path] = set()
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in SKIPPED_FOLDERS]
        found |= {Path(folder, n) for n in names if "numba" not in n and not n.startswith("dse-kernels")}
    return found


NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    before = _files(path.parents[1])
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    assert _files(path.parents[1]) == before  # no out/ folder, figure or store left behind
    errors = [out for cell in notebook.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors


def test_there_are_notebooks() -> None:
    assert {"01_quickstart"} <= {p.stem for p in NOTEBOOKS}
