"""``dse explain`` refusing a genome quotes it as the user gave it (the whole value, the last gene
included), and names the gene out of range."""

from __future__ import annotations

import pytest

from tests.cli.test_cli import run


@pytest.mark.parametrize("typed", ["1 1 1 5 1 1 1 0 2", "1,1,1,5,1,1,1,0,2", "1 1 1 5 1 1 1 0  2"])
def test_a_gene_out_of_range_is_refused_quoting_the_whole_genome(capsys, typed: str) -> None:
    code, out, err = run(capsys, "explain", "quickstart", "--genome", typed)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"field '--genome' = {typed!r}:" in err
    assert "gene 3 'device[l1.combine]' = 5 is outside 0..2" in err


def test_a_genome_of_the_wrong_length_is_quoted_whole(capsys) -> None:
    typed = "1 1 1 1 1 1 1 0 2 0"
    code, _, err = run(capsys, "explain", "quickstart", "--genome", typed)
    assert code == 2 and f"= {typed!r}:" in err and "has 10 genes, this problem takes 9" in err


def test_a_long_genome_keeps_its_beginning_and_end(capsys) -> None:
    """Past the quoting limit the message keeps the value's beginning and end (``dse.errors.excerpt``): the
    last gene, here the one out of range, is still in it."""
    typed = " ".join(["1"] * 60 + ["7"])
    code, _, err = run(capsys, "explain", "quickstart", "--genome", typed)
    assert code == 2 and err.count("\n") == 1
    quoted = err.split("= ", 1)[1].split(": problem", 1)[0]
    assert quoted.startswith("'1 1 1") and quoted.endswith("1 1 7'") and "..." in quoted


def test_a_front_row_that_does_not_fit_is_quoted_whole(tmp_path, capsys) -> None:
    (tmp_path / "front.csv").write_text("solver,proven,genome\ncpsat,True,1 1 1 1 1 1 1 0 3\n")
    code, _, err = run(capsys, "explain", "quickstart", "--point", "0", "--from", str(tmp_path))
    assert code == 2 and "field '--point' = '1 1 1 1 1 1 1 0 3':" in err and "gene 8 'level[gpu]' = 3" in err
