"""The solver registry and the seed collection every solver shares.

* A **solver** registers a :class:`Solver`: its name; ``run(problem, ctx, options) -> ParetoSet`` (one
  signature for all: ``ctx`` the :class:`~dse.solvers.context.SolveContext` of the run, with its seed,
  deadline, stop token, progress and the Python objects the solver reads, ``options`` an instance of
  its options model); ``options``, a :class:`SolverOptions` model of the settings a spec
  (``solver.options``) or ``dse.solve(..., **options)`` may give, with their defaults and ranges (the
  only place a default is written); ``inputs``, which of the context's Python objects it reads
  (``resume``, ``seeds``, ``callback``); ``supports(problem)`` (None when it can solve the problem,
  else the reason); whether ``--solver all`` includes it. :func:`check_options` validates the options
  before the solver starts.
* A family's **heuristics** register a :class:`HeuristicProvider`: the names
  it knows, how to run one (``heuristic:NAME`` as a solver), and the seed
  genomes it hands to the search solvers.
* :func:`collect_seeds` gathers a problem's seeds once (the family's
  heuristics, then its baselines) and caches them while the problem lives,
  so CP-SAT (hints, horizon) and NSGA-II (initial population) share one run.

Built-in entries come from :data:`BUILTIN_SOLVER_MODULES`; other packages add
theirs through the ``dse.solvers`` entry-point group.

Example (a solver of one's own)::

    class GreedyOptions(SolverOptions):
        tries: int = Field(default=10, ge=1, description="random starts")

    def solve_greedy(problem: MappingProblem, ctx: SolveContext, options: GreedyOptions) -> ParetoSet:
        ...  # stop when ctx.stop_status() says so, with that status

    register_solver(Solver("greedy", solve_greedy, options=GreedyOptions, description="..."))
"""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from dse.errors import DseError, SpecError
from dse.mapping.base import MappingProblem
from dse.pareto import ParetoSet
from dse.solvers.context import INPUTS, SolveContext
from dse.util.interrupt import cut_status
from dse.util.plugins import load_plugins_once
from dse.util.suggest import did_you_mean

#: Modules that register the built-in solvers and heuristic providers.
BUILTIN_SOLVER_MODULES = (
    "dse.solvers.cpsat",
    "dse.solvers.nsga2",
    "dse.solvers.exhaustive",
    "dse.solvers.memetic",
    "dse.solvers.lns",
    "dse.solvers.heuristic",
    "dse.heuristics",
)


class UnknownSolverError(DseError, ValueError):
    """A solver name that no registered solver answers to; the message lists the known ones."""

    exit_code = 2


class SolverNotApplicableError(DseError, NotImplementedError):
    """A solver named for a problem it cannot take (its ``supports`` refuses it); the message says why and
    which solvers can. A ``NotImplementedError``, as :func:`dse.solve` raises for such a solver."""

    exit_code = 2


class SolverOptions(BaseModel):
    """Base of a solver's options model: strict types (``2.5`` is no integer, ``"4"`` no number), finite
    numbers, no unknown keys. A solver subclasses it with one field per setting, its default and its
    range; a field without a default is one the solver's name sets (``heuristic:NAME``), never a spec's
    setting."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


OptionsT = TypeVar("OptionsT", bound=SolverOptions)


@dataclass(frozen=True)
class Solver(Generic[OptionsT]):
    """One solver: ``run(problem, ctx, options) -> ParetoSet``; ``options`` the model of its settings
    (:class:`SolverOptions`); ``inputs`` the context's Python objects it reads (names from
    :data:`~dse.solvers.context.INPUTS`)."""

    name: str
    run: Callable[[MappingProblem, SolveContext, OptionsT], ParetoSet]
    options: type[OptionsT]
    supports: Callable[[MappingProblem], str | None] = lambda problem: None
    inputs: frozenset[str] = frozenset()
    exact: bool = False
    in_all: bool = False
    description: str = ""
    #: Third-party modules ``run`` imports on first use, imported by :meth:`preload` before its clock starts.
    imports: tuple[str, ...] = ()
    #: Whether ``run`` will use :attr:`imports` on a problem (False: :meth:`preload` leaves them unimported,
    #: e.g. CP-SAT on a problem whose model is too large to build returns its seeds without OR-Tools).
    needs_imports: Callable[[MappingProblem], bool] = lambda problem: True

    def __post_init__(self) -> None:
        unknown = sorted(set(self.inputs) - set(INPUTS))
        if unknown:
            raise ValueError(f"solver {self.name!r} reads {unknown}: a solver's inputs are among {', '.join(INPUTS)}")


    def preload(self, problem: MappingProblem | None = None) -> None:
        """Import :attr:`imports` (heavy modules kept out of ``import dse``), so that importing them costs
        no part of a time limit; none when ``run`` will not use them on ``problem`` (:attr:`needs_imports`)."""
        if problem is not None and not self.needs_imports(problem):
            return
        for module in self.imports:
            importlib.import_module(module)


def _named(entry: Solver[Any]) -> list[str]:
    """The fields of ``entry``'s options that its name sets (no default), e.g. the heuristic's ``name``."""
    return [key for key, field in entry.options.model_fields.items() if field.is_required()]


def check_settings(entry: Solver[Any], settings: Mapping[str, Any], source: str = "dse.solve",
                   prefix: str = "") -> None:
    """Check ``settings`` (a spec's ``solver.options.NAME`` mapping) against ``entry.options``; a field the
    solver's name sets is no setting.

    Raises :class:`SpecError` naming ``source``, the option (after ``prefix``, e.g.
    ``solver.options.nsga2.``) and its value: out of range, of the wrong type, or unknown to the solver
    (the message lists its settings)."""
    named = _named(entry)
    fields = [key for key in entry.options.model_fields if key not in named]
    for key, value in settings.items():
        if key not in fields:
            known = f"{entry.name} options are {', '.join(fields)}" if fields else f"{entry.name} takes no options"
            reason = "set by the solver's name" if key in named else f"unknown option{did_you_mean(key, fields)}"
            raise SpecError(source, f"{prefix}{key}", value, f"{reason}; {known}")
    try:
        entry.options.model_validate(dict(settings))
    except ValidationError as exc:
        for err in exc.errors():
            if err.get("type") == "missing":  # a field the name sets: not the settings' to give
                continue
            key = str(err["loc"][0]) if err.get("loc") else "<options>"
            raise SpecError(source, f"{prefix}{key}", settings.get(key), err.get("msg", "invalid value")) from None


def check_options(entry: Solver[OptionsT], options: Mapping[str, Any], source: str = "dse.solve",
                  prefix: str = "", fixed: Mapping[str, Any] | None = None) -> OptionsT:
    """``entry``'s options model holding ``options`` (checked by :func:`check_settings`) and ``fixed``, what
    the solver's name sets (``{"name": "heft"}`` for ``heuristic:heft``, see :func:`lookup`); every
    other field at its default.

    Raises :class:`SpecError` as :func:`check_settings` does."""
    check_settings(entry, options, source, prefix)
    try:
        return entry.options.model_validate({**options, **(fixed or {})})
    except ValidationError as exc:
        err = exc.errors()[0]
        key = str(err["loc"][0]) if err.get("loc") else "<options>"
        raise SpecError(source, f"{prefix}{key}", options.get(key), err.get("msg", "invalid value")) from None


@dataclass(frozen=True)
class HeuristicProvider:
    """A family's heuristics: ``names()``, ``run(problem, name) -> (genome, message)``, ``seeds(problem)``."""

    family: str
    names: Callable[[], Sequence[str]]
    run: Callable[[MappingProblem, str], tuple[np.ndarray, str]]
    seeds: Callable[[MappingProblem], list[np.ndarray]]


_SOLVERS: dict[str, Solver[Any]] = {}
_HEURISTICS: dict[str, HeuristicProvider] = {}
_SEEDS: weakref.WeakKeyDictionary[MappingProblem, list[np.ndarray]] = weakref.WeakKeyDictionary()


def register_solver(entry: Solver[OptionsT]) -> Solver[OptionsT]:
    """Add a solver (re-registering a name replaces it); returns it."""
    _SOLVERS[entry.name] = entry
    return entry


def register_heuristics(provider: HeuristicProvider) -> HeuristicProvider:
    """Add the heuristics of ``provider.family``; returns the provider."""
    _HEURISTICS[provider.family] = provider
    return provider


def _load() -> None:
    load_plugins_once("dse.solvers", BUILTIN_SOLVER_MODULES)


def solvers() -> dict[str, Solver[Any]]:
    """Every registered solver by name."""
    _load()
    return dict(_SOLVERS)


def heuristics_for(problem: MappingProblem) -> HeuristicProvider | None:
    """The heuristic provider of ``problem``'s family, if any."""
    _load()
    return _HEURISTICS.get(problem.family)


def _providers(family: str | None) -> list[HeuristicProvider]:
    """The heuristic provider of family ``family``, or every family's when ``family`` is None."""
    _load()
    found = [_HEURISTICS.get(family)] if family is not None else list(_HEURISTICS.values())
    return [p for p in found if p is not None]


def refusals(problem: MappingProblem) -> dict[str, str]:
    """The solvers (by the names a user types; ``heuristic`` stands for ``heuristic:NAME``) whose
    ``supports`` refuses ``problem``, each with its reason."""
    _load()
    reasons = {name: entry.supports(problem) for name, entry in _SOLVERS.items()}
    return {name: reason for name, reason in reasons.items() if reason is not None}


def solver_names(problem: MappingProblem | None = None) -> tuple[list[str], list[str]]:
    """The solver names a user may type, in alphabetical order with ``all`` last, that take ``problem`` (all
    of them when None), and those that do not (:func:`refusals` says why); ``heuristic`` is left out (it is ``heuristic:NAME``)."""
    refused = refusals(problem) if problem is not None else {}
    names = sorted(n for n in _SOLVERS if n != "heuristic")  # not registration order: that follows imports
    return [n for n in names if n not in refused] + ["all"], [n for n in names if n in refused]


def _known(problem: MappingProblem | None, heur: Sequence[str], here: str = "") -> str:
    """``known solvers[ for this problem]: a, b, all, heuristic:NAME with NAME one of ...[ (x, y do not
    apply to it)]``: what the messages about a solver name list."""
    applies, refused = solver_names(problem)
    tail = f", heuristic:NAME with NAME one of {', '.join(heur)}" if heur else ""
    where = here or (" for this problem" if problem is not None else "")
    return f"known solvers{where}: {', '.join(applies)}{tail}{not_applying(refused)}"


def not_applying(refused: Sequence[str]) -> str:
    """`` (a and b do not apply to it)`` for the solver names ``refused`` ('' when none)."""
    if not refused:
        return ""
    names = " and ".join([", ".join(refused[:-1]), refused[-1]] if len(refused) > 1 else refused)
    return f" ({names} {'does' if len(refused) == 1 else 'do'} not apply to it)"


def _unknown(name: str, family: str | None, problem: MappingProblem | None = None) -> UnknownSolverError:
    plain = [n for n in _SOLVERS if n != "heuristic"] + ["all"]
    heur = sorted({h for p in _providers(family) for h in p.names()})
    key = str(name).strip()
    wanted = key.split(":", 1)[1].strip().lower() if key.startswith("heuristic:") else None
    if wanted is not None and family is not None:  # a heuristic of another family: say so
        others = sorted(p.family for p in _providers(None) if wanted in p.names() and p.family != family)
        if others:
            return UnknownSolverError(f"solver {name!r} exists for the {' and '.join(others)} family, not for "
                                      f"{family}; {_known(problem, heur, ' here')}")
    hint = did_you_mean(key, [*plain, *(f"heuristic:{h}" for h in heur)])
    return UnknownSolverError(f"unknown solver {name!r}{hint}; {_known(problem, heur)}")


def _not_applicable(entry: Solver[Any], reason: str, problem: MappingProblem) -> SolverNotApplicableError:
    applies, _ = solver_names(problem)
    return SolverNotApplicableError(f"solver {entry.name!r} does not apply to this {problem.family} problem: "
                                    f"{reason}; solvers for it: {', '.join(applies)}")


def lookup(name: str, problem: MappingProblem | None = None, *,
           family: str | None = None) -> list[tuple[Solver[Any], dict[str, Any]]]:
    """The solvers (with their fixed options) that ``name`` stands for.

    ``all`` is every registered solver marked ``in_all`` that supports
    ``problem`` (every such solver when ``problem`` is None); ``heuristic:NAME``
    runs one heuristic of the problem's family (of ``family`` when given without a problem, as a spec
    is checked before its problem is built). Raises
    :class:`UnknownSolverError` (exit 2) listing the known names (with a problem: those that take it,
    and those that do not), and :class:`SolverNotApplicableError` (exit 2; a ``NotImplementedError``)
    when ``problem`` is given and the one solver named refuses it, with the reason and the solvers that
    take it.
    """
    _load()
    family = problem.family if problem is not None else family
    key = str(name).strip()
    if key == "all":
        return [(s, {}) for s in _SOLVERS.values()
                if s.in_all and (problem is None or s.supports(problem) is None)]
    if key.startswith("heuristic:") and "heuristic" in _SOLVERS:
        heuristic = key.split(":", 1)[1].strip().lower()
        if any(heuristic in p.names() for p in _providers(family)):
            return [(_SOLVERS["heuristic"], {"name": heuristic})]
        raise _unknown(name, family, problem)
    if key in _SOLVERS and key != "heuristic":
        entry = _SOLVERS[key]
        reason = entry.supports(problem) if problem is not None else None
        if reason is not None and problem is not None:
            raise _not_applicable(entry, reason, problem)
        return [(entry, {})]
    raise _unknown(name, family, problem)


def collect_seeds(problem: MappingProblem) -> list[np.ndarray]:
    """Seed genomes of ``problem``: its family's heuristics, then its baselines; computed once per problem.
    A stop request or the solver's time limit cuts the heuristics short (:func:`~dse.util.interrupt.cut_point`):
    the seeds found so far are returned and not kept for the next call."""
    try:
        cached = _SEEDS.get(problem)
    except TypeError:
        cached = None
    if cached is not None:
        return list(cached)
    provider = heuristics_for(problem)
    seeds = (provider.seeds(problem) if provider is not None else []) + list(problem.baselines().values())
    if cut_status() is not None:  # cut short: the next run, with its own limit, computes them all
        return seeds
    try:
        _SEEDS[problem] = seeds
    except TypeError:
        pass
    return list(seeds)


def best_seed(problem: MappingProblem, seeds: Sequence[np.ndarray]) -> np.ndarray | None:
    """The seed with the smallest first objective, feasible ones first (None without seeds)."""
    if not len(seeds):
        return None
    X = np.array(seeds, dtype=np.int64)
    ev = problem.evaluate(X)
    order = np.lexsort((ev.F[:, 0], ~ev.feasible))
    return X[order[0]]
