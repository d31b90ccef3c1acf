"""The selector and the run-time policies of a data-aware input stream (DyPe).

* :class:`Preference` and :class:`Limits`: what the user wants (maximum
  throughput, minimum energy, or a weight between them) under which limits
  (power cap, latency deadline, minimum throughput);
* :func:`select`: among candidate configurations with known figures, the best
  one that meets every limit; when none does, the one closest to meeting them,
  with a reason naming the limit and by how much;
* the five policies compared in one run, each a small object called at every
  input (:meth:`Policy.choose`): ``gpu_only``, ``static_average``,
  ``static_hand``, ``dynamic`` and ``oracle``.

A policy sees an :class:`InputView`: the input's analysed features, its
pipeline problem (cost tables from those features) and the configuration now
installed; it returns a :class:`Decision`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dse.errors import SpecError
from dse.mapping.pipeline import PipelineProblem

if TYPE_CHECKING:
    from dse.inputs import InputFeatures
    from dse.runtime.library import ConfigLibrary

#: The policy names, in the order outputs list them.
POLICIES = ("gpu_only", "static_average", "static_hand", "dynamic", "oracle")
#: Preferences a stream may ask for.
PREFERENCES = ("throughput", "energy", "weighted")
#: Relative tolerance under which two scores count as equal (an optimal choice).
SCORE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Preference:
    """``kind``: ``throughput`` (max items/s, then min energy), ``energy`` (min J/item, then max items/s)
    or ``weighted``: minimize ``weight * t_best / t + (1 - weight) * e / e_best`` over the candidates
    (``t`` throughput, ``e`` energy per item, bests over the feasible candidates)."""

    kind: str = "throughput"
    weight: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in PREFERENCES:
            raise SpecError("scenario", "preference", self.kind, f"must be one of {', '.join(PREFERENCES)}")
        if not 0 <= self.weight <= 1:
            raise SpecError("scenario", "weight", self.weight, "must be in [0, 1]")

    def scores(self, throughput: np.ndarray, energy_j: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """A score per candidate, lower is better (lexicographic ties broken by a tiny second term)."""
        t = np.asarray(throughput, dtype=float)
        e = np.asarray(energy_j, dtype=float)
        keep = np.ones(len(t), dtype=bool) if mask is None or not np.any(mask) else np.asarray(mask)
        t_best, e_best = max(t[keep].max(initial=0.0), 1e-300), max(e[keep].min(initial=np.inf), 1e-300)
        if self.kind == "throughput":
            return t_best / np.maximum(t, 1e-300) + 1e-12 * e / e_best
        if self.kind == "energy":
            return e / e_best + 1e-12 * t_best / np.maximum(t, 1e-300)
        return self.weight * t_best / np.maximum(t, 1e-300) + (1 - self.weight) * e / e_best


@dataclass(frozen=True)
class Limits:
    """User limits checked by the selector; ``None``: no limit."""

    power_w: float | None = None
    latency_s: float | None = None
    min_throughput: float | None = None

    def violations(self, throughput: np.ndarray, energy_j: np.ndarray, latency_s: np.ndarray) -> np.ndarray:
        """Per candidate and limit the relative violation (``(k, 3)``, > 0 where violated)."""
        t = np.asarray(throughput, dtype=float)
        power = np.asarray(energy_j, dtype=float) * t
        out = np.zeros((len(t), 3))
        if self.power_w is not None:
            out[:, 0] = power / self.power_w - 1
        if self.latency_s is not None:
            out[:, 1] = np.asarray(latency_s, dtype=float) / self.latency_s - 1
        if self.min_throughput is not None:
            out[:, 2] = self.min_throughput / np.maximum(t, 1e-300) - 1
        return out


@dataclass(frozen=True)
class Selection:
    """The selector's answer: ``index`` into the candidates, whether it meets every limit, and why."""

    index: int
    feasible: bool
    reason: str = ""


def select(throughput: Sequence[float] | np.ndarray, energy_j: Sequence[float] | np.ndarray,
           latency_s: Sequence[float] | np.ndarray, limits: Limits, preference: Preference,
           valid: Sequence[bool] | np.ndarray | None = None) -> Selection:
    """The best candidate under ``preference`` among those meeting ``limits`` (and ``valid``: e.g. memory).

    When none does, returns the candidate with the smallest total violation, ``feasible=False`` and a
    reason naming the limit and the best value reachable. Raises ``ValueError`` with no candidates.
    """
    t = np.asarray(throughput, dtype=float)
    e = np.asarray(energy_j, dtype=float)
    lat = np.asarray(latency_s, dtype=float)
    if len(t) == 0:
        raise ValueError("no candidate configurations to select from")
    ok = np.ones(len(t), dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    viol = limits.violations(t, e, lat)
    feasible = ok & (viol <= 1e-12).all(axis=1)
    if feasible.any():
        scores = np.where(feasible, preference.scores(t, e, feasible), np.inf)
        return Selection(int(np.argmin(scores)), True)
    total = np.where(ok, np.maximum(viol, 0).sum(axis=1), np.inf)
    if not ok.any():
        total = np.maximum(viol, 0).sum(axis=1) + 1.0
    best = int(np.argmin(total))
    worst = int(np.argmax(viol[best]))
    if not ok.any():
        reason = f"none of the {len(t)} configurations fits the devices' memory"
    elif worst == 0:
        reason = (f"no configuration meets power_w {limits.power_w:g} W: the lowest average power among "
                  f"{len(t)} is {float((e * t)[ok].min()):.4g} W")
    elif worst == 1 and limits.latency_s is not None:
        reason = (f"no configuration meets the deadline {limits.latency_s * 1e3:g} ms: the lowest latency among "
                  f"{len(t)} is {float(lat[ok].min()) * 1e3:.4g} ms")
    else:
        reason = (f"no configuration reaches {limits.min_throughput:g} items/s: the highest among {len(t)} is "
                  f"{float(t[ok].max()):.4g} items/s")
    return Selection(best, False, reason)


# --------------------------------------------------------------------------- policies


@dataclass(frozen=True)
class Figures:
    """Per-genome figures of one input: items/s, J/item, latency s, power W, and memory/allowed validity."""

    throughput: np.ndarray
    energy_j: np.ndarray
    latency_s: np.ndarray
    valid: np.ndarray

    @staticmethod
    def of(problem: PipelineProblem, genomes: np.ndarray) -> Figures:
        """Evaluate ``genomes`` on ``problem`` (period, energy, latency; memory and allowed devices as validity)."""
        t = problem.tables
        plain = PipelineProblem(t, ("throughput", "energy", "latency"), memory=problem.memory)
        ev = plain.evaluate(plain.repair(np.atleast_2d(genomes)))
        sec = t.seconds_per_time_unit
        period = np.maximum(ev.F[:, 0] * sec, 1e-300)
        valid = ev.feasible & (plain.repair(np.atleast_2d(genomes)) == np.atleast_2d(genomes)).all(axis=1)
        return Figures(1.0 / period, ev.F[:, 1] * 1e-12, ev.F[:, 2] * sec, valid)


@dataclass(frozen=True)
class InputView:
    """What a policy sees at one input: its index, key, features and costed problem, and the installed genome."""

    index: int
    key: str
    features: InputFeatures
    problem: PipelineProblem
    current: np.ndarray | None


@dataclass(frozen=True)
class Decision:
    """A policy's choice: the genome to run, its label, whether the selector found it feasible, and why."""

    genome: np.ndarray
    label: str
    feasible: bool = True
    reason: str = ""
    regime: str = ""


@dataclass
class Policy:
    """A named policy; ``choose(view)`` returns a :class:`Decision`. ``charges_switches``: whether the
    simulator charges the re-mapping cost when the genome changes (the oracle ignores it)."""

    name: str
    choose_fn: Callable[[InputView], Decision]
    charges_switches: bool = True
    state: dict[str, Any] = field(default_factory=dict)

    def choose(self, view: InputView) -> Decision:
        return self.choose_fn(view)


def gpu_genome(problem: PipelineProblem) -> np.ndarray:
    """Every op on the first GPU-like device (ops it cannot run on their fastest device), fastest levels."""
    t = problem.tables
    kinds = t.device_kinds or ()
    gpu = next((d for d, k in enumerate(kinds) if k in ("gpu", "tensorcore")), None)
    if gpu is None:
        raise SpecError("scenario", "policies", "gpu_only", f"platform has no GPU among {', '.join(t.device_names)}")
    return problem.repair(problem.with_levels(np.full(t.n_ops, gpu, dtype=np.int64))[None, :])[0]


def constant_policy(name: str, genome: np.ndarray, label: str) -> Policy:
    """A policy that always runs ``genome``."""
    fixed = np.asarray(genome, dtype=np.int64)
    return Policy(name, lambda view: Decision(fixed, label))


def selecting_policy(name: str, candidates: Callable[[InputView], tuple[np.ndarray, str]], limits: Limits,
                     preference: Preference, charges_switches: bool = True,
                     keep: Callable[[InputView, Figures, np.ndarray, Selection], bool] | None = None) -> Policy:
    """A policy that evaluates ``candidates(view)`` on the input and selects (see :func:`select`);
    ``keep(view, figures, genomes, selection)`` may decide to keep the installed genome instead (the
    installed genome is then the last row of ``genomes`` and of ``figures``)."""

    def choose(view: InputView) -> Decision:
        genomes, regime = candidates(view)
        if view.current is not None and keep is not None:
            genomes = np.vstack([genomes, view.current[None, :]])
        figures = Figures.of(view.problem, genomes)
        n = len(genomes) - (1 if view.current is not None and keep is not None else 0)
        sel = select(figures.throughput[:n], figures.energy_j[:n], figures.latency_s[:n], limits, preference,
                     figures.valid[:n])
        chosen = sel.index
        if keep is not None and view.current is not None and keep(view, figures, genomes, sel):
            return Decision(view.current, "kept", sel.feasible, sel.reason, regime)
        return Decision(genomes[chosen], f"{regime}#{chosen}", sel.feasible, sel.reason, regime)

    return Policy(name, choose, charges_switches)


def nearest_regime_candidates(library: ConfigLibrary) -> Callable[[InputView], tuple[np.ndarray, str]]:
    """Candidates of the dynamic policy: the configurations of the regime nearest to the input's features."""

    def candidates(view: InputView) -> tuple[np.ndarray, str]:
        regime = library.nearest(view.features)
        return np.asarray([c.genome for c in regime.configs], dtype=np.int64), regime.name

    return candidates
