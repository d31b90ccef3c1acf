"""Pareto sets: points with genomes, objective values, proof status; tables, JSON, indicators.

Internally every objective is an integer to minimize (``ParetoPoint.internal``);
``ParetoPoint.objectives`` holds the same values in user units and senses
(throughput in items/s is maximized, energy in mJ/item minimized).

**Hypervolume**, one convention for :meth:`ParetoSet.hypervolume`, :meth:`ParetoSet.compare`, the
certificates (:class:`Certificate`, :mod:`dse.solvers.certificate`) and the ``dse`` commands: the
measure of the part of objective space that a front's points dominate and that is better than the
*reference point* in every objective, in the objectives' user units multiplied together (for
throughput and energy: items/s x mJ/item). The reference point belongs to the problem, not to a run,
so that two runs' hypervolumes and gaps compare: per objective, the worst value among the problem's
feasible baselines (each device alone, the static partition, ...: ``ParetoSet.baselines``), made
:data:`REFERENCE_MARGIN` (10%) worse in internal units, where every objective is minimized (a period
10% longer, an energy 10% higher). It is stated in user units and senses: a throughput reference is
a positive throughput, the worst baseline's divided by 1.1; an energy reference is the worst
baseline's energy times 1.1. A point not better than the reference in every objective counts for
nothing. Only when no baseline is feasible do the fronts' own points stand in for the baselines
(the reference then depends on the points found).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.cost.error_bands import front_and_baselines, robust_indices, stable_indices
from dse.errors import SpecError
from dse.util.arguments import expect, real_vector, relative_error
from dse.util.csv_text import csv_text
from dse.util.files import replace_atomically, write_text
from dse.util.genome import Genome
from dse.util.result_files import front_file

if TYPE_CHECKING:
    import pandas as pd

    from dse.mapping.base import MappingProblem, Objective

#: Largest gene value a front file may hold (every gene is a device index, a level or a priority).
MAX_GENE_VALUE = 2**31 - 1

class GeneRangeError(ValueError):
    """A front file's gene outside [0, :data:`MAX_GENE_VALUE`]."""


#: How a solve ended (``ParetoSet.status``), each written once here: ``optimal`` (the whole front, every
#: point proven), ``feasible`` (points found, not all proven), ``time_limit`` and ``interrupted`` (stopped
#: early: the points found so far, see :data:`STOPPED`), ``infeasible`` (no feasible mapping, proven or none
#: found) and ``unknown`` (no feasible point found, nothing proven).
OPTIMAL, FEASIBLE, TIME_LIMIT, INTERRUPTED, INFEASIBLE, UNKNOWN = (
    "optimal", "feasible", "time_limit", "interrupted", "infeasible", "unknown")
STATUSES = (OPTIMAL, FEASIBLE, TIME_LIMIT, INTERRUPTED, INFEASIBLE, UNKNOWN)
#: The statuses of a solve stopped before it finished (:meth:`dse.solvers.context.SolveContext.stop_status`).
STOPPED = (TIME_LIMIT, INTERRUPTED)


def nondominated(F: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each distinct nondominated row of ``F`` (minimization).

    Example: ``nondominated(np.array([[1, 3], [2, 2], [2, 3], [1, 3]]))`` -> ``[0, 1]``.
    """
    F = np.asarray(F)
    if len(F) == 0:
        return np.zeros(0, dtype=np.int64)
    _, first = np.unique(F, axis=0, return_index=True)
    first = np.sort(first)
    U = F[first]
    if U.shape[1] == 2:
        order = np.lexsort((U[:, 1], U[:, 0]))
        best = np.minimum.accumulate(U[order, 1])
        keep = np.ones(len(order), dtype=bool)
        keep[1:] = U[order[1:], 1] < best[:-1]
        return np.sort(first[order[keep]])
    keep = np.ones(len(U), dtype=bool)
    for start in range(0, len(U), 512):
        block = U[start : start + 512]
        le = np.all(U[None, :, :] <= block[:, None, :], axis=2)
        lt = np.any(U[None, :, :] < block[:, None, :], axis=2)
        keep[start : start + len(block)] = ~np.any(le & lt, axis=1)
    return first[keep]


#: How much worse than the worst feasible baseline the reference point lies, as a share of that value in
#: internal units (module docstring).
REFERENCE_MARGIN = 0.1


def minimization_signs(objectives: Sequence[Objective]) -> np.ndarray:
    """Per objective ``-1`` (maximized in user terms) or ``1``: user values times these are minimized."""
    return np.array([-1.0 if o.sense == "max" else 1.0 for o in objectives])


def reference_internal(baselines: np.ndarray, points: np.ndarray) -> np.ndarray | None:
    """The reference point in internal units (module docstring): per objective the largest value of
    ``baselines`` (the feasible baselines' internal values, (n, k)), or of ``points`` when there is no
    baseline, plus :data:`REFERENCE_MARGIN` of its magnitude (at least one unit); None when both are empty."""
    rows = np.asarray(baselines if len(baselines) else points, dtype=np.float64)
    if not len(rows):
        return None
    nadir = rows.max(axis=0)
    return nadir + REFERENCE_MARGIN * np.maximum(np.abs(nadir), 1.0)


def user_reference(objectives: Sequence[Objective], internal: np.ndarray) -> np.ndarray:
    """A reference point in internal units (:func:`reference_internal`) in user units and senses."""
    return np.array([float(o.to_user(np.array([float(v)]))[0]) for o, v in zip(objectives, internal, strict=True)])


def hypervolume(points: np.ndarray, reference: np.ndarray) -> float:
    """Hypervolume of ``points`` up to ``reference``, both in minimization form (user units, maximized
    objectives negated); rows not below the reference in every objective count for nothing; infinite
    when a counted row has an infinite coordinate.

    Example: ``hypervolume(np.array([[1.0, 3.0], [3.0, 1.0]]), np.array([4.0, 4.0]))`` -> 5.0.
    """
    points = np.asarray(points, dtype=np.float64).reshape(-1, len(reference))
    points = points[(points < reference).all(axis=1)]
    if not len(points):
        return 0.0
    if not np.isfinite(points).all():
        return float("inf")
    from pymoo.indicators.hv import HV

    return float(HV(ref_point=np.asarray(reference, dtype=np.float64))(points))


#: :attr:`FoundBy.worker` of a point that a solver was handed as a heuristic seed (not found by a task).
SEED = "seed"
#: :attr:`FoundBy.worker` of a point carried over from a previous run (``--resume``, a checkpoint).
RESUME = "resume"


@dataclass(frozen=True)
class FoundBy:
    """Who found a point of a distributed run: ``worker``, the label of the Dask worker whose task returned it
    (``worker 1``, ``worker 2``, ... in the order the driver first took a result from each), or :data:`SEED` or
    :data:`RESUME` for a point the run started from; ``task``, the number of that task (1 = the first the
    driver submitted), None for a starting point."""

    worker: str
    task: int | None = None

    def describe(self) -> str:
        """``worker 2 (task 17)``, ``a heuristic seed`` or ``a previous run (resume)``."""
        if self.task is not None:
            return f"{self.worker} (task {self.task})"
        return {SEED: "a heuristic seed", RESUME: "a previous run (resume)"}.get(self.worker, self.worker)

    def to_dict(self) -> dict[str, Any]:
        return {"worker": self.worker, "task": self.task}


@dataclass(frozen=True)
class ParetoPoint:
    """One mapping on a front; ``found_by``: who found it, in a distributed run (None otherwise)."""

    genome: Sequence[int]  # a Genome (int64-backed, equal to and hashing as the tuple of its ints) or a tuple
    internal: tuple[int, ...]
    objectives: dict[str, float]
    metrics: dict[str, float] = field(default_factory=dict)
    slack: dict[str, float] = field(default_factory=dict)
    solver: str = ""
    proven: bool = False
    feasible: bool = True
    found_by: FoundBy | None = None


#: :attr:`TaskSpan.worker` of a task whose result never came back (cancelled, failed, cut off by a stop).
NO_RESULT = "no result"


@dataclass(frozen=True)
class TaskSpan:
    """One task of a distributed run: its ``task`` number (1 = first submitted), the ``worker`` label that ran
    it (as :attr:`FoundBy.worker`; :data:`NO_RESULT` when its result never came back) and that worker's Dask
    name (``dask_worker``), what it did (``name``: a region, an island's epoch) and how it ended
    (``outcome``), from ``start_s`` to ``end_s`` seconds after the driver started: the worker's wall clock
    less the driver's (clocks of different hosts may differ), or the driver's own clock from submission to
    cancellation for a task without a result."""

    task: int
    worker: str
    dask_worker: str
    name: str
    outcome: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class DriverTimings:
    """Where a distributed run's time went (a Dask driver's; one entry per task result, in the order the
    driver took them): ``task_s`` the compute time inside each task on its worker, ``round_trip_s`` from
    the task's submission to the driver taking its result (so ``round_trip_s - task_s`` is the message,
    scheduling and waiting overhead), ``driver_s`` the driver's own time per result (applying it,
    choosing and submitting the next tasks; a pass over several results is shared out evenly);
    ``open_regions`` (the exact mode) the seconds since the first submission and the open boxes after each
    result; ``span_s`` the seconds from the first submission to the last result taken; ``tasks`` every task
    submitted, in submission order (:class:`TaskSpan`); ``driver_busy`` the driver's own work between two
    waits: (start, end) in seconds after it started, and the results it took then."""

    task_s: tuple[float, ...] = ()
    round_trip_s: tuple[float, ...] = ()
    driver_s: tuple[float, ...] = ()
    open_regions: tuple[tuple[float, int], ...] = ()
    span_s: float = 0.0
    tasks: tuple[TaskSpan, ...] = ()
    driver_busy: tuple[tuple[float, float, int], ...] = ()


@dataclass(frozen=True)
class SolveStats:
    """What a solve cost and how it ended; ``timings``: where a distributed run's time went (None for a
    run in one process)."""

    wall_s: float
    evaluations: int = 0
    solver_calls: int = 0
    generations: int = 0
    best_bound: tuple[float, ...] | None = None
    message: str = ""
    timings: DriverTimings | None = None


@dataclass(frozen=True)
class Certificate:
    """How far a front can be from the true Pareto front.

    With two or more objectives: ``hypervolume`` is what the front reaches and ``hypervolume_bound`` an
    upper bound on the true front's, both as :meth:`ParetoSet.hypervolume` measures them (module
    docstring) up to ``reference`` (user units and senses: the problem's reference point, the same as
    the front's ``reference_point()``); ``gap = (bound - hypervolume) / bound``, the share of the bound
    that the front may still miss. ``region`` holds the boxes ``(lower, upper)`` (user units, as the
    front's columns) where Pareto points not found yet can still lie; ``proven`` is true when none is
    left. The bound holds because every undiscovered Pareto point lies in some box of ``region`` and so
    is dominated by, or equal to, the box's lower corner (proven by the solver's bounds and the
    problem's own objective bounds). Points worse than ``reference`` in some objective count for
    neither side. ``infeasible``: proven that no mapping meets the constraints (the front is empty and
    there is nothing to measure). With one objective: ``value``, its proven lower ``bound`` (for a
    minimized objective; upper for a maximized one) and ``gap = |value - bound| / |value|``.
    """

    gap: float
    proven: bool
    hypervolume: float | None = None
    hypervolume_bound: float | None = None
    reference: tuple[float, ...] = ()
    region: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = ()
    value: float | None = None
    bound: float | None = None
    infeasible: bool = False

    def describe(self) -> str:
        """One line: "certified within 3.1% of the optimal front's hypervolume" and the like."""
        if self.infeasible:
            return "proven infeasible: no mapping meets the constraints (an empty front, nothing to measure)"
        if self.value is not None and self.bound is None:
            return "not certified: no bound was proven"
        if self.value is not None:
            if self.proven:
                return "certified optimal (gap 0%)"
            return f"certified within {self.gap:.1%} of the optimum (bound {self.bound:.6g})"
        if self.hypervolume_bound is None or not math.isfinite(self.hypervolume_bound):
            return "not certified: no bound on the optimal front was proven"
        if self.proven:
            return "certified complete: every Pareto-optimal value is on the front (gap 0%)"
        if not self.region:  # open boxes remain, all past the reference point: none can add hypervolume
            return (f"certified within {self.gap:.1%} of the optimal front's hypervolume (the regions still "
                    "unexplored lie past the reference point)")
        return (f"certified within {self.gap:.1%} of the optimal front's hypervolume "
                f"({len(self.region)} unexplored regions left)")

    def to_dict(self) -> dict[str, Any]:
        """The ``certificate`` entry of ``front.json``."""
        if self.value is not None:
            return {"value": self.value, "bound": _finite(self.bound), "gap": self.gap, "proven": self.proven}
        return {"hypervolume": self.hypervolume, "hypervolume_bound": _finite(self.hypervolume_bound),
                "gap": self.gap,
                "reference": list(self.reference), "proven": self.proven, "infeasible": self.infeasible,
                "region": [[list(lo), list(hi)] for lo, hi in self.region]}


@dataclass(frozen=True)
class ParetoSet:
    """A front of mappings with provenance.

    ``status``: ``optimal`` (complete front, every point proven), ``feasible``
    (points found, not all proven), ``time_limit`` / ``interrupted`` (stopped
    early: the points found so far), ``infeasible`` (no mapping satisfies the
    constraints). ``complete`` is true only when the whole front is proven. ``exact``: made by an exact
    solver (CP-SAT, exhaustive search), whose points are proven once it completes; figures draw such
    fronts beneath the approximate ones (:func:`dse.viz.plot_fronts`).
    """

    problem: str
    objectives: tuple[Objective, ...]
    points: tuple[ParetoPoint, ...]
    solver: str
    status: str
    complete: bool
    stats: SolveStats
    baselines: dict[str, ParetoPoint] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    certified: Certificate | None = None
    exact: bool = False

    def certificate(self) -> Certificate | None:
        """How far this front can be from the true front (:class:`Certificate`); None when the solver
        proves nothing (NSGA-II, heuristics: ``dse.certify`` adds one)."""
        return self.certified

    def __len__(self) -> int:
        return len(self.points)

    @property
    def columns(self) -> list[str]:
        return [o.column for o in self.objectives]

    def F(self) -> np.ndarray:
        """User-unit objectives in minimization form (maximized ones negated), shape (n, n_obj)."""
        if not self.points:
            return np.zeros((0, len(self.objectives)))
        values = np.array([[p.objectives[c] for c in self.columns] for p in self.points], dtype=float)
        return values * minimization_signs(self.objectives)

    def internal(self) -> np.ndarray:
        """Internal integer objective values, shape (n, n_obj)."""
        return np.array([p.internal for p in self.points], dtype=np.int64).reshape(-1, len(self.objectives))

    # ------------------------------------------------------------------ indicators
    def reference_point(self, others: Sequence[ParetoSet] = ()) -> np.ndarray:
        """The reference point of the hypervolume (module docstring), in user units and senses: from the
        feasible baselines of this front and ``others``, or from their points when no baseline is
        feasible. Raises ``ValueError`` when there is neither."""
        k = len(self.objectives)
        fronts = (self, *others)
        baselines = np.array([p.internal for s in fronts for p in s.baselines.values() if p.feasible],
                             dtype=np.int64).reshape(-1, k)
        reference = reference_internal(baselines, np.vstack([s.internal() for s in fronts]))
        if reference is None:
            raise ValueError("no feasible baseline and no point to derive a reference point from")
        return user_reference(self.objectives, reference)

    def hypervolume(self, ref: Sequence[float] | np.ndarray | None = None) -> float:
        """Hypervolume (module docstring) up to ``ref``, in user units and senses (default: the front's
        :meth:`reference_point`); 0 for an empty front. Raises ``TypeError`` when ``ref`` is not a sequence
        of numbers and ``ValueError`` when it is not one finite number per objective."""
        if ref is not None:
            ref = real_vector(ref, len(self.objectives), "ParetoSet.hypervolume", "ref")
        if not self.points:
            return 0.0
        ref_point = self.reference_point() if ref is None else ref
        return hypervolume(self.F(), ref_point * minimization_signs(self.objectives))

    def knee(self) -> ParetoPoint:
        """The point closest to the ideal point after normalizing each objective to [0, 1]."""
        if not self.points:
            raise ValueError("empty front has no knee")
        F = self.F()
        lo, hi = F.min(axis=0), F.max(axis=0)
        norm = (F - lo) / np.where(hi > lo, hi - lo, 1.0)
        return self.points[int(np.argmin(np.linalg.norm(norm, axis=1)))]

    def compare(self, other: ParetoSet) -> dict[str, Any]:
        """Hypervolumes on the shared reference point (:meth:`reference_point` of both; user units and
        senses, ``reference_point`` in the result) and how many points of each the other dominates.

        Raises ``TypeError`` when ``other`` is not a :class:`ParetoSet` and ``ValueError`` when it is a
        front of another problem or of other objectives (its numbers would compare nothing)."""
        expect(other, ParetoSet, "ParetoSet.compare", "other")
        if other.problem != self.problem or other.columns != self.columns:
            raise ValueError(f"ParetoSet.compare: the fronts solve different problems ({self.problem!r} with "
                             f"{', '.join(self.columns)}; {other.problem!r} with {', '.join(other.columns)}): "
                             "compare fronts of one problem")
        ref = self.reference_point([other])
        mine, theirs = self.F(), other.F()

        def dominated_by(a: np.ndarray, b: np.ndarray) -> int:
            if len(a) == 0 or len(b) == 0:
                return 0
            le = np.all(b[None, :, :] <= a[:, None, :], axis=2)
            lt = np.any(b[None, :, :] < a[:, None, :], axis=2)
            return int(np.any(le & lt, axis=1).sum())

        hv_self, hv_other = self.hypervolume(ref), other.hypervolume(ref)
        return {
            "reference_point": ref.tolist(),
            f"hypervolume[{self.solver}]": hv_self,
            f"hypervolume[{other.solver}]": hv_other,
            "hypervolume_ratio": hv_other / hv_self if hv_self else float("nan"),
            f"{self.solver}_points_dominated_by_{other.solver}": dominated_by(mine, theirs),
            f"{other.solver}_points_dominated_by_{self.solver}": dominated_by(theirs, mine),
        }

    # ------------------------------------------------------------------ error bands
    def robust(self, r: float | Sequence[float]) -> tuple[ParetoPoint, ...]:
        """The points that no other point (of the front or its baselines) dominates with certainty when
        every objective may be off by the relative error ``r`` (one value, or one per point): see
        :mod:`dse.cost.error_bands`. Raises ``TypeError`` when ``r`` is not a number or numbers and
        ``ValueError`` for one out of range."""
        F, rs = self._banded(r, "ParetoSet.robust")
        return tuple(self.points[i] for i in robust_indices(F, rs, len(self.points)))

    def stable(self, r: float | Sequence[float]) -> tuple[ParetoPoint, ...]:
        """The points that no other point (of the front or its baselines) can dominate when every objective
        may be off by ``r``: Pareto-optimal whatever the true values within the bands."""
        F, rs = self._banded(r, "ParetoSet.stable")
        return tuple(self.points[i] for i in stable_indices(F, rs, len(self.points)))

    def _banded(self, r: float | Sequence[float], where: str) -> tuple[np.ndarray, list[float]]:
        return front_and_baselines([p.objectives for p in self.points],
                                   [p.objectives for p in self.baselines.values()], self.columns,
                                   [o.sense for o in self.objectives], relative_error(r, where, "r"))

    # ------------------------------------------------------------------ export
    def to_records(self) -> list[dict[str, Any]]:
        rows = []
        for p in self.points:
            row: dict[str, Any] = {"solver": p.solver, "proven": p.proven, "feasible": p.feasible}
            row.update(p.objectives)
            row.update(p.metrics)
            row["genome"] = " ".join(str(g) for g in p.genome)
            rows.append(row)
        return rows

    def to_frame(self) -> pd.DataFrame:
        """One row per point: solver, proven, feasible, objectives in user units, metrics, genome."""
        import pandas as pd

        frame = pd.DataFrame(self.to_records())
        if frame.empty:
            frame = pd.DataFrame(columns=["solver", "proven", "feasible", *self.columns, "genome"])
        return frame

    def to_csv(self, path: str | Path) -> None:
        """Write :meth:`to_frame`'s table to ``path`` (:func:`dse.util.csv_text.csv_text`: as pandas writes it,
        without importing pandas) whole or not at all (:func:`dse.util.files.replace_atomically`:
        :class:`~dse.errors.OutputError` for a full disk or a device node, a FIFO, a read-only file)."""
        records = self.to_records()
        text = csv_text(records, [] if records else ["solver", "proven", "feasible", *self.columns, "genome"])
        replace_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8", newline=""))

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "solver": self.solver,
            "status": self.status,
            "complete": self.complete,
            "exact": self.exact,
            "objectives": [
                {"name": o.name, "unit": o.unit, "sense": o.sense, "column": o.column} for o in self.objectives
            ],
            "stats": {
                "wall_s": self.stats.wall_s,
                "evaluations": self.stats.evaluations,
                "solver_calls": self.stats.solver_calls,
                "generations": self.stats.generations,
                "message": self.stats.message,
            },
            "notes": list(self.notes),
            **({"certificate": self.certified.to_dict()} if self.certified is not None else {}),
            "points": [_point_dict(p) for p in self.points],
            "baselines": {k: _point_dict(p) for k, p in self.baselines.items()},
        }

    def to_json(self, path: str | Path | None = None, indent: int | None = 2) -> str:
        """The front as JSON text (:meth:`to_dict`), also written to ``path`` when given; ``indent`` None
        gives one line (json's C encoder: several times faster on a front of long genomes)."""
        text = json.dumps(self.to_dict(), indent=indent, default=_json_default)
        if path is not None:
            write_text(path, text)
        return text


def read_front_genomes(path: str | Path) -> list[np.ndarray]:
    """Distinct genomes of every point in a ``front.json`` written by ``dse solve`` (one document with
    ``fronts``) or by :meth:`ParetoSet.to_json` (one front), in file order.

    Raises ``ValueError`` when the file is not such a document: :class:`~dse.errors.SpecError` naming the
    field and value where it does not fit :class:`dse.util.result_files.FrontFile` (a gene as text, past
    :data:`MAX_GENE_VALUE`, a front that is no object...).
    """
    try:
        doc = front_file(json.loads(Path(path).read_text()), str(path))
        fronts = doc["fronts"] if "fronts" in doc else [doc]
        rows = [tuple(int(g) for g in point["genome"]) for front in fronts for point in front["points"]]
    except SpecError:
        raise
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
    for row in rows:  # range-checked before numpy sees them (a huge integer would overflow int64)
        bad = next((g for g in row if not 0 <= g <= MAX_GENE_VALUE), None)
        if bad is not None:
            raise GeneRangeError(f"a gene ({str(bad)[:20]}) is outside [0, {MAX_GENE_VALUE}]")
    return [np.array(row, dtype=np.int64) for row in dict.fromkeys(rows)]


def _finite(value: float | None) -> float | None:
    """``value``, or None (JSON null) when it is missing or not finite."""
    return value if value is not None and math.isfinite(value) else None


def _point_dict(p: ParetoPoint) -> dict[str, Any]:
    """A point as front.json holds it; ``found_by`` only for a point of a distributed run."""
    return {
        "solver": p.solver,
        "proven": p.proven,
        "feasible": p.feasible,
        "objectives": p.objectives,
        "internal": list(p.internal),
        "metrics": p.metrics,
        "slack": p.slack,
        "genome": list(p.genome),
        **({"found_by": p.found_by.to_dict()} if p.found_by is not None else {}),
    }


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def make_points(
    problem: MappingProblem,
    genomes: np.ndarray,
    solver: str,
    proven: Sequence[bool] | bool = False,
    found_by: Sequence[FoundBy | None] | None = None,
) -> list[ParetoPoint]:
    """Evaluate ``genomes`` and wrap them as points (objectives in user units, latency etc. as metrics;
    ``found_by``: who found each genome, in a distributed run)."""
    genomes = np.asarray(genomes, dtype=np.int64).reshape(-1, problem.n_genes)
    if len(genomes) == 0:
        return []
    ev = problem.evaluate(genomes, metrics=True)
    user = problem.user_objectives(ev.F)
    extra = problem.user_metrics(ev.metrics)
    proven_list = [proven] * len(genomes) if isinstance(proven, bool) else list(proven)
    points = []
    internal_rows = np.asarray(ev.F, dtype=np.int64).tolist()
    for k, genome in enumerate(genomes):
        objectives = {o.column: float(user[k, j]) for j, o in enumerate(problem.objectives)}
        metrics = {name: float(values[k]) for name, values in extra.items() if name not in objectives}
        slack = problem.slack(ev.G[k])
        points.append(
            ParetoPoint(
                genome=Genome(genome),
                internal=tuple(internal_rows[k]),
                objectives=objectives,
                metrics=metrics,
                slack=slack,
                solver=solver,
                proven=bool(proven_list[k]),
                feasible=bool(ev.feasible[k]),
                found_by=None if found_by is None else found_by[k],
            )
        )
    return points
