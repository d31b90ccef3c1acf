"""The mappings handed to ``dse certify``, believed in nothing.

A ``front.json`` or ``front.csv`` is a file anyone can edit: every point is checked before CP-SAT
sees it. Its genome must be a list of integers (never booleans, fractions or strings) of the
problem's length, each gene within the problem's bounds; the point is evaluated again, and a point
the file says is feasible must be feasible, with the internal objective values the file records. A
point that breaks one of these rules is refused: :class:`~dse.errors.SpecError` naming the file, the
point (``fronts[0].points[3]``, or the CSV row) and the field. Points the file itself marks
infeasible are left out, duplicates are merged, each with a note; a claim that a point is ``proven``
is never carried over (only the certifying search proves points), and a note says so.

The spec the front was solved for is checked too: ``dse solve`` records the SHA-256 of the spec
file's bytes in ``front.json`` (``spec_sha256``, :func:`spec_digest`); a spec whose bytes differ now
would certify the mappings against another problem, so :func:`check_spec_unchanged` refuses it
unless the caller accepts the change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dse.errors import SpecError
from dse.inputs import catalog
from dse.mapping.base import MappingProblem
from dse.util.result_files import front_file


@dataclass(frozen=True)
class Recorded:
    """What a ``front.json`` records of its solve: the spec's path and the SHA-256 of its bytes then."""

    spec: str | None = None
    spec_sha256: str | None = None


@dataclass(frozen=True)
class GivenPoint:
    """One point of a given front as its file states it: where it is (``fronts[0].points[3]``, ``row 3``),
    its genome and its claims (None: the file makes none)."""

    where: str
    genome: tuple[int, ...]
    feasible: bool | None = None
    internal: tuple[int, ...] | None = None
    proven: bool = False


@dataclass(frozen=True)
class GivenMappings:
    """The checked, distinct genomes of a given front (file order) and what was noted on the way."""

    genomes: tuple[np.ndarray, ...]
    notes: tuple[str, ...]


def spec_digest(spec: str | Path) -> str | None:
    """SHA-256 (hex) of the bytes of spec file ``spec`` (a path or a catalog name); None when unreadable."""
    try:
        return hashlib.sha256(catalog.spec_path(spec).read_bytes()).hexdigest()
    except OSError:
        return None


def _json_document(path: Path) -> dict[str, Any]:
    """``path`` parsed and checked against the front.json schema (:func:`dse.util.result_files.front_file`)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise SpecError(str(path), "front.json", None, f"cannot be read: {str(exc)[:200]}") from None
    return front_file(doc, str(path))


def recorded(json_file: Path | None) -> Recorded:
    """The spec path and digest ``json_file`` records (each None when absent); SpecError for a file that
    is not JSON or does not fit the front.json schema."""
    if json_file is None:
        return Recorded()
    doc = _json_document(json_file)
    return Recorded(doc.get("spec"), doc.get("spec_sha256"))


def check_spec_unchanged(json_file: Path, spec: str, solved: Recorded, allow_changed: bool) -> str | None:
    """None when ``spec``'s bytes are those recorded at solve time, else the line that says they are not
    (or that no digest was recorded): returned as a warning when ``allow_changed``, raised as
    :class:`SpecError` naming ``json_file`` otherwise (certifying would answer for another problem)."""
    if solved.spec_sha256 is None:
        return (f"{json_file} records no digest of its spec (written before dse recorded one): {spec} cannot "
                "be checked to be the spec that was solved")
    now = spec_digest(spec)
    if now == solved.spec_sha256:
        return None
    line = (f"the spec {spec} has changed since the solve (content SHA-256 {solved.spec_sha256[:12]}... at "
            f"solve time, {str(now)[:12]}... now): its mappings would be certified against another problem")
    if allow_changed:
        return line
    raise SpecError(str(json_file), "spec_sha256", solved.spec_sha256[:12],
                    f"{line}; solve again, or give --allow-changed-spec to certify against the spec as it is now")


def _integers(value: Any, source: str, field: str, what: str) -> tuple[int, ...]:
    """``value`` as a tuple of ints when it is a JSON list of integers (booleans and floats are not)."""
    if not isinstance(value, list):
        raise SpecError(source, field, str(value)[:40], f"must be a list of integers ({what})")
    bad = next((g for g in value if type(g) is not int), None)
    if bad is not None:
        raise SpecError(source, field, str(value)[:40],
                        f"must hold integers ({what}), not {type(bad).__name__} {str(bad)[:20]}")
    return tuple(value)


def _flag(point: dict[str, Any], key: str, source: str, where: str) -> bool | None:
    value = point.get(key)
    if value is not None and not isinstance(value, bool):
        raise SpecError(source, f"{where}.{key}", str(value)[:40], "must be true or false")
    return value


def json_points(path: Path) -> list[GivenPoint]:
    """Every point of a ``front.json`` (``dse solve``'s document with ``fronts``, or one front's), its
    genome and claims type-checked; SpecError naming the file, the point and the field otherwise."""
    doc = _json_document(path)
    fronts = doc["fronts"] if "fronts" in doc else [doc]
    if not isinstance(fronts, list):
        raise SpecError(str(path), "fronts", str(fronts)[:40], "must be a list of fronts")
    points = []
    for i, front in enumerate(fronts):
        where = f"fronts[{i}]" if "fronts" in doc else "<root>"
        rows = front.get("points") if isinstance(front, dict) else None
        if not isinstance(rows, list):
            raise SpecError(str(path), f"{where}.points", str(rows)[:40], "must be a list of points")
        for k, point in enumerate(rows):
            at = f"{where}.points[{k}]" if "fronts" in doc else f"points[{k}]"
            if not isinstance(point, dict) or "genome" not in point:
                raise SpecError(str(path), at, str(point)[:40], "must be a point with a genome")
            internal = point.get("internal")
            points.append(GivenPoint(
                where=at, genome=_integers(point["genome"], str(path), f"{at}.genome", "a gene per op"),
                feasible=_flag(point, "feasible", str(path), at),
                internal=None if internal is None else _integers(internal, str(path), f"{at}.internal",
                                                                 "internal objective values"),
                proven=bool(_flag(point, "proven", str(path), at))))
    return points


def csv_points(path: Path) -> list[GivenPoint]:
    """Every row of a ``front.csv``: its ``genome`` (space-separated integers) and, where the column is
    there, its ``feasible`` and ``proven`` claims; SpecError naming the file, the row and the column."""
    import pandas as pd

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise SpecError(str(path), "front.csv", None, f"cannot be read: {str(exc)[:200]}") from None
    if "genome" not in frame:
        raise SpecError(str(path), "genome", None, "column missing: not a front.csv written by dse solve")
    flags = {"True": True, "False": False, "true": True, "false": False, "": None}
    points = []
    for k, row in enumerate(frame.to_dict("records")):
        parts = str(row["genome"]).split()
        if not parts or not all(p.isdigit() and len(p) <= 10 for p in parts):
            raise SpecError(str(path), f"row {k}, genome", str(row["genome"])[:40],
                            "must be space-separated non-negative integers")
        claims = {}
        for column in ("feasible", "proven"):
            text = str(row.get(column, ""))
            if text not in flags:
                raise SpecError(str(path), f"row {k}, {column}", text[:40], "must be True or False")
            claims[column] = flags[text]
        points.append(GivenPoint(where=f"row {k}", genome=tuple(int(p) for p in parts),
                                 feasible=claims["feasible"], proven=bool(claims["proven"])))
    return points


def checked_mappings(problem: MappingProblem, points: Sequence[GivenPoint], source: str,
                     trust_values: bool = False) -> GivenMappings:
    """The distinct genomes of ``points`` once each fits ``problem`` and its claims hold on evaluation.

    Raises :class:`SpecError` naming ``source``, the point and the field for a genome of the wrong length
    or with a gene out of bounds, a point claimed feasible that violates a constraint, and recorded
    internal values that differ from the evaluation's (unless ``trust_values``: then such points are
    noted and checked no further, as when the spec changed since the solve and the caller accepted it).
    Points marked infeasible are left out and duplicates merged, each with a note; proofs are noted
    as not carried over."""
    lower, upper = problem.lower, problem.upper
    for p in points:
        if len(p.genome) != problem.n_genes:
            raise SpecError(source, f"{p.where} genome", " ".join(map(str, p.genome[:8])),
                            f"has {len(p.genome)} genes; {problem.name} takes {problem.n_genes}: was the front "
                            "written for another spec?")
        outside = [j for j, g in enumerate(p.genome) if not lower[j] <= g <= upper[j]]
        if outside:
            j = outside[0]
            raise SpecError(source, f"{p.where} genome", " ".join(map(str, p.genome[:8])),
                            f"gene {j} '{problem.gene_names[j]}' = {p.genome[j]} is outside "
                            f"{int(lower[j])}..{int(upper[j])} of {problem.name}: was the front written for "
                            "another spec?")
    notes = []
    if not points:
        return GivenMappings((), ())
    ev = problem.evaluate(np.array([p.genome for p in points], dtype=np.int64))
    kept: dict[tuple[int, ...], GivenPoint] = {}
    infeasible, duplicates, changed = [], [], []
    for k, p in enumerate(points):
        values = tuple(int(v) for v in ev.F[k])
        feasible = bool(ev.feasible[k])
        if p.internal is not None and p.internal != values:
            if not trust_values:
                raise SpecError(source, f"{p.where} internal", str(list(p.internal))[:60],
                                f"differs from the evaluation of its genome ({list(values)}): the point was edited "
                                "or written for another problem")
            changed.append(p.where)
        if p.feasible and not feasible:
            if not trust_values:
                violated = ", ".join(f"the {name} constraint (slack {slack:.3g})" for name, slack
                                     in problem.slack(ev.G[k]).items() if slack < 0) or "a constraint"
                raise SpecError(source, f"{p.where} feasible", "true",
                                f"but its genome violates {violated}: the point was edited or written for "
                                "another problem")
            changed.append(p.where)
        if not feasible:
            infeasible.append(p.where)
        elif p.genome in kept:
            duplicates.append(f"{p.where} (= {kept[p.genome].where})")
        else:
            kept[p.genome] = p
    proven = [p.where for p in points if p.proven]
    if duplicates:
        notes.append(f"{len(duplicates)} duplicated point{'s' * (len(duplicates) > 1)} merged: "
                     + _some(duplicates))
    if infeasible:
        notes.append(f"{len(infeasible)} point{'s' * (len(infeasible) > 1)} violating the constraints left out: "
                     + _some(infeasible))
    if changed:
        notes.append(f"{len(changed)} point{'s' * (len(changed) > 1)} whose recorded values differ from their "
                     f"evaluation now, evaluated again: " + _some(changed))
    if proven:
        notes.append(f"{len(proven)} point{'s' * (len(proven) > 1)} marked proven in the file: proofs are not "
                     "carried over, only this search proves points")
    return GivenMappings(tuple(np.array(g, dtype=np.int64) for g in kept), tuple(notes))


def _some(items: Sequence[str], n: int = 4) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")
