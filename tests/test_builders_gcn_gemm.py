"""GCN and GEMM builders against hand calculations."""

from __future__ import annotations

import pytest

from dse.builders import build
from dse.errors import SpecError


def test_gcn_cora_flops_by_hand() -> None:
    w = build("gcn", dataset="cora", layers=2, hidden=16)
    ops = {op.name: op for op in w.ops}
    # layer 0 narrows 1433 -> 16: combine first (2 * 2708 * 1433 * 16), then aggregate on width 16
    assert ops["l0.combine"].flops == 2 * 2708 * 1433 * 16
    # A_hat has the 10,556 directed edges plus 2,708 self-loops: 13,264 nonzeros
    assert ops["l0.aggregate"].flops == 2 * (10556 + 2708) * 16
    # layer 1 narrows 16 -> 7: combine first again
    assert ops["l1.combine"].flops == 2 * 2708 * 16 * 7
    assert ops["l1.aggregate"].flops == 2 * 13264 * 7
    assert ops["l0.aggregate"].features["density"] == pytest.approx(13264 / 2708**2)
    assert [op.name for op in w.ops] == ["l0.combine", "l0.aggregate", "l1.combine", "l1.aggregate", "log_softmax"]


def test_gcn_widening_layer_aggregates_first() -> None:
    w = build("gcn", dataset="pubmed", layers=2, hidden=1024)  # 500 -> 1024 widens
    assert [op.name for op in w.ops][:2] == ["l0.aggregate", "l0.combine"]
    assert w.ops[0].flops == 2 * (88648 + 19717) * 500


def test_gemm_by_hand() -> None:
    w = build("gemm", m=64, n=32, k=16, precision="fp16")
    (op,) = w.ops
    assert op.flops == 2 * 64 * 32 * 16
    assert op.bytes_moved == (64 * 16 + 16 * 32 + 64 * 32) * 2
    tiled = build("gemm", m=10, n=8, k=4, tiles=3)
    assert sum(o.flops for o in tiled.ops if o.op_class == "gemm") == 2 * 10 * 8 * 4
    assert len(tiled.edges) == 3


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("nope", {}, "builder"),
        ("gcn", {"datset": "cora"}, "datset"),
        ("gcn", {"dataset": "reddit"}, "dataset"),
        ("gcn", {"layers": 0}, "layers"),
        ("gemm", {"m": -4}, "m"),
        ("gemm", {"m": "big"}, "m"),
    ],
)
def test_builder_errors_name_the_field(name, params, field) -> None:
    with pytest.raises(SpecError) as info:
        build(name, **params)
    assert info.value.field == field
