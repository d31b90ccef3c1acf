"""The selector and the run-time policies of a data-aware input stream (DyPe).

* :class:`Preference` and :class:`Limits`: what the user wants (maximum
  throughput, minimum energy, or a weight between them) under which limits
  (power cap, latency deadline, minimum throughput);
* :func:`select`: among candidate configurations with known figures, the best
  one that meets every limit; when none does, the one closest to meeting them,
  with a reason naming the limit and by how much;
* :func:`phase_choice`: the same choice over an expected phase, a switch's
  time and energy counted once against the phase's items;
* the five policies compared in one run, each a small object called at every
  input (:meth:`Policy.choose`): ``gpu_only``, ``static_average``,
  ``static_hand``, ``dynamic`` (:func:`analyzer_policy`, DyPe's online
  analyzer) and ``oracle``.

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
    from dse.inputs.datasets import InputFeatures
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
        X = np.atleast_2d(genomes)
        repaired = plain.repair(X)
        ev = plain.evaluate(repaired)
        sec = t.seconds_per_time_unit
        period = np.maximum(ev.F[:, 0] * sec, 1e-300)
        # valid: repair changes nothing but the level genes of devices that run no op (which change no cost)
        valid = ev.feasible & (repaired == plain.canonical_levels(X)).all(axis=1)
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


#: Switch costs of going from an installed genome to each of some genomes: ``(seconds, joules)`` arrays.
SwitchCosts = Callable[[PipelineProblem, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def phase_figures(throughput: np.ndarray, energy_j: np.ndarray, switch_s: np.ndarray, switch_j: np.ndarray,
                  items: float) -> tuple[np.ndarray, np.ndarray]:
    """Items/s and J/item over a phase of ``items`` items that starts with a switch: the switch's seconds and
    joules are paid once, then every item runs at the configuration's steady-state figures."""
    t = np.maximum(np.asarray(throughput, dtype=float), 1e-300)
    items = max(float(items), 1e-12)  # no phase ahead: a switch never repays itself
    seconds = np.asarray(switch_s, dtype=float) + items / t
    joules = np.asarray(switch_j, dtype=float) + items * np.asarray(energy_j, dtype=float)
    return items / np.maximum(seconds, 1e-300), joules / items


def phase_choice(figures: Figures, switch_s: np.ndarray, switch_j: np.ndarray, items: float, limits: Limits,
                 preference: Preference) -> Selection:
    """The candidate with the best phase figures (:func:`phase_figures` over ``items``) among those that meet
    ``limits`` in steady state (a switch draws idle power only, so the limits bind the runs); ties go to
    the lowest index (put the installed configuration first to keep it on a tie).

    When none meets the limits, the selector's closest candidate on the steady-state figures and its reason
    (see :func:`select`). Raises ``ValueError`` with no candidates.
    """
    if len(figures.throughput) == 0:
        raise ValueError("no candidate configurations to select from")
    meets = figures.valid & (limits.violations(figures.throughput, figures.energy_j, figures.latency_s)
                             <= 1e-12).all(axis=1)
    if not meets.any():
        return select(figures.throughput, figures.energy_j, figures.latency_s, limits, preference, figures.valid)
    t, e = phase_figures(figures.throughput, figures.energy_j, switch_s, switch_j, items)
    scores = np.where(meets, preference.scores(t, e, meets), np.inf)
    best = scores[meets].min()
    return Selection(int(np.flatnonzero(scores <= best * (1 + SCORE_TOLERANCE))[0]), True)


def analyzer_policy(name: str, library: ConfigLibrary, limits: Limits, preference: Preference,
                    switch_costs: SwitchCosts, phase_items: float) -> Policy:
    """DyPe's dynamic policy with its online analyzer.

    At a phase change (an input whose key differs from the previous one) every configuration of the library,
    whatever its regime, is costed on the observed input (its problem's cost tables, the path the solvers
    use), and :func:`phase_choice` picks by the preference under the limits, counting the switch from the
    installed configuration over the expected phase length (``phase_items`` items): the installed
    configuration competes with no switch cost, so a switch is made only when its gain over the phase
    exceeds its cost. Within a phase the installed configuration is kept. The decision's ``regime`` is
    the regime nearest to the input's features (for the trace; the choice does not depend on it).
    """
    genomes = library.genomes()
    origin = [f"{r.name}#{k}" for r in library.regimes for k in range(len(r.configs))]
    state: dict[str, Any] = {}

    def choose(view: InputView) -> Decision:
        last: Decision | None = state.get("decision")
        if view.current is not None and last is not None and state.get("key") == view.key:
            return Decision(view.current, "kept", last.feasible, last.reason, last.regime)
        regime = library.nearest(view.features).name
        if view.current is None:
            candidates, labels = genomes, list(origin)
            switch_s = switch_j = np.zeros(len(genomes))
        else:
            other = ~(genomes == view.current[None, :]).all(axis=1)
            candidates = np.vstack([view.current[None, :], genomes[other]])
            labels = ["kept"] + [lab for lab, keep in zip(origin, other, strict=True) if keep]
            switch_s, switch_j = switch_costs(view.problem, view.current, candidates)
        figures = Figures.of(view.problem, candidates)
        sel = phase_choice(figures, switch_s, switch_j, phase_items, limits, preference)
        decision = Decision(candidates[sel.index], labels[sel.index], sel.feasible, sel.reason, regime)
        state.update(key=view.key, decision=decision)
        return decision

    return Policy(name, choose, state=state)
