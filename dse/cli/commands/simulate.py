"""``dse simulate SPEC --out DIR``: run a spec's run-time scenario with its family's simulator.

The family's registry entry provides the simulator (``Family.simulate``); it
writes its files (``summary.csv`` and the family's own: a timeline, a trace)
into ``DIR`` and returns the summary table, which is printed.

The run follows the interruption rule (:mod:`dse.util.interrupt`): the first
SIGINT or SIGTERM stops it within seconds; the simulator writes what finished
(whole policies or schedulers, a library's solved regimes) with
``partial.json`` beside it, and the command exits 130 or 143 with one line.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from dse.cli.commands import Command, register_command
from dse.cli.tables import fit_table, terminal_width
from dse.errors import SpecError
from dse.store.trace import write_simulation_trace
from dse.util.files import check_out_folder, mark_partial
from dse.util.interrupt import Interrupted, StopToken, interruptible
from dse.util.units import in_output_units, shown_units_note

#: Seconds between checks for a stop while trace.json is written.
TRACE_POLL_S = 0.05


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", help="problem spec YAML with a scenario section")
    parser.add_argument("--out", type=Path, help="folder for summary.csv and the family's plots and traces")
    parser.add_argument("--seed", type=int, help="random seed of the scenario (default: the spec's solver seed)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _run(args: argparse.Namespace) -> int:

    from dse.mapping.registry import family
    from dse.runs.spec import load_spec
    from dse.util.limits import check_seed

    if args.seed is not None:
        check_seed(args.seed)
    if args.out is not None:
        check_out_folder(args.out)
    spec = load_spec(args.spec)
    entry = family(spec.family)
    if entry.simulate is None:
        raise SpecError(args.spec, "family", spec.family, "this family has no simulator")
    if spec.scenario is None:
        raise SpecError(args.spec, "scenario", None, "dse simulate needs a scenario section in the spec")
    seed = args.seed if args.seed is not None else spec.solver.seed
    with interruptible() as token:
        summary = entry.simulate(spec, args.out, seed=seed, quiet=args.quiet)
        if args.out is not None:  # the trace table as a Chrome/Perfetto trace beside it
            _write_trace_unless_stopped(Path(args.out), token)
    shown = in_output_units(summary)  # mJ per item, as dse solve
    print(fit_table(shown, terminal_width(), key=str(shown.columns[0])))
    units = shown_units_note(summary, "summary.csv")  # the file keeps SI units: say both
    for line in [*([units] if units else []), *summary.attrs.get("notes", [])]:
        print(line)
    if args.out is not None:
        written = sorted(p.name for p in Path(args.out).iterdir() if p.is_file() and not p.name.startswith("."))
        print(f"wrote {args.out}/" + ", ".join(written))
    return 0


def _write_trace_unless_stopped(folder: Path, token: StopToken) -> None:
    """``folder/trace.json`` (seconds for a long run), written in a worker thread while this one watches
    ``token``: a stop leaves it out (its temporary file removed), marks the folder partial and raises
    :class:`Interrupted`; the tables written before are complete."""
    outcome: dict[str, BaseException] = {}

    def work() -> None:
        try:
            write_simulation_trace(folder)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="trace-json", daemon=True)
    worker.start()
    while worker.is_alive() and not token.stopped:
        worker.join(TRACE_POLL_S)
    if worker.is_alive():
        for leftover in folder.glob(".trace-*.json"):
            leftover.unlink(missing_ok=True)
        mark_partial(folder, {"signal": token.signum, "trace_json": "not written"})
        raise Interrupted(token.signum, f"the simulation had finished and its tables are written to {folder}; "
                                        f"trace.json was not written (see {folder}/partial.json)")
    if "error" in outcome:
        raise outcome["error"]


register_command(Command("simulate", "run a spec's scenario (input stream, frames) and write its summary", _arguments, _run))
