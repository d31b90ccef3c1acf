"""Classic partitioning and scheduling heuristics for the ``dag`` family, behind one interface.

* list schedulers (:data:`LIST_SCHEDULERS`): ``heft``, ``cpop``, ``peft`` (insertion), and the
  ready-set schedulers ``etf``, ``flb``, ``dps``, ``mct``, ``met``, ``minmin``, ``maxmin``,
  ``sufferage``, ``duplex`` (choices made by machine ready times, :mod:`dse.heuristics.ready_list`;
  decoded with the problem's own ``insertion``), each ``(problem) -> HeuristicResult``;
* partitioners (:data:`PARTITIONERS`): ``hash``, ``cp``, ``icp``, ``mite``,
  ``batchsplit``, ``dfs``, each ``(problem) -> devices``;
* schedulers (:data:`SCHEDULERS`): ``fifo``, ``lro``, ``pct``, ``msr``, each
  ``(problem, devices) -> order`` (a device-queue simulation; the order of start times).

:func:`run` runs one by name (``"heft"`` or ``"PARTITIONER+SCHEDULER"`` such as
``"cp+pct"``); its ``makespan`` is always the problem decoder's makespan of the result's
genome (``problem.schedule(problem.genome(r.devices, r.order), insertion=r.insertion)``).
:func:`seed_genomes` turns a set of heuristics into genomes for the search solvers.
:func:`dse.heuristics.paper_sim.run_paper` runs a pair under the TF paper simulator's own rules
(sends picked from the ready queue like tasks) and reports that simulation's makespan instead.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING

import numpy as np

from dse.heuristics.base import HeuristicResult, finish, repaired_devices
from dse.heuristics.batch import duplex, maxmin, minmin, sufferage
from dse.heuristics.cpop import cpop
from dse.heuristics.dps import dps
from dse.heuristics.etf import etf
from dse.heuristics.flb import flb
from dse.heuristics.heft import heft
from dse.heuristics.immediate import mct, met
from dse.heuristics.partitioners import PARTITIONERS
from dse.heuristics.peft import peft
from dse.heuristics.schedulers import fifo, lro, msr, pct
from dse.solvers.registry import HeuristicProvider, register_heuristics
from dse.util.interrupt import Cut, cut_point, without_deadline

if TYPE_CHECKING:
    from dse.mapping.dag import DagProblem

__all__ = [
    "HeuristicResult", "LIST_SCHEDULERS", "PARTITIONERS", "SCHEDULERS", "names", "run",
    "genome_of", "seed_genomes", "SeedHeuristicWarning",
]

LIST_SCHEDULERS: dict[str, Callable[[DagProblem], HeuristicResult]] = {
    "heft": heft,
    "cpop": cpop,
    "peft": peft,
    "etf": etf,
    "flb": flb,
    "dps": dps,
    "mct": mct,
    "met": met,
    "minmin": minmin,
    "maxmin": maxmin,
    "sufferage": sufferage,
    "duplex": duplex,
}

SCHEDULERS: dict[str, Callable[[DagProblem, np.ndarray], np.ndarray]] = {
    "fifo": fifo,
    "lro": lro,
    "pct": pct,
    "msr": msr,
}

#: Used by :func:`seed_genomes` on graphs with more than this many tasks.
LARGE_GRAPH_TASKS = 2000
LARGE_GRAPH_SEEDS = ("heft", "cp+pct", "hash+fifo")


class SeedHeuristicWarning(UserWarning):
    """A heuristic raised while :func:`seed_genomes` ran it: the search solvers start without its seed."""


#: The heuristics already reported as failing, per problem (each is warned about once per problem).
_WARNED: weakref.WeakKeyDictionary[DagProblem, set[str]] = weakref.WeakKeyDictionary()


def names() -> list[str]:
    """Every valid heuristic name: list schedulers, then all ``partitioner+scheduler`` pairs."""
    return [*LIST_SCHEDULERS, *(f"{p}+{s}" for p in PARTITIONERS for s in SCHEDULERS)]


def run(problem: DagProblem, name: str) -> HeuristicResult:
    """Run the heuristic ``name`` (a key of :data:`LIST_SCHEDULERS` or ``PARTITIONER+SCHEDULER``).

    Raises ``ValueError`` listing the valid names for an unknown one.
    """
    key = name.strip().lower()
    if key in LIST_SCHEDULERS:
        return LIST_SCHEDULERS[key](problem)
    part, _, sched = key.partition("+")
    if part in PARTITIONERS and sched in SCHEDULERS:
        devices = repaired_devices(problem, PARTITIONERS[part](problem))
        cut_point(f"{key}: partitioned")
        order = SCHEDULERS[sched](problem, devices)
        cut_point(f"{key}: scheduled")
        return finish(problem, f"{part}+{sched}", devices, order, insertion=False)
    raise ValueError(f"unknown heuristic {name!r}; valid names: {', '.join(names())}")


def genome_of(problem: DagProblem, result: HeuristicResult) -> np.ndarray:
    """A genome that the problem's own decoder (``problem.insertion``) decodes to ``result``'s schedule.

    Usually ``problem.genome(result.devices, result.order)``. When the heuristic used
    insertion and the problem does not, its rank order decoded without insertion would be
    a different (usually worse) schedule; the order of the insertion schedule's start
    times (ties: release, then topological position) decodes without insertion to the
    very same schedule (each start is the later of its inputs' arrival and the previous
    task's release on its device), so that order is used. A partitioner+scheduler result
    keeps its genome on a problem that decodes with insertion: the insertion decoder
    gives the same schedule whenever every task time is positive (a work-conserving
    simulation leaves no gap before a waiting task); with zero-time tasks it may differ.
    """
    genome = problem.genome(result.devices, result.order)
    if result.insertion and not problem.insertion:
        sched = problem.schedule(genome, insertion=True)
        order = np.lexsort((problem.structure.topo_pos, sched.release, sched.start))
        genome = problem.genome(result.devices, order)
    return genome


def seed_genomes(problem: DagProblem, names: Sequence[str] | None = None) -> list[np.ndarray]:
    """Genomes of the heuristics ``names`` (default: every list scheduler and every pair when the
    graph has at most 2000 tasks, else ``heft``, ``cp+pct`` and ``hash+fifo``), duplicates removed.
    See :func:`genome_of` for the genome of an insertion heuristic.

    A heuristic that raises loses its seed and the others go on; a :class:`SeedHeuristicWarning`
    names it, the problem and the error, once per heuristic and problem. A stop request or the end of
    the enclosing :func:`~dse.util.interrupt.work_limits` block (a solver's time limit) ends the list
    there: the heuristics check it in their loops (:func:`~dse.util.interrupt.cut_point`) and the genomes
    of those that finished are returned. The first heuristic (``heft`` by default) is started whatever the
    limit, so that a time limit too short for any search still returns its schedule; a stop request (Ctrl-C)
    still cuts it.
    """
    if names is None:
        names = _all_names() if problem.n_tasks <= LARGE_GRAPH_TASKS else LARGE_GRAPH_SEEDS
    out: list[np.ndarray] = []
    seen: set[bytes] = set()
    for k, name in enumerate(names):
        try:
            if k:
                cut_point(f"before heuristic {name}")
            # the first runs to its end past the time limit (never past a stop request)
            with without_deadline() if k == 0 else nullcontext():
                genome = genome_of(problem, run(problem, name))
        except Cut:
            break
        except Exception as exc:  # noqa: BLE001 - a failing heuristic only loses its seed, said once
            _warn_failed(problem, name, exc)
            continue
        key = genome.tobytes()
        if key not in seen:
            seen.add(key)
            out.append(genome)
    return out


def _all_names() -> list[str]:
    return names()


def _warn_failed(problem: DagProblem, name: str, exc: Exception) -> None:
    """Warn that heuristic ``name`` raised ``exc`` on ``problem``, unless that was said already."""
    try:
        warned = _WARNED.setdefault(problem, set())
    except TypeError:  # a problem that cannot be weakly referenced: warned about on every call
        warned = set()
    if name in warned:
        return
    warned.add(name)
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"
    warnings.warn(f"heuristic '{name}' failed on problem '{problem.name}' ({type(exc).__name__}: {reason}); "
                  "the solve goes on without its seed", SeedHeuristicWarning, stacklevel=3)


def _run_for_solver(problem: DagProblem, name: str) -> tuple[np.ndarray, str]:
    """The genome of heuristic ``name`` for the problem's decoder, and a message with its makespan."""
    res = run(problem, name)
    genome = genome_of(problem, res)
    message = f"{res.name}: makespan {res.makespan} ({'insertion' if res.insertion else 'no insertion'})"
    if res.insertion != problem.insertion:  # same decoder: the evaluated makespan is res.makespan itself
        evaluated = int(problem.evaluate(genome[None, :]).F[0, 0])
        if evaluated != res.makespan:
            message += f"; the problem's evaluation gives {evaluated}"
    return genome, message


register_heuristics(HeuristicProvider("dag", names, _run_for_solver, seed_genomes))  # type: ignore[arg-type]
