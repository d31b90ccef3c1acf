"""Exact (CP-SAT) against approximate (NSGA-II) fronts of the pipeline family.

Usage: python benchmarks/exact_vs_approx.py [--sizes 16 24 32 48] [--devices 4] [--time-limit 120] [--seeds 1]

For each size: CP-SAT's time to the complete proven front, then NSGA-II's
time to reach 99% of the exact front's hypervolume (same reference point),
both measured in this run on the same instance, with a memory constraint.

Two kinds of instance (``--kind``):
* ``realistic``: ``random_pipeline`` workloads (gemm/conv/spmm/elementwise ops of
  realistic sizes) costed by the roofline model on the bundled ``edge_soc``
  platform (CPU, GPU, 2 DLAs: 4 devices);
* ``synthetic``: ``dse.cost.synthetic.random_tables`` (every cost drawn uniformly at
  random, over ``--devices`` devices): no structure for the solver to exploit.
"""

from __future__ import annotations

import argparse

from stopping import benchmark_stops

from dse.cost import RooflineCostModel
from dse.cost.synthetic import random_tables
from dse.inputs import catalog
from dse.inputs.builders import build
from dse.mapping.pipeline import PipelineProblem
from dse.model.platform import load_platform
from dse.solvers import solve
from dse.solvers.common import result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 24, 32, 48])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--kind", choices=["realistic", "synthetic"], nargs="+", default=["realistic", "synthetic"])
    args = parser.parse_args()
    edge = load_platform(catalog.models_dir() / "platforms" / "edge_soc.yaml")
    print(f"{'kind':>9} {'ops':>4} {'seed':>4} {'front':>5} {'cpsat_s':>8} {'proven':>7} {'nsga2_s':>8} {'hv_ratio':>8} {'speedup':>7}")
    with benchmark_stops("exact_vs_approx") as stop:
        for kind, n, seed in ((k, n, s) for k in args.kind for n in args.sizes for s in range(args.seeds)):
            if kind == "realistic":
                tables = RooflineCostModel().tables(build("random_pipeline", n_ops=n, seed=1 + seed), edge)
            else:
                tables = random_tables(seed=100 + seed, n_ops=n, n_dev=args.devices, disallow=0.05)
            problem = PipelineProblem(tables)
            stop.check()
            exact = stop.keep(solve(problem, "cpsat", time_limit=args.time_limit, seed=0, progress=False),
                              f"{kind} {n} ops, CP-SAT")
            ref = exact.reference_point()
            target_hv = args.target * exact.hypervolume(ref)
            reached: dict[str, float] = {}

            def reached_target(gen, elapsed, X, F, ref=ref, target_hv=target_hv, reached=reached, problem=problem,
                               stats=exact.stats):
                if gen % 5:
                    return False
                front = result(problem, X, "nsga2", "feasible", stats)
                hv = front.hypervolume(ref)
                reached["hv"] = hv
                if hv >= target_hv:
                    reached["time"] = elapsed
                    return True
                return False

            approx = stop.keep(solve(problem, "nsga2", time_limit=args.time_limit, seed=seed, progress=False,
                                     callback=reached_target, patience=None), f"{kind} {n} ops, NSGA-II")
            hv_ratio = approx.hypervolume(ref) / max(exact.hypervolume(ref), 1e-300)
            t_nsga = reached.get("time", float("nan"))
            print(f"{kind:>9} {n:>4} {seed:>4} {len(exact):>5} {exact.stats.wall_s:>8.2f} "
                  f"{'yes' if exact.complete else 'no':>7} {t_nsga:>8.2f} {hv_ratio:>8.4f} "
                  f"{exact.stats.wall_s / t_nsga if t_nsga == t_nsga else float('nan'):>6.1f}x")


if __name__ == "__main__":
    main()
