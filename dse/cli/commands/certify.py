"""``dse certify OUT_DIR_OR_CSV --time-limit S``: how far a front can be from the true Pareto front.

Reads the mappings of a ``dse solve --out`` folder (``front.json``, every front in it) or of a
``front.csv`` (its ``genome`` column), rebuilds the problem from the spec recorded in ``front.json``
(or ``--spec``), and runs :func:`dse.solvers.certify.certify`: CP-SAT takes the mappings as found
points, closes what regions it can and adds better points within the time limit. Prints the
certificate and writes the certified front to ``--out`` (default ``<folder>/certified/``):
``front.csv``, ``front.json`` with the certificate, and ``pareto.png``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dse.cli.commands import Command, register_command
from dse.errors import GenomeError, SpecError
from dse.mapping.base import Objective
from dse.pareto import Certificate, read_front_genomes
from dse.runs.runner import write_fronts as _write
from dse.runs.spec import load_problem
from dse.solvers.certify import certify
from dse.util.files import check_out_folder
from dse.util.jit import time_limit_ends
from dse.util.limits import check_seed, check_time_limit
from dse.util.progress import Progress
from dse.util.result_files import front_file

WHERE = "command line"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("front", type=Path, help="a dse solve --out folder (front.json) or a front.csv")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds for CP-SAT (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="CP-SAT's random seed (default 0)")
    parser.add_argument("--spec", help="the problem spec (default: the one recorded in front.json)")
    parser.add_argument("--out", type=Path, help="folder for the certified front (default <folder>/certified)")


def _sources(path: Path) -> tuple[Path | None, Path | None]:
    """(front.json, front.csv) of ``path``: a folder holding them, or one of the files."""
    if path.is_dir():
        json_file, csv_file = path / "front.json", path / "front.csv"
        return (json_file if json_file.is_file() else None, csv_file if csv_file.is_file() else None)
    if path.suffix == ".json" and path.is_file():
        return path, None
    if path.suffix == ".csv" and path.is_file():
        beside = path.parent / "front.json"
        return (beside if beside.is_file() else None), path
    raise SpecError(WHERE, "FRONT", str(path), "is neither a dse solve --out folder nor a front.json or front.csv")


def _recorded_spec(json_file: Path | None) -> str | None:
    if json_file is None:
        return None
    try:
        doc = json.loads(json_file.read_text())
    except (OSError, ValueError) as exc:
        raise SpecError(str(json_file), "front.json", None, f"cannot be read: {exc}") from None
    return front_file(doc, str(json_file)).get("spec")


def _genomes(json_file: Path | None, csv_file: Path | None) -> list[np.ndarray]:
    if json_file is not None and csv_file is None:
        try:
            return read_front_genomes(json_file)
        except SpecError:
            raise
        except ValueError as exc:
            raise SpecError(str(json_file), "fronts", None, f"cannot be read: {exc}") from None
    assert csv_file is not None
    import pandas as pd

    try:
        frame = pd.read_csv(csv_file, dtype={"genome": str})
    except (OSError, ValueError) as exc:
        raise SpecError(str(csv_file), "front.csv", None, f"cannot be read: {exc}") from None
    if "genome" not in frame:
        raise SpecError(str(csv_file), "genome", None, "column missing: not a front.csv written by dse solve")
    rows = []
    for k, text in enumerate(frame["genome"].fillna("")):
        parts = str(text).split()
        if not parts or not all(p.isdigit() and len(p) <= 10 for p in parts):
            raise SpecError(str(csv_file), f"genome (row {k})", str(text)[:40], "must be space-separated integers")
        rows.append(tuple(int(p) for p in parts))
    return [np.array(r, dtype=np.int64) for r in dict.fromkeys(rows)]


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
    spec = args.spec or _recorded_spec(json_file)
    if spec is None:
        raise SpecError(WHERE, "--spec", None, "needed: front.json records no spec (give the spec the front solves)")
    problem = load_problem(spec)
    unsupported = problem.exact_unsupported()
    if unsupported is not None:
        raise SpecError(spec, "family", problem.family, f"cannot be certified: {unsupported}")
    genomes = _genomes(json_file, csv_file)
    for k, genome in enumerate(genomes):
        try:
            problem.checked_genomes(genome)
        except GenomeError as exc:
            raise SpecError(str(csv_file or json_file), f"genome {k}", " ".join(map(str, genome[:8].tolist())),
                            f"does not fit {problem.name} ({exc}): was the front written for another spec?") from None
    out = args.out or (args.front if args.front.is_dir() else args.front.parent) / "certified"
    check_out_folder(out)  # a file, a read-only folder, /proc: refused before the search
    print(f"[certify] {len(genomes)} mappings of {problem.name}; CP-SAT for {time_limit:g} s "
          "(Ctrl-C stops and keeps what was found)")
    front = certify(problem, genomes, time_limit=time_limit, seed=seed, progress=Progress("certify"))
    certificate = front.certificate()
    print(f"== certify: {len(front)} Pareto points, status {front.status}, {front.stats.wall_s:.2f} s")
    if certificate is not None:
        print(f"   {certificate.describe()}")
        if certificate.hypervolume is not None and certificate.reference:
            print("   " + hypervolume_line(front.objectives, certificate))
    added = sum(p.solver == "cpsat" for p in front.points)
    print(f"   {added} points added by CP-SAT; {len(front) - added} of the given mappings kept")
    with time_limit_ends(time.monotonic()):
        _write(out, problem, [front], spec=str(Path(spec).resolve()) if Path(spec).exists() else spec)
    print(f"wrote {out}/front.csv, front.json, pareto.png")
    return 0


register_command(Command("certify", "bound how far a front (any solver's) can be from the true Pareto front",
                         _arguments, _run))
