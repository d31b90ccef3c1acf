"""The ONNX importer: a tiny model built with onnx.helper gives the layer table the MAESTRO importer reads
from the equivalent ``.m`` text; unsupported operators are named in the error."""

from __future__ import annotations

import numpy as np
import pytest

from dse.errors import SpecError
from dse.inputs.importers.maestro import parse_maestro_network

onnx = pytest.importorskip("onnx", reason="the optional onnx extra is not installed (pip install '.[onnx]'); "
                           "the MAESTRO importer is tested without it (test_maestro_import.py)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from dse.inputs.importers.onnx_layers import model_from_onnx, read_onnx_model  # noqa: E402


def weight(name: str, *shape: int) -> object:
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def tiny_model(extra: list | None = None) -> object:
    """x [1, 3, 16, 16] -> conv 8x3x3x3 (pad 1) -> relu -> depthwise 3x3 (group 8, pad 1) -> global pool ->
    flatten [1, 8] -> Gemm with W [10, 8] (transB) -> MatMul with [10, 4] -> y [1, 4]."""
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="dw2", pads=[1, 1, 1, 1], group=8),
        helper.make_node("GlobalAveragePool", ["c2"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "w3"], ["g"], name="fc", transB=1),
        helper.make_node("MatMul", ["g", "w4"], ["y"], name="head"),
        *(extra or []),
    ]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [weight("w1", 8, 3, 3, 3), weight("w2", 8, 1, 3, 3), weight("w3", 10, 8), weight("w4", 10, 4)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


# The same network written by hand as MAESTRO text: conv 16x16 output (pad 1 keeps the size); depthwise with
# MAESTRO's K = 1 (channel multiplier); the Gemm reduces 8 -> 10, the MatMul 10 -> 4, one row each.
MAESTRO = """
Network tiny { FPS: 30
  Layer conv1 { Type: CONV  Dimensions: { N: 1, K: 8, C: 3, Y: 16, X: 16, R: 3, S: 3 } }
  Layer dw2 { Type: DSCONV  Dimensions: { N: 1, K: 1, C: 8, Y: 16, X: 16, R: 3, S: 3 } }
  Layer fc { Type: GEMM  Dimensions: { N: 1, K: 10, C: 8, Y: 1, X: 1, R: 1, S: 1 } }
  Layer head { Type: GEMM  Dimensions: { N: 1, K: 4, C: 10, Y: 1, X: 1, R: 1, S: 1 } }
}
"""


def test_tiny_model_gives_the_maestro_layer_table(tmp_path) -> None:
    expected = parse_maestro_network(MAESTRO, "tiny.m").models[0]
    model = model_from_onnx(tiny_model(), name="tiny", fps=30.0)
    assert model.layers == expected.layers
    # MACs by hand: conv 8 x 3 x 16 x 16 x 9 = 55,296; depthwise 8 x 16 x 16 x 9 = 18,432; fc 80; head 40
    assert [la.macs for la in model.layers] == [55_296, 18_432, 80, 40]
    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_model(), str(path))
    assert read_onnx_model(path, fps=60.0).layers == expected.layers and read_onnx_model(path).name == "tiny"


def test_unknown_operator_is_named() -> None:
    extra = [helper.make_node("TopK", ["y", "kk"], ["v", "i"], name="pick", axis=1)]
    proto = tiny_model(extra)
    proto.graph.initializer.append(numpy_helper.from_array(np.array([2], dtype=np.int64), "kk"))
    with pytest.raises(SpecError, match="TopK") as info:
        model_from_onnx(proto, source="net.onnx")
    assert info.value.source == "net.onnx" and "pick" in info.value.field and info.value.value == "TopK"


def test_grouped_convolution_and_bad_fps_are_clear_errors(tmp_path) -> None:
    proto = tiny_model()  # the depthwise node made a 2-group convolution (weights 8 x 4 x 3 x 3)
    del proto.graph.node[2].attribute[:]
    proto.graph.node[2].attribute.extend([helper.make_attribute("group", 2), helper.make_attribute("pads", [1] * 4)])
    proto.graph.initializer[1].CopyFrom(weight("w2", 8, 4, 3, 3))
    with pytest.raises(SpecError, match="grouped convolution"):
        model_from_onnx(proto)
    with pytest.raises(SpecError, match="positive"):
        model_from_onnx(tiny_model(), fps=-1.0)
    (tmp_path / "junk.onnx").write_bytes(b"\x00not a model")
    with pytest.raises(SpecError, match="junk.onnx"):
        read_onnx_model(tmp_path / "junk.onnx")
