"""CSV graphs and device sets of the TensorFlow partitioning paper.

Mayer, Mayer, Laich: "The TensorFlow partitioning and scheduling problem:
it's the critical path!" (DIDL 2017), repository
``mayerrn/tensorflowPartitioningAndScheduling``, folder ``Sample_Data/``.

Graph files (comma separated, one header row, lists ``;``-separated, rows in any order)::

    Id,(Outgoing) node,(Incoming) node,Colocation nodes,#tensorSize, #operations, RAM storage,Device constraint ,name
    66,89,64,64,29,19,90,NO,Variable_6/read

(``sample_graph.csv`` has only the first six columns.) Device files::

    Id,RAM,#operations,commnication speed,type
    0,15000000,100,100;100,CPU

where the communication-speed column of the i-th device (in id order) lists
the link rates to devices i+1, i+2, ... (the upper triangle of the rate matrix).

Mapping onto the engine (the paper's simulator rules under
:class:`~dse.cost.TableCostModel`: node time = ``#operations / speed``, a
cross-device edge costs ``#tensorSize / rate``):

* one :class:`Op` per row, ops sorted by ``Id``; ``work = #operations``,
  ``output_bytes = #tensorSize`` (what every outgoing edge carries),
  ``resident_bytes = RAM storage`` (0 when the column is absent or empty),
  ``op_class = "generic"``;
* the op name is the ``name`` column; ``n{Id}`` when the column is absent
  or empty; a repeated name gets ``#{Id}`` appended;
* ``Device constraint``: ``NO`` or empty -> ``None``; ``CPU``/``GPU`` (any
  case) -> ``"cpu"``/``"gpu"`` (the dse device kinds, which
  ``op.device_type`` is matched against); any other value is kept verbatim;
* ``colocation``: the colocation lists are read as an undirected relation;
  each connected component of two or more ops becomes one group, labelled
  with the name of its member with the smallest ``Id`` (``None`` for ops
  that are alone);
* edges: the union of what the outgoing and the incoming columns list,
  deduplicated and sorted by (producer, consumer) index. The two columns
  describe the same edges twice; in the paper's files they always agree.
  When they do not, ``strict=True`` raises :class:`SpecError` naming the
  line, and the default (``strict=False``) keeps the union and issues one
  :class:`UserWarning` that counts the one-sided edges;
* numbers: integers in the paper's files; decimals are accepted too.

Devices: named ``d{Id}``; kind from ``type`` (``cpu``, ``gpu`` and the other
dse kinds map to themselves, case-insensitively, anything else to
``generic``); ``speed = #operations``; ``mem_gib = RAM / 2**30`` so that the
cost tables' byte capacity ``int(mem_gib * 2**30)`` equals ``RAM`` in the
unit of the graphs' ``RAM storage``; ``peak_tflops = {}``, ``mem_bw_gbps = 1``,
``idle_w = 0``, ``active_w = 1``; one :class:`Link` per pair with
``bandwidth_gbps = rate`` and ``latency_us = 0``. A rate is in the graphs' size units per time unit,
not GB/s: it must be > 0 and finite, and the physical bounds of a platform file's ``bandwidth_gbps``
do not apply (as under a table cost model, :class:`~dse.model.platform.LinkSpec`); a rate so small
that a transfer's cost passes int64 is refused when the cost tables are built, naming it.

Note that :class:`~dse.cost.TableCostModel` books ``resident_bytes +
output_bytes`` (RAM storage + tensor size) as an op's memory on a device.
"""

from __future__ import annotations

import csv
import io
import warnings
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.inputs.importers._common import fmt_number, read_text, write_text
from dse.model.platform import (
    DEVICE_KINDS,
    MAX_DEVICES,
    MAX_MEM_GIB,
    MAX_SPEED,
    MIN_SPEED,
    Device,
    Link,
    Platform,
)
from dse.model.workload import Op, Workload, validate_workload
from dse.util.numbers import finite_float

__all__ = ["read_tf_devices", "read_tf_graph", "write_tf_devices", "write_tf_graph"]

GRAPH_HEADER = ("Id", "(Outgoing) node", "(Incoming) node", "Colocation nodes", "#tensorSize",
                " #operations", " RAM storage", "Device constraint ", "name")
DEVICE_HEADER = ("Id", "RAM", "#operations", "commnication speed", "type")
_NO_CONSTRAINT = ("", "NO", "NONE")


def _rows(source: str, text: str, min_cols: int) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, [(line number, fields)]) of a CSV text; the header is optional."""
    reader = csv.reader(io.StringIO(text))
    header: list[str] = []
    rows: list[tuple[int, list[str]]] = []
    first = True
    try:
        for fields in reader:
            line = reader.line_num
            if not any(f.strip() for f in fields):
                continue
            if first:
                first = False
                if fields[0].strip().lower() == "id":
                    header = fields
                    continue
            if len(fields) < min_cols:
                raise SpecError(source, f"line {line}", ",".join(fields),
                                f"expected at least {min_cols} comma-separated columns, got {len(fields)}")
            rows.append((line, fields))
    except csv.Error as exc:
        raise SpecError(source, f"line {reader.line_num}", None, f"CSV syntax error: {exc}") from None
    if not rows:
        raise SpecError(source, "<file>", str(source), "no data rows")
    return header, rows


def _number(source: str, line: int, column: str, text: str, *, empty: float | None = None) -> float:
    """The finite number ``text`` (:func:`dse.util.numbers.finite_float`); ``empty`` for a blank cell when
    given. Raises :class:`SpecError` naming the line, the column and the text."""
    text = text.strip()
    if not text and empty is not None:
        return empty
    value = finite_float(text)
    if value is None:
        raise SpecError(source, f"line {line}", text, f"column '{column.strip()}' must be a number")
    return value


def _id(source: str, line: int, column: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise SpecError(source, f"line {line}", text, f"column '{column.strip()}' must hold integer ids") from None


def _id_list(source: str, line: int, column: str, text: str) -> list[int]:
    return [_id(source, line, column, t) for t in text.split(";") if t.strip()]


def _constraint(text: str) -> str | None:
    value = text.strip()
    if value.upper() in _NO_CONSTRAINT:
        return None
    if value.lower() in ("cpu", "gpu"):
        return value.lower()
    return value


def read_tf_graph(path: str | Path, *, strict: bool = False) -> Workload:
    """Read a TF-paper graph CSV into a :class:`Workload` (see the module docstring).

    ``strict=True`` raises :class:`SpecError` when an edge appears in only one
    of the outgoing/incoming columns; otherwise the union is kept with a warning.
    """
    source = str(path)
    header, rows = _rows(source, read_text(path), 6)
    cols = [h.strip() for h in header] if header else [h.strip() for h in GRAPH_HEADER]
    cols += [h.strip() for h in GRAPH_HEADER[len(cols):]]

    parsed: list[tuple[Any, ...]] = []
    seen_ids: dict[int, int] = {}
    for line, f in rows:
        tid = _id(source, line, cols[0], f[0])
        if tid in seen_ids:
            raise SpecError(source, f"line {line}", tid, f"Id repeated (first on line {seen_ids[tid]})")
        seen_ids[tid] = line
        name = ",".join(f[8:]).strip() if len(f) > 8 else ""  # an unquoted comma in a name
        parsed.append((
            tid, line,
            _id_list(source, line, cols[1], f[1]),
            _id_list(source, line, cols[2], f[2]),
            _id_list(source, line, cols[3], f[3]),
            _number(source, line, cols[4], f[4]),
            _number(source, line, cols[5], f[5]),
            _number(source, line, cols[6], f[6], empty=0.0) if len(f) > 6 else 0.0,
            _constraint(f[7]) if len(f) > 7 else None,
            name,
        ))
    parsed.sort(key=lambda r: r[0])
    index = {r[0]: i for i, r in enumerate(parsed)}

    def idx(line: int, column: str, tid: int) -> int:
        try:
            return index[tid]
        except KeyError:
            raise SpecError(source, f"line {line}", tid, f"column '{column}' names an unknown Id") from None

    out_edges: dict[tuple[int, int], int] = {}
    in_edges: dict[tuple[int, int], int] = {}
    parent = list(range(len(parsed)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (tid, line, outs, ins, colo, *_rest) in enumerate(parsed):
        for t in outs:
            j = idx(line, cols[1], t)
            if j == i:
                raise SpecError(source, f"line {line}", t, f"node {tid} lists itself as a successor")
            out_edges.setdefault((i, j), line)
        for t in ins:
            j = idx(line, cols[2], t)
            if j == i:
                raise SpecError(source, f"line {line}", t, f"node {tid} lists itself as a predecessor")
            in_edges.setdefault((j, i), line)
        for t in colo:
            a, b = find(i), find(idx(line, cols[3], t))
            if a != b:
                parent[max(a, b)] = min(a, b)  # the root is the smallest index (smallest Id)

    only_out = [e for e in out_edges if e not in in_edges]
    only_in = [e for e in in_edges if e not in out_edges]
    if only_out or only_in:
        s, d = (only_out or only_in)[0]
        where = out_edges[(s, d)] if only_out else in_edges[(s, d)]
        listed, missing = ("outgoing", "incoming") if only_out else ("incoming", "outgoing")
        message = (f"edge {parsed[s][0]} -> {parsed[d][0]} is in the {listed} column but not in the "
                   f"{missing} column of the other node ({len(only_out) + len(only_in)} one-sided edges)")
        if strict:
            raise SpecError(source, f"line {where}", f"{parsed[s][0]} -> {parsed[d][0]}", message)
        warnings.warn(f"{source}: line {where}: {message}; keeping the union", UserWarning, stacklevel=2)
    edges = sorted(out_edges.keys() | in_edges.keys())

    names: list[str] = []
    taken: set[str] = set()
    for tid, *_rest, name in parsed:
        name = name or f"n{tid}"
        if name in taken:
            name = f"{name}#{tid}"
        taken.add(name)
        names.append(name)
    roots = [find(i) for i in range(len(parsed))]
    group_size: dict[int, int] = {}
    for r in roots:
        group_size[r] = group_size.get(r, 0) + 1
    ops = tuple(
        Op(
            name=names[i],
            op_class="generic",
            work=r[6],
            output_bytes=r[5],
            resident_bytes=r[7],
            device_type=r[8],
            colocation=names[roots[i]] if group_size[roots[i]] > 1 else None,
        )
        for i, r in enumerate(parsed)
    )
    workload = Workload(
        name=Path(path).stem,
        ops=ops,
        edges=tuple(edges),
        edge_bytes=tuple(ops[s].output_bytes for s, _ in edges),
    )
    return validate_workload(workload, source)


def write_tf_graph(workload: Workload, path: str | Path) -> None:
    """Write ``workload`` as a 9-column TF-paper graph CSV.

    Ids are the op indices (0-based); colocation groups are written as
    complete lists (each member lists all the others); ``device_type`` ``cpu``
    and ``gpu`` become ``CPU``/``GPU`` and ``None`` becomes ``NO``. What the
    format cannot hold is dropped: ``op_class``, ``flops``, ``bytes_moved``,
    ``precision``, ``features``, ``device_costs``, colocation group labels
    (re-reading relabels groups by their first member) and per-edge bytes
    (an edge always carries its producer's ``#tensorSize``).
    """
    validate_workload(workload, str(path))
    n = workload.n_ops
    outs: list[list[int]] = [[] for _ in range(n)]
    ins: list[list[int]] = [[] for _ in range(n)]
    for s, d in dict.fromkeys(workload.edges):
        outs[s].append(d)
        ins[d].append(s)
    groups: dict[str, list[int]] = {}
    for i, op in enumerate(workload.ops):
        if op.colocation is not None:
            groups.setdefault(op.colocation, []).append(i)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(GRAPH_HEADER)
    for i, op in enumerate(workload.ops):
        colo = [j for j in groups.get(op.colocation, ()) if j != i] if op.colocation is not None else []
        if op.device_type is None:
            constraint = "NO"
        elif op.device_type in ("cpu", "gpu"):
            constraint = op.device_type.upper()
        else:
            constraint = op.device_type
        writer.writerow([
            i,
            ";".join(map(str, outs[i])),
            ";".join(map(str, ins[i])),
            ";".join(map(str, colo)),
            fmt_number(op.output_bytes),
            fmt_number(op.work),
            fmt_number(op.resident_bytes),
            constraint,
            op.name,
        ])
    write_text(path, buffer.getvalue())


def _kind(text: str) -> str:
    kind = text.strip().lower()
    return kind if kind in DEVICE_KINDS else "generic"


def read_tf_devices(path: str | Path) -> Platform:
    """Read a TF-paper device CSV into a :class:`Platform` (see the module docstring)."""
    source = str(path)
    header, rows = _rows(source, read_text(path), 4)
    cols = [h.strip() for h in header] if header else list(DEVICE_HEADER)
    cols += list(DEVICE_HEADER[len(cols):])
    parsed = []
    seen: dict[int, int] = {}
    for line, f in rows:
        did = _id(source, line, cols[0], f[0])
        if did in seen:
            raise SpecError(source, f"line {line}", did, f"Id repeated (first on line {seen[did]})")
        seen[did] = line
        ram = _number(source, line, cols[1], f[1])
        speed = _number(source, line, cols[2], f[2])
        if not 0 <= ram <= MAX_MEM_GIB * 2**30:
            raise SpecError(source, f"line {line}", f[1], f"column '{cols[1]}' must be in [0, {MAX_MEM_GIB * 2**30:g}]")
        if not MIN_SPEED <= speed <= MAX_SPEED:
            raise SpecError(source, f"line {line}", f[2],
                            f"column '{cols[2]}' (device speed) must be in [{MIN_SPEED:g}, {MAX_SPEED:g}]")
        rates = [_number(source, line, cols[3], t) for t in f[3].split(";") if t.strip()]
        kind = _kind(f[4]) if len(f) > 4 else "generic"
        parsed.append((did, line, ram, speed, rates, kind))
    parsed.sort(key=lambda r: r[0])
    n = len(parsed)
    if n > MAX_DEVICES:
        raise SpecError(source, f"line {parsed[MAX_DEVICES][1]}", n, f"more than {MAX_DEVICES} devices")
    devices = tuple(
        Device(name=f"d{did}", kind=kind, peak_tflops={}, mem_bw_gbps=1.0, mem_gib=ram / 2**30,
               idle_w=0.0, active_w=1.0, speed=speed)
        for did, _line, ram, speed, _rates, kind in parsed
    )
    links = []
    for k, (did, line, _ram, _speed, rates, _kd) in enumerate(parsed):
        if len(rates) != n - 1 - k:
            raise SpecError(source, f"line {line}", ";".join(fmt_number(r) for r in rates),
                            f"device {did} is number {k} of {n} in Id order, so column '{cols[3]}' must list "
                            f"{n - 1 - k} rates (to the devices after it), got {len(rates)}")
        for offset, rate in enumerate(rates, start=1):
            if not rate > 0:
                raise SpecError(source, f"line {line}", fmt_number(rate),
                                f"communication speed to device {parsed[k + offset][0]} must be > 0 (size units "
                                "per time unit, with no other bound: see the module docstring)")
            links.append(Link(devices[k].name, devices[k + offset].name, bandwidth_gbps=rate, latency_us=0.0))
    return Platform(name=Path(path).stem, devices=devices, links=tuple(links))


def write_tf_devices(platform: Platform, path: str | Path) -> None:
    """Write ``platform`` as a TF-paper device CSV (Ids are device indices).

    ``RAM = mem_gib * 2**30``, ``#operations = speed``, ``type = kind`` in
    upper case; the rate of each pair is the bandwidth of its route (the
    direct link where there is one). Latencies, energies, powers and peak
    rates are dropped.
    """
    devices = platform.devices
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(DEVICE_HEADER)
    for k, dev in enumerate(devices):
        try:
            rates = [platform.route(dev.name, other.name)[0] for other in devices[k + 1:]]
        except ValueError as exc:
            raise SpecError(str(path), "links", dev.name, str(exc)) from None
        writer.writerow([k, fmt_number(dev.mem_gib * 2**30), fmt_number(dev.speed),
                         ";".join(fmt_number(r) for r in rates), dev.kind.upper()])
    write_text(path, buffer.getvalue())
