"""``dse explain SPEC --genome "1 0 2 ..."`` or ``--point N --from DIR``: one mapping, explained.

Prints what ``problem.decode(x).explain()`` says (per-device and per-link
costs, what binds, each constraint's slack), preceded by the mapping in one
line and its objectives in user units. ``--point N`` takes row ``N`` (0 = the
first) of ``DIR/front.csv``, a folder written by ``dse solve --out DIR``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from dse.cli.commands import Command, register_command
from dse.errors import GenomeError, SpecError

WHERE = "command line"
#: Largest gene value accepted before conversion (every gene is a device index, a level or a priority).
MAX_GENE = 2**31 - 1
#: Most genes a genome may have.
MAX_GENES = 1_000_000


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", help="problem spec YAML (a path or a catalog problem name)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--genome", help='the genome as space-separated integers, e.g. "1 0 2"')
    which.add_argument("--point", type=int, metavar="N", help="row N (0 = first) of front.csv in the --from folder")
    parser.add_argument("--from", dest="source", type=Path, metavar="DIR",
                        help="folder written by dse solve --out (with --point)")


def parse_genome(text: str, field: str = "--genome") -> np.ndarray:
    """Space- or comma-separated integers in [0, MAX_GENE] as an int64 array (each range-checked before
    the conversion); :class:`SpecError` naming ``field`` otherwise."""
    parts = text.replace(",", " ").split()
    if len(parts) > MAX_GENES:
        raise SpecError(WHERE, field, text, f"has {len(parts):,} genes; at most {MAX_GENES:,}")
    values = []
    for k, part in enumerate(parts):
        token = part.lstrip("+")
        if not token.isdigit() or len(token) > 10 or int(token) > MAX_GENE:
            raise SpecError(WHERE, field, text, f"gene {k} ({part[:20]}) must be an integer in [0, {MAX_GENE}]")
        values.append(int(token))
    if not values:
        raise SpecError(WHERE, field, text, "is empty")
    return np.asarray(values, dtype=np.int64)


def genome_from_front(folder: Path, row: int) -> str:
    """The genome text of row ``row`` of ``folder/front.csv``; :class:`SpecError` for a missing file or row."""
    import pandas as pd

    path = folder / "front.csv"
    if not path.is_file():
        raise SpecError(WHERE, "--from", str(folder), "has no front.csv (write one with dse solve SPEC --out DIR)")
    try:
        frame = pd.read_csv(path, dtype={"genome": str})
    except (ValueError, OSError) as exc:
        raise SpecError(str(path), "<file>", str(path), f"cannot read it as CSV: {exc}") from None
    if "genome" not in frame.columns:
        raise SpecError(str(path), "genome", None, "no genome column: not a front.csv written by dse solve")
    if not 0 <= row < len(frame):
        raise SpecError(WHERE, "--point", row, f"front.csv has {len(frame)} rows: give 0 to {len(frame) - 1}")
    return str(frame["genome"].iloc[row])


def check_genome(problem, x: np.ndarray, field: str, text: str) -> None:
    """:class:`SpecError` naming ``field`` and quoting ``text`` (the genome as the user gave it) unless ``x``
    has the problem's length and every gene is within its bounds (the problem's own check,
    :meth:`~dse.mapping.base.MappingProblem.checked_genomes`, which names the gene)."""
    try:
        problem.checked_genomes(x)
    except GenomeError as exc:
        raise SpecError(WHERE, field, text, str(exc)) from None


def explain(problem, x: np.ndarray) -> str:
    """The mapping of genome ``x`` in one line, its objectives in user units (the totals of its breakdown,
    the values the front reports), then ``decode(x).explain()``."""
    from dse.inputs.catalog import time_unit_note

    mapping = problem.decode(x)
    costs = mapping.breakdown()
    totals = costs.totals if costs is not None else mapping.values()
    internal = np.array([[totals[o.internal_name] for o in problem.objectives]], dtype=np.int64)
    values = problem.user_objectives(internal)[0]
    feasible = all(slack >= 0 for slack in mapping.constraint_slack.values())
    objectives = ", ".join(f"{o.name} {v:.5g} {o.unit}" for o, v in zip(problem.objectives, values, strict=True))
    lines = [f"mapping: {problem.describe(x)}",
             f"objectives: {objectives}" + ("" if feasible else "  (violates a constraint)"),
             mapping.explain()]
    note = time_unit_note(problem.tables.time_unit)
    return "\n".join(lines + ([f"({note})"] if note else []))


def _run(args: argparse.Namespace) -> int:
    from dse.runs.spec import build_problem, load_spec

    if args.point is not None and args.source is None:
        raise SpecError(WHERE, "--from", None, "--point N needs --from DIR (a folder written by dse solve --out)")
    if args.genome is not None and args.source is not None:
        raise SpecError(WHERE, "--from", str(args.source), "goes with --point, not --genome")
    if args.genome is not None:
        text, field = args.genome, "--genome"
        x = parse_genome(text)
    else:
        text, field = genome_from_front(args.source, args.point), "--point"
        x = parse_genome(text, f"{args.source / 'front.csv'}: row {args.point} genome")
    problem = build_problem(load_spec(args.spec))
    check_genome(problem, x, field, text)
    print(explain(problem, x))
    return 0


register_command(Command("explain", "explain one mapping: a genome, or a point of a solved front", _arguments, _run))
