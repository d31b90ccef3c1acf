"""The ``dse`` command line: ``solve``, ``validate``, ``catalog``.

Exit codes: 0 success, 1 unexpected error, 2 invalid input, 3 infeasible problem,
130 interrupted (after writing what was found).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dse.errors import DseError, InfeasibleError
from dse.pareto import ParetoSet


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dse", description="Design-space exploration of workload mappings.")
    sub = parser.add_subparsers(dest="command", required=True)
    solve = sub.add_parser("solve", help="solve a problem spec and write its Pareto front")
    solve.add_argument("spec", help="problem spec YAML")
    solve.add_argument("--solver", help="cpsat | nsga2 | exhaustive | all | heuristic:NAME (default: the spec's)")
    solve.add_argument("--time-limit", type=float, help="seconds per solver (default: the spec's)")
    solve.add_argument("--seed", type=int, help="random seed (default: the spec's)")
    solve.add_argument("--out", type=Path, help="folder for front.csv, front.json, pareto.png")
    solve.add_argument("--quiet", action="store_true", help="no progress lines")
    solve.add_argument("--gantt", action="store_true", help="also draw the schedule of the knee point (gantt.png)")
    validate = sub.add_parser("validate", help="check a problem spec and print its size")
    validate.add_argument("spec")
    sub.add_parser("catalog", help="list bundled platforms, workloads, builders and problems")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "solve":
            return _solve(args)
        if args.command == "validate":
            return _validate(args.spec)
        return _catalog()
    except DseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head and friends
        sys.stderr.close()
        return 0


def _catalog() -> int:
    from dse import catalog

    print("platforms: " + ", ".join(catalog.platforms()))
    print("workloads: " + (", ".join(catalog.workloads()) or "(none; use builders)"))
    print("builders:  " + ", ".join(catalog.builders()))
    print("problems:  " + ", ".join(catalog.problems()))
    return 0


def _validate(spec_path: str) -> int:
    from dse.spec import build_problem, load_spec

    spec = load_spec(spec_path)
    problem = build_problem(spec)
    problem.check_feasible()
    print(f"{spec_path}: ok: family {spec.family}, platform {spec.platform.name} ({len(spec.platform.devices)} devices), "
          f"workload {spec.workload.name} ({spec.workload.n_ops} ops, {len(spec.workload.edges)} edges), "
          f"{problem.n_genes} genes, {problem.space_size:.3g} genomes, objectives {', '.join(spec.objectives)}, "
          f"constraints {', '.join(c.name for c in problem.constraints) or 'none'}")
    return 0


def _solve(args: argparse.Namespace) -> int:
    from dse.progress import Progress
    from dse.solvers import solve
    from dse.spec import build_problem, load_spec

    spec = load_spec(args.spec)
    problem = build_problem(spec)
    problem.check_feasible()
    settings = spec.solver
    name = args.solver or settings.name
    time_limit = args.time_limit if args.time_limit is not None else settings.time_limit_s
    seed = args.seed if args.seed is not None else settings.seed
    from dse.solvers.registry import lookup

    if name == "all":
        entries = [(s, opts) for s, opts in lookup("all") if s.in_all]
    else:
        entries = lookup(name, problem)
    show = False if args.quiet else None
    fronts: list[ParetoSet] = []
    interrupted = False
    for entry, _fixed in entries:
        reason = entry.supports(problem)
        if reason is not None:
            print(f"note: {entry.name} skipped: {reason}", file=sys.stderr)
            continue
        label = name if name.startswith("heuristic:") else entry.name
        configured = settings.options.get(entry.name)
        options = dict(configured) if isinstance(configured, dict) else {}
        try:
            front = solve(problem, label, time_limit=time_limit, seed=seed,
                          progress=Progress(entry.name, enabled=show), **options)
        except NotImplementedError as exc:
            print(f"note: {entry.name} skipped: {exc}", file=sys.stderr)
            continue
        except KeyboardInterrupt:
            interrupted = True
            break
        fronts.append(front)
        if args.out:
            _write(args.out, problem, fronts, gantt=args.gantt)
        if front.status == "interrupted":
            interrupted = True
            break
    _print_report(problem, fronts)
    if args.out:
        _write(args.out, problem, fronts, gantt=args.gantt)
        print(f"wrote {args.out}/front.csv, front.json, pareto.png" + (", gantt.png" if args.gantt else ""))
    if interrupted:
        print("interrupted: the fronts above are what was found so far", file=sys.stderr)
        return 130
    if fronts and all(len(f) == 0 for f in fronts) and any(f.status == "infeasible" for f in fronts):
        raise InfeasibleError(f"infeasible: {problem.diagnose()}")
    return 0


def _print_report(problem, fronts: list[ParetoSet]) -> None:
    import pandas as pd

    from dse.mapping.registry import family_of

    for front in fronts:
        print(f"\n== {front.solver}: {len(front)} Pareto points, status {front.status}"
              f"{' (complete, proven)' if front.complete else ''}, {front.stats.wall_s:.2f} s")
        if not len(front):
            continue
        frame = front.to_frame()
        frame["mapping"] = [problem.describe(p.genome) for p in front.points]
        shown = [m.column(problem.tables) for m in family_of(problem).metrics if m.table]
        cols = ["proven", *front.columns] + [c for c in shown if c in frame and c not in front.columns]
        with pd.option_context("display.max_colwidth", 90, "display.width", 200, "display.float_format", "{:.5g}".format):
            print(frame[[*cols, "mapping"]].to_string(index=False))
    if fronts and fronts[0].baselines:
        print("\n== baselines")
        for name, p in fronts[0].baselines.items():
            values = ", ".join(f"{k} {v:.5g}" for k, v in p.objectives.items())
            print(f"  {name:<16} {values}{'' if p.feasible else '  (violates constraints)'}")
    if len(fronts) >= 2 and len(fronts[0]) and len(fronts[1]):
        cmp = fronts[0].compare(fronts[1])
        print(f"\n== {fronts[1].solver} reaches {cmp['hypervolume_ratio']:.1%} of {fronts[0].solver}'s hypervolume")


def _write(out: Path, problem, fronts: list[ParetoSet], gantt: bool = False) -> None:
    import json

    import pandas as pd

    from dse.plot import plot_fronts, plot_gantt, save

    out.mkdir(parents=True, exist_ok=True)
    frames = []
    for f in fronts:
        frame = f.to_frame()
        frame.insert(2, "status", f.status)
        frames.append(frame)
    pd.concat(frames, ignore_index=True).to_csv(out / "front.csv", index=False)
    doc = {"problem": problem.name, "fronts": [json.loads(f.to_json()) for f in fronts]}
    (out / "front.json").write_text(json.dumps(doc, indent=2))
    save(plot_fronts(fronts), str(out / "pareto.png"))
    if gantt:
        best = next((f for f in fronts if len(f)), None)
        if best is not None:
            mapping = problem.decode(best.knee().genome)
            save(plot_gantt(mapping.schedule, time_unit=problem.tables.time_unit, title=f"{problem.name}: knee point"),
                 str(out / "gantt.png"))


if __name__ == "__main__":
    sys.exit(main())
