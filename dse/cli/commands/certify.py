"""``dse certify OUT_DIR_OR_CSV --time-limit S``: how far a front can be from the true Pareto front.

Reads the mappings of a ``dse solve --out`` folder (``front.json``, every front in it) or of a
``front.csv`` (its ``genome`` column), rebuilds the problem from the spec recorded in ``front.json``
(or ``--spec``), checks every mapping and the spec (:mod:`dse.runs.given_front`: nothing in the
files is believed), and runs :func:`dse.solvers.certify.certify`: CP-SAT takes the mappings as found
points, closes what regions it can and adds better points within the time limit. Prints the
certificate and writes the certified front to ``--out`` (default ``<folder>/certified/``):
``front.csv``, ``front.json`` with the certificate, and ``pareto.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from dse.cli.commands import Command, register_command
from dse.errors import SpecError
from dse.inputs import catalog
from dse.mapping.base import Objective
from dse.pareto import INTERRUPTED, Certificate
from dse.runs.given_front import (
    GivenMappings,
    check_spec_unchanged,
    checked_mappings,
    csv_points,
    json_points,
    recorded,
    spec_digest,
)
from dse.runs.runner import write_fronts as _write
from dse.runs.spec import load_problem
from dse.solvers.certify import certify
from dse.util.files import check_out_folder
from dse.util.interrupt import interruptible
from dse.util.jit import time_limit_ends
from dse.util.limits import check_seed, check_time_limit
from dse.util.progress import Progress

WHERE = "command line"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("front", type=Path, help="a dse solve --out folder (front.json) or a front.csv")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds for CP-SAT (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="CP-SAT's random seed (default 0)")
    parser.add_argument("--spec", help="the problem spec (default: the one recorded in front.json)")
    parser.add_argument("--out", type=Path, help="folder for the certified front (default <folder>/certified)")
    parser.add_argument("--allow-changed-spec", action="store_true",
                        help="certify even when the spec changed since the solve (a warning, not a refusal)")


def _sources(path: Path) -> tuple[Path | None, Path | None]:
    """(front.json, front.csv) of ``path``: a folder's front.json (its front.csv when it has none), or one
    of the files (a front.csv with the front.json beside it, for the spec it records); the mappings are
    read from the CSV when one is returned."""
    if path.is_dir():
        json_file, csv_file = path / "front.json", path / "front.csv"
        if json_file.is_file():
            return json_file, None
        return None, (csv_file if csv_file.is_file() else None)
    if path.suffix == ".json" and path.is_file():
        return path, None
    if path.suffix == ".csv" and path.is_file():
        beside = path.parent / "front.json"
        return (beside if beside.is_file() else None), path
    raise SpecError(WHERE, "FRONT", str(path), "is neither a dse solve --out folder nor a front.json or front.csv")


def _given(problem, json_file: Path | None, csv_file: Path | None, trust_values: bool) -> GivenMappings:
    """The checked mappings of the front: the CSV's rows when one was given, else front.json's points."""
    if csv_file is not None:
        return checked_mappings(problem, csv_points(csv_file), str(csv_file), trust_values)
    if json_file is None:
        raise SpecError(WHERE, "FRONT", None, "the folder holds neither front.json nor front.csv")
    return checked_mappings(problem, json_points(json_file), str(json_file), trust_values)


def hypervolume_line(objectives: Sequence[Objective], certificate: Certificate) -> str:
    """The certificate's hypervolume, its bound and the reference point, with units: "hypervolume 3.1e+06
    of at most 3.5e+06 items/s x mJ/item (reference point: throughput 159.5 items/s, energy 1108 mJ/item)"."""
    units = " x ".join(o.unit for o in objectives)
    bound = certificate.hypervolume_bound
    reach = f"hypervolume {certificate.hypervolume:.6g}" + (" (no bound proven)" if bound is None
                                                            else f" of at most {bound:.6g}")
    reference = ", ".join(f"{o.name} {v:.6g} {o.unit}" for o, v in zip(objectives, certificate.reference, strict=True))
    return f"{reach} {units} (reference point: {reference})"


def _run(args: argparse.Namespace) -> int:
    time_limit = check_time_limit(args.time_limit, WHERE, "--time-limit")
    seed = check_seed(args.seed, WHERE, "--seed")
    json_file, csv_file = _sources(args.front)
    if args.out is not None:  # a file, a read-only folder, /proc: refused before any other work or word
        check_out_folder(args.out)
    solved = recorded(json_file)
    spec = args.spec or solved.spec
    if spec is None:
        raise SpecError(WHERE, "--spec", None, "needed: front.json records no spec (give the spec the front solves)")
    problem = load_problem(spec)
    unsupported = problem.exact_unsupported()
    if unsupported is not None:
        raise SpecError(spec, "family", problem.family, f"cannot be certified: {unsupported}")
    changed = None if json_file is None else check_spec_unchanged(json_file, spec, solved, args.allow_changed_spec)
    if changed is not None:
        print(f"warning: {changed}", file=sys.stderr)
    given = _given(problem, json_file, csv_file, trust_values=args.allow_changed_spec)
    for note in given.notes:
        print(f"note: {note}")
    genomes = list(given.genomes)
    out = args.out or (args.front if args.front.is_dir() else args.front.parent) / "certified"
    check_out_folder(out)  # a file, a read-only folder, /proc: refused before the search
    print(f"[certify] {len(genomes)} mappings of {problem.name}; CP-SAT for {time_limit:g} s "
          "(Ctrl-C stops and keeps what was found)")
    with interruptible() as token:
        front = certify(problem, genomes, time_limit=time_limit, seed=seed, progress=Progress("certify"))
    stopped = token.stopped and front.status == INTERRUPTED
    certificate = front.certificate()
    print(f"== certify: {len(front)} Pareto points, status {front.status}, {front.stats.wall_s:.2f} s")
    if certificate is not None:
        print(f"   {certificate.describe()}")
        if certificate.hypervolume is not None and certificate.reference:
            print("   " + hypervolume_line(front.objectives, certificate))
    added = sum(p.solver == "cpsat" for p in front.points)
    print(f"   {added} points added by CP-SAT; {len(front) - added} of the given mappings kept")
    spec_file = catalog.spec_path(spec)
    with time_limit_ends(time.monotonic()):
        _write(out, problem, [front], spec=str(spec_file.resolve()) if spec_file.exists() else spec,
               spec_sha256=spec_digest(spec))
    print(f"wrote {out}/front.csv, front.json, pareto.png")
    if stopped:
        print(f"interrupted: the certified front in {out} is cut short (status interrupted, "
              f"{len(front)} points): its certificate bounds only what the search reached", file=sys.stderr)
        return token.exit_code
    return 0


register_command(Command("certify", "bound how far a front (any solver's) can be from the true Pareto front",
                         _arguments, _run))
