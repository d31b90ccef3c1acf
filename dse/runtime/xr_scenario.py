"""``dse simulate`` for the ``multimodel`` family (DREAM): every scheduler on the spec's scenario.

Each scheduler of ``scenario.schedulers`` runs the spec's models at their frame rates on its
accelerator system (:func:`dse.sim.realtime.simulate`); the summary compares them by UXCost against
FCFS, energy-delay product, energy, drop rate and XRBench score, and says the UXCost floor of the run
(:mod:`dse.sim.ux_bound`). The module gives the family its scenario
(:func:`dse.mapping.registry.register_scenario`), as :mod:`dse.runtime.stream` does for DyPe's streams.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import IO, Any

from dse.errors import SpecError
from dse.mapping.multimodel import ScenarioSettings, apply_timeline
from dse.mapping.registry import register_scenario
from dse.sim import xr_metrics
from dse.sim.realtime import TRACE_COLUMNS, SimResult, setup, simulate
from dse.sim.schedulers import SCHEDULERS, make_scheduler
from dse.sim.ux_bound import UXBound, on_whole_accelerators, scope, ux_bound
from dse.util.files import clear_partial, mark_partial, replace_atomically
from dse.util.interrupt import Interrupted, active_token, stop_point
from dse.util.progress import Progress
from dse.viz.frames import plot_frame_timeline

#: The columns of the summary (``summary.csv``); docs/units.md says each one's unit.
SUMMARY_COLUMNS = ("scheduler", "uxcost", "edp_j_s", "energy_j", "duration_s", "drop_rate", "xrbench_score",
                   "whole_accelerators", "uxcost_floor", "uxcost_floor_kept")
#: Trace rows per chunk written to ``trace.csv`` (about 0.1 s of work); a stop is checked between chunks.
TRACE_CHUNK_ROWS = 5_000
#: The summary's note when the run was stopped (the floor, seconds on a long scenario, is left out).
FLOOR_NOT_COMPUTED = "floor: not computed (the run was stopped; uxcost_floor columns are empty)"


def floor_note(bound: UXBound, ref: SimResult, uncovered: list[str]) -> str:
    """One line on ``bound`` as a UXCost against ``ref`` and its scope (:func:`dse.sim.ux_bound.scope`:
    ``uncovered`` names the run's schedulers on sub-arrays)."""
    n = bound.forced_misses
    forced = f"the {n} frame{'s' * (n != 1)} that cannot make {'their deadlines' if n != 1 else 'its deadline'} even alone"
    if math.isinf(bound.energy_all_kept_pj):
        return ("floor: the frames do not fit in the accelerators' time, so every schedule misses "
                + (f"more than {forced}" if n else "some") + f", {scope(uncovered)}")
    return (f"floor: no schedule goes below UXCost {bound.uxcost_kept(ref.energy_j, ref.missed):.5g} while missing "
            + (f"only {forced}" if n else "no frame") + f", {scope(uncovered)}")


def simulate_spec(spec: Any, out: Path | None, *, seed: int, quiet: bool) -> Any:
    """``dse simulate``: every scheduler of ``spec.scenario`` on its scenario and system.

    Writes ``summary.csv`` (:data:`SUMMARY_COLUMNS`: per scheduler its UXCost against FCFS, energy-delay
    product in J s, energy in J over the run's ``duration_s`` (its last deadline or block end), drop rate,
    XRBench score, whether it runs on whole accelerators, and the run's UXCost floors: ``uxcost_floor`` for
    any schedule on whole accelerators, ``uxcost_floor_kept`` for those that miss only the frames that cannot
    make their deadlines alone), ``trace.csv`` and ``timeline.png`` into ``out`` when given; returns the
    summary DataFrame, whose ``attrs["notes"]`` holds one line on the UXCost floor of the run and its scope
    (:mod:`dse.sim.ux_bound`). Raises SpecError for an unknown scheduler or model.
    """
    import pandas as pd  # loaded by the command that runs, not by every spec that registers the family

    settings = spec.scenario if isinstance(spec.scenario, ScenarioSettings) else ScenarioSettings()
    for i, name in enumerate(settings.schedulers):
        if name not in SCHEDULERS:
            raise SpecError(spec.source, f"scenario.schedulers[{i}]", name, f"known schedulers: {', '.join(SCHEDULERS)}")
    scenario = apply_timeline(spec.workload, settings, spec.source)
    tables = spec.cost_model.tables(scenario, spec.platform)
    sim = setup(tables, scenario)
    seed = settings.seed if settings.seed is not None else seed
    progress = Progress("simulate", enabled=None if not quiet else False)
    names = ["fcfs"] + [s for s in settings.schedulers if s != "fcfs"]
    window_ms = settings.plot_window_s * 1e3
    results: dict[str, SimResult] = {}
    frames: dict[str, pd.DataFrame] = {}  # per scheduler: its frame table (xr_metrics.frame_table)
    shown: list[pd.DataFrame] = []  # per scheduler: the trace rows the timeline plot draws
    whole: dict[str, bool] = {}
    stop: Interrupted | None = None
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
    with _TraceSink(out / "trace.csv" if out is not None else None) as sink:
        for k, name in enumerate(names):
            progress.update(f"{name} ({k + 1}/{len(names)})", force=True)
            scheduler = make_scheduler(name)
            whole[name] = on_whole_accelerators(scheduler)
            try:
                result = simulate(sim, scheduler, duration_s=settings.duration_s, seed=seed, trace=True,
                                  stoppable=True)
                trace = sink.append(result.rows)
            except Interrupted as exc:  # keep the schedulers that finished (fcfs, the reference, runs first)
                sink.drop_unfinished()
                stop = exc
                break
            result.rows = []  # written: hundreds of thousands of rows on a long scenario
            results[name] = result
            frames[name] = xr_metrics.frame_table(trace)
            shown.append(trace[(trace["start_ms"] < window_ms) | (trace.index == 0)])  # a panel per scheduler
        if stop is not None and "fcfs" not in results:
            raise stop.noted("no scheduler had finished (fcfs, the reference, runs first); nothing written")
        token = active_token()
        if stop is None and token is not None and token.stopped:  # stopped as the last scheduler ended
            stop = Interrupted(token.signum)
        finished = [name for name in settings.schedulers if name in results]
        ref = results["fcfs"]
        bound = ux_bound(sim, settings.duration_s, seed) if stop is None else None  # seconds on a long run
        rows = []
        for name in finished:
            r, mine = results[name], frames[name]
            rows.append({"scheduler": name,
                         "uxcost": xr_metrics.uxcost(r.energy_j, r.missed, ref.energy_j, ref.missed),
                         "edp_j_s": xr_metrics.edp(r.energy_j, mine),
                         "energy_j": r.energy_j,
                         "duration_s": r.horizon_ns * 1e-9,
                         "drop_rate": float(r.dropped.sum() / max(int(r.frames.sum()), 1)),
                         "xrbench_score": xr_metrics.xrbench_score(mine),
                         "whole_accelerators": whole[name],
                         "uxcost_floor": bound.uxcost(ref.energy_j, ref.missed) if bound else math.nan,
                         "uxcost_floor_kept": bound.uxcost_kept(ref.energy_j, ref.missed) if bound else math.nan})
        summary = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
        summary.attrs["notes"] = [floor_note(bound, ref, [name for name in finished if not whole[name]])
                                  if bound else FLOOR_NOT_COMPUTED]
        if out is not None:
            replace_atomically(out / "summary.csv", lambda tmp: summary.to_csv(tmp, index=False))
            sink.keep()
            if stop is None and token is not None and token.stopped:  # stopped while the floor was computed
                stop = Interrupted(token.signum)
            if stop is None:  # the plot takes seconds: a stopped run leaves it out
                replace_atomically(out / "timeline.png", lambda tmp: plot_frame_timeline(
                    pd.concat(shown, ignore_index=True), tables.device_names, [m.name for m in scenario.models],
                    Path(tmp), window_ms=window_ms))
            if stop is None:
                clear_partial(out)
    if stop is not None:
        missing = [name for name in settings.schedulers if name not in results]
        where = "no --out: nothing written"
        if out is not None:
            mark_partial(out, {"signal": stop.signum, "schedulers_finished": finished, "schedulers_missing": missing,
                               "timeline_png": "not drawn",
                               "uxcost_floor": "computed" if bound else "not computed"})
            where = f"written to {out} (partial, see {out}/partial.json)"
        raise stop.noted(f"{len(finished)} of {len(settings.schedulers)} schedulers finished "
                         f"({', '.join(finished) or 'only the fcfs reference'}); {where}")
    return summary


class _TraceSink:
    """``trace.csv`` written as the run goes: each finished scheduler's rows are appended to a hidden
    temporary file beside it in chunks of :data:`TRACE_CHUNK_ROWS`, with a stop check between chunks;
    :meth:`keep` renames it into place, leaving the block removes it when it was not kept. Without a
    ``path`` the rows only become tables."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.file: IO[str] | None = None
        self.tmp = ""
        self.finished_at = 0  # the file's size after the last finished scheduler's rows

    def __enter__(self) -> _TraceSink:
        if self.path is not None:
            fd, self.tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.stem}-run-", suffix=".csv")
            self.file = os.fdopen(fd, "w", newline="", encoding="utf-8")
            self.file.write(",".join(TRACE_COLUMNS) + "\n")
            self.finished_at = self.file.tell()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()
        if self.tmp and os.path.exists(self.tmp):
            os.unlink(self.tmp)

    def append(self, rows: list[tuple[Any, ...]]) -> Any:
        """``rows`` (columns :data:`TRACE_COLUMNS`) as a DataFrame, written to the file in chunks; raises
        :class:`~dse.util.interrupt.Interrupted` between two chunks once a stop was requested."""
        import pandas as pd

        chunks = []
        for start in range(0, len(rows), TRACE_CHUNK_ROWS):
            stop_point()
            chunk = pd.DataFrame(rows[start:start + TRACE_CHUNK_ROWS], columns=list(TRACE_COLUMNS))
            if self.file is not None:
                chunk.to_csv(self.file, index=False, header=False)
            chunks.append(chunk)
        if self.file is not None:
            self.finished_at = self.file.tell()
        return (pd.concat(chunks, ignore_index=True) if chunks
                else pd.DataFrame([], columns=list(TRACE_COLUMNS)))

    def drop_unfinished(self) -> None:
        """Cut the file back to the last finished scheduler's rows (a stop came while one was written)."""
        if self.file is not None:
            self.file.seek(self.finished_at)
            self.file.truncate()

    def keep(self) -> None:
        """Rename the file into place as ``trace.csv`` (what the finished schedulers wrote)."""
        if self.file is not None and self.path is not None:
            self.file.close()
            running = self.tmp
            replace_atomically(self.path, lambda tmp: os.replace(running, tmp))
            self.tmp = ""


def _trace_columns() -> tuple[str, ...]:

    return TRACE_COLUMNS


register_scenario("multimodel", ScenarioSettings, simulate_spec)
