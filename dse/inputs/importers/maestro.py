"""MAESTRO ``.m`` files: network (model) files and accelerator (hardware) files.

Network file (one scenario; XRBench's ``usage_scenarios``)::

    Network HT_hand { FPS: 45
      Dependency: { ES_RITNet }   Probability: 0.5          // both optional
      Layer conv1 { Type: CONV  Dimensions: { N: 1, K: 64, C: 3, Y: 128, X: 128, R: 7, S: 7 } }
    }

Hardware file (one system; XRBench's ``hw_configs``)::

    Accelerator Acc0 { num_pes: 1024  offchip_bw: 128  global_shared_memory: 2097152 ... }

``//`` starts a comment. ``offchip_bw`` is read as bytes per cycle at 1 GHz (GB/s),
``global_shared_memory`` in bytes. Every error is a :class:`~dse.errors.SpecError`
naming the file, the line (``line 12: Network X.Layer conv3.R``) and the value.

Example::

    scenario = read_maestro_network("usage_scenarios/VR_gaming.m")
    system = read_maestro_hardware("hw_configs/Quad_4K.m", dataflow="ws")
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.inputs.importers._common import read_text
from dse.model.accelerators import (
    DATAFLOWS,
    MAX_FPS,
    MIN_FPS,
    Layer,
    Model,
    Scenario,
    System,
    check_scenario,
    make_layer,
    system_from_dict,
)

_TOKEN = re.compile(r"//[^\n]*|[{}:,]|[^\s{}:,]+|\n")


@dataclass(frozen=True)
class _Token:
    text: str
    line: int


class _Reader:
    """Tokens of a ``.m`` file with a cursor; errors name the file and the line."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.tokens: list[_Token] = []
        line = 1
        for match in _TOKEN.finditer(text):
            tok = match.group()
            if tok == "\n":
                line += 1
            elif not tok.startswith("//"):
                self.tokens.append(_Token(tok, line))
        self.pos = 0

    def error(self, where: str, value: Any, reason: str, line: int | None = None) -> SpecError:
        return SpecError(self.source, f"line {self.line() if line is None else line}: {where}", value, reason)

    def done(self) -> bool:
        return self.pos >= len(self.tokens)

    def peek(self) -> str | None:
        return None if self.done() else self.tokens[self.pos].text

    def line(self) -> int:
        return self.tokens[min(self.pos, len(self.tokens) - 1)].line if self.tokens else 1

    def next(self, where: str) -> _Token:
        if self.done():
            raise self.error(where, None, "unexpected end of file")
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def expect(self, text: str, where: str) -> None:
        tok = self.next(where)
        if tok.text != text:
            raise self.error(where, tok.text, f"expected {text!r}", tok.line)

    def skip_comma(self) -> None:
        if self.peek() == ",":
            self.pos += 1


def _number(tok: _Token, reader: _Reader, where: str, integer: bool = False) -> float:
    try:
        value = float(tok.text) if not integer else int(tok.text)
    except ValueError:
        raise reader.error(where, tok.text, "must be an integer" if integer else "must be a number", tok.line) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise reader.error(where, tok.text, "must be finite", tok.line)
    return value


def _key_values(reader: _Reader, where: str) -> dict[str, tuple[str, int]]:
    """``{ KEY: VALUE, ... }`` (commas optional) -> key -> (value text, line)."""
    reader.expect("{", where)
    out: dict[str, tuple[str, int]] = {}
    while reader.peek() != "}":
        key = reader.next(where)
        reader.expect(":", f"{where}.{key.text}")
        value = reader.next(f"{where}.{key.text}")
        if value.text in "{}:,":
            raise reader.error(f"{where}.{key.text}", value.text, "missing value", value.line)
        out[key.text] = (value.text, key.line)
        reader.skip_comma()
    reader.expect("}", where)
    return out


def _layer(reader: _Reader, network: str) -> Layer:
    name_tok = reader.next(f"Network {network}.Layer")
    where = f"Network {network}.Layer {name_tok.text}"
    reader.expect("{", where)
    kind: _Token | None = None
    dims: dict[str, int] = {}
    dims_line = name_tok.line
    while reader.peek() != "}":
        key = reader.next(where)
        reader.expect(":", f"{where}.{key.text}")
        if key.text == "Type":
            kind = reader.next(f"{where}.Type")
        elif key.text == "Dimensions":
            dims_line = key.line
            for dim, (text, line) in _key_values(reader, f"{where}.Dimensions").items():
                if dim not in "NKCYXRS" or len(dim) != 1:
                    raise reader.error(f"{where}.Dimensions.{dim}", text, "unknown dimension; known: N K C Y X R S", line)
                value = _number(_Token(text, line), reader, f"{where}.Dimensions.{dim}", integer=True)
                if value < 1:
                    raise reader.error(f"{where}.Dimensions.{dim}", int(value), "must be >= 1", line)
                dims[dim] = int(value)
        else:
            # unknown per-layer fields (e.g. Stride) carry no information the cost model uses
            reader.next(f"{where}.{key.text}")
    reader.expect("}", where)
    if kind is None:
        raise reader.error(f"{where}.Type", None, "missing layer type", name_tok.line)
    try:
        return make_layer(name_tok.text, kind.text, dims, reader.source, f"{where}")
    except SpecError as exc:
        line = kind.line if exc.field.endswith(".type") else dims_line
        raise reader.error(exc.field, exc.value, exc.reason, line) from None


def _network(reader: _Reader) -> tuple[Model, int]:
    """One ``Network`` block and the line of its ``Dependency`` (else of its name)."""
    name_tok = reader.next("Network")
    name = name_tok.text
    where = f"Network {name}"
    reader.expect("{", where)
    fps: float | None = None
    probability = 1.0
    parent: str | None = None
    dep_line = name_tok.line
    layers: list[Layer] = []
    while reader.peek() != "}":
        key = reader.next(where)
        if key.text == "Layer":
            layers.append(_layer(reader, name))
            continue
        reader.expect(":", f"{where}.{key.text}")
        if key.text == "FPS":
            fps = _number(reader.next(f"{where}.FPS"), reader, f"{where}.FPS")
            if not MIN_FPS <= fps <= MAX_FPS:
                raise reader.error(f"{where}.FPS", fps, f"must be in [{MIN_FPS:g}, {MAX_FPS:g}]", key.line)
        elif key.text == "Probability":
            probability = _number(reader.next(f"{where}.Probability"), reader, f"{where}.Probability")
            if not 0 <= probability <= 1:
                raise reader.error(f"{where}.Probability", probability, "must be in [0, 1]", key.line)
        elif key.text == "Dependency":
            reader.expect("{", f"{where}.Dependency")
            parents = []
            while reader.peek() != "}":
                parents.append(reader.next(f"{where}.Dependency").text)
                reader.skip_comma()
            reader.expect("}", f"{where}.Dependency")
            if len(parents) > 1:
                raise reader.error(f"{where}.Dependency", parents, "at most one parent model is supported", key.line)
            parent = parents[0] if parents else None
            dep_line = key.line
        else:
            raise reader.error(f"{where}.{key.text}", key.text,
                               "unknown field; known: FPS, Probability, Dependency, Layer", key.line)
    reader.expect("}", where)
    if fps is None:
        raise reader.error(f"{where}.FPS", None, "missing frame rate", name_tok.line)
    if not layers:
        raise reader.error(where, name, "a network needs at least one layer", name_tok.line)
    return Model(name, fps, tuple(layers), parent, probability), dep_line


def parse_maestro_network(text: str, source: str = "<network>", name: str | None = None) -> Scenario:
    """The :class:`Scenario` of the ``Network`` blocks in ``text``; raises :class:`SpecError`."""
    reader = _Reader(text, source)
    models: list[Model] = []
    lines: list[int] = []
    while not reader.done():
        tok = reader.next("<root>")
        if tok.text != "Network":
            raise reader.error("<root>", tok.text, "expected 'Network NAME { ... }'", tok.line)
        model, line = _network(reader)
        models.append(model)
        lines.append(line)
    if not models:
        raise SpecError(source, "<root>", None, "no Network block found")
    scenario = Scenario(name or Path(source).stem, tuple(models), source=Path(source).name)
    try:
        return check_scenario(scenario, source)
    except SpecError as exc:
        index = int(exc.field.split("[")[1].split("]")[0])
        raise SpecError(source, f"line {lines[index]}: Network {models[index].name}."
                        + ("Dependency" if "depends_on" in exc.field else "name"), exc.value, exc.reason) from None


#: Hardware fields read (the NoC fields are accepted and not modelled).
_HW_FIELDS = ("num_pes", "offchip_bw", "global_shared_memory", "PE_local_memory", "top_noc_bw", "top_noc_latency",
              "top_noc_multicast", "col_noc_bw", "col_noc_latency", "col_noc_multicast", "dataflow", "freq_mhz")


def parse_maestro_hardware(text: str, source: str = "<hardware>", name: str | None = None, *,
                           dataflow: str | list[str] = "ws", shared_bw_gbps: float | None = None) -> System:
    """The :class:`System` of the ``Accelerator`` blocks in ``text``.

    ``dataflow``: one for all accelerators or one per accelerator (a ``dataflow:`` field in a
    block wins). ``shared_bw_gbps``: the shared off-chip bandwidth (default: the largest
    ``offchip_bw``, one memory system shared by all). Raises :class:`SpecError`.
    """
    dataflow = _check_dataflow_option(dataflow, source)
    reader = _Reader(text, source)
    accs: list[dict[str, Any]] = []
    while not reader.done():
        tok = reader.next("<root>")
        if tok.text != "Accelerator":
            raise reader.error("<root>", tok.text, "expected 'Accelerator NAME { ... }'", tok.line)
        acc_name = reader.next("Accelerator")
        where = f"Accelerator {acc_name.text}"
        fields = _key_values(reader, where)
        for key, (value, line) in fields.items():
            if key not in _HW_FIELDS:
                raise reader.error(f"{where}.{key}", value, f"unknown field; known: {', '.join(_HW_FIELDS)}", line)
        if "num_pes" not in fields:
            raise reader.error(f"{where}.num_pes", None, "missing PE count", acc_name.line)
        entry: dict[str, Any] = {"name": acc_name.text}
        for key, target, integer in (("num_pes", "pes", True), ("offchip_bw", "offchip_bw_gbps", False),
                                     ("global_shared_memory", "buffer_kib", False), ("freq_mhz", "freq_mhz", False)):
            if key in fields:
                text_value, line = fields[key]
                number = _number(_Token(text_value, line), reader, f"{where}.{key}", integer=integer)
                if number <= 0:
                    raise reader.error(f"{where}.{key}", number, "must be > 0", line)
                entry[target] = number / 1024 if key == "global_shared_memory" else number
        index = len(accs)
        flow = fields["dataflow"][0] if "dataflow" in fields else (
            dataflow if isinstance(dataflow, str) else dataflow[index % len(dataflow)])
        entry["dataflow"] = str(flow).lower()
        accs.append(entry)
    if not accs:
        raise SpecError(source, "<root>", None, "no Accelerator block found: a system needs at least one accelerator")
    data: dict[str, Any] = {"name": name or Path(source).stem, "source": Path(source).name, "accelerators": accs}
    if shared_bw_gbps is not None:
        data["shared_bw_gbps"] = shared_bw_gbps
    return system_from_dict(data, source)


def _check_dataflow_option(dataflow: Any, source: str) -> str | list[str]:
    """The ``dataflow`` option as one name or a non-empty list of names (of at most 64, each a known
    dataflow); :class:`SpecError` naming ``platform.dataflow`` otherwise."""
    known = DATAFLOWS
    names = [dataflow] if isinstance(dataflow, str) else dataflow
    if not isinstance(names, list) or not names or len(names) > 64:
        raise SpecError(source, "platform.dataflow", dataflow,
                        f"give one dataflow ({', '.join(known)}) or a list of 1 to 64, one per accelerator")
    for i, name in enumerate(names):
        if not isinstance(name, str) or name.lower() not in known:
            raise SpecError(source, f"platform.dataflow[{i}]" if len(names) > 1 or not isinstance(dataflow, str)
                            else "platform.dataflow", name, f"known dataflows: {', '.join(known)}")
    return dataflow


def read_maestro_network(path: str | Path, name: str | None = None) -> Scenario:
    """Read a MAESTRO network file; raises :class:`SpecError` naming the file and the line."""
    return parse_maestro_network(read_text(path), str(path), name)


def read_maestro_hardware(path: str | Path, name: str | None = None, **options: Any) -> System:
    """Read a MAESTRO hardware file (options as :func:`parse_maestro_hardware`)."""
    return parse_maestro_hardware(read_text(path), str(path), name, **options)
