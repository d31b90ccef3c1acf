"""``dse coexec --m M --n N --k K``: run one GEMM split over several devices at once (POAS) and report it.

Predicts each device's time (a calibration file, or a quick profile of this
GEMM on each device), picks the split (``auto``: least predicted time by
CP-SAT; ``grid``: every 5% split measured; or rows per device), runs the parts
concurrently, checks the assembled result and prints per-device predicted and
measured times and the speed-up over the best single device. With ``--out DIR``
it writes ``DIR/report.json`` and ``DIR/trace.json`` (a Chrome/Perfetto trace).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dse.cli.commands import Command, register_command
from dse.errors import SpecError
from dse.store.trace import chrome_trace, coexec_timeline, write_trace
from dse.util.files import check_out_folder, clear_partial, mark_partial, replace_atomically
from dse.util.interrupt import Interrupted, interruptible


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--m", required=True, help="rows of A and C (the dimension that is split)")
    parser.add_argument("--n", required=True, help="columns of B and C")
    parser.add_argument("--k", required=True, help="columns of A, rows of B")
    parser.add_argument("--dtype", default="fp32", help="fp32 (default), fp64; fp16, bf16, tf32 on GPU devices")
    parser.add_argument("--devices", help="comma list of cpu:tN (N BLAS threads), cuda, tensorcore "
                                          "(default: two CPU groups sharing this machine's cores)")
    parser.add_argument("--split", default="auto", help="auto (optimizer), grid (measure every 5%% split) "
                                                        "or rows per device R1,R2,...")
    parser.add_argument("--calibration", help="calibration YAML (dse calibrate) for the predictions "
                                              "(default: profile this GEMM on each device first)")
    parser.add_argument("--adapt-threshold", default="0.1",
                        help="with --split auto: re-split with the measured rates when a part's measured time "
                             "differs from its prediction by more than this fraction (default 0.1)")
    parser.add_argument("--repeat", default="3", help="timed runs per measurement, median kept (default 3)")
    parser.add_argument("--seed", default="0", help="seed of the random operands")
    parser.add_argument("--out", type=Path, help="folder for report.json and trace.json")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def _positive(value: str, flag: str, upper: int = 2**24) -> int:
    try:
        number = int(value)
    except ValueError:
        raise SpecError("command line", flag, value, "must be a positive integer") from None
    if not 0 < number <= upper:
        raise SpecError("command line", flag, number, f"must be a positive integer up to {upper}")
    return number


def _split(text: str) -> str | list[int]:
    if text in ("auto", "grid"):
        return text
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise SpecError("command line", "--split", text, "auto, grid or rows per device R1,R2,...") from None


def _fraction(value: str, flag: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise SpecError("command line", flag, value, "must be a fraction above 0 (0.1 = 10%)") from None
    if not 0 < number < 10:
        raise SpecError("command line", flag, number, "must be a fraction above 0 (0.1 = 10%)")
    return number


def _run(args: argparse.Namespace) -> int:
    from dse.mapping.split.contention import calibrated_contention
    from dse.mapping.split.model import DTYPE_BYTES, GemmWorkload, calibration_predictor
    from dse.runtime.coexec import coexecute, parse_devices
    from dse.util.limits import check_seed
    from dse.util.progress import Progress

    m, n, k = (_positive(v, f) for v, f in ((args.m, "--m"), (args.n, "--n"), (args.k, "--k")))
    if args.dtype not in DTYPE_BYTES:
        raise SpecError("command line", "--dtype", args.dtype, f"dtypes are {', '.join(DTYPE_BYTES)}")
    repeat = _positive(args.repeat, "--repeat", 100)
    threshold = _fraction(args.adapt_threshold, "--adapt-threshold")
    seed = check_seed(args.seed)
    split = _split(args.split)
    platform = parse_devices(args.devices)
    if args.out is not None:
        check_out_folder(args.out)
    workload = GemmWorkload(f"gemm_{m}x{n}x{k}_{args.dtype}", m, n, k, args.dtype, chunks=min(64, m))
    predict, name, contention = None, "", None
    if args.calibration:
        from dse.cost.calibration.measure import load_calibration

        calibration = load_calibration(args.calibration)
        predict, name = calibration_predictor(calibration, args.calibration), f"calibration {args.calibration}"
        contention = calibrated_contention(calibration)
    progress = Progress("coexec", enabled=False if args.quiet else None)
    with interruptible():
        try:
            report = coexecute(workload, platform, split, predict=predict, predictor_name=name, repeat=repeat,
                               seed=seed, progress=progress, contention=contention, adapt_threshold=threshold)
        except Interrupted as stop:
            raise stop.noted(_write_partial(stop, args.out)) from None
    print(report.summary())
    if args.out is not None:
        path = Path(args.out) / "report.json"
        text = json.dumps(report.to_dict(), indent=2) + "\n"
        replace_atomically(path, lambda tmp: Path(tmp).write_text(text))
        clear_partial(args.out)
        trace = write_trace(chrome_trace(coexec_timeline(report.to_dict())), Path(args.out) / "trace.json")
        print(f"wrote {path}, {trace}")
    return 0 if report.check == "pass" else 1


def _write_partial(stop: Interrupted, out: Path | None) -> str:
    """Write the grid splits a stopped run had timed into ``out/partial.json``; returns what was kept (no
    report.json: the run did not finish)."""
    grid = (stop.partial or {}).get("grid", [])
    if out is None or not grid:
        return f"the run was cut short: no report ({len(grid)} grid splits timed)"
    path = mark_partial(out, {"signal": stop.signum, "grid": grid})
    return f"the run was cut short: no report; the {len(grid)} grid splits timed so far are in {path}"


register_command(Command("coexec", "run one GEMM split over CPU groups / GPU cores at once (POAS) and report it",
                         _arguments, _run))
