"""POAS on a busy machine: `dse coexec --split auto` after `dse calibrate`, with and without added load.

Usage: python benchmarks/poas_contention.py [--size 2048] [--repeats 3] [--load 2] [--rounds 5]
                                            [--calibration FILE]

1. ``dse calibrate --kernels gemm --devices cpu:t1 --clock thread --out FILE`` (skipped with
   ``--calibration``): the GEMM fits (CPU time, so other programs' load is left out) and the slowdown of
   one group beside another.
2. For each condition, the machine as it is, then with ``--load`` busy processes started here
   (``python -c 'while True: pass'``, killed afterwards): ``--repeats`` times
   ``dse coexec --m S --n S --k S --split auto --calibration FILE --out DIR``, then the split it chose and
   the best single group re-timed alternately ``--rounds`` times (both see the same load).

Prints the 1-minute load average at the start and per condition, one row per run (first prediction and
its error, the adapted split's prediction, measured time, best single group, the ratio) and the medians.
Writes ``benchmarks/results/poas_contention.csv``. A prediction error is ``(predicted - measured) /
measured``; the ratio is co-execution's time over the best single group's (below 1: co-execution pays).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stopping import benchmark_stops  # noqa: E402

from dse import cli  # noqa: E402
from dse.mapping.split.model import gemm_workload  # noqa: E402
from dse.runtime.coexec import CoExecutor, parse_devices  # noqa: E402

BUSY = "while True: pass"


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[list[int]]:
    """``count`` processes running ``python -c 'while True: pass'`` for the duration; their pids."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(count)]
    try:
        time.sleep(1.0 if procs else 0.0)  # let them get onto the cores
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=10)


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def run_cli(argv: list[str]) -> tuple[int, str]:
    """``dse ARGV`` in this process; its exit code and printed output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(argv)
    return code, out.getvalue()


def retime(size: int, split: list[tuple[int, int]], single: list[tuple[int, int]], rounds: int) -> tuple[float, float]:
    """Median times of ``split`` and ``single`` run alternately ``rounds`` times (after one warm-up each)."""
    executor = CoExecutor(gemm_workload(size, size, size, "fp32"), parse_devices(None), seed=1)
    executor.run(split)
    executor.run(single)
    times: dict[str, list[float]] = {"split": [], "single": []}
    for _ in range(rounds):
        times["split"].append(executor.run(split).total_s)
        times["single"].append(executor.run(single).total_s)
    return float(np.median(times["split"])), float(np.median(times["single"]))


def one_run(stop: Any, size: int, calibration: str, rounds: int, condition: str, repeat: int) -> dict[str, Any]:
    """One ``dse coexec --split auto`` run and its alternating re-timing; the row of figures."""
    with tempfile.TemporaryDirectory() as folder:
        argv = ["coexec", "--m", str(size), "--n", str(size), "--k", str(size), "--split", "auto",
                "--calibration", calibration, "--out", folder, "--quiet"]
        code, text = run_cli(argv)
        stop.check()  # a signal during the command: it returned 130/143
        if code not in (0, 1):
            raise SystemExit(f"dse {' '.join(argv)} exited with {code}:\n{text}")
        report = json.loads((Path(folder) / "report.json").read_text())
    adapt = report["adapt"]
    first = adapt["first"]
    split = [tuple(d["row_range"]) for d in report["devices"]]
    best = next(i for i, d in enumerate(report["single_devices"]) if d["name"] == report["best_single_device"])
    single = [(0, size) if i == best else (0, 0) for i in range(len(split))]
    t_split, t_single = retime(size, split, single, rounds)
    return {
        "condition": condition, "repeat": repeat, "load_average": load_average(),
        "probe_core_share": adapt["probe_core_share"], "background_threads": adapt["background_threads"],
        "first_rows": "/".join(str(d["rows"]) for d in first["devices"]),
        "first_predicted_ms": first["predicted_s"] * 1e3, "first_measured_ms": first["measured_s"] * 1e3,
        "first_error": (first["predicted_s"] - first["measured_s"]) / first["measured_s"],
        "adapted": adapt["adapted"], "fallback": adapt["fallback"],
        "rows": "/".join(str(d["rows"]) for d in report["devices"]),
        "predicted_ms": report["predicted_s"] * 1e3, "measured_ms": report["measured_s"] * 1e3,
        "error": report["prediction_error"],
        "best_single": report["best_single_device"], "best_single_ms": report["best_single_s"] * 1e3,
        "ratio": report["measured_s"] / report["best_single_s"],
        "retimed_split_ms": t_split * 1e3, "retimed_single_ms": t_single * 1e3, "retimed_ratio": t_split / t_single,
        "check": report["check"],
    }


def show(row: dict[str, Any]) -> None:
    fallback = f", fallback: {row['fallback']}" if row["fallback"] else ""
    print(f"  {row['condition']} #{row['repeat']}: load avg {row['load_average']:.2f}, probe share "
          f"{row['probe_core_share']:.2f} ({row['background_threads']:.2f} background threads) | first split "
          f"{row['first_rows']}: predicted {row['first_predicted_ms']:.4g} ms, measured "
          f"{row['first_measured_ms']:.4g} ms ({row['first_error']:+.1%}) | "
          f"{'adapted' if row['adapted'] else 'kept'} -> {row['rows']}: predicted {row['predicted_ms']:.4g} ms, "
          f"measured {row['measured_ms']:.4g} ms ({row['error']:+.1%}){fallback} | best single "
          f"{row['best_single_ms']:.4g} ms, ratio {row['ratio']:.3f} | re-timed x alternately: split "
          f"{row['retimed_split_ms']:.4g} ms, single {row['retimed_single_ms']:.4g} ms, ratio "
          f"{row['retimed_ratio']:.3f} | check {row['check']}", flush=True)


def summarize(frame: pd.DataFrame) -> None:
    print("\nmedians per condition (error = (predicted - measured) / measured; ratio = co-execution / best single):")
    for condition, group in frame.groupby("condition", sort=False):
        print(f"  {condition}: {len(group)} runs, load avg {group['load_average'].median():.2f}; "
              f"first prediction {group['first_predicted_ms'].median():.4g} ms vs measured "
              f"{group['first_measured_ms'].median():.4g} ms, |error| median {group['first_error'].abs().median():.1%} "
              f"(max {group['first_error'].abs().max():.1%}); after adapt: predicted "
              f"{group['predicted_ms'].median():.4g} ms, measured {group['measured_ms'].median():.4g} ms, "
              f"|error| median {group['error'].abs().median():.1%} (max {group['error'].abs().max():.1%}); "
              f"best single {group['best_single_ms'].median():.4g} ms; ratio {group['ratio'].median():.3f} "
              f"(worst {group['ratio'].max():.3f}), re-timed alternately {group['retimed_ratio'].median():.3f} "
              f"(worst {group['retimed_ratio'].max():.3f}); adapted in {int(group['adapted'].sum())}, fell back in "
              f"{int((group['fallback'] != '').sum())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=2048, help="m = n = k of the GEMM (default 2048)")
    parser.add_argument("--repeats", type=int, default=3, help="dse coexec runs per condition (default 3)")
    parser.add_argument("--load", type=int, default=2, help="busy processes added in the second condition")
    parser.add_argument("--rounds", type=int, default=5, help="alternating re-timings of split and single")
    parser.add_argument("--calibration", help="a calibration file to use instead of calibrating first")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, {os.cpu_count()} cores, 1-minute load "
          f"average at start {load_average():.2f}; devices {', '.join(parse_devices(None).device_names)}; "
          f"GEMM {args.size}^3 fp32", flush=True)
    out = Path("benchmarks/results")
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    with benchmark_stops("poas_contention") as stop, tempfile.TemporaryDirectory() as folder:
        calibration = args.calibration
        if calibration is None:
            stop.check()
            calibration = str(Path(folder) / "calibration.yaml")
            argv = ["calibrate", "--kernels", "gemm", "--devices", "cpu:t1", "--clock", "thread", "--out",
                    calibration, "--quiet"]
            t0 = time.perf_counter()
            code, text = run_cli(argv)
            stop.check()
            if code != 0:
                raise SystemExit(f"dse {' '.join(argv)} exited with {code}:\n{text}")
            stop.keep(text, case="calibrate")
            shown = " ".join(argv[:-3] + ["--out", "FILE"])
            print(f"dse {shown} ({time.perf_counter() - t0:.0f} s):\n{text.rstrip()}", flush=True)
        for condition, load in (("as it was", 0), (f"load +{args.load}", args.load)):
            if load == 0 or args.load > 0:
                with busy_processes(load):
                    print(f"\n{condition} ({load} busy processes `python -c '{BUSY}'` started here; 1-minute "
                          f"load average {load_average():.2f}); each run: dse coexec --m {args.size} --n "
                          f"{args.size} --k {args.size} --split auto --calibration FILE --out DIR", flush=True)
                    for r in range(args.repeats):
                        stop.check()
                        row = stop.keep(one_run(stop, args.size, calibration, args.rounds, condition, r + 1),
                                        case=f"{condition} #{r + 1}")
                        rows.append(row)
                        show(row)
                        pd.DataFrame(rows).to_csv(out / "poas_contention.csv", index=False)
    frame = pd.DataFrame(rows)
    summarize(frame)
    print(f"wrote {out / 'poas_contention.csv'} ({time.perf_counter() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
