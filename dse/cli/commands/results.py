"""``dse results STORE``: list a batch store's jobs, export its Pareto points, plot its fronts.

``--where EXPR`` filters jobs with a condition over the listed columns and nothing
else (swept fields by their dotted paths, ``status``, ``front_size``,
``best_<objective>``, ``wall_s``: :mod:`dse.store.query`); ``--export csv|parquet --out FILE`` writes
every Pareto point with its job's swept fields as columns; ``--plot --out
FILE`` draws the fronts of the selected jobs on one axis, colored by a swept
field (``--color``). ``--salvage NEW`` copies every intact job of a damaged
store into a new store ``NEW`` (the damaged file is only read). The listing gives
each job's message whole, wrapped to the terminal; ``--full`` adds every column
and whole job ids, one line per message.

Every output is checked before any work (its folder writable, a plot's file
type known to matplotlib) and written atomically.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from dse.cli.commands import Command, register_command
from dse.cli.tables import fit_table, terminal_width
from dse.errors import SpecError
from dse.store.query import where_mask
from dse.store.salvage import salvage
from dse.store.trace import chrome_trace, jobs_timeline, write_trace
from dse.util.files import check_writable_file, replace_atomically
from dse.util.suggest import did_you_mean
from dse.viz import plot_store_fronts
from dse.viz.figures import save

#: Characters of a job id shown in the listing (the store, exports and ``--full`` keep all 64).
SHORT_ID = 12


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("store", help="SQLite store written by dse batch")
    parser.add_argument("--where", metavar="EXPR",
                        help="keep jobs for which EXPR holds, e.g. \"status == 'done' and `constraints.power_w` > 250\"")
    parser.add_argument("--export", choices=("csv", "parquet"), help="write every Pareto point to --out")
    parser.add_argument("--plot", action="store_true", help="plot the jobs' fronts on one axis into --out")
    parser.add_argument("--color", metavar="FIELD", help="swept field that colors the plot (default: the first)")
    parser.add_argument("--out", type=Path, help="file for --export or --plot")
    parser.add_argument("--trace", action="store_true",
                        help="write the jobs' timings, one track per worker, as a Chrome/Perfetto trace to --out")
    parser.add_argument("--salvage", type=Path, metavar="NEW",
                        help="copy every intact job of a damaged store into the new store NEW")
    parser.add_argument("--full", action="store_true",
                        help="list every column, whole job ids, and each message on one line (for grep)")


def _filter(frame: Any, expr: str) -> Any:
    """Rows of ``frame`` where the filter ``expr`` holds: a condition over the columns only
    (:func:`dse.store.query.where_mask`; dotted column names may be written bare)."""
    return frame[where_mask(frame, expr)]


def _check_out(args: argparse.Namespace) -> Path | None:
    if args.export and args.plot:
        raise SpecError("command line", "--export", args.export, "give --export or --plot, not both (one --out each)")
    if args.trace and (args.export or args.plot):
        raise SpecError("command line", "--trace", True, "give --trace, --export or --plot, one at a time")
    if (args.export or args.plot or args.trace) and args.out is None:
        raise SpecError("command line", "--out", None, "--export, --plot and --trace need --out FILE")
    if args.out is not None and not (args.export or args.plot or args.trace):
        raise SpecError("command line", "--out", str(args.out), "give --export csv|parquet, --plot or --trace with it")
    if args.out is not None:
        if args.plot:
            from matplotlib.backend_bases import FigureCanvasBase

            kinds = FigureCanvasBase.get_supported_filetypes()
            suffix = args.out.suffix.lower().lstrip(".")
            if suffix not in kinds:
                raise SpecError("command line", "--out", str(args.out),
                                f"unknown plot file type {suffix or '(none)'!r}; use one of {', '.join(sorted(kinds))}")
        check_writable_file(args.out, "command line", "--out")
    return args.out


def _export(points: Any, kind: str, out: Path) -> None:
    if kind == "parquet":
        try:
            replace_atomically(out, lambda tmp: points.to_parquet(tmp, index=False))
        except ImportError as exc:
            raise SpecError("command line", "--export", kind, f"needs pyarrow (pip install pyarrow): {exc}") from None
    else:
        replace_atomically(out, lambda tmp: points.to_csv(tmp, index=False))


def _run(args: argparse.Namespace) -> int:
    from dse.store.database import jobs_frame, points_frame

    if args.salvage is not None:
        if args.export or args.plot or args.where:
            raise SpecError("command line", "--salvage", str(args.salvage), "give --salvage alone")
        report = salvage(args.store, args.salvage)
        print(f"wrote {args.salvage}: {report.kept} intact jobs of {args.store}"
              + (f"; {report.dropped} damaged jobs left out" if report.dropped else ""))
        return 0
    out = _check_out(args)
    jobs = jobs_frame(args.store)
    stored = len(jobs)
    if args.where:
        jobs = _filter(jobs, args.where)
    ids = list(jobs["job"])
    if args.trace and out is not None:
        write_trace(chrome_trace(jobs_timeline(args.store, ids)), out)
        print(f"wrote {out}: timings of {len(ids)} jobs (open it in https://ui.perfetto.dev or chrome://tracing)")
        return 0
    if args.export and out is not None:
        points = points_frame(args.store, ids)
        _export(points, args.export, out)
        print(f"wrote {out}: {len(points)} Pareto points of {len(ids)} jobs")
        return 0
    if args.plot and out is not None:
        from dse.store.database import objective_columns

        points = points_frame(args.store, ids)
        ax = plot_job_fronts(points, objective_columns(args.store), color=args.color, swept=_swept(jobs))
        replace_atomically(out, lambda tmp: save(ax, tmp))
        print(f"wrote {out}: fronts of {points['job'].nunique() if len(points) else 0} jobs")
        return 0
    if not len(jobs) and not stored:
        print(f"0 jobs: the store {args.store} is empty (dse batch SPEC --store {args.store} fills it)")
        return 0
    if not len(jobs):
        print(f"0 jobs: none of the store's {stored} job{'s' if stored > 1 else ''} meets --where {args.where}")
        return 0
    print_jobs(jobs, full=args.full)
    counts = jobs["status"].value_counts()
    print(f"\n{len(jobs)} jobs: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 0


def print_jobs(jobs: Any, full: bool = False, width: int | None = None) -> None:
    """The jobs table, then each job's message whole: wrapped to ``width`` (the terminal's by default)
    under its short job id and status; with ``full``, every column, whole ids and one line per message."""
    import pandas as pd

    shown = jobs.drop(columns=["message"])
    if not full:
        shown = shown.drop(columns=[c for c in ("attempts", "engine_version") if c in shown])
        shown["job"] = shown["job"].str[:SHORT_ID]
    width = width or terminal_width()
    if full:  # every column, one line a job: for grep, whatever the terminal
        with pd.option_context("display.width", 250, "display.max_columns", 60, "display.max_colwidth", 200,
                               "display.float_format", "{:.5g}".format):
            print(shown.to_string(index=False) if len(shown) else "(no jobs)")
    else:
        print(fit_table(shown, width, key="job") if len(shown) else "(no jobs)")
    rows = zip(jobs["job"], jobs["status"], jobs["message"], strict=True)
    messages = [(str(j), str(s), str(m)) for j, s, m in rows if isinstance(m, str) and m.strip()]
    if not messages:
        return
    print("\nmessages:")
    for job, status, message in messages:
        head = f"{job if full else job[:SHORT_ID]} ({status}): "
        message = message.removeprefix(f"{status}: ")
        if full:
            print(head + " ".join(message.split()))
        else:
            print(textwrap.fill(message, width=max(40, width), initial_indent=head, subsequent_indent="    ",
                                break_long_words=False, break_on_hyphens=False))


def _swept(jobs: Any) -> list[str]:
    """The swept-field columns of a jobs frame (between ``status`` and ``solvers``)."""
    columns = list(jobs.columns)
    return columns[columns.index("status") + 1: columns.index("solvers")]


def plot_job_fronts(points: Any, objectives: list[tuple[str, str]], color: str | None = None,
                    swept: list[str] | None = None, ax: Any = None) -> Any:
    """The feasible front of every job in ``points`` on one axis (first two ``objectives``: x, y),
    colored by the swept field ``color`` (default: the first swept field that varies); returns the axis.
    Raises :class:`SpecError` for an unknown ``color`` field or fewer than two objectives."""
    swept = swept or []
    if color is not None and color not in points and color not in swept:
        raise SpecError("command line", "--color", color,
                        f"not a swept field{did_you_mean(color, swept)}; swept fields are {', '.join(swept)}")
    present = [(c, s) for c, s in objectives if c in points]
    if len(present) < 2:
        raise SpecError("command line", "--plot", [c for c, _ in present], "plotting fronts needs two objectives")
    if color is None:
        varying = [c for c in swept if c in points and points[c].astype(str).nunique() > 1]
        color = varying[0] if varying else (swept[0] if swept else None)
    return plot_store_fronts(points, present, color, ax=ax)


register_command(Command("results", "list, export or plot the jobs of a dse batch store", _arguments, _run))
