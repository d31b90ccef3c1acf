"""The grid search users run today against the serving family's exact front (issue: LLM serving family).

A Vidur-Search-style grid: every single-pool deployment of the problem's space (GPU type x TP x PP x batch
limit x clock x precision, as many replicas as the fleet holds), each one simulated
(``dse.runtime.serving_check``: an offline backlog's steady rate, or the highest Poisson rate meeting the
SLOs by bisection), its energy per token the deployment's power over that rate. Printed per problem:

* **exactness**: grid deployments whose *analytical* objectives (the family's evaluator, the model CP-SAT
  solves) no front point dominates or equals. There must be none: the front is exact over a space that
  contains the grid.
* **simulated**: grid deployments whose *simulated* (tokens/s, J/token) no simulated front point dominates
  or equals: where the analytical model orders deployments differently from the simulator.
* time to the exact front (CP-SAT, the table included) against time to the simulated grid;
* the certificate's gap when CP-SAT is cut short at each ``--cuts`` second.

Writes ``benchmarks/results/serving_grid.csv`` (one row per grid deployment).

    .venv/bin/python benchmarks/serving_grid.py [--problems llm_llama2_70b_8xh100 ...] [--requests 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stopping import benchmark_stops  # noqa: E402

import dse  # noqa: E402
from dse.mapping.serving.problem import ServingProblem  # noqa: E402
from dse.runtime.serving_check import simulated_capacity  # noqa: E402

PROBLEMS = ("llm_llama2_70b_8xh100", "llm_llama2_70b_8xh100_slo")
OUT = Path(__file__).resolve().parent / "results" / "serving_grid.csv"


def grid_genomes(problem: ServingProblem) -> list[np.ndarray]:
    """Every usable option that serves requests alone (role both), with every replica the fleet holds."""
    t = problem.table
    both = [o for o in np.flatnonzero(t.usable & (t.max_replicas > 0)) if t.roles[t.role[o]] == "both"]
    return [problem.genome_of([(int(o), int(t.max_replicas[o]))]) for o in both]


def simulated(problem: ServingProblem, genome: np.ndarray, requests: int) -> tuple[float, float]:
    """(tokens/s, J/token) of ``genome`` in the simulator: its rate as the 10% check finds it (offline: each
    pool's backlog rate; with SLOs: the bisection), its energy the deployment's power over that rate."""
    power_w = float(problem.kernel(genome[None, :], False).values["power_mw"][0]) / 1e3
    rate, _ = simulated_capacity(problem, genome, requests=requests)
    tokens = rate * problem.table.output_tokens
    return tokens, (power_w / tokens if tokens > 0 else float("inf"))


def undominated(points: np.ndarray, front: np.ndarray) -> np.ndarray:
    """Rows of ``points`` (tokens/s to maximize, J/token to minimize) that no row of ``front`` dominates or
    equals, with a relative tolerance of 1e-9."""
    tol = 1e-9
    covered = ((front[None, :, 0] >= points[:, None, 0] * (1 - tol))
               & (front[None, :, 1] <= points[:, None, 1] * (1 + tol))).any(axis=1)
    return ~covered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS))
    parser.add_argument("--requests", type=int, default=200, help="requests per simulation (default 200)")
    parser.add_argument("--cuts", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = []
    with benchmark_stops("serving_grid") as stop:
        for name in args.problems:
            stop.check()
            start = time.monotonic()
            problem = dse.load_problem(Path("problems") / f"{name}.yaml")
            table_s = time.monotonic() - start
            front = stop.keep(dse.solve(problem, "cpsat", time_limit=120, seed=0, progress=False), case=name)
            exact_s = time.monotonic() - start
            gaps = {cut: stop.keep(dse.solve(problem, "cpsat", time_limit=cut, seed=0, progress=False),
                                   case=f"{name} cut at {cut:g} s").certificate() for cut in args.cuts}
            genomes = grid_genomes(problem)
            F = problem.evaluate(np.stack(genomes)).F  # the whole grid in one evaluation
            analytic = tuple(np.asarray(o.to_user(F[:, k]), dtype=float) for k, o in enumerate(problem.objectives[:2]))
            front_user = np.array([[p.objectives[o.column] for o in problem.objectives[:2]] for p in front.points])
            exact_misses = undominated(np.column_stack(analytic), front_user)
            start = time.monotonic()
            grid_sim = []
            for g in genomes:
                stop.check()
                grid_sim.append(stop.keep(simulated(problem, g, args.requests), case=f"{name} grid point"))
            grid_s = time.monotonic() - start
            front_sim = np.array([stop.keep(simulated(problem, np.asarray(p.genome), args.requests),
                                            case=f"{name} front point") for p in front.points])
            sim_misses = undominated(np.array(grid_sim), front_sim)
            for g, a_tok, a_j, (s_tok, s_j), miss_a, miss_s in zip(genomes, *analytic, grid_sim, exact_misses,
                                                                    sim_misses, strict=True):
                rows.append({"problem": name, "deployment": problem.describe(g.tolist()), "tok_s_model": a_tok,
                             "j_per_token_model": a_j, "tok_s_sim": s_tok, "j_per_token_sim": s_j,
                             "outside_front_model": bool(miss_a), "outside_front_sim": bool(miss_s)})
            print(f"{name}: exact front {len(front)} points, status {front.status}, {exact_s:.1f} s (table "
                  f"{table_s:.1f} s); grid {len(genomes)} deployments simulated in {grid_s:.1f} s")
            print(f"  grid points outside the exact front, analytical: {int(exact_misses.sum())} (must be 0)")
            print(f"  grid points outside the simulated front, simulated: {int(sim_misses.sum())}")
            for g, miss in zip(genomes, sim_misses, strict=True):
                if miss:
                    print(f"    {problem.describe(g.tolist())}")
            for cut, cert in gaps.items():
                print(f"  CP-SAT cut at {cut:g} s: {cert.describe() if cert is not None else 'no certificate'}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(args.out, index=False)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
