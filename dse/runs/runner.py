"""Running a resolved spec's solvers: one function for ``dse solve`` and for ``dse batch`` jobs.

:func:`run_spec_solvers` runs every solver a spec's ``solver.name`` stands for with the spec's
per-solver options, between stops; :func:`check_some_feasible` turns "no feasible point in any
front" into the problem's diagnosis (exit 3); :func:`write_fronts` writes the fronts into a run
folder (``dse solve --out``, ``dse certify --out``).
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dse import solvers  # solvers.solve looked up at each call (tests and embedders may replace it)
from dse.cost.error_bands import band_columns, problem_bands, problem_error
from dse.errors import InfeasibleError, SpecError
from dse.pareto import INFEASIBLE, INTERRUPTED, ParetoSet
from dse.solvers import INFEASIBLE_NOTE
from dse.solvers.checkpoint import Checkpoint
from dse.solvers.context import CHECKPOINT, CLIENT, RESUME
from dse.solvers.registry import collect_seeds, lookup
from dse.util.csv_text import csv_text
from dse.util.files import replace_atomically
from dse.util.json_text import readable_json
from dse.util.progress import Progress
from dse.viz import plot_fronts
from dse.viz.figures import save
from dse.viz.schedules import plot_schedule

#: Takes the Pareto plot of ``fronts`` (with ``error`` bands) to replace a file with, now or later; True once
#: taken, False: the caller draws it.
FrontDrawer = Callable[[list[ParetoSet], float | None, str], bool]

#: The least time limit the first solver gets when building the problem took its whole limit: it then returns
#: its seed heuristics' mappings (every solver keeps those), so a command still ends with a front.
MIN_SOLVER_S = 0.05


def run_spec_solvers(problem, settings, name: str, time_limit: float, seed: int, token, *,
                     quiet: bool = False, on_front=None, resume: list[np.ndarray] | None = None,
                     source: str = "<spec>", client: Any = None, spent_s: float = 0.0,
                     checkpoints: Callable[[str], Checkpoint | None] | None = None,
                     ) -> tuple[list[ParetoSet], list[str]]:
    """Run every solver ``name`` stands for (one name, ``all`` or ``heuristic:NAME``) on ``problem``
    with the spec's per-solver ``settings.options``; returns the fronts found and a note per solver
    skipped. Stops between solvers once ``token`` is stopped; ``on_front(fronts)`` is called after
    every solver; ``resume`` genomes (a previous front) and the Dask ``client`` go to every solver that reads
    them (its ``inputs``). ``spent_s``: seconds of the first solver's ``time_limit`` already spent (building
    the problem: a command's limit counts from its start), so the first solver gets what is left, at least
    :data:`MIN_SOLVER_S`; every later solver gets the whole ``time_limit``. ``checkpoints(solver name)``: the
    :class:`~dse.solvers.checkpoint.Checkpoint` of each solver that keeps one (:func:`solver_checkpoint`).
    Raises :class:`~dse.solvers.UnknownSolverError` for an unknown name, and :class:`SpecError` (naming
    ``source``) when every solver skipped the problem and no stop was requested."""
    entries = lookup("all") if name == "all" else lookup(name, problem)
    show = False if quiet else None
    fronts: list[ParetoSet] = []
    skipped: list[str] = []
    left = max(time_limit - spent_s, min(MIN_SOLVER_S, time_limit))
    for entry, _fixed in entries:
        if token.stopped:
            break
        reason = entry.supports(problem)
        if reason is not None:
            print(f"note: {entry.name} skipped: {reason}", file=sys.stderr)
            skipped.append(f"{entry.name}: {reason}")
            continue
        label = name if name.startswith("heuristic:") else entry.name
        configured = settings.options.get(entry.name)
        options = dict(configured) if isinstance(configured, dict) else {}
        handed = resume if resume and RESUME in entry.inputs else []
        if client is not None and CLIENT in entry.inputs:
            options[CLIENT] = client
        if checkpoints is not None and CHECKPOINT in entry.inputs:
            options[CHECKPOINT] = checkpoints(entry.name)
        if not quiet:
            spent = f" of {time_limit:g} s, {time_limit - left:.2g} s went to building the problem" if left < time_limit else ""
            print(f"[{entry.name}] solving (time limit {left:.3g} s{spent}; Ctrl-C stops and keeps what was found)",
                  file=sys.stderr, flush=True)
        try:
            front = solvers.solve(problem, label, time_limit=left, seed=seed,
                                  progress=Progress(entry.name, enabled=show), resume=handed, **options)
        except KeyboardInterrupt:  # a stop that reached us as an exception: keep what the others found
            token.request(signal.SIGINT)
            break
        fronts.append(front)
        left = time_limit  # the building was the first solver's to pay
        if on_front is not None:
            on_front(fronts)
        if front.status == INTERRUPTED:
            token.request()
    if not fronts and skipped and not token.stopped:
        raise SpecError(source, "solver.name", name, "no solver can take this problem: " + "; ".join(skipped))
    return fronts, skipped


def solver_checkpoint(out: Path, resume: Path | None, key: str | None, solver: str) -> Checkpoint | None:
    """The checkpoint of ``solver`` in a run writing to folder ``out``: ``out/checkpoint-SOLVER.json``,
    going on from the same file in ``resume`` (a previous run's folder) when given; None without a ``key``
    (the spec's SHA-256: a state is used only for the spec it was written for)."""
    if key is None:
        return None
    name = f"checkpoint-{solver}.json"
    return Checkpoint(out / name, key, None if resume is None else resume / name)


def check_some_feasible(problem, fronts: list[ParetoSet]) -> None:
    """Raise :class:`InfeasibleError` with the problem's diagnosis when no front has a feasible point: the
    note :func:`dse.solve <dse.solvers.solve>` gave a front (:func:`dse.solvers.diagnosed`; one proven
    infeasible first), or else the problem's diagnosis now."""
    if any(p.feasible for f in fronts for p in f.points):
        return
    ordered = sorted(fronts, key=lambda f: f.status != INFEASIBLE)  # a proof first
    noted = next((n for f in ordered for n in f.notes if n.startswith(INFEASIBLE_NOTE)), None)
    if noted is None:
        proven = any(f.status == INFEASIBLE for f in fronts)
        noted = INFEASIBLE_NOTE + problem.diagnose(candidates=collect_seeds(problem), proven=proven)
    raise InfeasibleError(noted)


def write_fronts(out: Path, problem, fronts: list[ParetoSet], gantt: bool = False, spec: str | None = None,
                 spec_sha256: str | None = None, draw: FrontDrawer | None = None) -> None:
    """front.csv, front.json and pareto.png (and gantt.png) in ``out``, each replaced atomically; with no
    front yet, the files still say so (a header-only CSV, an empty plot). ``spec``: the spec file's path,
    recorded in front.json (``dse certify`` rebuilds the problem from it), with ``spec_sha256``, the
    SHA-256 of its bytes at solve time (:func:`dse.runs.given_front.spec_digest`: ``dse certify``
    refuses a spec changed since). ``draw``: draws pareto.png elsewhere (a
    :class:`~dse.viz.picture_process.PictureProcess`'s ``draw_later``): ``draw(fronts, error, path)`` True
    once it took the plot, which it replaces atomically, now or later (its owner waits for it); where it
    returns False, the plot is drawn here."""
    out.mkdir(parents=True, exist_ok=True)
    error = problem_error(problem)  # the cost model's measured error as bands (dse.cost.error_bands)
    columns: list[str] = []  # each front's columns, then the next front's new ones (as pandas.concat joins them)
    rows: list[dict[str, Any]] = []
    for f in fronts:
        bands = band_columns([p.objectives for p in f.points], f.columns, error)
        records = f.to_records()
        fields = list(dict.fromkeys(key for record in records for key in record)) if records else [
            "solver", "proven", "feasible", *f.columns, "genome"]
        columns += [*fields[:2], "status", *fields[2:], *bands]
        rows += [{**record, "status": f.status, **{name: values[k] for name, values in bands.items()}}
                 for k, record in enumerate(records)]
    text = csv_text(rows, columns or ["solver", "proven", "status"])
    replace_atomically(out / "front.csv", lambda tmp: Path(tmp).write_text(text, encoding="utf-8", newline=""))
    doc = {"problem": problem.name, **({"spec": spec} if spec else {}),
           "error_bands": [b.as_dict() for b in problem_bands(problem)],
           **({"spec_sha256": spec_sha256} if spec_sha256 else {}),
           "fronts": [json.loads(f.to_json(indent=None)) for f in fronts]}
    replace_atomically(out / "front.json", lambda tmp: Path(tmp).write_text(readable_json(doc)))
    if draw is None or not draw(fronts, error, str(out / "pareto.png")):
        replace_atomically(out / "pareto.png", lambda tmp: save(plot_fronts(fronts, error=error), tmp))
    if gantt:
        best = next((f for f in fronts if len(f)), None)
        if best is not None:
            genome = np.asarray(best.knee().genome)
            if problem.decode(genome).schedule:
                title = f"{problem.name}: knee point"
                replace_atomically(out / "gantt.png", lambda tmp: save(
                    plot_schedule(problem, genome, title=title), tmp))
