"""Build a two-layer ONNX model with onnx.helper and read it as a multimodel layer table.

Needs the optional extra: pip install '.[onnx]'. Run: python docs/examples/tiny_onnx.py
"""

import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dse.inputs.importers.onnx_layers import read_onnx_model

# x [1, 3, 16, 16] -> 8 conv filters 3x3 (pad 1) -> global pool -> flatten [1, 8] -> Gemm to 10 classes
weights = [numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "w_conv"),
           numpy_helper.from_array(np.zeros((10, 8), np.float32), "w_fc")]
nodes = [helper.make_node("Conv", ["x", "w_conv"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("GlobalAveragePool", ["c"], ["p"], name="pool"),
         helper.make_node("Flatten", ["p"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "w_fc"], ["y"], name="fc", transB=1)]
graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], weights)
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    model = read_onnx_model(path, fps=30)
for layer in model.layers:  # conv: CONV K=8 C=3 Y=X=16 R=S=3; fc: a GEMM layer of 10 x 8
    print(layer.name, layer.type, "N K C Y X R S =", layer.n, layer.k, layer.c, layer.y, layer.x, layer.r, layer.s)
