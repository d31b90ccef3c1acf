"""``dse accuracy [--out DIR] [--measurements DIR]``: the cost models against published measurements.

Runs every figure of ``models/measurements/`` through the cost path the solvers use
(:func:`dse.runs.accuracy.accuracy`), prints predicted vs measured per row, then the median and
90th-percentile error per group (device class, op class, metric), the fitted and held-out parts apart,
in two columns: each device as declared and cut back to its data sheet (class defaults for the rest);
then, for every catalog device, the measurement rows of its class and runtime (or "none").
With ``--out DIR`` it writes ``DIR/accuracy.csv`` and the log-log plot ``DIR/accuracy.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dse.cli.commands import Command, register_command
from dse.util.files import check_out_folder


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, metavar="DIR", help="folder for accuracy.csv and accuracy.png")
    parser.add_argument("--measurements", type=Path, metavar="DIR",
                        help="folder of measurement files (default: the catalog's models/measurements)")
    parser.add_argument("--quiet", action="store_true", help="print the group table only")


def _run(args: argparse.Namespace) -> int:
    from dse.runs.accuracy import accuracy, coverage_text, write_outputs

    if args.out is not None:
        check_out_folder(args.out)  # a file, a read-only folder, /proc: refused before the work
    report = accuracy(args.measurements)
    if not args.quiet:
        print(report.rows_text())
        print()
    print(report.summary())
    print()
    print(coverage_text([p.measurement for p in report.rows]))
    if args.out is not None:
        for path in write_outputs(report, args.out):
            print(f"wrote {path}")
    return 0


register_command(Command("accuracy", "check the cost models against published silicon measurements",
                         _arguments, _run))
