"""POAS's headline from catalog figures: predicted speed-up of co-execution over the best single device.

Usage: python benchmarks/poas_repro.py [--platform server_cpu_datacenter_gpu] [--chunks 64]

Square GEMMs of 1k to 16k on a server CPU plus a data-center GPU's CUDA cores
and tensor cores (catalog platform, sourced figures, analytic roofline model),
fp16 (tensor cores' native type) and fp32 (tf32 on the tensor cores). Two
cases: operands in host memory (every part crosses the shared PCIe link, as in
POAS's setting) and operands already resident in GPU memory (no copies: the
compute-only bound). The best split is exact (CP-SAT on the split family's
tables, least time). POAS reports "up to 45%" over the best single device.
Writes ``benchmarks/results/poas_repro.csv``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from ortools.sat.python import cp_model

from dse.inputs import catalog
from dse.mapping.split import SplitProblem
from dse.mapping.split.model import (
    SplitPlatform,
    analytic_compute_s,
    gemm_workload,
    platform_devices,
    split_tables,
)
from dse.model.platform import load_platform

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stopping import benchmark_stops  # noqa: E402

SIZES = (1024, 2048, 4096, 8192, 16384)


def best_split(problem: SplitProblem) -> np.ndarray:
    form = problem.cpsat()
    form.model.minimize(form.objective_vars[0])
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 2
    solver.parameters.max_time_in_seconds = 30
    status = solver.solve(form.model)
    assert status == cp_model.OPTIMAL, solver.status_name(status)
    return form.to_genome(solver)


def _case(split_platform: SplitPlatform, dtype: str, resident: bool, size: int, chunks: int) -> dict:
    """One GEMM: the best split's predicted time against the best single device's."""
    w = gemm_workload(size, size, size, dtype, chunks=chunks)
    problem = SplitProblem(split_tables(w, split_platform, analytic_compute_s), ("time",))
    genome = best_split(problem)
    decoded = problem.decode(genome)
    single = {d.name: int(problem.parts.time[i, problem.parts.total]) for i, d in enumerate(problem.parts.devices)}
    best = min(single, key=single.__getitem__)
    share = {name: c / problem.parts.total for name, c in decoded.counts.items()}
    return {"dtype": dtype, "operands": "GPU-resident" if resident else "host", "size": size,
            "best_single": best, "best_single_ms": single[best] * 1e-6, "coexec_ms": decoded.makespan * 1e-6,
            "speedup_pct": (single[best] / decoded.makespan - 1) * 100,
            **{f"share_{k}": v for k, v in share.items()}, "bottleneck": decoded.bottleneck}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--platform", default="server_cpu_datacenter_gpu")
    parser.add_argument("--chunks", type=int, default=64)
    args = parser.parse_args()
    platform = load_platform(catalog.models_dir() / "platforms" / f"{args.platform}.yaml")
    rows = []
    with benchmark_stops("poas_repro") as stop:
        for dtype in ("fp16", "fp32"):
            for resident in (False, True):
                split_platform = platform_devices(platform, dtype)
                if resident:
                    split_platform = SplitPlatform(split_platform.name, tuple(
                        replace(d, link_gbps=None) for d in split_platform.devices))
                for size in SIZES:
                    stop.check()
                    row = stop.keep(_case(split_platform, dtype, resident, size, args.chunks),
                                    case=f"{dtype} {size} {'GPU-resident' if resident else 'host'}")
                    rows.append(row)
                    print(f"{dtype} {row['operands']} {size}: best single {row['best_single']} "
                          f"{row['best_single_ms']:.3g} ms, co-executed {row['coexec_ms']:.3g} ms, "
                          f"{row['speedup_pct']:+.1f}%", flush=True)
    frame = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.float_format", "{:.3g}".format):
        print(frame.to_string(index=False))
    print("\nPOAS reports up to 45% over the best single device; the last column above is ours (predicted).")
    out = Path("benchmarks/results")
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "poas_repro.csv", index=False)
    print(f"wrote {out / 'poas_repro.csv'}")


if __name__ == "__main__":
    main()
