"""ONNX models -> the layer table of the ``multimodel`` family (the one the MAESTRO importer produces).

Needs the optional ``onnx`` package (``pip install '.[onnx]'``). Shapes come from ONNX shape
inference; a symbolic or unknown batch dimension counts as 1. Nodes map to :class:`Layer` rows
``(name, type, N, K, C, Y, X, R, S)``:

* ``Conv`` with ``group == 1``: ``CONV``, ``K`` output and ``C`` input channels, ``Y x X`` the
  output's rows and columns, ``R x S`` the kernel;
* ``Conv`` with ``group ==`` input channels: ``DSCONV`` (depthwise), ``K`` the channel multiplier
  (1 in the usual case, as in MAESTRO files);
* ``Gemm`` and ``MatMul``: ``GEMM`` with ``Y`` the rows of the left operand (leading dimensions
  multiplied out), ``C`` the reduced dimension, ``K`` the output columns, ``X = R = S = 1``.

Element-wise, pooling, normalisation and shape nodes (:data:`IGNORED_OPS`) are not layers of the
analytic model (they are taken as fused into their neighbours). Any other operator, a grouped
convolution that is not depthwise, or a shape inference cannot give is a
:class:`~dse.errors.SpecError` naming the file, the node and the operator.

Example::

    model = read_onnx_model("hand_tracker.onnx", fps=30.0)
    scenario = Scenario("mine", (model,))
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.model.accelerators import Layer, Model, make_layer

#: Operators that carry no layer of their own in the analytic model.
IGNORED_OPS = frozenset({
    "Add", "AveragePool", "BatchNormalization", "Cast", "Clip", "Concat", "Constant", "Div", "Dropout", "Elu",
    "Erf", "Expand", "Flatten", "Gather", "GlobalAveragePool", "GlobalMaxPool", "HardSigmoid", "HardSwish",
    "Identity", "InstanceNormalization", "LayerNormalization", "LeakyRelu", "MaxPool", "Mul", "Pad", "PRelu",
    "ReduceMean", "Relu", "Reshape", "Resize", "Shape", "Sigmoid", "Slice", "Softmax", "Split", "Sqrt",
    "Squeeze", "Sub", "Tanh", "Transpose", "Unsqueeze", "Upsample",
})
#: Operators that become layers.
LAYER_OPS = ("Conv", "Gemm", "MatMul")


def _require_onnx(source: str) -> Any:
    try:
        import onnx
    except ImportError:
        raise SpecError(source, "format", "onnx", "the onnx package is not installed: pip install '.[onnx]'") from None
    return onnx


def read_onnx_model(path: str | Path, *, name: str | None = None, fps: float = 30.0) -> Model:
    """The :class:`Model` (``fps`` frames per second) of the ONNX file ``path``; raises :class:`SpecError`."""
    onnx = _require_onnx(str(path))
    path = Path(path)
    if not path.is_file():
        raise SpecError(str(path), "<file>", str(path), "file not found")
    try:
        proto = onnx.load(str(path))
    except Exception as exc:  # noqa: BLE001 - protobuf raises several types for a corrupt file
        raise SpecError(str(path), "<file>", str(path), f"not an ONNX model ({type(exc).__name__})") from None
    return model_from_onnx(proto, source=str(path), name=name or path.stem, fps=fps)


def model_from_onnx(proto: Any, *, source: str = "<onnx>", name: str | None = None, fps: float = 30.0) -> Model:
    """The :class:`Model` of an ``onnx.ModelProto``; raises :class:`SpecError` naming the node."""
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0:
        raise SpecError(source, "fps", fps, "must be a positive number")
    layers = onnx_layers(proto, source)
    return Model(name or (proto.graph.name or "onnx_model"), float(fps), layers)


def onnx_layers(proto: Any, source: str = "<onnx>") -> tuple[Layer, ...]:
    """The layers of ``proto``'s graph in node order; raises :class:`SpecError` for an unsupported node."""
    onnx = _require_onnx(source)
    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception as exc:  # noqa: BLE001 - shape inference raises its own error types
        raise SpecError(source, "graph", proto.graph.name, f"ONNX shape inference failed: {exc}") from None
    graph = inferred.graph
    shapes: dict[str, list[int | None]] = {}
    for info in [*graph.input, *graph.value_info, *graph.output]:
        dims = info.type.tensor_type.shape.dim
        shapes[info.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    for init in graph.initializer:
        shapes[init.name] = list(init.dims)
    unknown = sorted({n.op_type for n in graph.node if n.op_type not in IGNORED_OPS and n.op_type not in LAYER_OPS})
    if unknown:
        first = next(n for n in graph.node if n.op_type in unknown)
        raise SpecError(source, f"node {first.name or first.output[0]!r}.op_type", first.op_type,
                        f"unsupported operator(s) {', '.join(unknown)}; layers: {', '.join(LAYER_OPS)}")
    layers = []
    for k, node in enumerate(graph.node):
        if node.op_type in LAYER_OPS:
            layers.append(_layer(node, k, shapes, source))
    if not layers:
        raise SpecError(source, "graph", proto.graph.name, f"no {', '.join(LAYER_OPS)} node: nothing to cost")
    return tuple(layers)


def _shape(name: str, shapes: dict[str, list[int | None]], where: str, source: str, rank: int | None = None) -> list[int]:
    dims = shapes.get(name)
    if dims is None or (rank is not None and len(dims) != rank):
        raise SpecError(source, where, name, "tensor shape unknown after shape inference"
                        + (f" (rank {rank} expected)" if rank is not None else ""))
    if any(d is None for d in dims[1:]):
        raise SpecError(source, where, name, f"symbolic dimension in {dims} (only the batch may be symbolic)")
    return [d if d is not None else 1 for d in dims]


def _attr(node: Any, key: str, default: int) -> int:
    for a in node.attribute:
        if a.name == key:
            return int(a.i)
    return default


def _layer(node: Any, k: int, shapes: dict[str, list[int | None]], source: str) -> Layer:
    name = node.name or f"{node.op_type.lower()}{k}"
    where = f"node {name!r}"
    if node.op_type == "Conv":
        x = _shape(node.input[0], shapes, f"{where}.input", source, 4)
        w = _shape(node.input[1], shapes, f"{where}.weight", source, 4)
        y = _shape(node.output[0], shapes, f"{where}.output", source, 4)
        group = _attr(node, "group", 1)
        if group == 1:
            dims = {"N": y[0], "K": w[0], "C": x[1], "Y": y[2], "X": y[3], "R": w[2], "S": w[3]}
            return make_layer(name, "CONV", dims, source, where)
        if group == x[1] and w[1] == 1:
            dims = {"N": y[0], "K": w[0] // group, "C": x[1], "Y": y[2], "X": y[3], "R": w[2], "S": w[3]}
            return make_layer(name, "DSCONV", dims, source, where)
        raise SpecError(source, f"{where}.group", group,
                        f"grouped convolution of {x[1]} channels: only group 1 or depthwise (group = channels)")
    a = _shape(node.input[0], shapes, f"{where}.A", source)
    b = _shape(node.input[1], shapes, f"{where}.B", source)
    if node.op_type == "Gemm":
        if len(a) != 2 or len(b) != 2:
            raise SpecError(source, f"{where}.A", node.input[0], f"Gemm needs 2-D operands, got {a} and {b}")
        rows, inner = (a[1], a[0]) if _attr(node, "transA", 0) else (a[0], a[1])
        cols = b[0] if _attr(node, "transB", 0) else b[1]
    else:
        if len(a) < 2 or len(b) < 1:
            raise SpecError(source, f"{where}.A", node.input[0], f"MatMul operands of shapes {a} and {b}")
        rows, inner = math.prod(a[:-1]), a[-1]
        cols = b[-1] if len(b) >= 2 else 1
        rows *= math.prod(b[:-2]) if len(b) > 2 and len(a) == 2 else 1
    return make_layer(name, "GEMM", {"N": 1, "K": cols, "C": inner, "Y": rows, "X": 1, "R": 1, "S": 1}, source, where)
