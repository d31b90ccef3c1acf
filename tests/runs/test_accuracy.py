"""``dse accuracy``: published measurements through the solvers' cost path, the fixed split, the sources."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import time
from pathlib import Path

import pytest

from dse.cost import RooflineCostModel
from dse.errors import SpecError
from dse.model.device_defaults import catalog_defaults
from dse.model.platform import Platform
from dse.model.workload import OP_CLASSES
from dse.runs import accuracy as acc
from tests.cli.test_cli import run

ROOT = Path(__file__).resolve().parents[2]

HAND_FILE = """
family: hand
devices:
  - id: toy-gpu
    class: gpu
    platform: {kind: gpu, peak_tflops: {fp16: 100}, mem_bw_gbps: 1000, mem_gib: 16, idle_w: 10, active_w: 110,
               mechanisms: none}
    sources: {all: "a made-up device for a hand calculation"}
measurements:
  - id: %s
    source: "hand calculation"
    device: toy-gpu
    workload: {builder: gemm, params: {m: 1024, n: 1024, k: 1024, precision: fp16}}
    metric: %s
    value: 1.0
    split: %s
"""


def _hand_file(folder: Path, metric: str, identifier: str = "hand-gemm") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hand.yaml"
    path.write_text(HAND_FILE % (identifier, metric, acc.split_of(identifier)))
    return folder


def test_hand_checked_gemm_row(tmp_path) -> None:
    """A 1024^3 FP16 GEMM on a GPU of 100 TFLOP/s and 1000 GB/s, by the roofline formula:
    flops 2 * 1024^3 = 2,147,483,648 at 0.75 of peak (COMPUTE_EFFICIENCY gemm/gpu) = 75e12 FLOP/s:
    28,633.1 ns; bytes (3 * 1024^2 elements * 2) = 6,291,456 at 0.85 * 1000 GB/s = 850e9 B/s: 7,401.7 ns;
    max = 28,633.1 ns, + 5,000 ns launch (LAUNCH_OVERHEAD_S gpu) = 33,633.1 ns, rounded up to 33,634 ns.
    Energy: (110 - 10) W * 33,634 ns = 3,363,400,000 pJ dynamic + 10 W idle over the 33,634 ns period
    = 336,340,000 pJ: 3.69974e-3 J; power = that / 33,634 ns = 110 W."""
    latency = acc.accuracy(_hand_file(tmp_path / "a", "latency_s")).rows[0]
    assert latency.predicted == pytest.approx(33_634e-9, rel=1e-12)
    energy = acc.accuracy(_hand_file(tmp_path / "b", "energy_j_per_item")).rows[0]
    assert energy.predicted == pytest.approx(3.69974e-3, rel=1e-12)
    power = acc.accuracy(_hand_file(tmp_path / "c", "power_w")).rows[0]
    assert power.predicted == pytest.approx(110.0, rel=1e-12)
    throughput = acc.accuracy(_hand_file(tmp_path / "d", "throughput_per_s")).rows[0]
    assert throughput.predicted == pytest.approx(1 / 33_634e-9, rel=1e-12)
    assert latency.error == pytest.approx(1 - 33_634e-9)


def test_split_is_fixed_disjoint_and_a_third_held_out() -> None:
    rows = acc.load_measurements()
    ids = [m.id for m in rows]
    assert len(ids) == len(set(ids)) >= 40
    fit = {m.id for m in rows if m.split == "fit"}
    held = {m.id for m in rows if m.split == "holdout"}
    assert fit.isdisjoint(held) and fit | held == set(ids)
    assert len(held) * 3 >= len(ids)
    for m in rows:  # the written split is the seeded rule of the id, recomputed here from its definition
        digest = int(hashlib.sha256(f"28:{m.id}".encode()).hexdigest(), 16)
        assert m.split == ("holdout" if digest % 5 < 2 else "fit"), m.id


def test_every_row_and_device_cites_a_source() -> None:
    rows = acc.load_measurements()
    for m in rows:
        assert m.source.strip(), m.id
        assert m.device.sources and all(v.strip() for v in m.device.sources.values()), m.device.id
    energy_or_power = [m for m in rows if m.metric in ("power_w", "energy_j_per_item")]
    assert len(energy_or_power) >= 8
    assert {m.device.device_class for m in rows} >= {"gpu", "edge", "pe_array"}


def test_a_row_whose_split_breaks_the_rule_is_refused(tmp_path) -> None:
    folder = _hand_file(tmp_path, "latency_s")
    path = folder / "hand.yaml"
    wrong = "fit" if acc.split_of("hand-gemm") == "holdout" else "holdout"
    path.write_text(re.sub(r"split: \w+", f"split: {wrong}", path.read_text()))
    with pytest.raises(SpecError, match=r"measurements\[0\]\.split"):
        acc.load_measurements(folder)


def _names_in_measurements() -> set[str]:
    """Measurement and device ids, families, builders' workload and network names of every file."""
    names: set[str] = set()
    for m in acc.load_measurements():
        names |= {m.id, m.device.id, m.family}
        if m.network:
            names.add(m.network)
        if m.builder not in (None, *OP_CLASSES):  # "gemm", "spmm": also op classes the cost model is keyed by
            names.add(m.builder)
    names |= {"resnet", "mobilenet", "bert", "alexnet", "vgg", "mlperf", "llmcompass", "eyeriss",
              "a100", "mi210", "orin", "xavier", "a10g", "pyg", "deepcube"}
    return names


def test_no_workload_model_or_measurement_name_in_the_cost_code() -> None:
    files = sorted(ROOT.glob("dse/cost/**/*.py"))  # the whole cost layer, calibration included
    assert ROOT / "dse" / "cost" / "mechanisms" / "fusion.py" in files
    names = _names_in_measurements()
    for path in files:
        text = path.read_text().lower()
        found = sorted(n for n in names  # whole words: "gin" is a builder, "emerging" is not a use of it
                       if re.search(rf"(?<![a-z0-9_]){re.escape(n.lower())}(?![a-z0-9_])", text))
        assert not found, f"{path.name} names {found}"


def test_command_prints_groups_and_writes_outputs(tmp_path, capsys) -> None:
    start = time.perf_counter()
    code, out, err = run(capsys, "accuracy", "--out", str(tmp_path))
    assert code == 0, err
    assert time.perf_counter() - start < 60
    assert "holdout  all" in out and "fit      all" in out
    assert "mlperf-v1.0-a100-pcie-40gb-resnet50-singlestream" in out
    frame = __import__("pandas").read_csv(tmp_path / "accuracy.csv")
    assert len(frame) == len(acc.load_measurements())
    assert set(frame["split"]) == {"fit", "holdout"}
    assert (tmp_path / "accuracy.png").stat().st_size > 10_000


def test_command_names_a_missing_folder(tmp_path, capsys) -> None:
    code, _, err = run(capsys, "accuracy", "--measurements", str(tmp_path / "none"))
    assert code == 2
    assert "--measurements" in err and len(err.strip().splitlines()) == 1


# --------------------------------------------------------------------------- cost mechanisms


def _gpu(**declared):
    from dse.model.platform import Device

    return Device("g", "gpu", {"fp16": 100.0}, 1000.0, 16.0, 10.0, 110.0, **declared)


def test_mechanism_defaults_leave_the_roofline_unchanged() -> None:
    """Without declarations the per-op parts are the kind's: 1024^3 GEMM (see the hand row above)
    28,633.1 ns compute, 7,401.7 ns memory, 5,000 ns launch."""
    from dse.cost import RooflineCostModel
    from dse.inputs.builders.gemm import gemm_op

    compute, memory, launch = RooflineCostModel().op_time_parts(gemm_op("g", 1024, 1024, 1024, "fp16"), _gpu())
    assert (compute, memory, launch) == pytest.approx((28_633.115e-9, 7_401.7e-9, 5e-6), rel=1e-5)


def test_declared_efficiency_and_launch_overhead() -> None:
    """Declared gemm efficiency 0.5: 2,147,483,648 FLOP / 50e12 = 42,949.7 ns; launch 21 us declared."""
    from dse.cost import RooflineCostModel
    from dse.inputs.builders.gemm import gemm_op

    parts = RooflineCostModel().op_time_parts(gemm_op("g", 1024, 1024, 1024, "fp16"),
                                              _gpu(compute_efficiency={"gemm": 0.5}, launch_overhead_us=21.0))
    assert parts == pytest.approx((42_949.67e-9, 7_401.7e-9, 21e-6), rel=1e-5)


def test_launch_overhead_is_charged_per_kernel_an_op_stands_for() -> None:
    """An op of ``features["kernels"] = 7`` (PyG's scatter-mean) pays 7 launches: 7 x 21 us declared,
    7 x 5 us (the gpu kind's default) without a declaration; an op without the feature pays one."""
    from dse.cost import RooflineCostModel
    from dse.model.workload import Op

    op = Op("s", "embedding", bytes_moved=1000.0, features={"kernels": 7.0})
    assert RooflineCostModel().op_time_parts(op, _gpu(launch_overhead_us=21.0))[2] == pytest.approx(147e-6)
    assert RooflineCostModel().op_time_parts(op, _gpu())[2] == pytest.approx(35e-6)
    assert RooflineCostModel().op_time_parts(Op("e", "embedding", bytes_moved=1000.0), _gpu())[2] == pytest.approx(5e-6)


def test_fusion_and_call_overhead_in_the_tables() -> None:
    """A chain GEMM -> elementwise on a device that fuses elementwise ops and declares 100 us per call:
    the GEMM (entry op) pays 5 us launch + 100 us call; the fused op pays only its arithmetic,
    4 FLOP/element * 1024^2 elements = 4,194,304 FLOP at 0.30 * 100e12 = 139.8 ns -> 140 ns."""
    from dse.cost import RooflineCostModel
    from dse.inputs.builders.gemm import gemm_op
    from dse.model.platform import Platform
    from dse.model.workload import Op, chain

    add = Op("add", "elementwise", flops=4.0 * 1024**2, bytes_moved=3 * 2.0 * 1024**2,
             output_bytes=2.0 * 1024**2, precision="fp16")
    workload = chain("w", [gemm_op("g", 1024, 1024, 1024, "fp16"), add])
    plain = RooflineCostModel().tables(workload, Platform("p", (_gpu(),)))
    tuned = RooflineCostModel().tables(workload, Platform("p", (_gpu(fused_op_classes=("elementwise",),
                                                                     call_overhead_us=100.0),)))
    assert int(tuned.time[0, 0]) == int(plain.time[0, 0]) + 100_000
    assert int(tuned.time[1, 0]) == 140
    assert int(plain.time[1, 0]) > 5_000  # unfused: a memory pass and a launch of its own


def test_fit_reads_only_the_fit_part() -> None:
    from dse.runs.accuracy_fit import fit_efficiency, fit_rows

    rows = acc.load_measurements()
    fitted = fit_efficiency(rows, "gpu", "gemm")
    # The committed value is fitted on the devices cut back to their data sheets: test_class_defaults.py.
    assert fitted is not None
    assert all(m.split == "fit" for m in fit_rows(rows, "gpu", "gemm"))
    import dataclasses

    scrambled = [dataclasses.replace(m, value=m.value * 7) if m.split == "holdout" else m for m in rows]
    assert fit_efficiency(scrambled, "gpu", "gemm") == fitted


def test_a_calibration_still_replaces_the_analytic_figures_of_a_declaring_device() -> None:
    """tests/cost/test_calibrate.py's hand calibration times a 1000^3 fp32 GEMM on the cpu at
    1e-5 + 1e-11 * 2e9 + 2e-10 * 4e6 + 3e-10 * 4e6 = 0.02201 s = 22,010,000 ns, whatever the device
    declares (efficiency, launch and call overheads are analytic mechanisms)."""
    from dse.cost import RooflineCostModel
    from dse.inputs.builders.gemm import gemm
    from dse.model.platform import Device, Platform
    from tests.cost.test_calibrate import _calibration

    cpu = Device("cpu", "cpu", {"fp32": 1.0}, 100.0, 64.0, 10.0, 100.0, launch_overhead_us=50.0,
                 call_overhead_us=1000.0, compute_efficiency={"gemm": 0.1})
    tables = RooflineCostModel(calibration=_calibration()).tables(gemm(1000, 1000, 1000, "fp32"), Platform("p", (cpu,)))
    assert int(tables.time[0, 0]) == 22_010_000


def _sparse_gpu(**declared):
    from dse.model.platform import Device

    return Device("s", "gpu", {"fp64": 10.0}, 1000.0, 16.0, 0.0, 100.0, **declared)


def test_sparse_gathers_are_counted_once_when_the_input_fits_the_cache() -> None:
    """An SpMV of 1,000 rows and 5,000 nonzeros in fp64 (rows' CV 0): CSR 5,000 x 12 + 1,001 x 4 = 64,004 B,
    gathers 5,000 x 8 = 40,000 B, output 8,000 B: 112,004 B. Declared sparse bandwidth 0.5 of 1,000 GB/s.
    Without a cache the gathers use a quarter of each 32-byte sector (8 / 32): 112,004 / (1000e9 x 0.5 x
    0.25) = 896.032 ns. With 1 MiB of cache the 8,000-byte input is read once and gathered from the cache:
    112,004 - 40,000 + 8,000 = 80,004 B at the full 0.5: 160.008 ns."""
    from dse.cost import RooflineCostModel
    from dse.inputs.builders import build

    op = build("spmm", dataset="custom", rows=1000, nnz=5000, row_cv=0.0, width=1, precision="fp64").ops[0]
    model = RooflineCostModel()
    plain = model.op_time_parts(op, _sparse_gpu(sparse_bandwidth_efficiency=0.5))
    reused = model.op_time_parts(op, _sparse_gpu(sparse_bandwidth_efficiency=0.5, cache_mib=1.0))
    assert plain is not None and reused is not None
    assert plain[1] == pytest.approx(896.032e-9, rel=1e-9)
    assert reused[1] == pytest.approx(160.008e-9, rel=1e-9)
    small = model.op_time_parts(op, _sparse_gpu(sparse_bandwidth_efficiency=0.5, cache_mib=0.005))
    assert small is not None and small[1] == pytest.approx(plain[1])  # 5,243 bytes of cache: no reuse


def test_row_skew_slows_sparse_products_by_the_declared_sensitivity() -> None:
    """Row CV 2 with a declared sensitivity 0.5: rates divided by 1 + 0.5 x 2 = 2 (memory 2 x 160.008 ns)."""
    from dse.cost import RooflineCostModel
    from dse.inputs.builders import build

    op = build("spmm", dataset="custom", rows=1000, nnz=5000, row_cv=2.0, width=1, precision="fp64").ops[0]
    parts = RooflineCostModel().op_time_parts(op, _sparse_gpu(sparse_bandwidth_efficiency=0.5, cache_mib=1.0,
                                                              skew_sensitivity=0.5))
    assert parts is not None and parts[1] == pytest.approx(320.016e-9, rel=1e-9)


def test_sparse_fit_reads_only_the_fit_part_and_matches_the_declared_values() -> None:
    import dataclasses

    from dse.runs.accuracy_fit import fit_sparse, sparse_fit_rows

    rows = acc.load_measurements()
    assert sparse_fit_rows(rows, "gpu") and all(m.split == "fit" for m in sparse_fit_rows(rows, "gpu"))
    scrambled = [dataclasses.replace(m, value=m.value * 7) if m.split == "holdout" else m for m in rows]
    fitted = fit_sparse(scrambled, "gpu")
    gpus = [m.device.device for m in rows if m.device.device_class == "gpu"]
    assert {(d.sparse_bandwidth_efficiency, d.skew_sensitivity) for d in gpus} == {fitted}


def test_tile_and_wave_quantization_by_hand() -> None:
    """A GPU of 4 compute units with 64 x 64 output tiles, fp16 at 100 TFLOP/s x 0.75 (gemm default).
    64 x 128 output: 2 tiles on 4 units, one wave half full: 2 x 64 x 128 x 1024 = 16,777,216 FLOP at
    0.5 x 75e12 = 447.39 ns. 320 x 64 output: 5 tiles, 2 waves of 4: 5 / 8 busy. 128 x 128: 4 tiles,
    one full wave: unchanged. Without compute_units the tiles are not counted. Split-K off (it would split
    the two-tile case: tests/cost/test_split_k.py)."""
    from dse.cost import RooflineCostModel
    from dse.inputs.builders.gemm import gemm_op

    model = RooflineCostModel(split_k=())
    tiled = _gpu(compute_units=4, gemm_tile=64)
    half = model.op_time_parts(gemm_op("g", 64, 128, 1024, "fp16"), tiled)
    assert half is not None and half[0] == pytest.approx(447.392e-9, rel=1e-5)
    five = model.op_time_parts(gemm_op("g", 320, 64, 1024, "fp16"), tiled)
    assert five is not None and five[0] == pytest.approx(2 * 320 * 64 * 1024 / (75e12 * 5 / 8), rel=1e-9)
    full = model.op_time_parts(gemm_op("g", 128, 128, 1024, "fp16"), tiled)
    plain = model.op_time_parts(gemm_op("g", 128, 128, 1024, "fp16"), _gpu(gemm_tile=64))
    assert full is not None and plain is not None and full[0] == pytest.approx(plain[0])


def test_tile_fit_reads_only_the_fit_part_and_matches_the_declared_value() -> None:
    """The class fit (dse.runs.accuracy_fit.fit_class_defaults) fits the tile on the devices cut back to
    their data sheets and stops when no value moves: the tile fit on those rows gives the committed class
    tile, which every gpu-class measurement device with a unit count uses, whatever the held-out values.
    The LLM runtime's devices are left out of the class fit (their runtime is fitted after it)."""
    import dataclasses

    from dse.runs.accuracy_fit import fit_gemm_tile, tile_fit_rows

    rows = acc.load_measurements()
    assert tile_fit_rows(rows, "gpu") and all(m.split == "fit" for m in tile_fit_rows(rows, "gpu"))
    scrambled = [dataclasses.replace(m, value=m.value * 7) if m.split == "holdout" else m for m in rows]
    declared = {m.device.device.gemm_tile for m in rows
                if m.device.device_class == "gpu" and m.device.device.compute_units > 0}
    assert declared == {catalog_defaults().classes["gpu"].values["gemm_tile"]}
    # the class fit reads no row of an LLM runtime's devices (class_fit_part); the held-out rows stay in,
    # scrambled, and change nothing
    without_llm = [m for m in scrambled if not m.device.runtime_declared]
    assert declared == {fit_gemm_tile(acc.datasheet_rows(without_llm), "gpu")}


def test_network_fit_reads_only_the_fit_part_and_matches_the_declared_value() -> None:
    import dataclasses

    from dse.runs.accuracy_fit import fit_network_efficiency, network_fit_rows

    rows = acc.load_measurements()
    chosen = network_fit_rows(rows, "cpu", "conv")
    assert chosen and all(m.split == "fit" and m.builder == "resnet50" for m in chosen)
    scrambled = [dataclasses.replace(m, value=m.value * 7) if m.split == "holdout" else m for m in rows]
    fitted = fit_network_efficiency(scrambled, "cpu", "conv")
    declared = {m.device.device.compute_efficiency.get("conv") for m in rows if m.device.device_class == "cpu"}
    assert declared == {fitted}
    # The fit part holds no cpu BERT row today: no GEMM efficiency can be fitted for the class.
    assert network_fit_rows(rows, "cpu", "gemm") == [] and fit_network_efficiency(rows, "cpu", "gemm") is None


def test_network_fit_recovers_a_planted_efficiency() -> None:
    import dataclasses

    from dse.runs.accuracy_fit import _with_efficiency, fit_network_efficiency

    rows = acc.load_measurements()
    row = next(m for m in rows if m.split == "fit" and m.builder == "resnet50" and m.device.device_class == "cpu")
    # A measured value made by the model itself at conv efficiency 0.61: the fit must find 0.61 again.
    planted = dataclasses.replace(row, value=acc.predict(_with_efficiency(row, "conv", 0.61)))
    assert fit_network_efficiency([planted], "cpu", "conv") == pytest.approx(0.61)


def test_the_device_column_alone_gives_what_the_full_tables_give() -> None:
    """The fits' path (the device's column alone, ops alike but for their names costed once) against the
    full cost tables (an independent assembly of the same cells, with the transfers and the checks of
    every platform): the same period, latency and energy to the last bit on the first row of every
    builder (BERT's alike layers, ResNet's blocks, sparse products, a single GEMM), as declared and with a
    per-call overhead, under the default model and one without split-K or launch overhead; and the same
    error for an idle power past int64."""
    firsts: dict[str, acc.Measurement] = {}
    for m in acc.load_measurements():
        if m.device.device is not None:
            firsts.setdefault(m.builder or "", m)
    assert {"gemm", "bert_base", "resnet50", "spmm", "graphsage"} <= set(firsts)
    # a per-call overhead is shared by the entry ops (GraphSAGE has two): alike ops of other shares differ
    called = [dataclasses.replace(m, device=dataclasses.replace(
        m.device, device=dataclasses.replace(m.device.device, call_overhead_us=30.0))) for m in firsts.values()]
    for model in (RooflineCostModel(), RooflineCostModel(split_k=(), launch_overhead=False)):
        for m in [*firsts.values(), *called]:
            tables = model.tables(acc._workload(m.builder or "", tuple(sorted(m.params.items()))),
                                  Platform(m.device.id, (m.device.device,)))
            assert acc._platform_figures(m, model) == acc._table_figures(m, tables), m.id
    m = firsts["gemm"]
    hot = dataclasses.replace(m, device=dataclasses.replace(
        m.device, device=dataclasses.replace(m.device.device, idle_w=1e30)))
    with pytest.raises(SpecError) as fast:
        acc._platform_figures(hot, None)
    with pytest.raises(SpecError) as full:
        RooflineCostModel().tables(acc._workload("gemm", tuple(sorted(m.params.items()))),
                                   Platform(m.device.id, (hot.device.device,)))
    assert "idle_power" in str(fast.value) and str(fast.value) == str(full.value)
