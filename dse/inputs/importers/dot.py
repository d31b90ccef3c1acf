"""Graphviz DOT with cost attributes (a small parser, no pydot/pygraphviz).

Supported subset::

    // line comment, /* block comment */, # comment to the end of the line
    digraph NAME {
      description="free text";          // graph attribute (also graph [description=...])
      node [op_class=gemm];             // defaults for nodes created after this line
      edge [bytes=64];                  // defaults for edges created after this line
      a [work=3, flops=1e9, output_bytes=100, cost_gpu0=2.5];
      "b c" [op_class=conv; precision=fp16]
      a -> "b c" -> d [bytes=100];      // chains; every edge gets the attributes
      {x y} -> z;                       // a subgraph as endpoint: all its nodes
      subgraph cluster0 { p -> q }      // statements inside are read as if outside
    }

IDs are unquoted names (letters, digits, ``_``, ``.``, not starting with a
digit), numbers (``-1.5``, ``1e9``), ``"quoted strings"`` (``\\"`` and
``\\\\`` are escapes; ``"a" + "b"`` concatenates) or ``<html>`` strings.
Ports (``a:p:n``) are ignored; ``strict`` is accepted; an undirected
``graph`` is an error.

Node attributes read into :class:`Op`: numbers ``work``, ``flops``,
``bytes_moved``, ``resident_bytes``, ``output_bytes``; strings ``op_class``,
``precision``, ``device_type``, ``colocation``; ``cost_<device>=t`` into
``device_costs[<device>]`` and ``feat_<name>=x`` into ``features[<name>]``.
Edge attribute ``bytes`` sets the edge's bytes, else the producer's
``output_bytes``. These are what :func:`write_dot` writes. Graphviz's layout
and styling attributes listed in :data:`LAYOUT_ATTRS` (``label``, ``shape``,
``color``, ``style``, ``pos``, ``width``, ``height``, ``fontsize``...) are
accepted and ignored on nodes and edges; any other node or edge attribute
(also in ``node [...]`` / ``edge [...]`` defaults) is an error naming it and its
line, so that a misspelt cost is never silently dropped. ``weight`` is not
ignored: task-graph tools use it for costs, which this reader would lose.
Graph attributes other than ``description`` (``rankdir``, ``rank``...) are ignored.

Every node must be declared by a node statement (``a;`` or ``a [...]``,
anywhere in the file, also inside a subgraph): a node that only appears in
edges is an error naming it and the line of its first edge, as it would
otherwise become a task of cost 0. A repeated edge ``a -> b`` is one edge
(its later attributes win). Ops are in order of first appearance. The
workload is named after the graph ID, or the file stem when the graph has none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dse.errors import SpecError
from dse.inputs.importers._common import fmt_number, read_text, write_text
from dse.model.workload import Op, Workload, validate_workload
from dse.util.numbers import finite_float

__all__ = ["read_dot", "write_dot"]

NUMERIC_ATTRS = ("work", "flops", "bytes_moved", "resident_bytes", "output_bytes")
STRING_ATTRS = ("op_class", "precision", "device_type", "colocation")
COST_PREFIX = "cost_"
FEATURE_PREFIX = "feat_"
KEYWORDS = ("strict", "graph", "digraph", "node", "edge", "subgraph")
EDGE_ATTRS = ("bytes",)

#: Graphviz node and edge attributes for layout and styling: accepted and ignored. Deliberately
#: without ``weight`` (task-graph tools store costs in it; this reader would drop them).
LAYOUT_ATTRS = frozenset("""
    URL area arrowhead arrowsize arrowtail class color colorscheme comment constraint decorate dir
    distortion edgeURL edgehref edgetarget edgetooltip fillcolor fixedsize fontcolor fontname fontsize
    gradientangle group headURL headclip headhref headlabel headport headtarget headtooltip height href
    id image imagepos imagescale label labelURL labelangle labeldistance labelfloat labelfontcolor
    labelfontname labelfontsize labelhref labelloc labeltarget labeltooltip layer len lhead lp ltail
    margin minlen nojustify ordering orientation penwidth peripheries pin pos rects regular root
    samehead sametail samplepoints shape shapefile showboxes sides skew sortv style tailURL tailclip
    tailhref taillabel tailport tailtarget tailtooltip target tooltip vertices width xlabel xlp z
""".split())

_NAME = r"[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_.\x80-\U0010ffff]*"
_NUMBER = r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_TOKEN = re.compile(
    r"(?P<ws>[ \t\r\f\v]+)|(?P<nl>\n)|(?P<lc>//[^\n]*|#[^\n]*)|(?P<bc>/\*)"
    r'|(?P<q>")|(?P<html><)|(?P<arrow>->|--)'
    rf"|(?P<num>{_NUMBER})(?![A-Za-z_])|(?P<name>{_NAME})"
    r"|(?P<punct>[{}\[\]=;,:+])"
)
_PLAIN_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PLAIN_NUMBER = re.compile(_NUMBER + r"\Z")


@dataclass(frozen=True)
class _Tok:
    kind: str  # "id", "->", "--", or the punctuation character, or "eof"
    text: str
    line: int
    quoted: bool = False


def _tokenize(source: str, text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos, line, n = 0, 1, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise SpecError(source, f"line {line}", text[pos], "DOT syntax error: unexpected character")
        kind = m.lastgroup
        if kind == "ws" or kind == "lc":
            pos = m.end()
        elif kind == "nl":
            line += 1
            pos = m.end()
        elif kind == "bc":
            end = text.find("*/", pos + 2)
            if end < 0:
                raise SpecError(source, f"line {line}", "/*", "DOT syntax error: unterminated /* comment")
            line += text.count("\n", pos, end)
            pos = end + 2
        elif kind == "q":
            start_line = line
            chars: list[str] = []
            i = pos + 1
            while True:
                if i >= n:
                    raise SpecError(source, f"line {start_line}", text[pos:pos + 20],
                                    "DOT syntax error: unterminated quoted string")
                c = text[i]
                if c == '"':
                    break
                if c == "\\" and i + 1 < n and text[i + 1] in '"\\\n':
                    if text[i + 1] == "\n":
                        line += 1
                    else:
                        chars.append(text[i + 1])
                    i += 2
                    continue
                if c == "\n":
                    line += 1
                chars.append(c)
                i += 1
            tokens.append(_Tok("id", "".join(chars), start_line, quoted=True))
            pos = i + 1
        elif kind == "html":
            depth, i, start_line = 0, pos, line
            while i < n:
                if text[i] == "<":
                    depth += 1
                elif text[i] == ">":
                    depth -= 1
                    if depth == 0:
                        break
                elif text[i] == "\n":
                    line += 1
                i += 1
            else:
                raise SpecError(source, f"line {start_line}", "<", "DOT syntax error: unterminated <html> string")
            tokens.append(_Tok("id", text[pos + 1:i], start_line, quoted=True))
            pos = i + 1
        elif kind in ("num", "name"):
            tokens.append(_Tok("id", m.group(), line))
            pos = m.end()
        else:
            tokens.append(_Tok(m.group(), m.group(), line))
            pos = m.end()
    tokens.append(_Tok("eof", "end of file", line))
    return tokens


class _Parser:
    def __init__(self, source: str, tokens: list[_Tok]) -> None:
        self.source = source
        self.tokens = tokens
        self.pos = 0
        self.nodes: dict[str, dict[str, tuple[str, int]]] = {}
        self.node_line: dict[str, int] = {}
        self.edges: dict[tuple[str, str], dict[str, tuple[str, int]]] = {}
        self.graph_attrs: dict[str, tuple[str, int]] = {}
        self.declared: set[str] = set()

    # -- token helpers
    def peek(self, ahead: int = 0) -> _Tok:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def next(self) -> _Tok:
        tok = self.peek()
        self.pos += 1
        return tok

    def error(self, tok: _Tok, expected: str) -> SpecError:
        return SpecError(self.source, f"line {tok.line}", tok.text,
                         f"DOT syntax error: expected {expected}, found {tok.text!r}")

    def expect(self, kind: str, what: str | None = None) -> _Tok:
        tok = self.next()
        if tok.kind != kind:
            raise self.error(tok, what or repr(kind))
        return tok

    def is_keyword(self, tok: _Tok, *words: str) -> bool:
        return tok.kind == "id" and not tok.quoted and tok.text.lower() in words

    def ident(self, what: str = "an ID") -> str:
        tok = self.next()
        if tok.kind != "id" or self.is_keyword(tok, *KEYWORDS):
            raise self.error(tok, what)
        text = tok.text
        while tok.quoted and self.peek().kind == "+" and self.peek(1).quoted:
            self.next()
            text += self.next().text
        return text

    # -- grammar
    def graph(self) -> str | None:
        tok = self.next()
        if self.is_keyword(tok, "strict"):
            tok = self.next()
        if self.is_keyword(tok, "graph"):
            raise SpecError(self.source, f"line {tok.line}", tok.text,
                            "an undirected 'graph' is not a workload; use 'digraph'")
        if not self.is_keyword(tok, "digraph"):
            raise self.error(tok, "'digraph'")
        name = None
        if self.peek().kind == "id":
            name = self.ident("the graph name")
        self.expect("{", "'{'")
        self.statements({}, {})
        self.expect("}", "'}'")
        tok = self.peek()
        if tok.kind != "eof":
            raise SpecError(self.source, f"line {tok.line}", tok.text,
                            "DOT syntax error: text after the end of the graph (one graph per file)")
        return name

    def statements(self, node_defaults: dict, edge_defaults: dict) -> list[str]:
        """Parse statements up to the closing '}' (not consumed); returns the nodes they mention."""
        mentioned: list[str] = []
        while self.peek().kind not in ("}", "eof"):
            tok = self.peek()
            if tok.kind == ";":
                self.next()
                continue
            if self.is_keyword(tok, "node", "edge", "graph"):
                self.next()
                attrs = self.attr_lists(required=True)
                kind = tok.text.lower()
                if kind != "graph":
                    self.check_attrs(attrs, kind)
                target = {"node": node_defaults, "edge": edge_defaults, "graph": self.graph_attrs}
                target[kind].update(attrs)
                continue
            if tok.kind == "id" and not self.is_keyword(tok, *KEYWORDS) and self.peek(1).kind == "=":
                key = self.ident()
                self.next()
                self.graph_attrs[key] = (self.ident("a value"), tok.line)
                continue
            mentioned += self.edge_or_node(node_defaults, edge_defaults)
        return mentioned

    def endpoint(self, node_defaults: dict, edge_defaults: dict) -> list[str]:
        tok = self.peek()
        if tok.kind == "{" or self.is_keyword(tok, "subgraph"):
            if self.is_keyword(tok, "subgraph"):
                self.next()
                if self.peek().kind == "id":
                    self.ident("the subgraph name")
            self.expect("{", "'{'")
            names = self.statements(dict(node_defaults), dict(edge_defaults))
            self.expect("}", "'}'")
            return list(dict.fromkeys(names))
        name = self.ident("a node ID, '{' or 'subgraph'")
        if self.peek().kind == ":":  # port and compass point: ignored
            self.next()
            self.ident("a port")
            if self.peek().kind == ":":
                self.next()
                self.ident("a compass point")
        self.touch(name, tok.line, node_defaults)
        return [name]

    def edge_or_node(self, node_defaults: dict, edge_defaults: dict) -> list[str]:
        first = self.peek()
        groups = [self.endpoint(node_defaults, edge_defaults)]
        while self.peek().kind in ("->", "--"):
            arrow = self.next()
            if arrow.kind == "--":
                raise SpecError(self.source, f"line {arrow.line}", "--",
                                "undirected edge '--' in a digraph; use '->'")
            groups.append(self.endpoint(node_defaults, edge_defaults))
        attrs = self.attr_lists(required=False)
        if len(groups) == 1:
            if first.kind == "id" and not self.is_keyword(first, "subgraph"):
                self.check_attrs(attrs, "node")
                self.nodes[groups[0][0]].update(attrs)
                self.declared.add(groups[0][0])
            else:  # a lone subgraph: attributes after it apply to nothing
                self.check_attrs(attrs, "node")
        else:
            self.check_attrs(attrs, "edge")
            merged = {**edge_defaults, **attrs}
            for tails, heads in zip(groups, groups[1:], strict=False):
                for u in tails:
                    for v in heads:
                        self.edges.setdefault((u, v), {}).update(merged)
        return [name for group in groups for name in group]

    def attr_lists(self, required: bool) -> dict[str, tuple[str, int]]:
        attrs: dict[str, tuple[str, int]] = {}
        if required and self.peek().kind != "[":
            raise self.error(self.peek(), "'['")
        while self.peek().kind == "[":
            self.next()
            while self.peek().kind != "]":
                tok = self.peek()
                key = self.ident("an attribute name or ']'")
                self.expect("=", f"'=' after attribute {key!r}")
                attrs[key] = (self.ident(f"a value for attribute {key!r}"), tok.line)
                if self.peek().kind in (",", ";"):
                    self.next()
            self.next()
        return attrs

    def check_attrs(self, attrs: dict[str, tuple[str, int]], kind: str) -> None:
        """Raise :class:`SpecError` naming the first attribute a ``kind`` (node/edge) may not carry, and its line."""
        for key, (_value, line) in attrs.items():
            if key in LAYOUT_ATTRS:
                continue
            if kind == "edge" and key in EDGE_ATTRS:
                continue
            if kind == "node" and (key in NUMERIC_ATTRS or key in STRING_ATTRS or (
                    key.startswith((COST_PREFIX, FEATURE_PREFIX)) and key not in (COST_PREFIX, FEATURE_PREFIX))):
                continue
            known = EDGE_ATTRS if kind == "edge" else (
                *NUMERIC_ATTRS, *STRING_ATTRS, f"{COST_PREFIX}<device>", f"{FEATURE_PREFIX}<name>")
            raise SpecError(self.source, f"line {line}", key,
                            f"unknown {kind} attribute; {kind}s carry {', '.join(known)} "
                            "and Graphviz layout attributes (label, shape, color...)")

    def touch(self, name: str, line: int, node_defaults: dict) -> None:
        if name not in self.nodes:
            self.nodes[name] = dict(node_defaults)
            self.node_line[name] = line


def _number(source: str, owner: str, key: str, value: tuple[str, int]) -> float:
    number = finite_float(value[0])
    if number is None:
        raise SpecError(source, f"line {value[1]}", value[0], f"attribute {key!r} of {owner} must be a number")
    return number


def read_dot(path: str | Path) -> Workload:
    """Read a DOT digraph with cost attributes into a :class:`Workload` (see the module docstring)."""
    source = str(path)
    parser = _Parser(source, _tokenize(source, read_text(path)))
    graph_name = parser.graph()
    if not parser.nodes:
        raise SpecError(source, "<graph>", graph_name, "the graph has no nodes")
    ops = []
    for name, attrs in parser.nodes.items():
        fields: dict = {"name": name}
        costs: dict[str, float] = {}
        features: dict[str, float] = {}
        owner = f"node {name!r}"
        for key, value in attrs.items():
            if key in NUMERIC_ATTRS:
                fields[key] = _number(source, owner, key, value)
            elif key in STRING_ATTRS:
                fields[key] = value[0]
            elif key.startswith(COST_PREFIX) and len(key) > len(COST_PREFIX):
                costs[key[len(COST_PREFIX):]] = _number(source, owner, key, value)
            elif key.startswith(FEATURE_PREFIX) and len(key) > len(FEATURE_PREFIX):
                features[key[len(FEATURE_PREFIX):]] = _number(source, owner, key, value)
        ops.append(Op(**fields, device_costs=costs, features=features))
    index = {name: i for i, name in enumerate(parser.nodes)}
    edges, edge_bytes = [], []
    for (u, v), attrs in parser.edges.items():
        edges.append((index[u], index[v]))
        if "bytes" in attrs:
            edge_bytes.append(_number(source, f"edge {u!r} -> {v!r}", "bytes", attrs["bytes"]))
        else:
            edge_bytes.append(float(ops[index[u]].output_bytes))
    description = parser.graph_attrs.get("description", ("", 0))[0]
    workload = Workload(
        name=graph_name or Path(path).stem,
        ops=tuple(ops),
        edges=tuple(edges),
        edge_bytes=tuple(edge_bytes),
        description=description,
    )
    validate_workload(workload, source)
    undeclared = next((name for name in parser.nodes if name not in parser.declared), None)
    if undeclared is not None:
        raise SpecError(source, f"line {parser.node_line[undeclared]}", undeclared,
                        "an edge names a node that no node statement declares (it would be a task of cost 0); "
                        f"declare it, e.g. {_quote(undeclared)} [work=1];")
    return workload


def _quote(text: str) -> str:
    if _PLAIN_ID.match(text) and text.lower() not in KEYWORDS:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _num(value: float) -> str:
    text = fmt_number(value)
    return text if _PLAIN_NUMBER.match(text) else f'"{text}"'


def write_dot(workload: Workload, path: str | Path) -> None:
    """Write ``workload`` as DOT; :func:`read_dot` reads it back to an equal workload.

    Node attributes are written where they differ from the :class:`Op`
    defaults; every edge carries an explicit ``bytes``.
    """
    defaults = Op(name="")
    lines = [f"digraph {_quote(workload.name)} {{"]
    if workload.description:
        lines.append(f"  description={_quote(workload.description)};")
    for op in workload.ops:
        attrs = []
        for key in STRING_ATTRS:
            value = getattr(op, key)
            if value != getattr(defaults, key) and value is not None:
                attrs.append(f"{key}={_quote(value)}")
        for key in NUMERIC_ATTRS:
            value = getattr(op, key)
            if value != getattr(defaults, key):
                attrs.append(f"{key}={_num(value)}")
        attrs += [f"{_quote(FEATURE_PREFIX + k)}={_num(v)}" for k, v in op.features.items()]
        attrs += [f"{_quote(COST_PREFIX + k)}={_num(v)}" for k, v in op.device_costs.items()]
        lines.append(f"  {_quote(op.name)}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    for (s, d), b in zip(workload.edges, workload.edge_bytes, strict=True):
        lines.append(f"  {_quote(workload.ops[s].name)} -> {_quote(workload.ops[d].name)} [bytes={_num(b)}];")
    lines.append("}")
    write_text(path, "\n".join(lines) + "\n")
