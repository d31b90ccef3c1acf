"""The mapping layer asks the cost tables whether a transfer table was given explicitly through their public
accessor (:meth:`~dse.cost.CostTables.transfer_is_explicit`); only :mod:`dse.cost.tables` touches their
private slots."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from dse.cost import CostTables

PACKAGE = Path(__file__).resolve().parents[2] / "dse"
TABLES_MODULE = PACKAGE / "cost" / "tables.py"


def two_task_tables(**transfers: np.ndarray) -> CostTables:
    """One edge a -> b on two devices; transfers from the per-pair rates unless given in ``transfers``."""
    return CostTables(
        op_names=("a", "b"), device_names=("cpu", "gpu"), time=np.array([[3, 1], [4, 2]], dtype=np.int64),
        energy=np.ones((2, 2), dtype=np.int64), mem=np.zeros((2, 2), dtype=np.int64),
        allowed=np.ones((2, 2), dtype=bool), edges=np.array([[0, 1]], dtype=np.int64),
        edge_bytes=np.array([8], dtype=np.int64), idle_power_mw=np.zeros(2, dtype=np.int64),
        mem_capacity=np.full(2, 100, dtype=np.int64), link_time_per_byte=np.array([[0.0, 0.5], [0.5, 0.0]]),
        **transfers)


def test_no_module_but_the_tables_reads_an_instance_dict() -> None:
    reads = re.compile(r"__dict__\s*(\[|\.get\()")
    found = [f"{path.relative_to(PACKAGE.parent)}:{k + 1}" for path in sorted(PACKAGE.rglob("*.py"))
             if path != TABLES_MODULE
             for k, line in enumerate(path.read_text().splitlines()) if reads.search(line)]
    assert found == []


def test_explicit_tables_are_told_apart_from_tables_computed_from_rates() -> None:
    rates = two_task_tables()
    assert not rates.transfer_is_explicit("transfer_time")
    assert not rates.transfer_is_explicit("transfer_energy")
    # reading the computed table (8 bytes at 0.5 per byte: 4 across, 0 on one device) leaves it computed
    assert rates.transfer_time[0].tolist() == [[0, 4], [4, 0]]
    assert not rates.transfer_is_explicit()
    explicit = two_task_tables(transfer_time=np.array([[[0, 7], [7, 0]]], dtype=np.int64))
    assert explicit.transfer_is_explicit() and explicit.transfer_is_explicit("transfer_time")
    assert not explicit.transfer_is_explicit("transfer_energy")
    # a copy keeps what was given and what was not
    copy = explicit.replaced(idle_power_mw=np.ones(2, dtype=np.int64))
    assert copy.transfer_is_explicit("transfer_time") and not copy.transfer_is_explicit("transfer_energy")


def test_an_unknown_transfer_table_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'transfer_bytes'"):
        two_task_tables().transfer_is_explicit("transfer_bytes")
