"""The README's examples run: its command blocks' ``dse ...`` lines and its ``python`` blocks.

Commands run through ``dse.cli.main`` in a temporary folder with time limits capped at 0.5 s, and
their output is checked for the words of a block's ``expect`` marker (see :mod:`tests.project.test_docs`); a
block preceded by ``<!-- docs-test: skip REASON -->`` is not run. Lines that are not ``dse`` commands
run elsewhere (``make demo``: the Makefile) or sit in a block with a ``skip`` marker.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.project.test_docs import blocks, dse_commands, run_page

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_readme_has_runnable_examples() -> None:
    text = README.read_text()
    commands = dse_commands(text)
    assert ["catalog", "--details", "server_cpu_gpu_fpga_dvfs"] in commands
    assert any(c[0] == "solve" for c in commands) and any(c[0] == "explain" for c in commands)
    assert any(lang == "python" for lang, _, _ in blocks(text))


def test_readme_blocks_run(workdir, seen, capsys, monkeypatch) -> None:
    run_page(README.read_text(), workdir, seen, capsys, monkeypatch)


def test_readme_describes_the_quickstart_it_ships() -> None:
    # the quickstart spec builds a 3-layer GCN (7 ops: 2 per layer + log-softmax); the README must say so
    spec = yaml.safe_load((ROOT / "problems" / "quickstart.yaml").read_text())
    layers, hidden = spec["workload"]["layers"], spec["workload"]["hidden"]
    text = README.read_text()
    assert f"{layers}-layer GCN (hidden width {hidden})" in text
    assert not re.search(rf"\b(?!{layers}-)\d-layer GCN", text)  # no other depth claimed


def test_readme_spec_example_is_the_quickstart() -> None:
    """The spec shown under "Problem specs" is problems/quickstart.yaml, field for field (its comments
    say what each field may be instead)."""
    shown = [yaml.safe_load(body) for lang, _, body in blocks(README.read_text())
             if lang == "yaml" and body.startswith("name: quickstart")]
    assert shown == [yaml.safe_load((ROOT / "problems" / "quickstart.yaml").read_text())]


@pytest.mark.slow
def test_readme_says_how_to_run_dse_and_it_works_in_a_clean_shell(tmp_path: Path) -> None:
    """The first hour's first stumble: after `make demo`, a bare `dse` answered "command not found". The
    README's block after the make commands activates the environment; run in a shell that has nothing of
    this process's environment (env -i), its activation line puts `dse` on the path. The environment
    activated is the one running this suite (`make test` creates it as `.venv`, like `make demo`)."""
    first_steps = next((body for _, _, body in blocks(README.read_text()) if ". .venv/bin/activate" in body), None)
    assert first_steps is not None, "the README does not say how to put dse on the path"
    assert first_steps.splitlines()[0].split("#")[0].strip() == ". .venv/bin/activate"
    activate = Path(sys.prefix) / "bin" / "activate"
    assert activate.is_file(), f"the suite runs outside a virtual environment ({sys.prefix})"
    done = subprocess.run(["env", "-i", f"HOME={tmp_path}", "PATH=/usr/bin:/bin", "bash", "--noprofile", "--norc",
                           "-c", f". {shlex.quote(str(activate))} && cd {shlex.quote(str(tmp_path))} && dse --version"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dse "), done.stdout


def test_a_notebook_extra_brings_jupyter_and_make_demo_says_what_next() -> None:
    import tomllib

    extras = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dep.startswith("jupyterlab") for dep in extras["notebook"])
    demo = (README.parent / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "next: . .venv/bin/activate" in demo and "dse solve" in demo
