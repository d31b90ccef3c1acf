"""An input file larger than the import budget is refused with its size and the budget before it is read.

Before the budget, a 1,000,000-op DOT graph (167 MB) was still being parsed after 300 s at 5 GB of memory,
and JSON and TF CSV graphs of that size were refused as more than 200,000 ops only after 80 to 120 s at 2.3
to 3.5 GB: the whole file was read and parsed first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dse.errors import SpecError
from dse.inputs.builders import build
from dse.inputs.importers import read_workload, write_workload
from dse.util.limits import IMPORT_BUDGET_ENV, MAX_IMPORT_MIB, import_budget_mib


@pytest.mark.parametrize("fmt", ["dot", "json", "tfcsv"])
def test_a_file_over_the_budget_is_refused_with_its_size_before_it_is_read(tmp_path, monkeypatch, fmt) -> None:
    path = tmp_path / f"graph.{ {'tfcsv': 'csv'}.get(fmt, fmt) }"
    write_workload(fmt, build("random_pipeline", n_ops=40, seed=1), path)
    size = path.stat().st_size
    assert size > 2048
    monkeypatch.setenv(IMPORT_BUDGET_ENV, "0.001953125")  # 2 KiB

    def never(*args, **kwargs):
        raise AssertionError("the file was read")

    monkeypatch.setattr(Path, "read_text", never)
    monkeypatch.setattr(Path, "read_bytes", never)
    with pytest.raises(SpecError) as caught:
        read_workload(fmt, path)
    message = str(caught.value)
    assert f"{size} bytes" in message and "0.00195312 MiB" in message and IMPORT_BUDGET_ENV in message


def test_a_file_within_the_budget_is_read(tmp_path, monkeypatch) -> None:
    path = tmp_path / "graph.dot"
    workload = build("random_pipeline", n_ops=40, seed=1)
    write_workload("dot", workload, path)
    monkeypatch.setenv(IMPORT_BUDGET_ENV, str(path.stat().st_size / 2**20))  # exactly its size
    assert read_workload("dot", path).n_ops == workload.n_ops


@pytest.mark.parametrize("text", ["0", "-5", "nan", "inf", "lots"])
def test_a_budget_that_is_not_a_positive_number_is_refused(monkeypatch, text) -> None:
    monkeypatch.setenv(IMPORT_BUDGET_ENV, text)
    with pytest.raises(SpecError, match=IMPORT_BUDGET_ENV):
        import_budget_mib()


def test_the_default_budget(monkeypatch) -> None:
    monkeypatch.delenv(IMPORT_BUDGET_ENV, raising=False)
    assert import_budget_mib() == MAX_IMPORT_MIB
