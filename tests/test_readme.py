"""The README's examples run: its ``sh`` blocks' ``dse ...`` lines and its ``python`` blocks.

Commands run through ``dse.cli.main`` in a temporary folder with solver time limits capped at
0.5 s (see :mod:`tests.test_docs`); a block preceded by ``<!-- docs-test: skip REASON -->`` is not run.
Lines that are not ``dse`` commands (``make demo``, benchmark scripts) are not run here.
"""

from __future__ import annotations

from pathlib import Path

from tests.test_docs import blocks, dse_commands, run_commands, run_python

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_has_runnable_examples() -> None:
    text = README.read_text()
    commands = dse_commands(text)
    assert ["catalog", "--details", "server_cpu_gpu_fpga"] in commands
    assert any(c[0] == "solve" for c in commands) and any(c[0] == "explain" for c in commands)
    assert any(lang == "python" for lang, _, _ in blocks(text))


def test_readme_blocks_run(workdir, seen, capsys, monkeypatch) -> None:  # noqa: F811
    import matplotlib.pyplot as plt

    text = README.read_text()
    monkeypatch.chdir(workdir)
    run_commands(dse_commands(text), capsys, seen)
    run_python(text, monkeypatch)
    plt.close("all")


def test_readme_describes_the_quickstart_it_ships() -> None:
    # the quickstart spec builds a 3-layer GCN (7 ops: 2 per layer + log-softmax); the README must say so
    import yaml

    spec = yaml.safe_load((README.parent / "problems" / "quickstart.yaml").read_text())
    layers = spec["workload"]["layers"]
    assert f"{layers}-layer GCN" in README.read_text()
    assert "2-layer GCN" not in README.read_text() or layers == 2
