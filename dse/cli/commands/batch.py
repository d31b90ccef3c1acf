"""``dse batch SPEC... --store FILE [--grid SWEEP.yaml]``: run a sweep of specs on Dask, results in a SQLite store.

Specs are files, folders (their ``*.yaml``) or glob patterns; the grid's
dotted-path overrides multiply them into jobs (:mod:`dse.runs.sweep`). Jobs run on a
``LocalCluster`` of ``--workers`` processes or on the cluster at
``--scheduler``; every finished job is committed to ``--store`` at once, and a
rerun of the same command resumes (:mod:`dse.store.batch`).
"""

from __future__ import annotations

import argparse

from dse.cli.commands import Command, register_command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("specs", nargs="+", metavar="SPEC", help="problem spec files, folders or glob patterns")
    parser.add_argument("--grid", help="sweep YAML: spec field dotted path -> list of values")
    parser.add_argument("--store", required=True, help="SQLite result store (created if missing; resumed if not)")
    parser.add_argument("--workers", type=int, help="local worker processes (default: one per core, at most one per job)")
    parser.add_argument("--scheduler", help="run on an existing Dask cluster, e.g. tcp://HOST:8786")
    parser.add_argument("--timeout-per-job", type=float, metavar="S",
                        help="record a job as timeout when it runs longer than S seconds")
    parser.add_argument("--retry-failed", action="store_true",
                        help="run again the jobs the store holds as failed or timeout")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def _run(args: argparse.Namespace) -> int:
    from dse.errors import SpecError
    from dse.runs.sweep import expand_jobs
    from dse.store.batch import execute, print_summary

    if args.workers is not None and args.scheduler is not None:
        raise SpecError("command line", "--workers", args.workers, "give --workers or --scheduler, not both")
    jobs = expand_jobs(args.specs, args.grid)
    report = execute(jobs, args.store, workers=args.workers, scheduler=args.scheduler,
                     timeout_per_job=args.timeout_per_job, retry_failed=args.retry_failed, quiet=args.quiet)
    print_summary(report, args.store)
    if report.failed and report.interrupted is None:
        print(f"see the failed jobs with: dse results {args.store} --where \"status not in ['done', 'infeasible']\"")
    return report.exit_code


register_command(Command("batch", "run a sweep of specs on Dask; results in a SQLite store (resumable)",
                         _arguments, _run))
