"""The ``dse`` command line: ``solve``, ``validate``, ``catalog``, and the commands of :mod:`dse.cli.commands`.

Exit codes: 0 success, 1 unexpected error, 2 invalid input, 3 infeasible problem
(no solver found a feasible mapping: the diagnosis names the constraint), 130
interrupted by SIGINT and 143 by SIGTERM (after writing what was found).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

import numpy as np

from dse.cli.tables import fit_table, terminal_width
from dse.errors import DseError, GenomeError, SpecError
from dse.inputs import catalog
from dse.inputs.catalog import spec_path, time_unit_note
from dse.pareto import GeneRangeError, ParetoSet, read_front_genomes
from dse.runs.given_front import spec_digest
from dse.runs.runner import check_some_feasible, run_spec_solvers, solver_checkpoint, write_fronts
from dse.solvers.heuristic import small_one_off
from dse.solvers.registry import (
    SolverNotApplicableError,
    UnknownSolverError,
    lookup,
    not_applying,
    solver_names,
    solvers,
)
from dse.store.batch import cluster_client
from dse.store.trace import (
    chrome_trace,
    combined_trace,
    mapping_timeline,
    run_timeline,
    write_trace,
)
from dse.util.files import check_out_folder
from dse.util.interrupt import Interrupted, interruptible
from dse.util.jit import time_limit_ends
from dse.util.limits import check_seed, check_time_limit
from dse.util.suggest import did_you_mean
from dse.version import __version__
from dse.viz.picture_process import PictureProcess

if TYPE_CHECKING:
    from dse.mapping.base import MappingProblem
    from dse.runs.spec import ProblemSpec

#: The folder under which ``dse solve`` writes ``<problem name>/`` when no ``--out`` is given (relative: under
#: the working folder).
DEFAULT_OUT_ROOT = Path("out")


def default_out(problem_name: str) -> Path:
    """``out/<problem name>``: where ``dse solve`` writes without ``--out`` (the name reduced to letters,
    digits, ``.``, ``_`` and ``-``, so that it is one folder name on every system)."""
    import re

    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", problem_name).strip("._") or "problem"
    return DEFAULT_OUT_ROOT / safe


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose "invalid choice" errors (a mistyped command, ``--export csvv``) name the
    nearest choices, by the same rule as every other name a user types (:mod:`dse.util.suggest`)."""

    def error(self, message: str) -> NoReturn:
        import re

        wrong = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if wrong:
            choices = re.findall(r"'([^']*)'", wrong.group(2))
            message = message.replace(f"'{wrong.group(1)}'", f"'{wrong.group(1)}'{did_you_mean(wrong.group(1), choices)}", 1)
        super().error(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dse", description="Design-space exploration of workload mappings.")
    parser.add_argument("--version", action="version", version=f"dse {__version__}",
                        help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    solve = sub.add_parser("solve", help="solve a problem spec and write its Pareto front")
    solve.add_argument("spec", help="problem spec YAML")
    solve.add_argument("--solver", help=" | ".join([n for n in solvers() if n != "heuristic"] + ["all", "heuristic:NAME"])
                       + " (default: the spec's; heuristic:NAME runs one of the family's heuristics, e.g. heuristic:heft "
                       "for dag: an unknown NAME lists them; dse validate SPEC lists the solvers that take it)")
    solve.add_argument("--time-limit", type=float, help="seconds per solver, the first one's counted from the start of problem building (default: the spec's)")
    solve.add_argument("--seed", type=int, help="random seed (default: the spec's)")
    solve.add_argument("--out", type=Path,
                       help="folder for front.csv, front.json, pareto.png (default: out/<problem name>)")
    solve.add_argument("--quiet", action="store_true", help="no progress lines")
    solve.add_argument("--gantt", action="store_true", help="also draw the schedule of the knee point (gantt.png)")
    solve.add_argument("--point", type=int, metavar="N",
                       help="trace.json shows row N (0 = first) of front.csv (default: the first front's knee)")
    solve.add_argument("--workers", type=int, metavar="N",
                       help="cpsat: farm its regions out, nsga2, memetic and lns: run islands, on a local Dask "
                            "cluster of N worker processes")
    solve.add_argument("--scheduler", metavar="ADDR",
                       help="cpsat: farm its regions out, nsga2, memetic and lns: run islands, on the Dask cluster "
                            "at ADDR (tcp://HOST:8786)")
    solve.add_argument("--resume", type=Path, metavar="DIR",
                       help="continue from DIR/front.json of a previous run (its genomes seed nsga2 and hint cpsat) "
                            "and from cpsat's box search state, DIR/checkpoint-cpsat.json, even of a killed run")
    validate = sub.add_parser("validate", help="check a problem spec and print its size")
    validate.add_argument("spec", help="problem spec YAML (a path or a catalog problem name)")
    catalog = sub.add_parser("catalog", help="list bundled platforms, workloads, builders and problems")
    catalog.add_argument("--details", metavar="NAME",
                         help="print one platform's figures, one builder's parameters, one workload or problem")
    from dse.cli.commands import commands

    for command in commands().values():
        command.add_arguments(sub.add_parser(command.name, help=command.help))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``dse`` command line ``argv`` (default: the process's); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        with interruptible() as token, warnings_as_lines():  # one stop rule for every command
            code = _dispatch(args)
        if token.stopped and code == 0:  # the stop came as the work ended: the results are whole
            print("interrupted: the command had finished its work; what it wrote is complete", file=sys.stderr)
            return token.exit_code
        return code
    except DseError as exc:
        print(f"error: {_with_unit_note(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except Interrupted as stop:  # a long command stopped by SIGINT/SIGTERM after writing what finished
        print(f"interrupted: {stop.note or 'nothing had finished, nothing written'}", file=sys.stderr)
        return stop.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head and friends
        sys.stderr.close()
        return 0


#: Allocations between two collections of the garbage collector's youngest generation in the ``dse``
#: program (Python's default: 700). Importing numba, matplotlib and the engine allocates millions of
#: objects that live as long as the process; at 700 they set off five full collections in
#: ``dse solve --time-limit 1`` on 2,000 tasks x 256 devices, 0.26 s of CPU.
YOUNG_COLLECTION_THRESHOLD = 10_000

#: True in the ``dse`` program (:func:`run`), a process that ends after one command.
_one_off_process = False


def run() -> NoReturn:
    """The ``dse`` program (``python -m dse.cli``, the ``dse`` script): :func:`main` on the process's
    arguments, then exit with its status.

    The garbage collector runs its young collections every :data:`YOUNG_COLLECTION_THRESHOLD`
    allocations instead of 700, which spares the full collections a short command's imports set off
    (time in the collector, measured with ``gc.callbacks`` on a 2-core machine: 0.43 s -> 0.20 s on
    that 2,000-task dag, 0.10 s -> 0.08 s for HEFT on 50 tasks); it still collects. Before exiting,
    the objects left are frozen (:func:`gc.freeze`), so that the interpreter's last collections skip
    them: 0.25 s of CPU at exit after numba has loaded a compiled kernel, 0.1 s after a small solve.
    Exiting is otherwise unchanged: atexit handlers run and streams are flushed, and objects no longer
    referenced are freed as before; only garbage held in reference cycles stays for the operating system
    to reclaim. :func:`main` (what tests call in-process) changes neither. ``dse solve`` in this program
    draws pareto.png in a child process that imports matplotlib while the solvers run
    (:func:`_picture_process`)."""
    global _one_off_process
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
    _one_off_process = True
    code = main()
    gc.freeze()
    sys.exit(code)


@contextlib.contextmanager
def warnings_as_lines() -> Iterator[None]:
    """Within the block, a warning the engine raises (a seed heuristic that failed, say) prints as one line,
    ``warning: MESSAGE``, not Python's ``file:line: Category: message`` and a line of source; the
    caller's way of showing warnings comes back after."""
    previous = warnings.showwarning

    def one_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
        first = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
        print(f"warning: {first}", file=sys.stderr if file is None else file)

    warnings.showwarning = one_line
    try:
        yield
    finally:
        warnings.showwarning = previous


def _dispatch(args: argparse.Namespace) -> int:
    """Run the command ``args`` names; returns its exit status."""
    if args.command == "solve":
        return _solve(args)
    if args.command == "validate":
        return _validate(args.spec)
    if args.command == "catalog":
        return _catalog(args.details)
    from dse.cli.commands import commands

    return commands()[args.command].run(args)


def _with_unit_note(message: str) -> str:
    """``message`` with a short explanation of ``tu`` appended when it uses that unit (still one line)."""
    import re

    return message + " (tu: the workload's own time unit)" if re.search(r"\btu\b", message) else message


def _catalog(details: str | None = None) -> int:
    if details is not None:
        print(catalog.details(details))
        return 0
    print("platforms: " + ", ".join(catalog.platforms()))
    print("workloads: " + (", ".join(catalog.workloads()) or "(none; use builders)"))
    print("builders:  " + ", ".join(catalog.builders()))
    print("problems:  " + ", ".join(catalog.problems()))
    for kind, names in catalog.other_kinds().items():
        print(f"{kind + ':':<10} " + ", ".join(names))
    print("details:   dse catalog --details NAME")
    return 0


def _space(problem) -> str:
    """The genome space's size, in powers of ten past 10^15 (never formed as a huge integer)."""
    digits = problem.log10_space_size
    return f"{problem.space_size:,}" if digits < 15 else f"about 10^{digits:.1f}"


def _validate(spec_path: str) -> int:
    from dse.runs.spec import build_problem, load_spec

    spec = load_spec(spec_path)
    problem = build_problem(spec)
    problem.check_feasible()
    tables = problem.tables
    applies, refused = solver_names(problem)
    print(f"{spec_path}: ok: family {spec.family}, platform {spec.platform.name} ({tables.n_dev} devices), "
          f"workload {spec.workload.name} ({tables.n_ops} ops, {tables.n_edges} edges), "
          f"{problem.n_genes} genes, {_space(problem)} genomes, objectives {', '.join(spec.objectives)}, "
          f"constraints {', '.join(c.name for c in problem.constraints) or 'none'}, "
          f"solvers {', '.join(applies)}{not_applying(refused)}")
    for note in problem.notes():  # constraints that cannot bind (cheap bounds): they shape no front
        print(f"note: {note}")
    return 0


def _check_arguments(args: argparse.Namespace) -> None:
    """Reject bad command-line values before any work starts (SpecError, exit 2)."""
    if args.time_limit is not None:
        check_time_limit(args.time_limit)
    if args.seed is not None:
        check_seed(args.seed)
    if args.out is not None:
        check_out_folder(args.out)
    if args.point is not None and args.point < 0:
        raise SpecError("command line", "--point", args.point, "must be a row of front.csv (0 = first)")
    if args.workers is not None and args.scheduler is not None:
        raise SpecError("command line", "--workers", args.workers, "give --workers or --scheduler, not both")
    if args.workers is not None and not (1 <= args.workers <= 4096):
        raise SpecError("command line", "--workers", args.workers, "must be an integer in [1, 4096]")


def _write_trace(out: Path, problem, fronts: list[ParetoSet], row: int | None) -> str | None:
    """``out/trace.json``: the timeline of row ``row`` of front.csv (fronts in order), or of the first
    non-empty front's knee, and the tasks of every distributed run (one track per worker,
    :func:`run_timeline`); returns what it shows, or None when it shows nothing (the family's mappings
    have no timeline and no run was distributed). SpecError (exit 2) for a row past the end of front.csv."""
    points = [p for f in fronts for p in f.points]
    if row is not None and row >= len(points):
        raise SpecError("command line", "--point", row, f"front.csv has {len(points)} rows: give 0 to "
                        f"{len(points) - 1}" if points else "front.csv has no rows")
    first = next((f for f in fronts if len(f)), None)
    point, which = (points[row], f"row {row}") if row is not None else (
        (first.knee(), f"the knee of {first.solver}'s front") if first is not None else (None, ""))
    timeline = mapping_timeline(problem, np.asarray(point.genome)) if point is not None else None
    docs = [chrome_trace(timeline)] if timeline is not None else []
    runs = [f.solver for f in fronts if f.stats.timings is not None and f.stats.timings.tasks]
    docs += [chrome_trace(run_timeline(f"{f.solver} on the cluster", f.stats.timings)) for f in fronts
             if f.stats.timings is not None and f.stats.timings.tasks]
    if not docs:
        return None
    write_trace(combined_trace(docs), out / "trace.json")
    shown = ([which] if timeline is not None else []) + [f"{name}'s tasks per worker" for name in runs]
    return "; ".join(shown)


def _solve(args: argparse.Namespace) -> int:
    # outside each solver's own time limit (reports, plots, Gantt charts) no kernel compiles inline either:
    # on a cold cache they run uncompiled while the one-time compilation runs in the background (dse.util.jit)
    with time_limit_ends(time.monotonic()):
        return _solve_spec(args)


def _solve_spec(args: argparse.Namespace) -> int:
    from dse.runs.spec import build_problem, load_spec

    _check_arguments(args)
    spec_sha256 = spec_digest(args.spec)  # before it is read: dse certify refuses the spec once it changed
    spec = load_spec(args.spec)
    spec_file = str(spec_path(args.spec).resolve())
    out: Path = args.out if args.out is not None else default_out(spec.name)
    started = time.monotonic()  # the first solver's time limit counts from here: building is part of it
    problem = build_problem(spec)
    name = args.solver or spec.solver.name
    one_off = small_one_off(problem) if name.startswith("heuristic:") else contextlib.nullcontext()
    with one_off:  # a small problem's heuristic: its kernels run interpreted, numba stays unloaded (dse.util.jit)
        return _solve_problem(args, problem, spec, name, out, spec_file, spec_sha256, started)


def _picture_process(problem: MappingProblem, solver: str) -> PictureProcess | None:
    """A child process that imports matplotlib while ``solver`` runs and then draws pareto.png
    (:mod:`dse.viz.picture_process`), in the ``dse`` program only (:func:`run`: not in a test or a notebook
    calling :func:`main`, whose next commands would fork again) and not for one heuristic, whose single pass
    leaves nothing to overlap; None: this process draws."""
    if not _one_off_process or solver.startswith("heuristic:"):
        return None
    return PictureProcess.start(shared=problem.objectives)


def _solve_problem(args: argparse.Namespace, problem: MappingProblem, spec: ProblemSpec, name: str, out: Path,
                   spec_file: str, spec_sha256: str | None, started: float) -> int:
    """Run the solvers of ``dse solve`` on ``problem``, write and print their fronts; the exit status.
    ``started``: the monotonic time the problem's building began (the first solver's limit counts from it)."""
    problem.check_feasible()
    settings = spec.solver
    _check_solver_for(problem, name, *(("command line", "--solver") if args.solver else (args.spec, "solver.name")))
    for note in problem.notes():  # constraints that cannot bind (cheap bounds): they shape no front
        print(f"note: {note}")
    time_limit = args.time_limit if args.time_limit is not None else settings.time_limit_s
    seed = args.seed if args.seed is not None else settings.seed
    resume = _resume_genomes(args.resume, problem) if args.resume is not None else []
    if args.out is None:  # created once the spec, the problem and the resumed fronts were found sound
        check_out_folder(out)
    pictures = _picture_process(problem, name)
    # the child draws pareto.png while this process prints the report and writes trace.json; the plot is in
    # place when the block ends (drawn here where the child could not)
    with pictures or contextlib.nullcontext():
        draw = pictures.draw_later if pictures is not None else None
        with interruptible() as token:
            def written(fronts: list[ParetoSet]) -> None:  # after every solver: a later crash keeps the fronts
                write_fronts(out, problem, fronts, gantt=args.gantt, spec=spec_file, spec_sha256=spec_sha256,
                             draw=draw)

            with cluster_client(args.workers, args.scheduler, token) as client:
                fronts, _ = run_spec_solvers(problem, settings, name, time_limit, seed, token, quiet=args.quiet,
                                             on_front=written, resume=resume, source=str(args.spec),
                                             client=client, spent_s=time.monotonic() - started,
                                             checkpoints=lambda solver: solver_checkpoint(out, args.resume,
                                                                                          spec_sha256, solver))
        interrupted = token.stopped
        if interrupted and not fronts:
            write_fronts(out, problem, fronts, gantt=args.gantt, spec=spec_file, spec_sha256=spec_sha256,
                         draw=draw)
        _print_report(problem, fronts)
        traced = _write_trace(out, problem, fronts, args.point)
    print(f"wrote {out}/front.csv, front.json, pareto.png" + (", gantt.png" if args.gantt else "")
          + (f", trace.json ({traced})" if traced else "")
          + ("" if args.out is not None else " (the default folder out/<problem name>; --out DIR to choose)"))
    if interrupted:
        print("interrupted: the fronts above are what was found so far", file=sys.stderr)
        return token.exit_code
    check_some_feasible(problem, fronts)
    return 0


def _check_solver_for(problem, name: str, source: str, field: str) -> None:
    """:class:`SpecError` naming ``source``, ``field`` and ``name`` when no solver answers to ``name`` or the one
    named does not take ``problem`` (the message says why, and lists the solvers that take it)."""
    try:
        lookup(name, problem)
    except (UnknownSolverError, SolverNotApplicableError) as exc:
        raise SpecError(source, field, name, str(exc)) from None


def _resume_genomes(folder: Path, problem) -> list[np.ndarray]:
    """The genomes of every point in ``folder/front.json`` (a previous ``dse solve --out``), checked against
    ``problem``'s genome (none when the folder holds only a solver's checkpoint: a run killed before it wrote
    a front); SpecError (exit 2) naming ``--resume`` when the file is missing or does not fit."""

    path = folder / "front.json"
    if not path.is_file():
        if any(folder.glob("checkpoint-*.json")):  # a run killed before its first front: its solver state only
            return []
        raise SpecError("command line", "--resume", str(folder),
                        "has no front.json (give the --out folder of a previous run)")
    try:
        genomes = read_front_genomes(path)
    except SpecError:  # the file does not fit a front.json's schema: its field and value are named
        raise
    except GeneRangeError as exc:  # e.g. a gene past int64: no genome of any problem
        raise SpecError(str(path), "fronts.points.genome", None, str(exc)) from None
    except ValueError as exc:
        raise SpecError(str(path), "fronts", "front.json", f"cannot be read: {exc}") from None
    for g in genomes:
        try:
            problem.checked_genomes(g)
        except GenomeError as exc:
            raise SpecError(str(path), "fronts.points.genome", " ".join(map(str, g[:8].tolist())),
                            f"does not fit this problem ({exc}): was it written for another spec?") from None
    return genomes


#: Front rows printed per solver; larger fronts are sampled evenly.
MAX_TABLE_ROWS = 25


def _print_report(problem, fronts: list[ParetoSet]) -> None:
    from dse.mapping.registry import family_of

    for front in fronts:
        print(f"\n== {front.solver}: {len(front)} Pareto points, status {front.status}"
              f"{' (complete, proven)' if front.complete else ''}, {front.stats.wall_s:.2f} s")
        certificate = front.certificate()
        if certificate is not None:
            print(f"   {certificate.describe()}")
        if not len(front):
            continue
        records = front.to_records()
        rows = list(range(len(records)))
        if len(records) > MAX_TABLE_ROWS:  # an evenly spread sample; front.csv has every point
            knee = front.points.index(front.knee())
            spread = np.linspace(0, len(records) - 1, MAX_TABLE_ROWS - 1).round().astype(int).tolist()
            rows = sorted({*spread, knee})
            # the count shown: one less than MAX_TABLE_ROWS when the knee is one of the evenly spread points
            print(f"   ({len(rows)} of {len(records)} points shown, the knee among them; every point is in "
                  "front.csv)")
        present = {key for record in records for key in record}
        shown = [m.column(problem.tables) for m in family_of(problem).metrics if m.table]
        cols = ["proven", *front.columns] + [c for c in shown if c in present and c not in front.columns]
        table = {c: [records[i].get(c, math.nan) for i in rows] for c in cols}
        table["mapping"] = [problem.describe(front.points[i].genome) for i in rows]
        print(fit_table(table, terminal_width(), wrap="mapping"))
    if fronts and fronts[0].baselines:
        print("\n== baselines")
        width = max(16, *(len(name) for name in fronts[0].baselines))  # "only cpu0 (alike: cpu1-cpu7)"
        for name, p in fronts[0].baselines.items():
            values = ", ".join(f"{k} {v:.5g}" for k, v in p.objectives.items())
            print(f"  {name:<{width}} {values}{'' if p.feasible else '  (violates constraints)'}")
    if len(fronts) >= 2 and len(fronts[0]) and len(fronts[1]):
        print("\n== " + compare_line(fronts[0], fronts[1]))
    notes = {n for n in (time_unit_note(o.unit) for f in fronts for o in f.objectives) if n}
    for note in sorted(notes):
        print(f"\n({note})")


def compare_line(first: ParetoSet, second: ParetoSet) -> str:
    """How ``second`` compares with ``first``: a hypervolume ratio only when ``first`` is a complete (proven)
    front; otherwise which front holds the best points over which range of the first objective."""
    if first.complete:
        cmp = first.compare(second)
        return f"{second.solver} reaches {cmp['hypervolume_ratio']:.1%} of {first.solver}'s hypervolume"
    from dse.pareto import nondominated

    both = [first, second]
    F = np.vstack([f.F() for f in both])
    owner = np.concatenate([np.full(len(f), k) for k, f in enumerate(both)])
    best = nondominated(F)
    obj = first.objectives[0]
    parts = []
    for k, front in enumerate(both):
        mine = best[owner[best] == k]
        if len(mine) == 0:
            parts.append(f"{front.solver} has no point on it")
            continue
        xs = np.abs(F[mine, 0])
        parts.append(f"{front.solver} gives {len(mine)} of its points, {obj.name} {xs.min():.4g} to {xs.max():.4g} {obj.unit}")
    return (f"{first.solver}'s front is not proven complete ({first.status}), so no hypervolume ratio; "
            "on the combined front " + "; ".join(parts))

