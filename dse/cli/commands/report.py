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

from dse.cli.commands import Command, register_command
from dse.errors import SpecError
from dse.store.report import default_out, write_report
from dse.util.files import check_writable_file


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="a dse solve or dse simulate --out folder, or a batch store file")
    parser.add_argument("--out", type=Path,
                        help="the HTML file (default: PATH/report.html for a folder, STORE.html for a store)")
    parser.add_argument("--spec", help="the problem spec a solve folder was written for (default: the catalog "
                                       "problem of the same name); it decodes each point's mapping and schedule")


def _run(args: argparse.Namespace) -> int:
    if not args.path.exists():
        raise SpecError("command line", "PATH", str(args.path), "does not exist")
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
