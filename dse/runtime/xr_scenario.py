"""``dse simulate`` for the ``multimodel`` family (DREAM): every scheduler on the spec's scenario.

Each scheduler of ``scenario.schedulers`` runs the spec's models at their frame rates on its
accelerator system (:func:`dse.sim.realtime.simulate`); the summary compares them by UXCost against
FCFS, energy-delay product, energy, drop rate and XRBench score, and says the UXCost floor of the run
(:mod:`dse.sim.ux_bound`). The module gives the family its scenario
(:func:`dse.mapping.registry.register_scenario`), as :mod:`dse.runtime.stream` does for DyPe's streams.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.mapping.multimodel import ScenarioSettings, apply_timeline
from dse.mapping.registry import register_scenario
from dse.sim import xr_metrics
from dse.sim.realtime import TRACE_COLUMNS, SimResult, setup, simulate
from dse.sim.schedulers import SCHEDULERS, make_scheduler
from dse.sim.ux_bound import UXBound, on_whole_accelerators, scope, ux_bound
from dse.util.files import clear_partial, mark_partial, replace_atomically
from dse.util.interrupt import Interrupted, active_token
from dse.util.progress import Progress
from dse.viz.frames import plot_frame_timeline

#: The columns of the summary (``summary.csv``); docs/units.md says each one's unit.
SUMMARY_COLUMNS = ("scheduler", "uxcost", "edp_j_s", "energy_j", "duration_s", "drop_rate", "xrbench_score",
                   "whole_accelerators", "uxcost_floor", "uxcost_floor_kept")


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
    results = {}
    whole: dict[str, bool] = {}
    stop: Interrupted | None = None
    for k, name in enumerate(names):
        progress.update(f"{name} ({k + 1}/{len(names)})", force=True)
        scheduler = make_scheduler(name)
        whole[name] = on_whole_accelerators(scheduler)
        try:
            results[name] = simulate(sim, scheduler, duration_s=settings.duration_s, seed=seed,
                                     trace=True, stoppable=True)
        except Interrupted as exc:  # keep the schedulers that finished (fcfs, the reference, runs first)
            stop = exc
            break
    if stop is not None and "fcfs" not in results:
        raise stop.noted("no scheduler had finished (fcfs, the reference, runs first); nothing written")
    finished = [name for name in settings.schedulers if name in results]
    trace = pd.DataFrame([row for r in results.values() for row in r.rows], columns=list(TRACE_COLUMNS))
    frames = xr_metrics.frame_table(trace)
    ref = results["fcfs"]
    bound = ux_bound(sim, settings.duration_s, seed)
    rows = []
    for name in finished:
        r = results[name]
        mine = frames[frames["scheduler"] == name]
        rows.append({"scheduler": name,
                     "uxcost": xr_metrics.uxcost(r.energy_j, r.missed, ref.energy_j, ref.missed),
                     "edp_j_s": xr_metrics.edp(r.energy_j, mine),
                     "energy_j": r.energy_j,
                     "duration_s": r.horizon_ns * 1e-9,
                     "drop_rate": float(r.dropped.sum() / max(int(r.frames.sum()), 1)),
                     "xrbench_score": xr_metrics.xrbench_score(mine),
                     "whole_accelerators": whole[name],
                     "uxcost_floor": bound.uxcost(ref.energy_j, ref.missed),
                     "uxcost_floor_kept": bound.uxcost_kept(ref.energy_j, ref.missed)})
    summary = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    summary.attrs["notes"] = [floor_note(bound, ref, [name for name in finished if not whole[name]])]
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        shown = trace[trace["scheduler"].isin(finished)]
        replace_atomically(out / "summary.csv", lambda tmp: summary.to_csv(tmp, index=False))
        replace_atomically(out / "trace.csv", lambda tmp: shown.to_csv(tmp, index=False))
        token = active_token()
        if stop is None and token is not None and token.stopped:  # stopped as the last scheduler ended
            stop = Interrupted(token.signum)
        if stop is None:  # the plot takes seconds: a stopped run leaves it out
            replace_atomically(out / "timeline.png", lambda tmp: plot_frame_timeline(
                shown, tables.device_names, [m.name for m in scenario.models], Path(tmp),
                window_ms=settings.plot_window_s * 1e3))
        if stop is None:
            clear_partial(out)
    if stop is not None:
        missing = [name for name in settings.schedulers if name not in results]
        where = "no --out: nothing written"
        if out is not None:
            mark_partial(out, {"signal": stop.signum, "schedulers_finished": finished, "schedulers_missing": missing,
                               "timeline_png": "not drawn"})
            where = f"written to {out} (partial, see {out}/partial.json)"
        raise stop.noted(f"{len(finished)} of {len(settings.schedulers)} schedulers finished "
                         f"({', '.join(finished) or 'only the fcfs reference'}); {where}")
    return summary


def _trace_columns() -> tuple[str, ...]:

    return TRACE_COLUMNS


register_scenario("multimodel", ScenarioSettings, simulate_spec)
