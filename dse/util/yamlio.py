"""YAML reading with errors that name the file and the line, and limits that keep a hostile file cheap.

Limits, checked before any Python value is built: the file's size
(:data:`MAX_YAML_BYTES`), and on the parsed node graph the number of values
once every alias is expanded (:data:`MAX_YAML_VALUES`: a few anchors nested
ten deep would otherwise expand to billions) and the nesting depth
(:data:`MAX_YAML_DEPTH`); a recursive alias is refused. Each is one
:class:`SpecError` naming the file.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml

from dse.errors import SpecError
from dse.util.numbers import FLOAT_PATTERN, LEADING_ZERO_INTEGER


def _read_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path``; :class:`SpecError` (field ``<file>``) for anything else."""
    source = str(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise SpecError(source, "<file>", source, "file not found") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the name
        raise SpecError(source, "<file>", source, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if stat.S_ISDIR(mode):
        raise SpecError(source, "<file>", source, "is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise SpecError(source, "<file>", source, "not a regular file (a device, pipe or socket)")
    try:
        return path.read_bytes()
    except PermissionError:
        raise SpecError(source, "<file>", source, "cannot read: permission denied") from None
    except OSError as exc:
        raise SpecError(source, "<file>", source, f"cannot read: {exc.strerror or exc}") from None


#: Largest YAML file read, in bytes.
MAX_YAML_BYTES = 32 * 2**20
#: Most values (scalars, lists, mappings) a document may hold once its aliases are expanded.
MAX_YAML_VALUES = 2_000_000
#: Deepest nesting of lists and mappings.
MAX_YAML_DEPTH = 100

_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):
    """PyYAML's safe loader with one number rule (:mod:`dse.util.numbers`): every decimal notation of a
    finite number that Python's ``float()`` reads is a number, as in YAML 1.2. YAML 1.1 takes ``1e+07``,
    ``1e7``, ``1.e5`` and ``-.5`` for text: they are floats here; it reads ``010`` as octal 8: it is 10
    here. ``.inf`` and ``.nan`` stay floats, for each field to refuse by name."""


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    """An integer of the document: a leading zero is decimal (``010`` is 10); ``0x1f``, ``0b101`` as YAML 1.1."""
    text = str(loader.construct_scalar(node))
    if LEADING_ZERO_INTEGER.fullmatch(text):
        return int(text.replace("_", ""))
    return int(_BASE_LOADER.construct_yaml_int(loader, node))


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", FLOAT_PATTERN, list("-+.0123456789"))
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_LOADER: Any = _Loader


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_node_graph(root: yaml.Node, source: str) -> None:
    """:class:`SpecError` when the document under ``root``, its aliases expanded, holds more than
    :data:`MAX_YAML_VALUES` values or nests deeper than :data:`MAX_YAML_DEPTH`, or an alias refers to a
    value that contains it. Linear in the node graph (aliases are shared nodes, counted once each)."""
    done: dict[int, tuple[int, int]] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        if closing:
            open_.discard(key)
            kids = [done[id(k)] for k in _children(node)]
            size = 1 + sum(k[0] for k in kids)
            depth = 1 + max((k[1] for k in kids), default=0)
            if size > MAX_YAML_VALUES:
                line = node.start_mark.line + 1 if node.start_mark else 0
                raise SpecError(source, "<yaml>", None, f"aliases expand to more than {MAX_YAML_VALUES:,} values "
                                f"(at line {line}); write the values out or use fewer nested aliases")
            if depth > MAX_YAML_DEPTH:
                raise SpecError(source, "<yaml>", None, f"nested more than {MAX_YAML_DEPTH} levels deep")
            done[key] = (size, depth)
            continue
        if key in done:
            continue
        if key in open_:
            raise SpecError(source, "<yaml>", None, "an alias refers to a value that contains it (a cycle)")
        if len(open_) > MAX_YAML_DEPTH:
            raise SpecError(source, "<yaml>", None, f"nested more than {MAX_YAML_DEPTH} levels deep")
        open_.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in done)


#: What PyYAML was reading when it failed, in plainer words.
_PLAIN_CONTEXTS = {
    "while parsing a flow mapping": "in the {...} mapping",
    "while parsing a flow sequence": "in the [...] list",
    "while parsing a block mapping": "in the mapping",
    "while parsing a block collection": "in the list or mapping",
    "while scanning a quoted scalar": "in the quoted value",
    "while scanning a simple key": "in the key",
}
#: PyYAML's problems in plainer words (a prefix of its text -> ours; a prefix ending in a space keeps the rest).
_PLAIN_PROBLEMS = {
    "did not find expected key": "a line that is not 'key: value' at this indentation (check the indentation)",
    "did not find expected ": "expected ",
    "could not find expected ": "expected ",
    "mapping values are not allowed": "a ':' where a plain value was expected (quote a value that holds ': ', "
                                      "or check the indentation)",
    "found character '\\t' that cannot start any token": "a tab character: YAML indents with spaces only",
    "found character that cannot start any token": "a character that cannot start a value here (a tab? YAML "
                                                   "indents with spaces only)",
    "found undefined alias": "an alias (*name) with no anchor (&name) before it",
    "found duplicate anchor": "the same anchor (&name) twice",
    "found unexpected end of stream": "the file ends inside a quoted value or a bracket",
}


class YamlSyntaxError(SpecError):
    """A YAML file that does not parse: ``FILE, line L, column C: YAML syntax error: PROBLEM (CONTEXT)``.

    ``field`` is ``line L, column C`` (``<yaml>`` when the parser gave no position)."""

    @classmethod
    def from_yaml(cls, source: str, exc: yaml.YAMLError) -> YamlSyntaxError:
        """The error for PyYAML's ``exc``: its position, its problem in plain words, and where the construct
        it was reading started."""
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "<yaml>"
        problem = str(getattr(exc, "problem", None) or str(exc).replace("\n", " "))
        for prefix, plain in _PLAIN_PROBLEMS.items():
            if problem.startswith(prefix):
                problem = plain + (problem[len(prefix):] if prefix.endswith(" ") else "")
                break
        context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        what = _PLAIN_CONTEXTS.get(str(context))
        if what and start is not None:
            problem += f" ({what} that starts at line {start.line + 1}, column {start.column + 1})"
        error = cls(source, where, None, f"YAML syntax error: {problem[:300]}")
        error.args = (f"{source}, {where}: YAML syntax error: {problem[:300]}",)
        return error

    def __str__(self) -> str:
        return str(self.args[0])


def load_yaml_text(text: str, source: str) -> Any:
    """Parse one YAML document from ``text`` within the limits above; ``None`` for an empty document.

    Raises :class:`SpecError` naming ``source`` (field ``line L, column C`` for a syntax error)."""
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_node_graph(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise YamlSyntaxError.from_yaml(source, exc) from None
    except RecursionError:
        raise SpecError(source, "<yaml>", None, "YAML nesting too deep") from None
    finally:
        loader.dispose()


def read_yaml(path: str | Path) -> Any:
    """Parse ``path`` and return its one YAML document.

    Raises :class:`SpecError` (field ``<file>``) for a missing file, a directory, a file that is
    not regular or not readable, larger than :data:`MAX_YAML_BYTES`, not UTF-8 text (the value is
    the offset of the first bad byte) and an empty file (no document, only comments; the value is
    its size in bytes); field ``line L, column C`` for a YAML syntax error; field ``<yaml>`` past
    the alias-expansion and depth limits.
    """
    path = Path(path)
    source = str(path)
    data = _read_bytes(path)
    if len(data) > MAX_YAML_BYTES:
        raise SpecError(source, "<file>", len(data), f"larger than the {MAX_YAML_BYTES // 2**20} MiB a YAML file may be")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SpecError(source, "<file>", exc.start,
                        f"not UTF-8 text ({exc.reason}: byte 0x{data[exc.start]:02x} at offset {exc.start}, "
                        f"line {line})") from None
    document = load_yaml_text(text, source)
    if document is None and yaml.compose(text, Loader=_LOADER) is None:
        raise SpecError(source, "<file>", len(data),
                        "no YAML document: the file is empty or holds only blank lines and comments")
    return document
