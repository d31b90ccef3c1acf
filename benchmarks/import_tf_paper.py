"""Import every graph and device file of the TF partitioning paper's sample data and time it.

Usage: python benchmarks/import_tf_paper.py [--repeats 3]

Reads ``../shared/data/tf-paper/{graphs,devices}/*.csv`` beside the project
checkout (the public ``Sample_Data/`` of mayerrn/tensorflowPartitioningAndScheduling).
Prints node/edge counts and the best import time of ``--repeats`` runs per
file. When the folder is absent (a user's clone), says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from stopping import benchmark_stops

from dse.inputs.importers import read_tf_devices, read_tf_graph

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tf-paper"


def best_time(func: Callable[[], object], repeats: int) -> tuple[object, float]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return result, best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"TF-paper sample data not found at {DATA}; nothing to import (this is expected "
              "outside the project's workspace).")
        return 0

    with benchmark_stops("import_tf_paper") as stop:
        graphs = sorted((DATA / "graphs").glob("*.csv"))
        print(f"graphs ({DATA / 'graphs'})")
        print(f"{'file':<34} {'nodes':>6} {'edges':>6} {'coloc groups':>12} {'constrained':>11} {'import ms':>10}")
        for path in graphs:
            stop.check()
            workload, seconds = best_time(lambda p=path: read_tf_graph(p), args.repeats)
            groups = {op.colocation for op in workload.ops if op.colocation is not None}
            constrained = sum(op.device_type is not None for op in workload.ops)
            print(f"{path.name:<34} {workload.n_ops:>6} {len(workload.edges):>6} {len(groups):>12} "
                  f"{constrained:>11} {seconds * 1e3:>10.1f}")

        devices = sorted((DATA / "devices").glob("*.csv"))
        print(f"\ndevice sets ({DATA / 'devices'})")
        print(f"{'file':<58} {'devices':>7} {'links':>6} {'kinds':<12} {'import ms':>10}")
        for path in devices:
            stop.check()
            platform, seconds = best_time(lambda p=path: read_tf_devices(p), args.repeats)
            kinds = ",".join(sorted({d.kind for d in platform.devices}))
            print(f"{path.name:<58} {len(platform.devices):>7} {len(platform.links):>6} {kinds:<12} "
                  f"{seconds * 1e3:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
