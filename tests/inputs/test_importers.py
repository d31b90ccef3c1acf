"""Importers and exporters: STG, TF-paper CSV, DOT, JSON, WfFormat and the dispatchers.

Every fixture is a small hand-written file created in ``tmp_path``.
"""

from __future__ import annotations

import re
import textwrap
import warnings

import numpy as np
import pytest

from dse.cost import TableCostModel
from dse.errors import SpecError
from dse.inputs.importers import (
    read_dot,
    read_platform,
    read_stg,
    read_tf_devices,
    read_tf_graph,
    read_wfformat,
    read_workload,
    read_workload_json,
    write_dot,
    write_stg,
    write_tf_devices,
    write_tf_graph,
    write_workload,
    write_workload_json,
)
from dse.model.platform import Device, Link, Platform
from dse.model.workload import Op, Workload, chain, validate_workload


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def _summary(w: Workload):
    """What a round trip must keep: names, work, bytes, edges with their bytes."""
    return (
        [op.name for op in w.ops],
        [op.work for op in w.ops],
        [(op.output_bytes, op.resident_bytes) for op in w.ops],
        sorted(zip(w.edges, w.edge_bytes, strict=True)),
    )


# --------------------------------------------------------------------------- STG

STG_5 = """
        5
        0      0      0
        1      4      1      0
        2      3      1      0
        3      5      2      1      2
        4      2      1      1
        5      6      2      3      4
        6      0      1      5
    # Standard Task Graph Set
    #   Tasks : 5 (+dummy tasks : 2)
"""


def test_stg_parse_with_dummies(tmp_path):
    w = read_stg(_write(tmp_path, "five.stg", STG_5))
    assert w.name == "five"
    assert [op.name for op in w.ops] == ["t0", "t1", "t2", "t3", "t4", "t5", "t6"]
    assert [op.work for op in w.ops] == [0, 4, 3, 5, 2, 6, 0]
    assert all(op.op_class == "generic" and op.output_bytes == 0 for op in w.ops)
    assert w.edges == ((0, 1), (0, 2), (1, 3), (2, 3), (1, 4), (3, 5), (4, 5), (5, 6))
    assert w.edge_bytes == (0.0,) * 8
    assert w.description == "Standard Task Graph Set\n  Tasks : 5 (+dummy tasks : 2)"


def test_stg_drop_dummies(tmp_path):
    w = read_stg(_write(tmp_path, "five.stg", STG_5), keep_dummies=False)
    assert [op.name for op in w.ops] == ["t1", "t2", "t3", "t4", "t5"]
    # t1->t3, t2->t3, t1->t4, t3->t5, t4->t5 as indices into t1..t5
    assert w.edges == ((0, 2), (1, 2), (0, 3), (2, 4), (3, 4))


def test_stg_row_may_continue_on_next_line(tmp_path):
    text = """
        2
        0 0 0
        1 5 1 0
        2 7 1
          0
        3 0 2 1
          2
    """
    w = read_stg(_write(tmp_path, "wrap.stg", text))
    assert w.edges == ((0, 1), (0, 2), (1, 3), (2, 3))


def test_stg_round_trip(tmp_path):
    original = read_stg(_write(tmp_path, "five.stg", STG_5))
    (tmp_path / "out").mkdir()
    write_stg(original, tmp_path / "out" / "five.stg")
    again = read_stg(tmp_path / "out" / "five.stg")
    assert again == original  # names, work, edges, bytes and the comment lines


def test_stg_write_adds_dummies(tmp_path):
    w = chain("c", [Op("a", work=3), Op("b", work=4), Op("c", work=5)])
    path = tmp_path / "c.stg"
    write_stg(w, path)
    assert path.read_text().split()[:4] == ["3", "0", "0", "0"]  # N = 3, then the entry dummy
    with_dummies = read_stg(path)
    assert [op.work for op in with_dummies.ops] == [0, 3, 4, 5, 0]
    assert with_dummies.edges == ((0, 1), (1, 2), (2, 3), (3, 4))
    back = read_stg(path, keep_dummies=False)
    assert [op.work for op in back.ops] == [3, 4, 5]
    assert back.edges == w.edges


def test_stg_write_rejects_fractional_cost(tmp_path):
    with pytest.raises(SpecError, match="integers") as err:
        write_stg(chain("c", [Op("a", work=1.5)]), tmp_path / "x.stg")
    assert err.value.field == "ops[0].work"


@pytest.mark.parametrize(
    ("body", "line", "value", "reason"),
    [
        ("1\n0 0 0\n1 x 1 0\n2 0 1 1\n", "line 3", "x", "task cost must be an integer"),
        ("1\n0 0 0\n1 4 1 0\n2 0 1 7\n", "line 4", 7, "out of range 0..2"),
        ("one\n", "line 1", "one", "task count N must be an integer"),
        ("2\n0 0 0\n1 4 1 0\n2 0 1 1\n", "line 1", 2, "needs N + 2 = 4 task rows"),
        ("1\n0 0 0\n1 4 1 0\n2 0 1 1\n3 0 1 2\n", "line 5", "3 0 1 2", "more task rows"),
        ("1\n0 0 0\n2 4 1 0\n2 0 1 1\n", "line 3", 2, "expected 1"),
        ("1\n0 0 0\n1 4 1 0 0\n2 0 1 1\n", "line 3", "0", "extra fields"),
        ("1\n0 0 0\n1 4 1 1\n2 0 1 1\n", "line 3", 1, "itself"),
    ],
)
def test_stg_errors_name_the_line(tmp_path, body, line, value, reason):
    path = tmp_path / "bad.stg"
    path.write_text(body)
    with pytest.raises(SpecError, match=re.escape(reason)) as err:
        read_stg(path)
    assert err.value.source == str(path)
    assert err.value.field == line
    assert err.value.value == value


def test_stg_cycle_through_forward_reference(tmp_path):
    # t1 waits for t2 and t2 for t1: the forward reference on line 3 closes the cycle
    path = tmp_path / "cyc.stg"
    path.write_text("2\n0 0 0\n1 4 2 0 2\n2 3 1 1\n3 0 1 2\n")
    with pytest.raises(SpecError, match="closes a cycle") as err:
        read_stg(path)
    assert err.value.field == "line 3"


# --------------------------------------------------------------------------- TF CSV

TF_GRAPH = """
    Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations, RAM storage,Device constraint ,name
    3,,1;2,,5,30,7,NO,out
    1,2;3,,4,60,100,9,NO,a/read
    2,3,1,,10,40,0,GPU,b
    4,,,1,8,20,3,CPU,var
"""


def test_tf_graph_parse(tmp_path):
    w = read_tf_graph(_write(tmp_path, "g.csv", TF_GRAPH))
    assert [op.name for op in w.ops] == ["a/read", "b", "out", "var"]  # sorted by Id
    assert [op.work for op in w.ops] == [100, 40, 30, 20]
    assert [op.output_bytes for op in w.ops] == [60, 10, 5, 8]
    assert [op.resident_bytes for op in w.ops] == [9, 0, 7, 3]
    assert [op.device_type for op in w.ops] == [None, "gpu", None, "cpu"]
    # 1 and 4 are colocated (listed by node 1 only): one group labelled by its first member
    assert [op.colocation for op in w.ops] == ["a/read", None, None, "a/read"]
    assert w.edges == ((0, 1), (0, 2), (1, 2))
    assert w.edge_bytes == (60, 60, 10)  # the producer's tensor size


def test_tf_graph_without_optional_columns(tmp_path):
    text = """
        Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations
        0,1,,,3,681
        1,,0,,370,651
    """
    w = read_tf_graph(_write(tmp_path, "s.csv", text))
    assert [op.name for op in w.ops] == ["n0", "n1"]
    assert [op.resident_bytes for op in w.ops] == [0, 0]
    assert w.edges == ((0, 1),) and w.edge_bytes == (3,)


def test_tf_graph_one_sided_edges(tmp_path):
    # 0 lists 1 as a successor, but 1 does not list 0 as a predecessor
    text = """
        Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations
        0,1,,,3,1
        1,,,,3,1
    """
    path = _write(tmp_path, "s.csv", text)
    with pytest.warns(UserWarning, match="union"):
        w = read_tf_graph(path)
    assert w.edges == ((0, 1),)
    with pytest.raises(SpecError, match="not in the incoming column") as err:
        read_tf_graph(path, strict=True)
    assert err.value.field == "line 2"


def test_tf_graph_errors(tmp_path):
    text = """
        Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations
        0,9,,,3,1
    """
    with pytest.raises(SpecError, match="unknown Id") as err:
        read_tf_graph(_write(tmp_path, "s.csv", text))
    assert (err.value.field, err.value.value) == ("line 2", 9)
    text = """
        Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations
        0,,,,3,many
    """
    with pytest.raises(SpecError, match="#operations") as err:
        read_tf_graph(_write(tmp_path, "s.csv", text))
    assert err.value.value == "many"


def test_tf_graph_round_trip(tmp_path):
    original = read_tf_graph(_write(tmp_path, "g.csv", TF_GRAPH))
    write_tf_graph(original, tmp_path / "g2.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the writer lists every edge in both directions
        again = read_tf_graph(tmp_path / "g2.csv")
    assert _summary(again) == _summary(original)
    assert again.ops == original.ops  # device constraints and colocation groups too


TF_DEVICES = """
    Id,RAM,#operations,commnication speed,type
    0,1000,10,5;20,CPU
    1,2000,20,40,GPU
    2,3000,40,,TPU
"""


def test_tf_devices_and_link_matrix(tmp_path):
    platform = read_tf_devices(_write(tmp_path, "devs.csv", TF_DEVICES))
    assert platform.device_names == ("d0", "d1", "d2")
    assert [d.kind for d in platform.devices] == ["cpu", "gpu", "generic"]
    assert [d.speed for d in platform.devices] == [10, 20, 40]
    assert [int(d.mem_gib * 2**30) for d in platform.devices] == [1000, 2000, 3000]
    rates = {(lk.a, lk.b): lk.bandwidth_gbps for lk in platform.links}
    # row 0 lists the rates to devices 1 and 2, row 1 the rate to device 2
    assert rates == {("d0", "d1"): 5, ("d0", "d2"): 20, ("d1", "d2"): 40}
    assert all(lk.latency_us == 0 for lk in platform.links)
    assert platform.route("d2", "d0") == (20, 0, 0)


def test_tf_devices_round_trip_and_errors(tmp_path):
    platform = read_tf_devices(_write(tmp_path, "devs.csv", TF_DEVICES))
    (tmp_path / "out").mkdir()
    write_tf_devices(platform, tmp_path / "out" / "devs.csv")
    again = read_tf_devices(tmp_path / "out" / "devs.csv")
    assert again.devices == platform.devices and again.links == platform.links
    bad = TF_DEVICES.replace("0,1000,10,5;20,CPU", "0,1000,10,5,CPU")
    with pytest.raises(SpecError, match="must list 2 rates") as err:
        read_tf_devices(_write(tmp_path, "bad.csv", bad))
    assert err.value.field == "line 2"
    # a rate is in the graphs' units, not GB/s: positive and finite, with no upper bound
    fast = read_tf_devices(_write(tmp_path, "fast.csv", TF_DEVICES.replace("5;20", "1e12;2.5e+1")))
    assert [lk.bandwidth_gbps for lk in fast.links] == [1e12, 25.0, 40.0]
    for rate, why, value in (("0", "must be > 0", "0"), ("-.5", "must be > 0", "-0.5"),
                             ("1e999", "must be a number", "1e999")):
        with pytest.raises(SpecError, match=why) as err:
            read_tf_devices(_write(tmp_path, "bad.csv", TF_DEVICES.replace("5;20", f"{rate};20")))
        assert (err.value.field, err.value.value) == ("line 2", value)


def test_tf_cost_rules_by_hand(tmp_path):
    """a -> b, a -> c on the 3 devices above, via TableCostModel(send_ops=10, scale=4).

    node time = #operations / speed x 4 (rounded up):
      a (100 ops): d0 100/10*4 = 40, d1 100/20*4 = 20, d2 100/40*4 = 10
      b (40 ops):  d0 16, d1 8, d2 4
      c (80 ops, constraint GPU): only d1, 80/20*4 = 16
    an edge out of a carries a's tensor size 60: 60 / rate * 4
      d0<->d1 (rate 5) 48, d0<->d2 (20) 12, d1<->d2 (40) 6
    send time = 10 ops / speed x 4: d0 4, d1 2, d2 1
    memory of an op = RAM storage + tensor size: a 7 + 60 = 67
    """
    graph = """
        Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations, RAM storage,Device constraint ,name
        0,1;2,,,60,100,7,NO,a
        1,,0,,10,40,1,NO,b
        2,,0,,10,80,1,GPU,c
    """
    w = read_tf_graph(_write(tmp_path, "g3.csv", graph))
    p = read_tf_devices(_write(tmp_path, "devs.csv", TF_DEVICES))
    t = TableCostModel(send_ops=10, scale=4).tables(w, p)
    assert t.allowed.tolist() == [[True, True, True], [True, True, True], [False, True, False]]
    assert t.time[0].tolist() == [40, 20, 10]
    assert t.time[1].tolist() == [16, 8, 4]
    assert t.time[2, 1] == 16
    assert t.edges.tolist() == [[0, 1], [0, 2]]
    expected = np.array([[0, 48, 12], [48, 0, 6], [12, 6, 0]])
    assert t.transfer_time[0].tolist() == expected.tolist()
    assert t.transfer_time[1].tolist() == expected.tolist()
    assert t.send_time.tolist() == [4, 2, 1]
    assert t.mem[0].tolist() == [67, 67, 67]
    assert t.mem_capacity.tolist() == [1000, 2000, 3000]


# --------------------------------------------------------------------------- DOT

DOT = """
    /* a small pipeline
       with every comment style */
    digraph "my net" {
      description = "three ops";
      node [op_class=gemm, precision=fp16]   // defaults for the nodes below
      # a whole-line comment
      load [op_class=memcpy, bytes_moved=4096, output_bytes=100, shape=box, label="ignored"];
      "conv 1" [op_class=conv, flops=1e9, work=3, cost_gpu0=2.5, "cost_fpga-1"=4, feat_density=0.5];
      load -> "conv 1" -> out [bytes=64];
      load -> out;
      out [device_type=gpu; colocation=grp, resident_bytes=1.5e3]
    }
"""


def test_dot_parse(tmp_path):
    w = read_dot(_write(tmp_path, "net.dot", DOT))
    assert w.name == "my net" and w.description == "three ops"
    load, conv, out = w.ops
    assert [op.name for op in w.ops] == ["load", "conv 1", "out"]
    assert (load.op_class, load.precision, load.bytes_moved, load.output_bytes) == ("memcpy", "fp16", 4096, 100)
    assert (conv.op_class, conv.flops, conv.work) == ("conv", 1e9, 3)
    assert conv.device_costs == {"gpu0": 2.5, "fpga-1": 4}
    assert conv.features == {"density": 0.5}
    assert (out.op_class, out.device_type, out.colocation, out.resident_bytes) == ("gemm", "gpu", "grp", 1500)
    assert w.edges == ((0, 1), (1, 2), (0, 2))
    assert w.edge_bytes == (64, 64, 100)  # the chain's bytes, then load's output_bytes


def test_dot_round_trip(tmp_path):
    ops = (
        Op('odd "name" \\ with Ünïcode', op_class="spmm", flops=1.25e12, bytes_moved=3e-5,
           features={"density": 0.01, "degree_skew": 2.0}, device_costs={"cpu 0": 7.0}),
        Op("digraph", work=11, device_type="", colocation="g1", precision="int8"),
        Op("x2", resident_bytes=2**40, output_bytes=12),
    )
    original = Workload("w", ops, ((0, 1), (1, 2), (0, 2)), (1.0, 0.0, 123456789.5), description='a\n"b"')
    write_dot(original, tmp_path / "w.dot")
    again = read_dot(tmp_path / "w.dot")
    assert again == original
    assert _summary(again) == _summary(original)


def test_dot_syntax_error_names_the_line(tmp_path):
    text = "digraph g {\n  a -> b;\n  b -> [bytes=3];\n}\n"
    with pytest.raises(SpecError, match="DOT syntax error") as err:
        read_dot(_write(tmp_path, "bad.dot", text))
    assert err.value.field == "line 3"
    with pytest.raises(SpecError, match="must be a number") as err:
        read_dot(_write(tmp_path, "bad.dot", "digraph g {\n a [work=lots]\n}"))
    assert err.value.field == "line 2"
    with pytest.raises(SpecError, match="undirected"):
        read_dot(_write(tmp_path, "bad.dot", "graph g { a -- b }"))


def test_dot_cycle_is_rejected_by_validate_workload(tmp_path):
    with pytest.raises(SpecError, match="cycle") as err:
        read_dot(_write(tmp_path, "cyc.dot", "digraph g { a -> b -> c -> a }"))
    assert err.value.field == "edges"
    assert err.value.source == str(tmp_path / "cyc.dot")


# --------------------------------------------------------------------------- JSON


def test_json_round_trip_is_lossless(tmp_path):
    ops = (
        Op("a", op_class="gemm", flops=2e9, bytes_moved=1e6, resident_bytes=5e5, output_bytes=4096,
           precision="bf16", features={"density": 0.3}, work=7.5, device_costs={"g": 1.0},
           device_type="gpu", colocation="k"),
        Op("b"),
        Op("c", output_bytes=1.0),
    )
    original = Workload("j", ops, ((0, 1), (0, 2), (1, 2)), (4096.0, 17.0, 0.0), description="json")
    write_workload_json(original, tmp_path / "j.json")
    assert read_workload_json(tmp_path / "j.json") == original


def test_json_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "ops": [{"name": "a"},]}')
    with pytest.raises(SpecError, match="JSON syntax error") as err:
        read_workload_json(bad)
    assert err.value.field.startswith("line 1")
    bad.write_text('{"name": "x", "ops": [{"name": "a", "wrk": 3}]}')
    with pytest.raises(SpecError) as err:
        read_workload_json(bad)
    assert err.value.field == "ops[0].wrk"
    bad.write_text('{"name": "x", "ops": [{"name": "a"}], "edges": [{"src": "a", "dst": "z"}]}')
    with pytest.raises(SpecError, match="unknown op name") as err:
        read_workload_json(bad)
    assert (err.value.field, err.value.value) == ("edges[0].dst", "z")


# --------------------------------------------------------------------------- WfFormat (WfCommons)

#: Five tasks: ``split`` writes a.dat and b.dat; ``left`` reads a.dat (and raw.dat, which no task writes);
#: ``right`` reads b.dat and a.dat; ``merge`` reads l.dat and r.dat, and names ``left`` as a parent twice
#: while ``right`` names ``merge`` only among its children; ``audit`` follows ``split`` but reads none of
#: its files; ``merge``'s runtime comes before the others in ``execution``. Unknown keys (``machines``,
#: ``coreCount``, ``metrics``) are ignored.
WFFORMAT = """
    {"name": "fork-join", "schemaVersion": "1.5", "description": "hand-written",
     "workflow": {
      "specification": {
       "tasks": [
        {"name": "split", "id": "split", "parents": [], "children": ["left", "right"],
         "inputFiles": ["raw.dat"], "outputFiles": ["a.dat", "b.dat"]},
        {"name": "work", "id": "left", "parents": ["split"], "children": ["merge"],
         "inputFiles": ["a.dat", "raw.dat"], "outputFiles": ["l.dat"]},
        {"name": "work", "id": "right", "parents": ["split"], "children": ["merge"],
         "inputFiles": ["b.dat", "a.dat"], "outputFiles": ["r.dat"]},
        {"name": "merge", "id": "merge", "parents": ["left", "left"], "children": [],
         "inputFiles": ["l.dat", "r.dat"], "outputFiles": []},
        {"name": "audit", "id": "audit", "parents": ["split"], "children": []}
       ],
       "files": [{"id": "raw.dat", "sizeInBytes": 1000}, {"id": "a.dat", "sizeInBytes": 40},
                 {"id": "b.dat", "sizeInBytes": 60}, {"id": "l.dat", "sizeInBytes": 3},
                 {"id": "r.dat", "sizeInBytes": 5}],
       "metrics": {"numTasks": 5}
      },
      "execution": {"makespanInSeconds": 0, "executedAt": "2024-01-01T00:00:00Z",
       "machines": [{"nodeName": "n1"}],
       "tasks": [{"id": "merge", "runtimeInSeconds": 12}, {"id": "split", "runtimeInSeconds": 10.5, "coreCount": 4},
                 {"id": "left", "runtimeInSeconds": 20}, {"id": "right", "runtimeInSeconds": 15},
                 {"id": "audit", "runtimeInSeconds": 0}]}
     }}
"""


def test_wfformat_tasks_runtimes_and_file_bytes_by_hand(tmp_path):
    path = _write(tmp_path, "fork.json", WFFORMAT)
    w = read_wfformat(path)
    assert (w.name, w.description) == ("fork-join", "hand-written")
    assert [(op.name, op.work) for op in w.ops] == [("split", 10.5), ("left", 20.0), ("right", 15.0),
                                                    ("merge", 12.0), ("audit", 0.0)]
    # by hand: split -> left carries a.dat (40; raw.dat comes from outside); split -> right a.dat + b.dat
    # (40 + 60); left -> merge l.dat (3, named twice, one edge); right -> merge r.dat (5, from right's
    # children alone); split -> audit shares no file (0)
    assert dict(zip(w.edges, w.edge_bytes, strict=True)) == {(0, 1): 40.0, (0, 2): 100.0, (1, 3): 3.0,
                                                               (2, 3): 5.0, (0, 4): 0.0}
    assert read_workload("auto", path) == w  # a .json file that is WfFormat, read by its content
    assert read_workload("wfcommons", path) == w
    # on two devices of speeds 1 and 2 (the table cost model: runtime / speed, bytes / rate)
    tables = TableCostModel().tables(w, _two_speeds())
    assert tables.time[:, 0].tolist() == [11, 20, 15, 12, 0] and tables.time[:, 1].tolist() == [6, 10, 8, 6, 0]


def _two_speeds() -> Platform:
    devices = tuple(Device(f"d{j}", "generic", {}, 1.0, 1.0, 0.0, 1.0, speed=float(j + 1)) for j in range(2))
    return Platform("two", devices, (Link("d0", "d1", 4.0, 0.0),))


@pytest.mark.parametrize(("edit", "field", "value", "reason"), [
    (('"schemaVersion": "1.5"', '"schemaVersion": "1.4"'), "schemaVersion", "1.4", "1.5 and later"),
    (('{"id": "audit", "runtimeInSeconds": 0}', '{"id": "ghost", "runtimeInSeconds": 0}'),
     "workflow.execution.tasks[4].id", "ghost", "no task of the specification"),
    (('{"id": "merge", "runtimeInSeconds": 12}, ', ''), "workflow.specification.tasks[3]", "merge",
     "no runtimeInSeconds"),
    (('"parents": ["left", "left"]', '"parents": ["left", "lft"]'), "workflow.specification.tasks[3].parents[1]",
     "lft", "unknown task id"),
    (('"inputFiles": ["l.dat", "r.dat"]', '"inputFiles": ["l.dat", "x.dat"]'),
     "workflow.specification.tasks[3].inputFiles[1]", "x.dat", "not declared"),
    (('"runtimeInSeconds": 20', '"runtimeInSeconds": -2'), "workflow.execution.tasks[2].runtimeInSeconds", -2,
     "greater than or equal"),
])
def test_wfformat_errors_name_the_field(tmp_path, edit, field, value, reason):
    path = _write(tmp_path, "bad.json", WFFORMAT.replace(*edit))
    with pytest.raises(SpecError, match=reason) as err:
        read_wfformat(path)
    assert (err.value.source, err.value.field, err.value.value) == (str(path), field, value)


# --------------------------------------------------------------------------- dispatch


def test_read_workload_dispatch(tmp_path):
    stg = _write(tmp_path, "five.stg", STG_5)
    assert read_workload("stg", stg, keep_dummies=False).n_ops == 5
    assert read_workload("auto", stg).n_ops == 7
    yaml_path = _write(tmp_path, "w.yaml", """
        name: y
        ops:
          - {name: a, work: 2}
          - {name: b, work: 3, inputs: [a]}
    """)
    w = read_workload("yaml", yaml_path)
    for fmt, suffix in (("json", ".json"), ("dot", ".dot"), ("tfcsv", ".csv")):
        out = tmp_path / f"w{suffix}"
        write_workload(fmt, w, out)
        again = read_workload(fmt, out)
        validate_workload(again)
        assert [op.name for op in again.ops] == ["a", "b"] and again.edges == ((0, 1),)


def test_dispatch_errors_name_the_path(tmp_path):
    with pytest.raises(SpecError, match="unknown workload format") as err:
        read_workload("xml", tmp_path / "a.xml")
    assert err.value.source == str(tmp_path / "a.xml")
    with pytest.raises(SpecError, match="file not found") as err:
        read_workload("dot", tmp_path / "missing.dot")
    assert err.value.source == str(tmp_path / "missing.dot")
    with pytest.raises(SpecError, match="unknown platform format"):
        read_platform("stg", tmp_path / "a.stg")
    with pytest.raises(SpecError, match="file not found"):
        read_platform("tfcsv", tmp_path / "missing.csv")
    stg = _write(tmp_path, "five.stg", STG_5)
    with pytest.raises(SpecError, match="unknown option") as err:
        read_workload("stg", stg, strict=True)
    assert err.value.field == "options.strict"


def test_read_platform_dispatch(tmp_path):
    devs = _write(tmp_path, "devs.csv", TF_DEVICES)
    assert read_platform("tfcsv", devs).device_names == ("d0", "d1", "d2")
    yaml_path = _write(tmp_path, "p.yaml", """
        name: p
        devices:
          - {name: c, kind: cpu, mem_bw_gbps: 50, mem_gib: 16, idle_w: 5, active_w: 50, speed: 10}
    """)
    assert read_platform("yaml", yaml_path).device_names == ("c",)


def test_json_accepts_yaml_style_inputs(tmp_path):
    path = tmp_path / "in.json"
    path.write_text('{"name": "x", "ops": [{"name": "a", "output_bytes": 8}, {"name": "b", "inputs": ["a"]}]}')
    w = read_workload_json(path)
    assert w.edges == ((0, 1),) and w.edge_bytes == (8.0,)
