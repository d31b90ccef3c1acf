"""Metrics of real-time multi-model runs, computed from their traces (``docs/family-multimodel.md``).

* UXCost ``= (E / E_ref) x ((missed + 1) / (missed_ref + 1))``, the reference being FCFS on the
  same scenario and system; missed = dropped + completed after the deadline;
* energy-delay product: energy (J) x mean latency of the completed frames (s);
* drop rate per model: dropped / triggered frames;
* XRBench score: per completed frame, timeliness ``1 / (1 + exp(15 (completion - deadline)))``
  (milliseconds) times energy score ``(1500 - E) / 1500`` (the frame's energy in mJ, clipped to
  [0, 1]); per model the mean over its completed frames times ``1 - drop rate``; overall
  ``100 x`` the mean over models.

Example::

    frames = frame_table(trace)        # one row per frame
    xrbench_score(frames)              # 0..100
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

#: Steepness of XRBench's timeliness sigmoid (per millisecond).
TIMELINESS_K = 15.0
#: Energy (mJ per frame) at which XRBench's energy score reaches 0.
ENERGY_SCALE_MJ = 1500.0


def frame_table(trace: pd.DataFrame) -> pd.DataFrame:
    """One row per (scheduler, model, frame) of a trace: ``arrival_ms, deadline_ms, completion_ms`` (NaN when
    dropped), ``dropped``, ``energy_mj`` (its executed blocks)."""
    import pandas as pd
    keys = ["scheduler", "model", "frame"]
    executed = trace[trace["accelerator"].fillna("") != ""]
    drops = trace[trace["accelerator"].fillna("") == ""]
    g = executed.groupby(keys, sort=False)
    done = pd.DataFrame({"arrival_ms": g["arrival_ms"].first(), "deadline_ms": g["deadline_ms"].first(),
                         "completion_ms": g["end_ms"].max(), "energy_mj": g["energy_mj"].sum()})
    dropped = drops.set_index(keys)[["arrival_ms", "deadline_ms"]]
    table = done.join(dropped.assign(dropped=True)[["dropped"]], how="outer")
    table["dropped"] = table["dropped"].astype("boolean").fillna(False).astype(bool)
    for col in ("arrival_ms", "deadline_ms"):
        table[col] = table[col].fillna(dropped[col].reindex(table.index))
    table.loc[table["dropped"], "completion_ms"] = np.nan
    table["energy_mj"] = table["energy_mj"].fillna(0.0)
    return table.reset_index()


def timeliness(completion_ms: np.ndarray, deadline_ms: np.ndarray) -> np.ndarray:
    """XRBench's timeliness ``1 / (1 + exp(15 (completion - deadline)))`` (times in ms)."""
    z = np.clip(TIMELINESS_K * (np.asarray(completion_ms, float) - np.asarray(deadline_ms, float)), -700, 700)
    return 1.0 / (1.0 + np.exp(z))


def energy_score(energy_mj: np.ndarray) -> np.ndarray:
    """XRBench's energy score ``(1500 - E) / 1500``, clipped to [0, 1]."""
    return np.clip((ENERGY_SCALE_MJ - np.asarray(energy_mj, float)) / ENERGY_SCALE_MJ, 0.0, 1.0)


def xrbench_score(frames: pd.DataFrame) -> float:
    """The XRBench score (0..100) of one run's :func:`frame_table` (NaN without frames)."""
    per_model = []
    for _, g in frames.groupby("model", sort=False):
        done = g[~g["dropped"]]
        quality = float(np.mean(timeliness(done["completion_ms"], done["deadline_ms"])
                                * energy_score(done["energy_mj"]))) if len(done) else 0.0
        per_model.append(quality * (1.0 - g["dropped"].mean()))
    return 100.0 * float(np.mean(per_model)) if per_model else math.nan


def uxcost(energy: float, missed: int, ref_energy: float, ref_missed: int) -> float:
    """``(energy / ref_energy) x ((missed + 1) / (ref_missed + 1))``."""
    return (energy / ref_energy) * ((missed + 1) / (ref_missed + 1))


def edp(energy_j: float, frames: pd.DataFrame) -> float:
    """Energy (J) x mean latency (s) of the completed frames (``completion - arrival``); NaN when none completed."""
    done = frames[~frames["dropped"]]
    if not len(done):
        return math.nan
    return energy_j * float((done["completion_ms"] - done["arrival_ms"]).mean()) * 1e-3


def drop_rates(frames: pd.DataFrame) -> pd.Series:
    """Dropped / triggered frames per model."""
    return frames.groupby("model", sort=False)["dropped"].mean()


def missed_frames(frames: pd.DataFrame) -> int:
    """Frames dropped or completed after their deadline."""
    late = (~frames["dropped"]) & (frames["completion_ms"] > frames["deadline_ms"] + 1e-9)
    return int(frames["dropped"].sum() + late.sum())


def idle_energy_j(trace: pd.DataFrame, idle_w: dict[str, float], horizon_ms: float) -> float:
    """Idle energy of every accelerator in ``idle_w`` over ``horizon_ms`` minus its busy time in ``trace``.

    A row on sub-arrays (``ACC[0,2]``, the spatial scheduler) keeps that share of :data:`PODS` busy.
    """
    from dse.cost.accelerator import PODS

    executed = trace[trace["accelerator"].fillna("") != ""]
    labels = executed["accelerator"].astype(str)
    share = labels.map(lambda a: (a.count(",") + 1) / PODS if "[" in a else 1.0)
    busy = ((executed["end_ms"] - executed["start_ms"]) * share).groupby(labels.str.split("[").str[0]).sum()
    return sum(w * max(horizon_ms - float(busy.get(name, 0.0)), 0.0) * 1e-3 for name, w in idle_w.items())
