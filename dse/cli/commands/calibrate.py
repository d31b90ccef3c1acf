"""``dse calibrate``: profile this machine's kernels and fit their cost models.

Profiles GEMM (numpy/BLAS), SpMM and SpMV (``scipy.sparse`` CSR) on CPU worker groups
(``cpu`` = every core, ``cpu:tN`` = N BLAS threads) and, when PyTorch sees CUDA, GEMM on
``cuda`` and ``tensorcore``; prints one row per fit with its error on held-out sizes, and
writes the calibration YAML with ``--out`` (see ``docs/calibration.md``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from dse.cli.commands import Command, register_command
from dse.cli.tables import fit_table, terminal_width
from dse.errors import SpecError
from dse.util.files import check_out_folder, replace_atomically
from dse.util.interrupt import Interrupted, interruptible

WHERE = "command line"
#: Median round-to-round spread of a fit's timings above which its figures are unreliable (see the
#: calibration docs: 3-9% on an idle machine or with the thread clock, 20-60% by the wall clock on a busy one).
SPREAD_LIMIT = 0.20


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernels", default="gemm,spmm,spmv", help="comma-separated: gemm, spmm, spmv "
                                                                     "(default: all three)")
    parser.add_argument("--devices", default=None,
                        help="comma-separated: cpu (every core), cpu:tN (N BLAS threads), cuda, tensorcore "
                             "(default: cpu,cpu:t1, plus cuda,tensorcore when PyTorch sees CUDA)")
    parser.add_argument("--dtypes", default=None,
                        help="comma-separated: fp32, fp64 (CPU), fp16, bf16, tf32 (tensorcore) "
                             "(default: fp32; fp16,bf16,tf32 on tensorcore)")
    parser.add_argument("--quick", action="store_true", help="fewer and smaller sizes (a smoke test: ~10 s of CPU time)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random matrices and of the timing order")
    parser.add_argument("--out", type=Path, help="calibration YAML to write, e.g. models/calibration/NAME.yaml "
                                                 "(default: print the table only)")
    parser.add_argument("--clock", default="wall", help="wall (elapsed time, default) or thread (CPU time of "
                        "the calling thread: unaffected by other work on a busy machine; cpu:t1 only)")
    parser.add_argument("--samples", type=Path, help="also write the measured samples (one row per size) to this CSV")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def check_out_file(out: Path, flag: str = "--out", suffixes: tuple[str, ...] = (".yaml", ".yml")) -> None:
    """Check that file ``out`` (ending in one of ``suffixes``) can be written (its folder is
    created); SpecError (exit 2) naming ``flag`` otherwise."""

    if out.suffix not in suffixes:
        raise SpecError(WHERE, flag, str(out), f"give a {suffixes[0]} file name")
    if out.is_dir():
        raise SpecError(WHERE, flag, str(out), f"is a folder; give a {suffixes[0]} file name")
    check_out_folder(out.parent, flag)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


def _run(args: argparse.Namespace) -> int:
    from dse.cost.calibration import measure as calibrate
    from dse.util.limits import check_seed
    from dse.util.progress import Progress

    kernels = calibrate.check_kernels(_split(args.kernels))
    dtypes = None if args.dtypes is None else calibrate.check_dtypes(_split(args.dtypes))
    if args.devices is None:
        cuda = calibrate.cuda_available()
        devices = ("cpu", "cpu:t1") + (calibrate.GPU_DEVICES if cuda else ())
        if not cuda and "gemm" in kernels and not args.quiet:
            print("note: no CUDA: GPU kernels not profiled", file=sys.stderr)
    else:
        devices = calibrate.check_devices(_split(args.devices))
    calibrate.check_clock(args.clock, devices)
    calibrate.calibration_plan(kernels, devices, dtypes, gpu=calibrate.cuda_available())
    check_seed(args.seed, WHERE)
    if args.out is not None:
        check_out_file(args.out)
    if args.samples is not None:
        check_out_file(args.samples, "--samples", (".csv",))
    progress = Progress("calibrate", enabled=False if args.quiet else None, every_s=2.0)
    with interruptible():
        try:
            cal, report = calibrate.run_calibration(kernels, devices, quick=args.quick, seed=args.seed,
                                                    progress=progress, dtypes=dtypes, clock=args.clock)
        except Interrupted as stop:
            raise stop.noted(_write_partial_samples(stop.partial, args.samples)) from None
    table = report.assign(mape_heldout=[_percent(v) for v in report["mape_heldout"]],
                          spread=[_percent(v) for v in report["spread"]])
    print(fit_table(table, terminal_width(), wrap="coefficients", right=("mape_heldout", "spread")))
    for pair in cal.contention:
        print(f"contention: {pair.device} beside {pair.beside}: x{pair.slowdown:.3f} CPU time "
              f"(spread {_percent(pair.spread)} over {pair.rounds} rounds)")
    print(f"machine: {cal.machine.kind}")
    note = spread_note(report, args.clock, calibrate.GPU_DEVICES)
    if note is not None:
        print(note, file=sys.stderr)
    if args.out is not None:
        calibrate.save_calibration(cal, args.out)
        print(f"wrote {args.out}")
    elif not args.quiet:
        print("(not written: give --out models/calibration/NAME.yaml to keep it)", file=sys.stderr)
    if args.samples is not None:
        samples = report.attrs["samples"]
        replace_atomically(args.samples, lambda tmp: samples.to_csv(tmp, index=False))
        print(f"wrote {args.samples}")
    return 0


def spread_note(report: Any, clock: str, gpu_devices: Collection[str]) -> str | None:
    """One line when a fit's timings spread over :data:`SPREAD_LIMIT` between rounds (``report``: the
    calibration's report frame, one row per fit with its ``spread``), naming the worst and saying what to do:
    by the wall clock on CPU groups, ``--clock thread`` on ``cpu:t1``, which does not count the time other
    programs took; otherwise an idle machine. None when every spread is within the limit."""
    noisy = report[report["spread"] > SPREAD_LIMIT]
    if not len(noisy):
        return None
    worst = noisy.loc[noisy["spread"].idxmax()]
    head = (f"note: {worst['kernel']} on {worst['device']}: timings spread {_percent(worst['spread'])} between "
            f"rounds (over {100 * SPREAD_LIMIT:.0f}% makes a fit unreliable): the machine was busy")
    cpu = noisy[~noisy["device"].isin(list(gpu_devices))]
    if clock == "wall" and len(cpu):
        kernels = ",".join(dict.fromkeys(cpu["kernel"]))
        return (f"{head}; the thread clock does not count other programs' time: "
                f"dse calibrate --kernels {kernels} --devices cpu:t1 --clock thread")
    return f"{head}; calibrate again on an idle machine"


def _write_partial_samples(samples: Any, path: Path | None) -> str:
    """Write the samples a stopped calibration had measured to ``path`` (with a ``rounds_timed`` column that
    marks them partial); returns the line that says what was kept. The calibration itself is never
    written from a cut-short run."""
    n = 0 if samples is None else len(samples)
    if path is None or not n:
        return f"the calibration was cut short and not written ({n} sizes measured; --samples keeps them)"
    replace_atomically(path, lambda tmp: samples.to_csv(tmp, index=False))
    return (f"the calibration was cut short and not written; the {n} sizes measured so far are in {path} "
            "(partial: rounds_timed says how many rounds each got)")


def _percent(value: float) -> str:
    return "-" if math.isnan(value) else f"{100 * value:.1f}%"


register_command(Command("calibrate", "profile this machine's GEMM/SpMM/SpMV and fit their cost models",
                         _arguments, _run))
