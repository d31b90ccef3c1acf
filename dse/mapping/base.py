"""The contract every problem family implements (see DESIGN.md, layer 3).

A :class:`MappingProblem` exposes an integer genome, objectives and
constraint components, a population-vectorized ``evaluate`` and a ``decode``
that explains one mapping. Families that can be solved exactly also provide
``cpsat()`` returning a :class:`Formulation` over the same integer tables.

``evaluate`` is a template: it takes any population, cuts it into chunks,
calls the family's :meth:`MappingProblem.kernel` (which fills a
:class:`~dse.mapping.population.Population` with the quantities the
objectives and constraints name), stacks the objectives into ``F`` and the
constraints' violations into ``G``. A family writes its kernel, not the
bookkeeping.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from dse.cost import CostTables
from dse.errors import GenomeError, GenomeTypeError
from dse.mapping.constraints import Constraint
from dse.mapping.population import FlatTables, Population
from dse.mapping.registry import family_of


@dataclass(frozen=True)
class Objective:
    """One objective. ``internal`` values are integers minimized by every solver.

    ``internal_name`` is the quantity the family's kernel computes (e.g. a
    ``period`` in ns for a ``throughput`` objective); ``to_user`` converts it
    to the user's unit (items/s); ``sense`` is the user's direction.
    """

    name: str
    unit: str
    sense: str  # "min" or "max", in user terms
    internal_name: str
    internal_unit: str
    to_user: Callable[[np.ndarray], np.ndarray]

    @property
    def column(self) -> str:
        """Column name in tables and CSV files, e.g. ``throughput_items_per_s``."""
        return f"{self.name}_{self.unit.replace('/', '_per_').replace(' ', '_')}".lower()


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Result of evaluating a population.

    ``F``: (pop, n_obj) int64 internal objective values (minimize);
    ``G``: (pop, n_con) float, feasible iff every entry <= 0 (normalized
    violations, pymoo's convention); ``metrics``: name -> (pop,) or (pop, k) arrays.
    """

    F: np.ndarray
    G: np.ndarray
    metrics: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def feasible(self) -> np.ndarray:
        if self.G.shape[1] == 0:
            return np.ones(len(self.F), dtype=bool)
        # np.asarray only narrows the type: numpy's stubs type .all(axis=...) as
        # np.bool | ndarray, but G is 2-D so the result is always an array.
        return np.asarray((self.G <= 0).all(axis=1))


@dataclass
class Formulation:
    """A CP-SAT model of a family, ready for any generic CP-SAT driver.

    ``objective_vars[i]`` is an integer variable constrained to equal the
    i-th objective's internal value, in the problem's objective order.
    ``to_genome(solver)`` reads a genome from a solved solver, ``hint(genome)``
    adds a solution hint.
    """

    model: Any
    objective_vars: list[Any]
    to_genome: Callable[[Any], np.ndarray]
    hint: Callable[[np.ndarray], None]
    notes: list[str] = field(default_factory=list)
    named_vars: dict[str, Any] = field(default_factory=dict)


def leading_device_genes(tables: CostTables, genome: Sequence[int]) -> dict[str, str]:
    """Op name -> device name for a genome whose first ``n_ops`` genes are device indices (both built-in
    families; a family with another layout writes its own ``assignment``)."""
    return {op: tables.device_names[int(d)] for op, d in zip(tables.op_names, genome[: tables.n_ops], strict=True)}


@dataclass(frozen=True)
class DeviceCost:
    """One device's share of a decoded mapping, in the breakdown's internal units.

    ``ops``: the ops (tasks, chunks, blocks) it runs; ``busy``: the time it works; ``dynamic_energy``: what
    its ops spend at the operating point the genome chose; ``idle_energy``: its idle power over the time
    the family charges it (0 where the family charges none); ``memory``/``capacity``: resident bytes and
    what the device holds (None where the family does not track them); ``level``: the operating point
    the genome chose (``"765 MHz"``), None for a device without DVFS or one that runs nothing.
    """

    name: str
    ops: int
    busy: int
    dynamic_energy: int
    idle_energy: int = 0
    memory: int | None = None
    capacity: int | None = None
    level: str | None = None

    @property
    def energy(self) -> int:
        """Dynamic plus idle energy."""
        return self.dynamic_energy + self.idle_energy


@dataclass(frozen=True)
class LinkCost:
    """One link's share: ``name`` is what every view calls it (``"link cpu->gpu"``, ``"host link gpu"``),
    ``busy`` the time it carries data, ``energy`` what its transfers spend."""

    name: str
    busy: int
    energy: int


@dataclass(frozen=True)
class Activity:
    """One op on a device, or one transfer on a link (``where``), from ``start`` to ``finish`` with the
    ``energy`` it spends there (internal units)."""

    name: str
    where: str
    start: int
    finish: int
    energy: int


@dataclass(frozen=True)
class Breakdown:
    """Where a decoded mapping's time and energy go, at the operating points its genome chose.

    ``devices`` (every device of the problem, in table order), ``links`` (those that carry data or spend
    energy), ``ops`` and ``transfers`` (one item's, one schedule's or one split's activities; empty where
    the family has no such timeline) and ``totals``: the quantities the family's objectives report
    (every objective's ``internal_name``: ``period``, ``energy``...). Values are integers in
    ``time_unit`` and ``energy_unit`` (pJ); ``display_time_unit`` and ``display_per_time_unit`` say how
    every view shows times; ``per`` says what the energy is spent on (``"item"``, ``"schedule"``...).

    The parts add up: :attr:`energy` (devices' dynamic and idle energy plus links') equals
    ``totals["energy"]``, the ops' energies add up to the devices' dynamic energy and the transfers'
    to the links' energy (each family's tests check it).
    """

    devices: tuple[DeviceCost, ...]
    links: tuple[LinkCost, ...]
    ops: tuple[Activity, ...]
    transfers: tuple[Activity, ...]
    totals: Mapping[str, int]
    time_unit: str
    display_time_unit: str
    display_per_time_unit: float
    per: str
    energy_unit: str = "pJ"

    @property
    def energy(self) -> int:
        """The devices' dynamic and idle energy plus the links' (internal unit)."""
        return sum(d.energy for d in self.devices) + sum(link.energy for link in self.links)

    @property
    def dynamic_energy(self) -> int:
        """What the ops spend (the devices' dynamic energy)."""
        return sum(d.dynamic_energy for d in self.devices)

    @property
    def idle_energy(self) -> int:
        """The devices' idle energy."""
        return sum(d.idle_energy for d in self.devices)

    @property
    def transfer_energy(self) -> int:
        """What the links spend."""
        return sum(link.energy for link in self.links)

    def display_time(self, value: float) -> float:
        """A time of this breakdown in ``display_time_unit``."""
        return float(value) * self.display_per_time_unit

    def millijoules(self, value: float) -> float:
        """An energy of this breakdown in mJ."""
        return float(value) * ENERGY_TO_MJ[self.energy_unit]


#: mJ per unit of a breakdown's ``energy_unit``.
ENERGY_TO_MJ = {"pJ": 1e-9, "nJ": 1e-6, "uJ": 1e-3, "mJ": 1.0, "J": 1e3}


class DecodedMapping(ABC):
    """What ``decode`` returns: one mapping, explained.

    ``constraint_slack`` maps each constraint's name to its slack (>= 0: met);
    ``schedule`` holds ``(op, device, start, finish)`` rows for Gantt charts
    (empty where the family has no schedule).
    """

    schedule: Sequence[tuple[str, str, int, int]]
    constraint_slack: dict[str, float]

    @abstractmethod
    def values(self) -> dict[str, int]:
        """The mapping's quantities in internal units by name (every objective's ``internal_name``)."""

    @abstractmethod
    def explain(self) -> str:
        """A readable multi-line account of the mapping."""

    @abstractmethod
    def assignment(self) -> dict[str, str]:
        """Op name -> device name."""

    def breakdown(self) -> Breakdown | None:
        """Time and energy per device, link, op and transfer at the operating points the genome chose
        (:class:`Breakdown`); None where the family gives none (every built-in family gives one)."""
        return None


#: What a caller who gave a spec path or a spec where a problem belongs should call instead.
PROBLEM_HINT = "give the problem object: dse.load_problem('quickstart' or a spec path), or dse.build_problem(spec)"


def _integer_array(X: np.ndarray | Sequence[int], problem: str) -> np.ndarray:
    """``X`` as an ``int64`` array; :class:`GenomeTypeError` naming ``problem`` and the first gene that is
    not an integer (booleans, fractions, NaN and strings are not; nor is an integer past int64)."""
    try:
        given = np.asarray(X)
    except (ValueError, TypeError) as exc:  # ragged nesting
        raise GenomeTypeError(f"problem '{problem}': genomes must be integer arrays ({exc})") from None
    if given.dtype.kind in "iu":
        return given.astype(np.int64, copy=False)
    if given.dtype.kind == "f":
        fraction = ~np.isfinite(given) | (given != np.round(given)) | (np.abs(given) > 2**62)
        if not fraction.any():
            return given.astype(np.int64)
        bad = given[fraction].flat[0]
    elif given.dtype.kind == "O":
        flat = given.ravel()
        bad = next((v for v in flat if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer)
                    or not -(2**63) <= int(v) < 2**63), None)
        if bad is None:
            return given.astype(np.int64)
    else:
        bad = given.flat[0] if given.size else given.dtype
    raise GenomeTypeError(f"problem '{problem}': genes must be integers, got {type(bad).__name__} {str(bad)[:20]}")


class MappingProblem(ABC):
    """A mapping problem over an integer genome ``lower <= x <= upper``."""

    family: ClassVar[str]
    name: str
    tables: CostTables
    objectives: tuple[Objective, ...]
    constraints: tuple[Constraint, ...]
    #: genomes per evaluation chunk (None: about 64k elements per (ops x genomes) array, 128 to 1024 genomes)
    chunk_size: int | None = None
    #: Attributes a pickled copy leaves behind: memos of evaluations, which can be large and refill on use.
    memos: ClassVar[tuple[str, ...]] = ()

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps (a Dask worker's copy of the problem): the attributes, copied at once, less
        :attr:`memos`. The copy is taken in one step because a thread evaluating the problem meanwhile (a
        worker's task, while the worker sends the problem to a peer) adds cached attributes and memo
        entries, and a pickler walking the live attributes would fail on a dictionary that changed size."""
        state = self.__dict__.copy()
        for name in self.memos:
            state.pop(name, None)
        return state

    @property
    @abstractmethod
    def gene_names(self) -> tuple[str, ...]: ...

    @property
    @abstractmethod
    def lower(self) -> np.ndarray: ...

    @property
    @abstractmethod
    def upper(self) -> np.ndarray: ...

    @property
    def n_genes(self) -> int:
        return len(self.gene_names)

    @property
    def space_size(self) -> int:
        """Number of distinct genomes (an exact Python int)."""
        size = 1
        for lo, hi in zip(self.lower, self.upper, strict=True):
            size *= int(hi) - int(lo) + 1
        return size

    @property
    def log10_space_size(self) -> float:
        """``log10(space_size)``, computed without forming the (possibly huge) integer."""
        return float(np.log10((self.upper - self.lower + 1).astype(float)).sum())

    def repair(self, X: np.ndarray) -> np.ndarray:
        """Map any genome into a valid one (default: clip to bounds); :class:`GenomeError` when a genome has
        the wrong number of genes."""
        return np.clip(self.integer_genomes(X), self.lower, self.upper)

    def integer_genomes(self, X: np.ndarray | Sequence[int]) -> np.ndarray:
        """``X`` (one genome or a population, any integer values) as ``int64``, the same shape;
        :class:`GenomeError` naming the problem when its last axis is not ``n_genes`` long, and
        :class:`~dse.errors.GenomeTypeError` (a ``TypeError``) when a gene is not an integer: a boolean, a
        fraction, NaN or a string (a float with an integer value, ``2.0``, is that integer)."""
        X = _integer_array(X, self.name)
        if X.ndim == 0 or X.shape[-1] != self.n_genes:
            genes = X.shape[-1] if X.ndim else 0
            raise GenomeError(f"problem '{self.name}': a genome has {genes} gene{'s' * (genes != 1)}, this problem takes "
                              f"{self.n_genes} ({self.gene_names[0] if self.n_genes else 'none'}, ...)")
        return X

    # ------------------------------------------------------------------ evaluation template
    @cached_property
    def flat(self) -> FlatTables:
        """The cost tables flattened for population gathers (built once)."""
        return FlatTables(self.tables)

    @abstractmethod
    def kernel(self, X: np.ndarray, metrics: bool) -> Population:
        """Evaluate one chunk ``X`` (pop, n_genes): a Population whose ``values`` hold every objective's
        ``internal_name``, every quantity the constraints read, and (with ``metrics``) the family's metrics."""

    @cached_property
    def _bound_runs(self) -> tuple[tuple[int, int, int, int], ...]:
        """``(first, stop, lower, upper)`` per run of consecutive genes with the same bounds (a problem's bounds
        never change)."""
        lower, upper = self.lower, self.upper
        cuts = [0, *np.flatnonzero((np.diff(lower) != 0) | (np.diff(upper) != 0)) + 1, len(lower)]
        return tuple((int(a), int(b), int(lower[a]), int(upper[a])) for a, b in zip(cuts[:-1], cuts[1:], strict=True)
                     if a < b)

    def checked_genomes(self, X: np.ndarray | Sequence[int]) -> np.ndarray:
        """``X`` (one genome, or a population of shape (pop, n_genes)) as a 2-D ``int64`` array.

        Raises :class:`GenomeError` naming the problem, the gene and its value when a genome has the wrong
        number of genes or a gene outside ``lower..upper`` (the evaluators index tables with the genes).
        """
        X = self.integer_genomes(X)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2:
            raise GenomeError(f"problem '{self.name}': genomes of shape {X.shape}; give one genome or a "
                              f"(pop, {self.n_genes}) population")
        if all(low <= X[:, a:b].min() and X[:, a:b].max() <= high for a, b, low, high in self._bound_runs if len(X)):
            return X  # the common case: two whole-block reductions per run of equal bounds, no (pop, genes) mask
        lower, upper = self.lower, self.upper
        outside = (X < lower) | (X > upper)
        if outside.any():
            row, gene = (int(i) for i in np.argwhere(outside)[0])
            where = f" (genome {row})" if len(X) > 1 else ""
            raise GenomeError(f"problem '{self.name}': gene {gene} '{self.gene_names[gene]}' = {int(X[row, gene])}"
                              f"{where} is outside {int(lower[gene])}..{int(upper[gene])}")
        return X

    def evaluate(self, X: np.ndarray, metrics: bool = False) -> Evaluation:
        """Evaluate a population ``X`` of shape (pop, n_genes) (or one genome); returns an :class:`Evaluation`.

        Raises :class:`GenomeError` when a genome does not fit (:meth:`checked_genomes`)."""
        X = self.checked_genomes(X)
        chunk = self.chunk_size or int(np.clip(65_536 // max(self.tables.n_ops, self.tables.n_edges, 1), 128, 1024))
        if len(X) <= chunk:
            return self._evaluate_chunk(X, metrics)
        parts = [self._evaluate_chunk(X[k : k + chunk], metrics) for k in range(0, len(X), chunk)]
        return Evaluation(
            np.concatenate([p.F for p in parts]),
            np.concatenate([p.G for p in parts]),
            {k: np.concatenate([p.metrics[k] for p in parts]) for k in parts[0].metrics},
        )

    def _evaluate_chunk(self, X: np.ndarray, metrics: bool) -> Evaluation:
        return self._evaluation(self.kernel(X, metrics), len(X), metrics)

    def _evaluation(self, pop: Population, size: int, metrics: bool) -> Evaluation:
        """Objectives and constraint violations of an evaluated population of ``size`` genomes."""
        F = np.empty((size, len(self.objectives)), dtype=np.int64)
        for j, o in enumerate(self.objectives):
            F[:, j] = pop.values[o.internal_name]
        if self.constraints:
            G = np.empty((size, len(self.constraints)))
            for j, c in enumerate(self.constraints):
                G[:, j] = c.violation(pop)
        else:
            G = np.zeros((size, 0))
        return Evaluation(F, G, pop.values if metrics else {})

    def user_objectives(self, F: np.ndarray) -> np.ndarray:
        """Internal (pop, n_obj) values -> user units, column by column."""
        F = np.atleast_2d(F)
        return np.column_stack([obj.to_user(F[:, i]) for i, obj in enumerate(self.objectives)])

    def user_metrics(self, metrics: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The family's declared metrics (registry) in user units, keyed by column (``latency_ms``...)."""
        out = {}
        for metric in family_of(self).metrics:
            values = metrics.get(metric.key)
            if values is not None:
                out[metric.column(self.tables)] = metric.to_user(values, self.tables)
        return out

    def slack(self, G: np.ndarray) -> dict[str, float]:
        """One genome's constraint violations ``G`` (n_con,) as slack by constraint name (>= 0: met)."""
        return {c.name: float(-G[j]) for j, c in enumerate(self.constraints)}

    # ------------------------------------------------------------------ decoding
    @abstractmethod
    def decode(self, x: np.ndarray) -> DecodedMapping:
        """The mapping of one genome, with ``explain()``, ``assignment()`` and ``schedule``; a family checks the
        genome first (:meth:`checked_genomes`: :class:`GenomeError` when it does not fit)."""

    def assignment(self, genome: Sequence[int]) -> dict[str, str]:
        """Op name -> device name for one genome (default: from ``decode``; families give a cheaper one)."""
        return self.decode(np.asarray(genome, dtype=np.int64)).assignment()

    def describe(self, genome: Sequence[int]) -> str:
        """One line saying where the ops go: ``dev: a,b | dev2: c`` (or op counts past 12 ops)."""
        groups: dict[str, list[str]] = {}
        for op, dev in self.assignment(genome).items():
            groups.setdefault(dev, []).append(op)
        if self.tables.n_ops <= 12:
            return " | ".join(f"{dev}: {','.join(ops)}" for dev, ops in groups.items())
        return " ".join(f"{dev}:{len(ops)}" for dev, ops in groups.items())

    # ------------------------------------------------------------------ exact solving
    @classmethod
    def has_exact_formulation(cls) -> bool:
        """Whether the class writes an exact CP-SAT formulation: it overrides :meth:`cpsat` (what the
        family registry's ``Family.exact`` reads)."""
        return cls.cpsat is not MappingProblem.cpsat

    def exact_unsupported(self) -> str | None:
        """Why this problem has no exact formulation (None when ``cpsat()`` works)."""
        if not self.has_exact_formulation():
            return f"the {self.family} family has no exact formulation"
        return None

    def exact_model_too_large(self) -> str | None:
        """Why :meth:`cpsat` would refuse to build the model as too large
        (:class:`~dse.mapping.cpsat_common.ModelTooLarge`'s reason), counted from the tables without building
        anything or importing OR-Tools; None when it may build it (this default: no size limit)."""
        return None

    def cpsat(self, include: Sequence[str] | None = None, seeds: Sequence[np.ndarray] = (),
              deadline: float | None = None) -> Formulation:
        """The exact CP-SAT formulation; raises ``NotImplementedError`` where none exists.

        ``include`` names the constraints to model (default: all); ``seeds``
        are known genomes a family may use for a hint and a horizon;
        ``deadline`` (a ``time.monotonic()`` instant) bounds the build, past it
        :class:`~dse.mapping.cpsat_common.ModelBuildTimeout` is raised.
        """
        raise NotImplementedError(self.exact_unsupported() or "no exact formulation")

    # ------------------------------------------------------------------ objective bounds
    def objective_lower_bounds(self, at_most: Sequence[int | None] | None = None) -> tuple[float, ...]:
        """Per objective, in internal units (minimized), a lower bound that every feasible mapping meets whose
        internal objective values are at most ``at_most`` (one entry per objective, None: no limit; default:
        no limits); for a maximized objective it is the matching upper bound (a least period is a greatest
        throughput). A bound above its limit proves that no feasible mapping meets the limits (a family
        then returns ``inf`` throughout). ``-inf`` where nothing is known: this default, which leaves the
        bounds to the exact model's own (its objective variables' domains, which the solvers add)."""
        return tuple(-math.inf for _ in self.objectives)

    # ------------------------------------------------------------------ references and checks
    def baselines(self) -> dict[str, np.ndarray]:
        """Named reference genomes (single devices, static partitions)."""
        return {}

    def baseline_classes(self) -> dict[str, str]:
        """Per name of :meth:`baselines`, its class: baselines of one class whose figures come out identical
        are reported as one (:func:`dse.solvers.common.merge_alike`: the single-device baselines of the
        devices of one kind, say). This default: each baseline a class of its own."""
        return {name: name for name in self.baselines()}

    def check_feasible(self) -> None:
        """Raise :class:`~dse.errors.InfeasibleError` when a constraint can never be met, constraint by constraint."""
        for c in self.constraints:
            c.check(self.tables)

    def quantity_bounds(self) -> dict[str, float]:
        """Upper bounds over every mapping (each op on a device that can run it) of the quantities the
        constraints bound, in internal units by name (``latency``, ``makespan``, ``power_mw``): cheap figures
        from the tables, never a search. Families override; the default knows none."""
        return {}

    def notes(self) -> list[str]:
        """One line per constraint that binds no mapping, so that it cannot have shaped a front (``constraint
        deadline_ms = 400 binds no mapping (every mapping's latency is at most 12.3 ms)``); ``dse validate``
        and ``dse solve`` print them. From the family's :meth:`quantity_bounds` and the tables, never a
        search: a constraint not named may still bind nothing."""
        bounds = self.quantity_bounds()
        return [note for c in self.constraints if (note := c.binds_nothing(self.tables, bounds)) is not None]

    def diagnose(self, time_limit: float = 10.0, candidates: Sequence[np.ndarray] = (), proven: bool = False) -> str:
        """One line on why no feasible mapping was found: the line ``dse solve`` exits 3 with, and the note
        ``dse.solve`` adds to a front without a feasible point (``front.notes``). Families refine it.

        Raises :class:`~dse.errors.InfeasibleError` for what a static check
        proves. Otherwise, among ``candidates`` (e.g. the heuristics' genomes),
        names the constraint that the closest one still violates, and by how much.
        ``proven``: an exact solver proved that no feasible mapping exists; ``time_limit``: seconds for
        each search a family's diagnosis runs (the pipeline family's CP-SAT checks).

        Example: ``problem.diagnose()`` -> ``"power cap 5 W cannot be met: the lowest average power of any
        mapping meeting the other constraints is 84.67 W"``.
        """
        self.check_feasible()
        unproven = ("no mapping satisfies the constraints (proven by the exact solver)" if proven
                    else "no feasible mapping was found within the time limit (infeasibility not proven)")
        if not len(candidates) or not self.constraints:
            return unproven
        G = self.evaluate(np.asarray(candidates, dtype=np.int64)).G
        closest = int(np.argmin(np.maximum(G, 0).sum(axis=1)))
        worst = int(np.argmax(G[closest]))
        if G[closest, worst] <= 0:
            return unproven
        c = self.constraints[worst]
        return (f"{unproven}; the closest of {len(G)} heuristic mappings violates {c.name} "
                f"({c.description}) by {G[closest, worst]:.3g} {c.unit}")
