"""``dse report PATH [--out FILE] [--spec SPEC]``: one self-contained HTML report of a run or a store.

``PATH`` is a ``dse solve --out`` folder (fronts, baselines, certificates and
error bands where present; clicking a point shows its mapping, its time and
energy per device and link, and its schedule), a ``dse simulate --out`` folder
(the summary table and the timeline) or a batch store (its jobs with filters,
fronts coloured by a swept field, each job's details). The report opens
offline: the plotting library is inside the file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dse.cli.commands import Command, register_command
from dse.errors import SpecError
from dse.inputs.catalog import spec_path
from dse.store.report import default_out, write_report
from dse.util.files import check_writable_file
from dse.util.yamlio import read_yaml

#: Suffixes of the files a problem spec is written in.
SPEC_SUFFIXES = (".yaml", ".yml")
#: Files of a run folder a user may give instead of the folder.
RUN_FILES = ("front.json", "front.csv", "summary.csv", "trace.json", "report.html")


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="a dse solve or dse simulate --out folder, or a batch store file")
    parser.add_argument("--out", type=Path,
                        help="the HTML file (default: PATH/report.html for a folder, STORE.html for a store)")
    parser.add_argument("--spec", help="the problem spec a solve folder was written for (default: the catalog "
                                       "problem of the same name); it decodes each point's mapping and schedule")


def _problem_spec(path: Path) -> dict[str, Any] | None:
    """The problem spec in ``path`` (a YAML file holding a mapping with a ``family``), or None."""
    if path.suffix not in SPEC_SUFFIXES or not path.is_file():
        return None
    try:
        data = read_yaml(path)
    except SpecError:
        return None
    return data if isinstance(data, dict) and "family" in data else None


def _check_reportable(path: Path) -> None:
    """Raise :class:`SpecError` naming ``PATH`` and what to give instead when ``path`` is missing, a problem
    spec (a file, or a catalog problem's name) or one file of a run folder rather than the folder."""
    name = str(path)
    spec = _problem_spec(path) if path.exists() else _problem_spec(spec_path(name))
    if spec is not None:
        kind = "a problem spec" if path.exists() else "a catalog problem"
        first = f"solve it first (dse solve {name} --out DIR)"
        if spec.get("scenario") is not None:
            first = f"simulate its scenario first (dse simulate {name} --out DIR; dse solve for its front)"
        raise SpecError("command line", "PATH", name, f"is {kind}, not a run: {first}, then dse report DIR")
    if not path.exists():
        raise SpecError("command line", "PATH", name, "does not exist")
    folder = path.parent
    if path.is_file() and path.name in RUN_FILES and any((folder / f).is_file() for f in ("front.json", "summary.csv")):
        raise SpecError("command line", "PATH", name, f"is a file of the run folder {folder}: give the folder "
                        f"(dse report {folder})")


def _run(args: argparse.Namespace) -> int:
    _check_reportable(args.path)
    out = args.out if args.out is not None else default_out(args.path)
    if not out.parent.is_dir():
        raise SpecError("command line", "--out", str(out), "its folder does not exist")
    check_writable_file(out, "command line", "--out")  # a folder, a device, a read-only file or folder: refused
    result = write_report(args.path, out, args.spec)
    print(f"wrote {result.path} ({result.kind} report, {result.size_bytes / 2**20:.2f} MiB, "
          f"{result.build_s:.1f} s)")
    return 0


register_command(Command("report", "write a self-contained HTML report of a run folder or a batch store",
                         _arguments, _run))
