"""``dse results --where EXPR``: a condition over the columns of a jobs table, and nothing else.

The filter is a documented input that may come from a shared script or a
service, so it is never handed to ``eval`` or to pandas' query engines (whose
Python engine resolves ``@`` references and runs calls). :func:`where_mask`
parses it with :mod:`ast` and walks an allow-list:

* column names, bare (``status``), dotted (``constraints.power_w``, a swept
  field) or between backticks (```constraints.power_w```);
* literals: numbers, text, ``True``/``False``/``None``, and lists or tuples of
  them on the right of ``in`` / ``not in``;
* comparisons, chained ones included (``100 < wall_s <= 200``);
* ``and``, ``or``, ``not`` (and pandas' ``&``, ``|``, ``~``);
* arithmetic (``+ - * / // % **``, unary ``-``) on numeric columns and numbers.

Anything else (attribute access, calls, subscripts, ``@`` references, lambdas,
comprehensions, f-strings, assignments) is refused with a :class:`SpecError`
naming the construct, before any column is read. The mask is built from pandas'
own vectorised operators.
"""

from __future__ import annotations

import ast
import io
import math
import operator
import re
import tokenize
from collections.abc import Callable, Sequence
from typing import Any

from dse.errors import SpecError
from dse.util.suggest import did_you_mean

#: The longest expression accepted, in characters, and the deepest nesting of its parts.
MAX_EXPRESSION_CHARS = 4000
MAX_DEPTH = 60
#: The largest integer literal (beyond int64 it is no column's value).
MAX_INTEGER = 2**63

WHERE, FIELD = "command line", "--where"

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
#: What a refused node is called in the message.
_REFUSED: dict[type[ast.AST], str] = {
    ast.Attribute: "attribute access (.name)", ast.Call: "a call", ast.Subscript: "a subscript ([...])",
    ast.Lambda: "a lambda", ast.ListComp: "a comprehension", ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension", ast.GeneratorExp: "a comprehension", ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment (:=)", ast.IfExp: "a conditional expression (x if c else y)",
    ast.Dict: "a dict", ast.Set: "a set", ast.Starred: "a starred expression", ast.Await: "await",
    ast.Yield: "yield", ast.YieldFrom: "yield", ast.Slice: "a slice",
}


def _refuse(expr: str, reason: str) -> SpecError:
    return SpecError(WHERE, FIELD, expr, reason)


def _placeholders(expr: str, columns: Sequence[str]) -> tuple[str, dict[str, str]]:
    """``expr`` with every backtick-quoted name and every bare column name that is no Python identifier
    (``constraints.power_w``) replaced by a placeholder identifier; returns the text and placeholder -> column."""
    names: dict[str, str] = {}

    def hold(name: str) -> str:
        key = f"_column_{len(names)}_"
        names[key] = name
        return key

    text = re.sub(r"`([^`]*)`", lambda m: hold(m.group(1)), expr)
    dotted = sorted((c for c in columns if not c.isidentifier()), key=len, reverse=True)
    for name in dotted:
        key = hold(name)
        text = re.sub(rf"(?<![\w.'\"]){re.escape(name)}(?![\w'\"])", key, text)
    return text, names


def _check_tokens(expr: str, text: str) -> None:
    """Refuse an ``@`` outside text literals (pandas' reference to a Python variable) before parsing."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string in ("@", "@="):
                raise _refuse(expr, "an @ reference (a Python variable) is not allowed: the filter reads "
                                    "the listed columns only")
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return  # the parser says what is wrong


class _Evaluator:
    """Walks a parsed filter over ``frame``: each node is a column (a Series), a literal or a list of literals."""

    def __init__(self, expr: str, frame: Any, names: dict[str, str]) -> None:
        self.expr, self.frame, self.names = expr, frame, names
        self.columns = [str(c) for c in frame.columns]

    def refuse(self, reason: str) -> SpecError:
        return _refuse(self.expr, reason)

    def value(self, node: ast.AST, depth: int = 0) -> Any:
        import pandas as pd

        if depth > MAX_DEPTH:
            raise self.refuse(f"nested more than {MAX_DEPTH} levels deep")
        if type(node) in _REFUSED:
            raise self.refuse(f"{_REFUSED[type(node)]} is not allowed: the filter is a condition over the "
                              "columns (comparisons, and/or/not, in [...], arithmetic)")
        if isinstance(node, ast.Constant):
            return self.constant(node.value)
        if isinstance(node, ast.Name):
            return self.column(node.id)
        if isinstance(node, ast.List | ast.Tuple):
            raise self.refuse("a list is allowed only on the right of 'in' or 'not in'")
        if isinstance(node, ast.BoolOp):
            parts = [self.condition(v, depth + 1) for v in node.values]
            combine = operator.and_ if isinstance(node.op, ast.And) else operator.or_
            result = parts[0]
            for part in parts[1:]:
                result = combine(result, part)
            return result
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not | ast.Invert):
                inner = self.condition(node.operand, depth + 1)
                return ~inner if isinstance(inner, pd.Series) else not inner
            operand = self.number(node.operand, depth + 1)
            return -operand if isinstance(node.op, ast.USub) else +operand
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.BitAnd | ast.BitOr):  # pandas' spelling of and / or
                left, right = self.condition(node.left, depth + 1), self.condition(node.right, depth + 1)
                return (left & right) if isinstance(node.op, ast.BitAnd) else (left | right)
            if type(node.op) not in _ARITHMETIC:
                raise self.refuse(f"the operator {type(node.op).__name__} is not allowed")
            return self.arithmetic(node.op, self.number(node.left, depth + 1), self.number(node.right, depth + 1))
        if isinstance(node, ast.Compare):
            return self.compare(node, depth)
        raise self.refuse(f"{type(node).__name__} is not allowed: the filter is a condition over the columns")

    def constant(self, value: Any) -> Any:
        if value is None or isinstance(value, bool | str | float):
            return value
        if isinstance(value, int):
            if abs(value) > MAX_INTEGER:
                raise self.refuse(f"the number {str(value)[:20]}... is past 2^63")
            return value
        raise self.refuse(f"a {type(value).__name__} literal is not allowed")

    def column(self, name: str) -> Any:
        column = self.names.get(name, name)
        if column not in self.columns:
            raise self.refuse(f"unknown column {column!r}{did_you_mean(column, self.columns)}; "
                              f"columns are {', '.join(self.columns)}")
        return self.frame[column]

    def condition(self, node: ast.AST, depth: int) -> Any:
        """A boolean Series or a bool (what and/or/not combine)."""
        import pandas as pd

        value = self.value(node, depth + 1)
        if isinstance(value, pd.Series) and pd.api.types.is_bool_dtype(value):
            return value
        if isinstance(value, bool):
            return value
        raise self.refuse("and, or and not combine conditions (true or false for each job), not values")

    def number(self, node: ast.AST, depth: int) -> Any:
        """A numeric Series or a number (what arithmetic takes; text is never repeated or joined)."""
        import pandas as pd

        value = self.value(node, depth + 1)
        if isinstance(value, pd.Series) and pd.api.types.is_numeric_dtype(value):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        raise self.refuse("arithmetic takes numbers and numeric columns only")

    def arithmetic(self, op: ast.operator, left: Any, right: Any) -> Any:
        if isinstance(op, ast.Pow) and not hasattr(left, "dtype") and not hasattr(right, "dtype"):
            try:  # two literals: as floats, so that 9 ** 9 ** 9 overflows at once instead of running
                return math.pow(float(left), float(right))
            except (OverflowError, ValueError) as exc:
                raise self.refuse(f"{left} ** {right}: {exc}") from None
        try:
            return _ARITHMETIC[type(op)](left, right)
        except (ZeroDivisionError, OverflowError, TypeError, ValueError) as exc:
            raise self.refuse(f"{type(exc).__name__}: {exc}") from None

    def literals(self, node: ast.AST) -> list[Any]:
        if not isinstance(node, ast.List | ast.Tuple):
            raise self.refuse("'in' and 'not in' take a list of literals, e.g. status in ['done', 'timeout']")
        values = []
        for item in node.elts:
            if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub) and isinstance(item.operand,
                                                                                               ast.Constant):
                values.append(-self.constant(item.operand.value))
            elif isinstance(item, ast.Constant):
                values.append(self.constant(item.value))
            else:
                raise self.refuse("'in' and 'not in' take a list of literals only")
        return values

    def compare(self, node: ast.Compare, depth: int) -> Any:
        import pandas as pd

        result: Any = None
        left = self.value(node.left, depth + 1)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                if len(node.ops) > 1:
                    raise self.refuse("'in' and 'not in' cannot be chained with another comparison")
                values = self.literals(right_node)
                if not isinstance(left, pd.Series):
                    raise self.refuse("'in' needs a column on its left")
                part = left.isin(values)
                part = ~part if isinstance(op, ast.NotIn) else part
                right = None
            elif type(op) in _COMPARE:
                right = self.value(right_node, depth + 1)
                try:
                    part = _COMPARE[type(op)](left, right)
                except (TypeError, ValueError) as exc:
                    raise self.refuse(f"cannot compare: {exc}") from None
            else:
                raise self.refuse(f"the comparison {type(op).__name__} ('is') is not allowed; use == or !=")
            result = part if result is None else result & part
            left = right
        return result


def where_mask(frame: Any, expr: str) -> Any:
    """The boolean Series of the rows of ``frame`` where the filter ``expr`` holds (see the module docstring).
    Raises :class:`SpecError` (exit 2) naming ``--where`` for a construct outside the allow-list, an unknown
    column, a syntax error, or an expression that is not a condition."""
    import pandas as pd

    if len(expr) > MAX_EXPRESSION_CHARS:
        raise _refuse(expr, f"longer than {MAX_EXPRESSION_CHARS} characters")
    columns = [str(c) for c in frame.columns]
    text, names = _placeholders(expr, columns)
    _check_tokens(expr, text)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        reason = getattr(exc, "msg", None) or type(exc).__name__
        raise _refuse(expr, f"not an expression ({reason}); columns are {', '.join(columns)}") from None
    mask = _Evaluator(expr, frame, names).value(tree.body)
    if isinstance(mask, bool):
        mask = pd.Series([mask] * len(frame), index=frame.index, dtype=bool)
    if not isinstance(mask, pd.Series) or not pd.api.types.is_bool_dtype(mask) or len(mask) != len(frame):
        raise _refuse(expr, "must be a condition (true or false for each job)")
    return mask
