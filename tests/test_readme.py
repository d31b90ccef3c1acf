"""The README's examples run: its command blocks' ``dse ...`` lines and its ``python`` blocks.

Commands run through ``dse.cli.main`` in a temporary folder with time limits capped at 0.5 s, and
their output is checked for the words of a block's ``expect`` marker (see :mod:`tests.test_docs`); a
block preceded by ``<!-- docs-test: skip REASON -->`` is not run. Lines that are not ``dse`` commands
run elsewhere (``make demo``: the Makefile) or sit in a block with a ``skip`` marker.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.test_docs import blocks, dse_commands, run_page

ROOT = Path(__file__).resolve().parents[1]
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
