"""Standard Task Graph Set (STG, Kasahara lab, Waseda University) without communication costs.

File layout (whitespace separated integers)::

    N                                  # number of real tasks (dummies not counted)
    0     0   0                        # entry dummy: id, cost 0, no predecessors
    1    20   1   0                    # id, cost, number of predecessors, predecessor ids...
    ...
    N+1   0   k   p1 ... pk            # exit dummy: cost 0, predecessors = the sinks
    # Standard Task Graph Set project  # lines starting with '#': information part

Decisions for the cases the format leaves open:

* Task rows must appear in id order ``0..N+1``; a row may continue on the
  next line(s) when its predecessor list is long, but a line may not hold
  more than one row.
* A predecessor may reference a later task (the standard files never do);
  a cycle is reported on the line of the task whose predecessor closes it.
  Repeated predecessors in one row count once.
* Comment lines (``#`` first) anywhere become the workload ``description``,
  one line each, with the ``#`` and one following space removed.
* Ops are named ``t{id}``, ``op_class="generic"``, ``work=cost``, all byte
  counts 0 (edges carry nothing).
* A file declaring more than :data:`~dse.model.workload.MAX_OPS` tasks (dummies
  included) or a cost above :data:`~dse.model.workload.MAX_WORK` is refused on
  the line that says so, before anything is allocated.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dse.errors import SpecError
from dse.inputs.importers._common import read_text, write_text
from dse.model.workload import MAX_OPS, MAX_WORK, Op, Workload, validate_workload
from dse.util.graphs import lexicographic_topological_order

__all__ = ["read_stg", "write_stg"]


def _lines(text: str, comments: list[str]) -> Iterator[tuple[int, list[str]]]:
    """(line number, tokens) of the non-blank, non-comment lines; comments are collected."""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            body = line.lstrip()[1:]
            comments.append(body[1:] if body.startswith(" ") else body)
            continue
        yield number, stripped.split()


def _int(source: str, line: int, token: str, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise SpecError(source, f"line {line}", token, f"{what} must be an integer") from None


def read_stg(path: str | Path, *, keep_dummies: bool = True) -> Workload:
    """Read an STG file into a :class:`Workload` (see the module docstring for the format).

    With ``keep_dummies=False`` the entry (``t0``) and exit (``t{N+1}``) dummies
    and their edges are dropped; they must then have cost 0, the entry no
    predecessors and the exit no successors.
    Raises :class:`SpecError` naming the file and the line.
    """
    source = str(path)
    comments: list[str] = []
    lines = _lines(read_text(path), comments)
    try:
        count_line, header = next(lines)
    except StopIteration:
        raise SpecError(source, "line 1", None, "empty file: expected the task count N") from None
    if len(header) != 1:
        raise SpecError(source, f"line {count_line}", " ".join(header),
                        "the first line must hold only the task count N "
                        "(the two-number prototype STG format is not supported)")
    n_real = _int(source, count_line, header[0], "the task count N")
    if n_real < 0:
        raise SpecError(source, f"line {count_line}", n_real, "the task count N must be >= 0")
    if n_real + 2 > MAX_OPS:
        raise SpecError(source, f"line {count_line}", n_real,
                        f"N + 2 = {n_real + 2} tasks (with the dummies) is more than the {MAX_OPS} ops a workload may hold")
    n_rows = n_real + 2

    costs: list[int] = []
    preds: list[list[int]] = []
    row_line: list[int] = []
    for line, tokens in lines:
        task = len(costs)
        if task >= n_rows:
            raise SpecError(source, f"line {line}", " ".join(tokens),
                            f"more task rows than N + 2 = {n_rows} (N = {n_real} on line {count_line}, "
                            "plus the entry and exit dummies)")
        pos = 0
        needed = 3
        values: list[int] = []
        cur_line, cur = line, tokens
        while len(values) < needed:
            if pos == len(cur):  # the row continues on the next line
                try:
                    cur_line, cur = next(lines)
                except StopIteration:
                    raise SpecError(source, f"line {line}", " ".join(tokens),
                                    f"task row ends early: expected {needed - 3} predecessor ids") from None
                pos = 0
            what = ("the task id", "the task cost", "the number of predecessors")[len(values)] \
                if len(values) < 3 else "a predecessor id"
            values.append(_int(source, cur_line, cur[pos], what))
            pos += 1
            if len(values) == 3:
                if values[2] < 0:
                    raise SpecError(source, f"line {line}", values[2], "the number of predecessors must be >= 0")
                needed = 3 + values[2]
        if pos != len(cur):
            raise SpecError(source, f"line {cur_line}", " ".join(cur[pos:]),
                            f"extra fields after the {needed - 3} predecessors of task {values[0]}")
        tid, cost = values[0], values[1]
        if tid != task:
            raise SpecError(source, f"line {line}", tid,
                            f"task ids must be 0..{n_rows - 1} in file order; expected {task}")
        if not 0 <= cost <= MAX_WORK:
            raise SpecError(source, f"line {line}", cost, f"the cost of task {tid} must be in [0, {MAX_WORK:g}]")
        plist: list[int] = []
        for p in values[3:]:
            if not 0 <= p < n_rows:
                raise SpecError(source, f"line {line}", p,
                                f"predecessor of task {tid} is out of range 0..{n_rows - 1}")
            if p == tid:
                raise SpecError(source, f"line {line}", p, f"task {tid} lists itself as a predecessor")
            if p not in plist:
                plist.append(p)
        costs.append(cost)
        preds.append(plist)
        row_line.append(line)
    if len(costs) != n_rows:
        raise SpecError(source, f"line {count_line}", n_real,
                        f"the count N = {n_real} needs N + 2 = {n_rows} task rows (with the entry and exit "
                        f"dummies), but the file has {len(costs)}")

    edges = [(p, t) for t in range(n_rows) for p in preds[t]]
    _check_acyclic(source, n_rows, edges, row_line)

    ids = list(range(n_rows))
    if not keep_dummies:
        exit_id = n_rows - 1
        for dummy, line in ((0, row_line[0]), (exit_id, row_line[exit_id])):
            if costs[dummy] != 0:
                raise SpecError(source, f"line {line}", costs[dummy],
                                f"task {dummy} is not a dummy (nonzero cost); read with keep_dummies=True")
        if preds[0]:
            raise SpecError(source, f"line {row_line[0]}", preds[0], "the entry dummy task 0 has predecessors")
        for p, t in edges:
            if p == exit_id:
                raise SpecError(source, f"line {row_line[t]}", p,
                                f"task {t} depends on the exit dummy {exit_id}; read with keep_dummies=True")
        ids = ids[1:-1]
        edges = [(p, t) for p, t in edges if p != 0 and t != exit_id]
    index = {tid: i for i, tid in enumerate(ids)}
    ops = tuple(Op(name=f"t{tid}", op_class="generic", work=float(costs[tid])) for tid in ids)
    workload = Workload(
        name=Path(path).stem,
        ops=ops,
        edges=tuple((index[p], index[t]) for p, t in edges),
        edge_bytes=tuple(0.0 for _ in edges),
        description="\n".join(comments),
    )
    return validate_workload(workload, source)


def _check_acyclic(source: str, n: int, edges: list[tuple[int, int]], row_line: list[int]) -> None:
    if len(lexicographic_topological_order(n, edges)) == n:
        return
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    cycle = nx.find_cycle(graph)
    # every cycle holds an edge p -> t with p > t (a forward reference): report that row
    p, t = next((p, t) for p, t in cycle if p > t)
    names = [f"t{u}" for u, _ in cycle]
    raise SpecError(source, f"line {row_line[t]}", p,
                    f"predecessor {p} of task {t} closes a cycle {' -> '.join(names + names[:1])}")


def write_stg(workload: Workload, path: str | Path, *, has_dummies: bool | None = None) -> None:
    """Write ``workload`` as an STG file (no communication costs).

    Tasks are numbered in a topological order (smallest op index first among
    ready ops), so the file never references a later task. ``has_dummies``
    says whether the workload already holds the entry/exit dummies (as
    :func:`read_stg` returns with ``keep_dummies=True``); ``None`` detects it:
    a workload of two or more ops whose single source and single sink both
    have work 0 is taken to have them. Otherwise an entry dummy ``0``
    (preceding every source) and an exit dummy ``N+1`` (following every sink)
    are added. Only ``work`` (an integer) and the edges are stored: names,
    bytes and every other field are lost; ``description`` lines become ``#``
    comments after the task rows.
    """
    source = str(path)
    validate_workload(workload, source)
    n = workload.n_ops
    for i, op in enumerate(workload.ops):
        if not float(op.work).is_integer():
            raise SpecError(source, f"ops[{i}].work", op.work, "STG task costs are integers")
    order = workload.topological_order()
    preds: list[list[int]] = [[] for _ in range(n)]
    succs = [0] * n
    for s, d in workload.edges:
        if s not in preds[d]:
            preds[d].append(s)
            succs[s] += 1
    sources = [i for i in range(n) if not preds[i]]
    sinks = [i for i in range(n) if succs[i] == 0]
    if has_dummies is None:
        has_dummies = (
            n >= 2 and len(sources) == 1 and len(sinks) == 1
            and workload.ops[sources[0]].work == 0 and workload.ops[sinks[0]].work == 0
        )
    if has_dummies:
        if not (n >= 2 and len(sources) == 1 and len(sinks) == 1):
            raise SpecError(source, "ops", [workload.ops[i].name for i in sources + sinks],
                            "has_dummies=True needs exactly one source and one sink")
        task_id = {op: k for k, op in enumerate(order)}
        rows = [(task_id[i], int(workload.ops[i].work), [task_id[p] for p in preds[i]]) for i in order]
    else:
        task_id = {op: k + 1 for k, op in enumerate(order)}
        rows = [(0, 0, [])]
        rows += [(task_id[i], int(workload.ops[i].work), [task_id[p] for p in preds[i]] or [0])
                 for i in order]
        rows.append((n + 1, 0, sorted(task_id[i] for i in sinks)))
    lines = [f"{len(rows) - 2:>11}"]
    for tid, cost, plist in rows:
        lines.append("".join(f"{v:>11}" for v in (tid, cost, len(plist), *plist)))
    lines += [f"# {c}" if c else "#" for c in workload.description.splitlines()]
    write_text(path, "\n".join(lines) + "\n")
