"""The 10% check: every exact front point of the serving problems, analytical against simulated.

Per point (``dse.runtime.serving_check.check_point``): the family's throughput against the simulator's
capacity (SLO bisection, or an offline backlog's steady rate), and TTFT and TPOT (means) at 70% of that
capacity: the simulator's against the family's no-queue figures and its figures at that load (the gated
batched-prefill queue, the decode batch the load holds). A figure more than 10% off is flagged with the
reason (the ``why`` column). ``--routing random`` routes every request of the run at 70% load to an engine
drawn at random (each engine then sees a Poisson stream, as the analytical queue assumes) instead of the
simulator's default, the engine with the fewest unfinished requests (the capacity stays the default's).
Prints the table and writes it to
``benchmarks/results/serving_check.csv``.

    .venv/bin/python benchmarks/serving_check.py [--problems NAME ...] [--requests 400] [--routing random]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stopping import benchmark_stops  # noqa: E402

import dse  # noqa: E402
from dse.runtime.serving_check import TOLERANCE, PointCheck, check_point  # noqa: E402
from dse.sim.serving.inputs import ROUTINGS  # noqa: E402

PROBLEMS = ("llm_llama2_70b_8xh100", "llm_llama2_70b_8xh100_slo", "llm_llama31_8b_mixed_fleet", "llm_mixtral_h200")
OUT = Path(__file__).resolve().parent / "results" / "serving_check.csv"


def why(check: PointCheck, routing: str) -> str:
    """The reason for each figure more than 10% off (empty when none is)."""
    e = check.errors()
    notes = []
    if abs(e["throughput"]) > TOLERANCE:
        notes.append("throughput: the simulator's capacity is the highest Poisson rate meeting the SLOs at their "
                     "percentile; the family's rate is the saturated one, the SLOs checked on means"
                     if "SLO" in check.capacity_by else "throughput: saturated rates differ")
    routed = ("least-unfinished routing feeds the engines no Poisson streams (the queue model's assumption)"
              if routing == "least_unfinished" else "the queue model's means miss the simulated run's")
    for figure in ("ttft", "tpot"):
        err = e[f"{figure}_load"]
        if np.isnan(err) and not np.isnan(e[f"{figure}_model"]):
            notes.append(f"{figure.upper()}: past saturation in the queue model (the load's decode batch above the "
                         "batch limit, or prefill and decode over 100% of an engine)")
        elif abs(err) > TOLERANCE:
            notes.append(f"{figure.upper()} at load {err:+.0%}: {routed}")
    return "; ".join(notes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS))
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--routing", choices=ROUTINGS, default=ROUTINGS[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = []
    with benchmark_stops("serving_check") as stop:
        for name in args.problems:
            stop.check()
            problem = dse.load_problem(Path("problems") / f"{name}.yaml")
            front = stop.keep(dse.solve(problem, "cpsat", time_limit=args.time_limit, seed=0), case=name)
            for k, point in enumerate(front.points):
                stop.check()
                check = stop.keep(check_point(problem, np.asarray(point.genome), requests=args.requests,
                                              routing=args.routing), case=f"{name} point {k}")
                e = check.errors()
                row = {"problem": name, "point": k, "deployment": check.point, "capacity_by": check.capacity_by,
                       "tok_s_model": check.model_tok_s, "tok_s_sim": check.sim_tok_s, "err_tok_s": e["throughput"],
                       "rate_70": check.rate, "ttft_model_s": check.ttft_model_s, "ttft_load_s": check.ttft_load_s,
                       "ttft_sim_s": check.ttft_sim_s, "err_ttft": e["ttft_model"], "err_ttft_load": e["ttft_load"],
                       "tpot_model_s": check.tpot_model_s, "tpot_load_s": check.tpot_load_s,
                       "tpot_sim_s": check.tpot_sim_s, "err_tpot": e["tpot_model"], "err_tpot_load": e["tpot_load"],
                       "routing": args.routing, "why": why(check, args.routing)}
                rows.append(row)
                print(f"{name} #{k} {check.point}: tok/s {check.model_tok_s:.0f} vs {check.sim_tok_s:.0f} "
                      f"({e['throughput']:+.1%}); TTFT {check.ttft_model_s:.3f}/{check.ttft_load_s:.3f} vs "
                      f"{check.ttft_sim_s:.3f} s ({e['ttft_model']:+.1%}/{e['ttft_load']:+.1%}); TPOT "
                      f"{check.tpot_model_s * 1e3:.1f}/{check.tpot_load_s * 1e3:.1f} vs {check.tpot_sim_s * 1e3:.1f} "
                      f"ms ({e['tpot_model']:+.1%}/{e['tpot_load']:+.1%}) {row['why']}", flush=True)
                args.out.parent.mkdir(parents=True, exist_ok=True)
                pd.DataFrame(rows).to_csv(args.out, index=False)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
