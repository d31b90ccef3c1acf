"""The family registry: everything the engine knows about a problem family, in one entry.

A family declares itself in its own module with :func:`register_family`;
spec loading, Pareto tables, CSV columns, plots and the CLI read the entry,
so adding a family never edits a chain of ``if family == ...``.

Built-in families are the modules in :data:`BUILTIN_FAMILY_MODULES`; other packages
can add theirs through the ``dse.families`` entry-point group (the entry point, named
after the family, names a module that registers on import). A lookup by name imports
only that family's modules and the entry points of that name (a dag solve imports no
other family: about 0.1 s of a one-off command); a name not found that way, and
:func:`families`, import every family.

Example::

    from dse.mapping.registry import family
    family("pipeline").default_objectives   # ('throughput', 'energy')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from dse.cost import CostTables
from dse.util.plugins import load_plugins_once

if TYPE_CHECKING:
    from dse.mapping.base import MappingProblem

#: Modules that register the built-in families, by family name (a new family adds its module here, one line).
BUILTIN_FAMILY_MODULES = {
    "pipeline": "dse.mapping.pipeline.problem",
    "dag": "dse.mapping.dag.problem",
    "split": "dse.mapping.split.problem",
    "multimodel": "dse.mapping.multimodel.problem",
    "serving": "dse.mapping.serving.problem",
}
#: Modules that give built-in families their run-time scenario (:func:`register_scenario`), by family name:
#: simulators that use a family's solutions live above the families, so they add themselves to its entry.
BUILTIN_SCENARIO_MODULES = {
    "pipeline": "dse.runtime.stream",
    "multimodel": "dse.runtime.xr_scenario",
    "serving": "dse.runtime.serving_scenario",
}


class NoOptions(BaseModel):
    """Options model of a family that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Metric:
    """A per-mapping figure a family reports besides its objectives.

    ``key`` names the array in ``Evaluation.metrics``; the user-facing column
    is ``NAME_UNIT`` (``latency_ms``), where ``unit`` may contain
    ``{time_unit}`` (the tables' time unit). ``factor(tables)`` converts the
    internal value to ``unit``. ``table``: also shown in the CLI's front table.
    """

    key: str
    name: str
    unit: str
    factor: Callable[[CostTables], float] = lambda tables: 1.0
    table: bool = False
    description: str = ""

    def column(self, tables: CostTables) -> str:
        unit = self.unit.format(time_unit=tables.time_unit)
        return f"{self.name}_{unit}".replace(" ", "_")

    def to_user(self, values: np.ndarray, tables: CostTables) -> np.ndarray:
        return np.asarray(values, dtype=float) * self.factor(tables)


@dataclass(frozen=True)
class ProblemInputs:
    """What a family's factory receives: tables, objective names, constraint limits in internal units, options."""

    tables: CostTables
    objectives: tuple[str, ...]
    options: BaseModel
    name: str
    deadline: int | None = None
    power_cap_mw: int | None = None
    memory: bool = True


@dataclass(frozen=True)
class Family:
    """One problem family.

    * ``name``, ``problem_class``, ``description``;
    * ``objectives``: the objective names it accepts, ``default_objectives``
      those used when a spec gives none;
    * ``build(inputs) -> MappingProblem``: the factory;
    * ``options``: pydantic model of the spec's ``options`` mapping
      (``extra="forbid"``: an unknown key is an error naming ``options.KEY``);
      ``platform_options``: option defaults implied by a platform file format
      (the TF paper's device files bring its transfer rules);
    * ``cost_model(options) -> (name, params)``: the default cost model;
    * ``limits``: the spec constraints it accepts (``deadline``, ``power``,
      ``memory``);
    * ``metrics``: figures reported besides the objectives (CSV columns);
    * ``examples(seed)``: a small seeded instance for the family contract checks (:mod:`dse.testing`);
    * capabilities: ``gantt`` (decoded mappings carry a schedule); ``compiled_kernels`` (its evaluation and
      heuristics run numba kernels, :mod:`dse.util.jit`: a run on a Dask cluster loads them into every
      worker before its tasks, by evaluating ``examples(0)`` there); ``exact`` (a CP-SAT formulation) is
      read off ``problem_class``: whether it overrides ``cpsat`` (nothing to set).

    Optional hooks for families whose inputs are not a :class:`~dse.model.platform.Platform`
    and a :class:`~dse.model.workload.Workload` costed by the roofline or table model:

    * ``resolve_platform(ref, source, base)`` / ``resolve_workload(ref, source, base)``:
      read the spec's ``platform`` / ``workload`` field (a catalog name, a path
      relative to folder ``base``, or an inline mapping) into the family's own
      objects; raise :class:`~dse.errors.SpecError` naming ``source`` and the field.
      The objects need a ``name`` attribute.
    * ``cost_models``: extra cost models by name (``factory(**params) -> CostModel``),
      selectable with the spec's ``cost_model`` field.
    * ``scenario``: pydantic model of the spec's ``scenario`` mapping (streams of
      inputs, frame timelines); a spec with a ``scenario`` for a family without
      one is an error.
    * ``simulate(spec, out, *, seed, quiet) -> pandas.DataFrame``: ``dse simulate``;
      runs the spec's scenario, writes its files into folder ``out`` (when not
      ``None``) and returns the summary, one row per policy or scheduler.
    """

    name: str
    problem_class: type[MappingProblem]
    build: Callable[[ProblemInputs], MappingProblem]
    objectives: tuple[str, ...]
    default_objectives: tuple[str, ...]
    examples: Callable[[int], MappingProblem]
    options: type[BaseModel] = NoOptions
    platform_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    cost_model: Callable[[Any], tuple[str, dict[str, Any]]] = lambda options: ("table", {})
    limits: frozenset[str] = frozenset({"memory"})
    metrics: tuple[Metric, ...] = ()
    gantt: bool = False
    compiled_kernels: bool = False
    description: str = ""
    resolve_platform: Callable[[Any, str, Any], Any] | None = None
    resolve_workload: Callable[[Any, str, Any], Any] | None = None
    cost_models: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    scenario: type[BaseModel] | None = None
    simulate: Callable[..., Any] | None = None

    @property
    def exact(self) -> bool:
        """Whether the family has an exact CP-SAT formulation: its problem class overrides
        :meth:`~dse.mapping.base.MappingProblem.cpsat` (so ``exact_unsupported()`` is None)."""
        return self.problem_class.has_exact_formulation()


_FAMILIES: dict[str, Family] = {}
_SCENARIOS: dict[str, tuple[type[BaseModel], Callable[..., Any]]] = {}


def register_family(entry: Family) -> Family:
    """Add ``entry`` to the registry (re-registering a name replaces it); returns it, with the run-time
    scenario registered for its name (:func:`register_scenario`) when it declares none itself."""
    hook = _SCENARIOS.get(entry.name)
    if hook is not None and entry.scenario is None and entry.simulate is None:
        entry = replace(entry, scenario=hook[0], simulate=hook[1])
    _FAMILIES[entry.name] = entry
    return entry


def register_scenario(name: str, scenario: type[BaseModel], simulate: Callable[..., Any]) -> None:
    """Give family ``name`` its run-time scenario: ``scenario``, the pydantic model of a spec's
    ``scenario`` mapping, and ``simulate``, what ``dse simulate`` runs (see :class:`Family`).

    For simulators that sit above the families because they use a family's solutions (DyPe's
    input streams select among a pipeline's Pareto configurations); either registration may
    come first.
    """
    _SCENARIOS[name] = (scenario, simulate)
    entry = _FAMILIES.get(name)
    if entry is not None:
        _FAMILIES[name] = replace(entry, scenario=scenario, simulate=simulate)


def _modules(name: str) -> tuple[str, ...]:
    """The built-in modules that register family ``name`` and its scenario (none for another name)."""
    return tuple(m[name] for m in (BUILTIN_FAMILY_MODULES, BUILTIN_SCENARIO_MODULES) if name in m)


def _load(name: str | None = None) -> None:
    """Import the modules that register family ``name`` and the entry points called ``name``; with None,
    every built-in family's modules and every entry point of ``dse.families``."""
    if name is not None:
        load_plugins_once("dse.families", _modules(name), name=name)
    else:
        load_plugins_once("dse.families", [m for family in BUILTIN_FAMILY_MODULES for m in _modules(family)])


def families() -> dict[str, Family]:
    """Every registered family by name (built-in modules and entry points loaded first)."""
    _load()
    return dict(sorted(_FAMILIES.items()))


def family(name: str) -> Family:
    """The entry of family ``name``; raises ``KeyError`` naming the known ones."""
    _load(name)
    if name not in _FAMILIES:
        _load()  # an entry point named otherwise may register it
    try:
        return _FAMILIES[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; known families: {', '.join(sorted(_FAMILIES))}") from None


def family_of(problem: MappingProblem) -> Family:
    """The entry of ``problem``'s family (``problem.family``)."""
    return family(problem.family)
