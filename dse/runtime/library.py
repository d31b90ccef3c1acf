"""The offline configuration library: Pareto-optimal mappings per input regime, stored as JSON.

Offline, the distinct inputs of a stream are grouped into regimes (clusters of
feature vectors, :meth:`InputFeatures.vector`); for each regime's
representative input (the member nearest the cluster centre) the exact
(CP-SAT, or exhaustive enumeration on tiny spaces) and the NSGA-II Pareto sets
are solved and kept as :class:`Configuration` rows. Online, the dynamic policy
looks up the regime nearest to an input's features (:meth:`ConfigLibrary.nearest`)
and selects among its configurations. A library reloads from its JSON file
without re-solving (:func:`load_library`).

Example::

    library = build_library(features, problem_for, n_regimes=4, seed=0)
    save_library(library, "out/library.json")
    load_library("out/library.json").nearest(features[0]).configs[0].genome
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.errors import SpecError
from dse.inputs.datasets import InputFeatures
from dse.util.files import replace_atomically
from dse.util.interrupt import stop_point
from dse.util.progress import Progress, silent

if TYPE_CHECKING:
    from dse.mapping.pipeline import PipelineProblem

#: Version of the library file format.
LIBRARY_FORMAT = 1
#: Exact solvers a library may be built with.
EXACT_SOLVERS = ("cpsat", "exhaustive")


@dataclass(frozen=True)
class Configuration:
    """One stored mapping and its figures on the input it was solved for (the regime's representative,
    or a member of the regime for a library built with ``members``)."""

    genome: tuple[int, ...]
    throughput: float
    energy_j: float
    latency_s: float
    solver: str
    proven: bool


@dataclass(frozen=True)
class Regime:
    """A cluster of inputs: its name, representative input, centre (feature vector) and configurations."""

    name: str
    representative: InputFeatures
    centre: tuple[float, ...]
    members: tuple[str, ...]
    configs: tuple[Configuration, ...]


@dataclass(frozen=True)
class ConfigLibrary:
    """Regimes with their Pareto sets; ``context`` records what they were solved for (workload,
    platform, limits) so a reload can be checked against the scenario."""

    regimes: tuple[Regime, ...]
    context: Mapping[str, Any]
    scale: tuple[float, ...]

    def nearest(self, features: InputFeatures) -> Regime:
        """The regime whose centre is nearest to ``features`` (distance over scaled feature vectors)."""
        v = features.vector() / np.asarray(self.scale)
        centres = np.asarray([r.centre for r in self.regimes]) / np.asarray(self.scale)
        return self.regimes[int(np.argmin(((centres - v) ** 2).sum(axis=1)))]

    def genomes(self) -> np.ndarray:
        """Every configuration's genome, regime by regime."""
        return np.asarray([c.genome for r in self.regimes for c in r.configs], dtype=np.int64)


def cluster_inputs(inputs: Mapping[str, InputFeatures], n_regimes: int, seed: int = 0
                   ) -> list[tuple[str, list[str], np.ndarray]]:
    """Group inputs (by key) into at most ``n_regimes`` clusters: ``(representative key, member keys, centre)``.

    With no more distinct inputs than ``n_regimes`` each input is its own regime; otherwise
    k-means (``scipy.cluster.vq.kmeans2``, seeded) on the feature vectors scaled by their spread.
    """
    keys = list(inputs)
    if not keys:
        raise SpecError("scenario", "stream", [], "a stream needs at least one input")
    X = np.asarray([inputs[k].vector() for k in keys])
    if len(keys) <= n_regimes:
        return [(k, [k], X[i]) for i, k in enumerate(keys)]
    from scipy.cluster.vq import kmeans2  # type: ignore[import-untyped, unused-ignore]

    scale = _scale(X)
    centres, labels = kmeans2(X / scale, n_regimes, seed=np.random.default_rng(seed), minit="++")
    out = []
    for c in range(len(centres)):
        members = [k for k, lab in zip(keys, labels, strict=True) if lab == c]
        if not members:
            continue
        idx = [keys.index(k) for k in members]
        d = (((X[idx] / scale) - centres[c]) ** 2).sum(axis=1)
        out.append((members[int(np.argmin(d))], members, centres[c] * scale))
    return out


def _scale(X: np.ndarray) -> np.ndarray:
    spread = X.std(axis=0) if len(X) > 1 else np.zeros(X.shape[1])
    return np.where(spread > 1e-9, spread, 1.0)


def configurations(problem: PipelineProblem, exact: str = "cpsat", nsga2: bool = True, time_limit: float = 10.0,
                   seed: int = 0) -> list[Configuration]:
    """The exact and (optionally) NSGA-II Pareto sets of ``problem`` as configurations (same genome kept once,
    the exact solver's label first). ``time_limit``: seconds for CP-SAT and for NSGA-II each (exhaustive
    search has none); the solvers run in contexts derived from one (a signal stops them all). An
    infeasible problem gives an empty list."""
    from dse.solvers.context import solve_context
    from dse.solvers.cpsat import CpsatOptions, solve_cpsat
    from dse.solvers.exhaustive import ExhaustiveOptions, solve_exhaustive
    from dse.solvers.nsga2 import Nsga2Options, solve_nsga2

    if exact not in EXACT_SOLVERS:
        raise SpecError("scenario", "library.exact", exact, f"must be one of {', '.join(EXACT_SOLVERS)}")
    with solve_context(seed=seed) as run:  # no deadline of its own: each solver has its time limit
        fronts = [solve_cpsat(problem, run.derived(time_limit), CpsatOptions(workers=2)) if exact == "cpsat"
                  else solve_exhaustive(problem, run.derived(), ExhaustiveOptions())]
        stop_point()  # a solve cut short by a signal is never stored as the regime's front
        if nsga2:
            fronts.append(solve_nsga2(problem, run.derived(time_limit), Nsga2Options(pop_size=40, patience=20)))
            stop_point()
    sec = problem.tables.seconds_per_time_unit
    seen: dict[tuple[int, ...], Configuration] = {}
    for front in fronts:
        if not len(front):
            continue
        genomes = np.asarray([p.genome for p in front.points], dtype=np.int64)
        ev = problem.evaluate(genomes, metrics=True)
        for k, p in enumerate(front.points):
            genome = tuple(p.genome)
            if genome in seen or not ev.feasible[k]:
                continue
            seen[genome] = Configuration(
                genome, 1.0 / max(float(ev.metrics["period"][k]) * sec, 1e-300),
                float(ev.metrics["energy"][k]) * 1e-12, float(ev.metrics["latency"][k]) * sec, front.solver,
                bool(p.proven))
    return list(seen.values())


def build_library(inputs: Mapping[str, InputFeatures], problem_for: Callable[[InputFeatures], PipelineProblem],
                  n_regimes: int = 4, *, exact: str = "cpsat", nsga2: bool = True, time_limit: float = 10.0,
                  seed: int = 0, context: Mapping[str, Any] | None = None,
                  progress: Progress | None = None,
                  solve: Callable[[str, PipelineProblem], list[Configuration]] | None = None,
                  members: bool = False) -> ConfigLibrary:
    """Cluster ``inputs`` into regimes and solve each representative's Pareto sets (``members``: every
    member's, a regime then holding their union, each genome once, in member order).

    ``problem_for(features)`` builds the pipeline problem of one input; ``solve(key, problem)``, when
    given, replaces :func:`configurations` (e.g. to reuse fronts solved before). Only the inputs given
    enter the library: an input held out of ``inputs`` is never clustered, costed or solved. Raises :class:`SpecError`
    for an empty input set or an unknown exact solver, and :class:`~dse.util.interrupt.Interrupted` on
    SIGINT/SIGTERM with the regimes finished so far as a library (``partial``).
    """
    progress = progress or silent()
    groups = cluster_inputs(inputs, n_regimes, seed)
    regimes: list[Regime] = []
    X = np.asarray([inputs[k].vector() for k in inputs])
    scale = tuple(float(v) for v in _scale(X))

    def so_far() -> ConfigLibrary:
        return ConfigLibrary(tuple(regimes), dict(context or {}), scale)

    for k, (rep, group, centre) in enumerate(groups):
        progress.update(f"library: regime {k + 1}/{len(groups)} ({rep})", force=True)
        configs: dict[tuple[int, ...], Configuration] = {}
        for key in [rep] + [m for m in group if m != rep] if members else [rep]:
            try:
                problem = problem_for(inputs[key])
                solved = (solve(key, problem) if solve is not None
                          else configurations(problem, exact, nsga2, time_limit, seed))
            finally:
                stop_point(so_far)
            for c in solved:
                configs.setdefault(c.genome, c)
        regimes.append(Regime(f"r{k}", inputs[rep], tuple(float(v) for v in centre), tuple(group),
                              tuple(configs.values())))
    return so_far()


def library_to_dict(library: ConfigLibrary, partial: bool = False) -> dict[str, Any]:
    """A JSON-ready mapping of ``library`` (``partial``: it holds only the regimes solved before a stop)."""
    return {"format": LIBRARY_FORMAT, "partial": partial, "context": dict(library.context),
            "scale": list(library.scale),
            "regimes": [{"name": r.name, "representative": asdict(r.representative), "centre": list(r.centre),
                         "members": list(r.members), "configs": [asdict(c) for c in r.configs]}
                        for r in library.regimes]}


def save_library(library: ConfigLibrary, path: str | Path, partial: bool = False) -> None:
    """Write ``library`` as JSON to ``path`` (replaced atomically); ``partial`` marks a library cut short."""
    text = json.dumps(library_to_dict(library, partial), indent=1)
    replace_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def load_library(path: str | Path, context: Mapping[str, Any] | None = None) -> ConfigLibrary:
    """Read a library written by :func:`save_library`, without re-solving.

    Raises :class:`SpecError` naming the file and the field for a malformed file, or for a library
    solved for another ``context`` (workload, platform, limits) than the one given.
    """
    source = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(source, "<root>", None, f"cannot read a configuration library: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != LIBRARY_FORMAT:
        raise SpecError(source, "format", data.get("format") if isinstance(data, dict) else None,
                        f"not a configuration library of format {LIBRARY_FORMAT}")
    if data.get("partial"):
        raise SpecError(source, "partial", True, "the library was cut short by a stop while it was built (it "
                        "lacks regimes); delete it or point library.file elsewhere to build it again")
    if not isinstance(data.get("context"), dict):
        raise SpecError(source, "context", None, "malformed configuration library: no context mapping")
    if context is not None:
        for key, value in context.items():
            if json.loads(json.dumps(value)) != data["context"].get(key):
                raise SpecError(source, f"context.{key}", data["context"].get(key),
                                f"the library was solved for another {key} ({value!r} expected)")
    for i, r in enumerate(data.get("regimes") or []):
        for j, c in enumerate(r.get("configs") or [] if isinstance(r, dict) else []):
            genome = c.get("genome") if isinstance(c, dict) else None
            if not isinstance(genome, list) or not all(isinstance(g, int) and not isinstance(g, bool)
                                                       and 0 <= g < 2**31 for g in genome):
                raise SpecError(source, f"regimes[{i}].configs[{j}].genome", genome,
                                "must be a list of integers in [0, 2^31)")
    try:
        regimes = tuple(
            Regime(r["name"], InputFeatures(**r["representative"]), tuple(r["centre"]), tuple(r["members"]),
                   tuple(Configuration(tuple(c["genome"]), c["throughput"], c["energy_j"], c["latency_s"],
                                       c["solver"], c["proven"]) for c in r["configs"]))
            for r in data["regimes"])
        return ConfigLibrary(regimes, data["context"], tuple(data["scale"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(source, "regimes", None, f"malformed configuration library: {exc}") from None
