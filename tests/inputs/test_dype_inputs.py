"""Irregular workloads and their inputs: builders with hand-computed work, the dataset catalog, synthetic
matrices and the analyzer, and bad input named in one line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from dse import cli
from dse.errors import SpecError
from dse.inputs.builders import build
from dse.inputs.datasets import dataset, datasets, input_features, matrix_features, synthetic_matrix

ROOT = Path(__file__).resolve().parents[2]


def test_graphsage_layer_has_pyg_op_order_and_hand_computed_work() -> None:
    w = build("graphsage", dataset="custom", rows=100, nnz=400, width=32, classes=4, layers=1)
    assert [op.name for op in w.ops] == ["l0.aggregate", "l0.lin_neigh", "l0.lin_self", "l0.sum"]
    assert set(w.edges) == {(0, 1), (1, 3), (2, 3)}  # lin_l(mean x_j) + lin_r(x_i)
    # aggregate: 2 x nnz x width = 2 x 400 x 32; each linear: 2 x rows x out x in = 2 x 100 x 4 x 32
    assert [op.flops for op in w.ops[:3]] == [25_600.0, 25_600.0, 25_600.0]
    assert w.ops[0].op_class == "spmm" and w.ops[0].features["density"] == pytest.approx(400 / 100**2)


def test_gin_cg_and_pagerank_work_by_hand() -> None:
    gin = build("gin", dataset="custom", rows=100, nnz=400, width=32, hidden=8, classes=4, layers=1)
    # sum SpMM 2 x 400 x 32; (1 + eps) x_i + agg: 2 flops per element of 100 x 32; MLP 2x100x8x32, 2x100x4x8
    assert [op.flops for op in gin.ops] == [25_600.0, 6_400.0, 51_200.0, 6_400.0]
    cg = build("cg", dataset="custom", rows=1000, nnz=5000, iterations=1)
    assert [op.name for op in cg.ops] == ["i0.spmv", "i0.dot_pq", "i0.axpy_x", "i0.axpy_r", "i0.dot_rr", "i0.xpay_p"]
    assert cg.ops[0].flops == 10_000.0 and cg.ops[1].flops == 2_000.0
    assert cg.ops[1].bytes_moved == 2 * 1000 * 8 and cg.ops[2].bytes_moved == 3 * 1000 * 8  # fp64 vectors
    pr = build("pagerank", dataset="custom", rows=1000, nnz=5000, iterations=2)
    assert pr.n_ops == 6 and set(pr.edges) == {(0, 1), (1, 2), (3, 4), (4, 5), (1, 3)}


def test_catalog_datasets_carry_published_statistics() -> None:
    names = set(datasets())
    assert {"cora", "citeseer", "pubmed", "ogbn-arxiv", "ogbn-products", "reddit", "flickr"} <= names
    assert {"thermal2", "apache2", "ecology2"} <= names
    cora = dataset("Cora").to_input()
    # PyG Planetoid table: 2,708 nodes, 10,556 edges, 1,433 features
    assert (cora.rows, cora.nnz, cora.width) == (2708, 10556, 1433)
    assert cora.density == pytest.approx(10556 / 2708**2) and cora.row_mean == pytest.approx(3.898, abs=1e-3)
    assert dataset("reddit").nnz == 114_615_892  # PyG Reddit table
    gcn = build("gcn", dataset="flickr")  # any catalog graph feeds the GCN builder
    assert gcn.ops[1].features["density"] == pytest.approx((899_756 + 89_250) / 89_250**2)
    for text in (ROOT / "models" / "datasets").glob("*.yaml"):
        for line in text.read_text().splitlines():
            if line.strip().startswith(("rows:", "nnz:", "row_cv:")):
                assert "#" in line, line  # every figure cites its source (or says it is an estimate)


def test_synthetic_inputs_are_seeded_and_the_analyzer_reads_them() -> None:
    a = synthetic_matrix(1000, 0.01, "uniform", seed=4)
    b = synthetic_matrix(1000, 0.01, "uniform", seed=4)
    assert (a != b).nnz == 0 and a.nnz == 10_000  # exactly density x rows^2 for the uniform law
    f = matrix_features(a, width=64)
    lengths = np.diff(a.indptr)
    assert f.nnz == 10_000 and f.row_cv == pytest.approx(lengths.std() / lengths.mean())
    power = matrix_features(synthetic_matrix(1000, 0.01, "powerlaw", seed=4))
    assert power.row_cv > 3 * f.row_cv  # hub rows
    assert input_features({"synthetic": {"rows": 500, "density": 0.02, "degree": "powerlaw", "seed": 1}}) == \
        input_features({"synthetic": {"rows": 500, "density": 0.02, "degree": "powerlaw", "seed": 1}})


def test_input_errors_name_the_field() -> None:
    with pytest.raises(SpecError) as info:
        dataset("nope")
    assert info.value.field == "dataset" and "cora" in info.value.reason
    with pytest.raises(SpecError) as info:
        input_features({"synthetic": {"rows": 100, "density": -0.1}}, "s.yaml", "scenario.inputs.x")
    assert (info.value.field, info.value.value) == ("scenario.inputs.x.synthetic.density", -0.1)
    with pytest.raises(SpecError) as info:
        build("graphsage", dataset="custom", rows=10, nnz=101)
    assert info.value.field == "nnz"


def scenario_spec(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load((ROOT / "problems" / "dype_phases.yaml").read_text())
    for key, value in changes.items():
        target = data
        *parents, last = key.split(".")
        for p in parents:
            target = target[p]
        target[last] = value
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(("change", "field", "value"), [
    ({"scenario.inputs": {"sparse": {"dataset": "nope"}, "dense": {"dataset": "cora"}}},
     "scenario.inputs.sparse.dataset", "'nope'"),
    ({"scenario.inputs": {"sparse": {"synthetic": {"rows": 100, "density": -0.2}}, "dense": {"dataset": "cora"}}},
     "scenario.inputs.sparse.synthetic.density", "-0.2"),
    ({"scenario.stream": {"kind": "phases", "phases": []}}, "scenario.stream", ""),
])
def test_bad_scenarios_exit_2_with_one_line(tmp_path, capsys, change, field, value) -> None:
    path = scenario_spec(tmp_path, **change)
    assert cli.main(["simulate", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and f"'{field}'" in err and value in err


def test_calibration_from_another_machine_kind_exits_2(tmp_path, capsys) -> None:
    from dse.cost.calibration.measure import Calibration, KernelFit, MachineInfo, save_calibration

    fit = KernelFit("gemm", "cpu", "fp32", ("const", "flops"), (1e-6, 1e-11), 0.05, 10)
    save_calibration(Calibration(MachineInfo("sparc | Other CPU | 999 cores", "Other CPU", 999), (fit,), "test"),
                     tmp_path / "other.yaml")
    platform = yaml.safe_load((ROOT / "models" / "platforms" / "server_cpu_gpu_fpga.yaml").read_text())
    platform["calibration"] = "other.yaml"
    (tmp_path / "platform.yaml").write_text(yaml.safe_dump(platform))
    path = scenario_spec(tmp_path, platform=str(tmp_path / "platform.yaml"))
    assert cli.main(["simulate", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "other.yaml" in err and "'machine.kind'" in err and "sparc" in err
