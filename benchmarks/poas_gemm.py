"""POAS co-execution on this machine's CPU worker groups: square and skinny GEMMs, auto vs grid splits.

Usage: python benchmarks/poas_gemm.py [--devices cpu:t1,cpu:t1] [--sizes 512,1024,2048] [--shapes 4096x256x256]
                                      [--repeat 3] [--alternate 7] [--min-seconds 1.0]
                                      [--calibration FILE] [--no-grid]

For each GEMM: the optimizer's split (``auto``) and the best of every 5% split
(``grid``), each run side by side on the devices; per device the rows, the
predicted and measured times, the speed-up over the best single device, the
correctness check, and ``auto / grid`` (the target: within 5%). The prediction
error (MAPE) is taken over every device's part in the auto runs and over each
device alone on the whole GEMM (row counts the profile did not see).
Writes ``benchmarks/results/poas_gemm.csv``. The figures are timings on a
shared machine: read them as ratios within one run.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from dse.mapping.split.model import calibration_predictor, gemm_workload
from dse.runtime.coexec import CoExecutor, coexecute, parse_devices
from dse.util.progress import Progress

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stopping import benchmark_stops  # noqa: E402

SQUARE = (256, 512, 1024, 2048)
SKINNY = ((4096, 256, 256), (256, 2048, 2048), (8192, 64, 512))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", help="as dse coexec --devices (default: two groups splitting the cores)")
    parser.add_argument("--sizes", help="square sizes, comma separated (default 256,512,1024,2048 + skinny)")
    parser.add_argument("--shapes", help="MxNxK shapes, comma separated (with --sizes: both; default skinny set)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calibration", help="calibration YAML instead of profiling each GEMM")
    parser.add_argument("--no-grid", action="store_true", help="skip the grid search (auto only)")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--alternate", type=int, default=7, help="alternating re-timings of the auto and grid splits")
    parser.add_argument("--min-seconds", type=float, default=1.0,
                        help="at least this much re-timing per split (more rounds for GEMMs of a few ms)")
    args = parser.parse_args()
    platform = parse_devices(args.devices)
    predict = None
    if args.calibration:
        from dse.cost.calibration.measure import load_calibration

        predict = calibration_predictor(load_calibration(args.calibration), args.calibration)
    shapes = [(s, s, s) for s in (map(int, args.sizes.split(",")) if args.sizes else SQUARE)]
    if args.shapes:
        shapes = [(s, s, s) for s in map(int, args.sizes.split(","))] if args.sizes else []
        for shape in args.shapes.split(","):
            m, n, k = (int(x) for x in shape.split("x"))
            shapes.append((m, n, k))
    elif not args.sizes:
        shapes += list(SKINNY)
    print(f"{os.cpu_count()} cores; devices {', '.join(platform.device_names)}; dtype {args.dtype}; "
          f"repeat {args.repeat} (median)")
    rows, errors_part, errors_single, ratios = [], [], [], []
    progress = Progress("poas_gemm")
    out = Path("benchmarks/results")
    out.mkdir(parents=True, exist_ok=True)
    with benchmark_stops("poas_gemm") as stop:
        for m, n, k in shapes:
            stop.check()
            w = gemm_workload(m, n, k, args.dtype, chunks=min(64, m))  # as dse coexec
            modes = ["auto"] if args.no_grid else ["auto", "grid"]
            reports = stop.keep({mode: coexecute(w, platform, mode, predict=predict, repeat=args.repeat,
                                                 progress=progress) for mode in modes}, case=f"{m}x{n}x{k}")
            for mode, r in reports.items():
                for d in r.devices:
                    rows.append({"m": m, "n": n, "k": k, "split": mode, "device": d.name, "rows": d.rows,
                                 "predicted_ms": d.predicted_s * 1e3, "measured_ms": d.measured_s * 1e3,
                                 "total_predicted_ms": r.predicted_s * 1e3,
                                 "total_measured_ms": r.measured_s * 1e3,
                                 "best_single_ms": r.best_single_s * 1e3, "speedup": r.speedup_vs_best_single,
                                 "blas_all_cores_ms": r.all_cores_s * 1e3, "check": r.check})
                    if mode == "auto" and d.rows:
                        errors_part.append(abs(d.predicted_s - d.measured_s) / d.measured_s)
                if mode == "auto":
                    errors_single += [abs(p - s) / s for _, p, s in r.single_s]
            auto = reports["auto"]
            ratio = ""
            if "grid" in reports:  # the two splits re-timed alternately, so that both see the same machine load
                executor = CoExecutor(w, platform, 0)
                splits = {mode: [d.row_range for d in r.devices] for mode, r in reports.items()}
                times: dict[str, list[float]] = {mode: [] for mode in splits}
                rounds = max(args.alternate, math.ceil(args.min_seconds / max(auto.measured_s, 1e-6)))
                for _ in range(rounds):
                    for mode, bounds in splits.items():
                        times[mode].append(executor.timed(bounds, 1).total_s)
                t_auto, t_grid = (float(np.median(times[mode])) for mode in ("auto", "grid"))
                ratios.append(t_auto / t_grid)
                ratio = (f", re-timed alternately x{rounds}: auto {t_auto * 1e3:.4g} ms, grid best "
                         f"{t_grid * 1e3:.4g} ms, auto / grid {t_auto / t_grid:.3f}")
            print(f"\n{m}x{n}x{k}: auto split {[d.rows for d in auto.devices]}{ratio}")
            for mode, r in reports.items():
                parts = "  ".join(f"{d.name} {d.rows} rows {d.predicted_s * 1e3:.3g}/{d.measured_s * 1e3:.3g} ms"
                                  for d in r.devices)
                print(f"  {mode:<5} {parts}  | total {r.predicted_s * 1e3:.4g}/{r.measured_s * 1e3:.4g} ms "
                      f"(predicted/measured), best single {r.best_single_s * 1e3:.4g} ms, "
                      f"speed-up {r.speedup_vs_best_single:.3f}x, BLAS all cores {r.all_cores_s * 1e3:.4g} ms, "
                      f"check {r.check}", flush=True)
            pd.DataFrame(rows).to_csv(out / "poas_gemm.csv", index=False)  # what finished is kept
    if ratios:
        print(f"\nauto / grid-best time (alternating re-timings): median {np.median(ratios):.3f}, "
              f"worst {max(ratios):.3f} over {len(ratios)} GEMMs")
    print(f"prediction error (MAPE): parts in co-execution {np.mean(errors_part):.1%} over {len(errors_part)}, "
          f"devices alone on the whole GEMM {np.mean(errors_single):.1%} over {len(errors_single)}")
    pd.DataFrame(rows).to_csv(out / "poas_gemm.csv", index=False)
    print(f"wrote {out / 'poas_gemm.csv'}")


if __name__ == "__main__":
    main()
