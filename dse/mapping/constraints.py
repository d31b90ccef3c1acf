"""Constraints as components: one object per constraint, shared by every family that uses it.

Each component gives

* ``violation(population)``: a ``(pop,)`` float array, feasible iff ``<= 0``
  (pymoo's convention), normalized so that 0.1 means "10% over the limit";
* ``add_to_model(ctx)``: its CP-SAT constraints over the family's variables;
* ``check(tables)``: raises :class:`~dse.errors.InfeasibleError` when no
  mapping at all can meet it, naming the op and the figures;
* ``unmet(best)``: the one-line diagnosis once the best reachable value of
  the bounded quantity is known (``None`` where that does not apply);
* ``binds_nothing(tables, bounds)``: a note when no mapping at all can violate it,
  from cheap upper bounds on the quantities (``None`` otherwise).

A family lists its components in ``problem.constraints``; the template in
:class:`~dse.mapping.base.MappingProblem` stacks their violations into ``G``
and the family's CP-SAT builder calls ``add_to_model`` on each.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dse.cost import CostTables
from dse.errors import InfeasibleError
from dse.mapping.population import Population


@dataclass(frozen=True)
class ModelContext:
    """What a component needs to add itself to a CP-SAT model.

    ``x[(op, device)]``: the assignment literal (only allowed pairs exist);
    ``quantities``: the family's integer variables by name (``period``,
    ``energy``, ``latency``, ``makespan``...).
    """

    model: Any
    tables: CostTables
    x: Mapping[tuple[int, int], Any]
    quantities: Mapping[str, Any]


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.3g} GiB"


class Constraint(ABC):
    """A constraint of a mapping problem: ``name``, ``limit`` in ``unit``, and its three faces."""

    name: ClassVar[str]
    unit: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: whether the violation is relative to the limit (a share of it) rather than a count of ``unit``
    relative: ClassVar[bool] = True

    @property
    def limit(self) -> float:
        """The bound in internal units (0 for fraction-style constraints)."""
        return 0.0

    @abstractmethod
    def violation(self, population: Population) -> np.ndarray:
        """``(pop,)`` normalized violation; feasible iff ``<= 0``."""

    @abstractmethod
    def add_to_model(self, ctx: ModelContext) -> None:
        """Add the constraint to ``ctx.model``."""

    def check(self, tables: CostTables) -> None:
        """Raise :class:`InfeasibleError` when no mapping can meet the constraint (default: no static check)."""
        return None

    def unmet(self, best: float, proven: bool = True) -> str | None:
        """Diagnosis when the best reachable value of the bounded quantity is ``best`` (None: not applicable)."""
        return None

    def binds_nothing(self, tables: CostTables, bounds: Mapping[str, float]) -> str | None:
        """One line when no mapping (each op on a device that can run it) can violate the constraint, naming
        the spec field, its value and the bound (``constraint deadline_ms = 400 binds no mapping (every
        mapping's latency is at most 12.3 ms)``); None when some mapping may, or when that is not known.
        ``bounds``: the family's upper bounds over every mapping, in internal units by quantity
        (:meth:`~dse.mapping.base.MappingProblem.quantity_bounds`). Default: None."""
        return None


def readable_bytes(n_bytes: float) -> str:
    """``n_bytes`` in the largest binary unit that keeps it at 1 or more: ``"253 KiB"``, ``"40 GiB"``."""
    value, unit = float(n_bytes), "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.3g} {unit}"


def describe_slack(name: str, slack: float) -> str:
    """One line of a mapping's explanation for constraint ``name`` with slack ``slack`` (``-violation``):
    a share of the limit for memory, deadline and power ("met, 31% of the limit to spare"), a count of ops
    for the others ("violated by 2 ops")."""
    counted = {cls.name: cls.unit for cls in Constraint.__subclasses__() if not cls.relative}
    if name in counted:
        return (f"  constraint {name}: met" if slack >= 0
                else f"  constraint {name}: VIOLATED by {abs(slack):.0f} {counted[name]}")
    if slack >= 0:
        return f"  constraint {name}: met, {slack:.1%} of the limit to spare"
    return f"  constraint {name}: VIOLATED by {abs(slack):.1%} of the limit"


@dataclass(frozen=True)
class AllowedDevices(Constraint):
    """Every op on a device that may run it (device kind, precision, the workload's device constraint)."""

    noun: str = "op"
    name: ClassVar[str] = "allowed"
    unit: ClassVar[str] = "ops"
    relative: ClassVar[bool] = False
    description: ClassVar[str] = "every op on a device that supports it"

    def violation(self, population: Population) -> np.ndarray:
        return (~population.per_op("allowed")).sum(axis=0).astype(float)

    def add_to_model(self, ctx: ModelContext) -> None:
        return None  # the model only has literals for allowed (op, device) pairs

    def check(self, tables: CostTables) -> None:
        stuck = np.flatnonzero(~tables.allowed.any(axis=1))
        if len(stuck):
            i = int(stuck[0])
            what = f" ({tables.op_classes[i]})" if tables.op_classes else ""
            raise InfeasibleError(f"{self.noun} {tables.op_names[i]}{what} cannot run on any device")


@dataclass(frozen=True)
class MemoryCapacity(Constraint):
    """Resident bytes of the ops on each device <= that device's capacity."""

    noun: str = "op"
    name: ClassVar[str] = "memory"
    unit: ClassVar[str] = "fraction over capacity"
    description: ClassVar[str] = "resident bytes <= capacity on every device"

    def violation(self, population: Population) -> np.ndarray:
        cap = population.tables.mem_capacity
        used = population.device_sum("mem")
        return ((used - cap[:, None]) / np.maximum(cap, 1)[:, None]).max(axis=0)

    def add_to_model(self, ctx: ModelContext) -> None:
        t = ctx.tables
        terms: dict[int, list] = {}
        for (i, d), lit in ctx.x.items():
            if t.mem[i, d]:
                terms.setdefault(d, []).append(int(t.mem[i, d]) * lit)
        for d, column in terms.items():
            ctx.model.add(sum(column) <= int(t.mem_capacity[d]))

    def binds_nothing(self, tables: CostTables, bounds: Mapping[str, float]) -> str | None:
        """A note when every device can hold the data of all the ops it can run at once."""
        t = tables
        most = np.where(t.allowed, t.mem, 0).sum(axis=0)  # per device: every op it can run, all at once
        if (most > t.mem_capacity).any():
            return None
        share = float((most / np.maximum(t.mem_capacity, 1)).max(initial=0.0))
        return (f"constraint memory binds no mapping (every device holds the data of all the {self.noun}s it "
                f"can run at once: at most {share * 100:.3g}% of its capacity)")

    def check(self, tables: CostTables) -> None:
        t = tables
        fits = t.allowed & (t.mem <= t.mem_capacity[None, :])
        for i in np.flatnonzero(~fits.any(axis=1) & t.allowed.any(axis=1)):
            allowed = t.allowed[i]
            raise InfeasibleError(
                f"memory: {self.noun} {t.op_names[i]} needs {_gib(t.mem[i][allowed].min())}, "
                f"the largest device that can run it has {_gib(t.mem_capacity[allowed].max())}")


@dataclass(frozen=True)
class Deadline(Constraint):
    """``quantity`` (``latency`` of one item, or ``makespan``) <= ``deadline`` time units."""

    deadline: int
    quantity: str = "latency"
    time_unit: str = "ns"
    display: str = "ms"
    display_factor: float = 1e-6
    name: ClassVar[str] = "deadline"

    @property
    def limit(self) -> float:
        return float(self.deadline)

    @property
    def unit(self) -> str:  # type: ignore[override]
        return self.time_unit

    @property
    def description(self) -> str:  # type: ignore[override]
        return f"{self.quantity} <= deadline"

    def _show(self, value: float) -> str:
        return f"{value * self.display_factor:.4g} {self.display}"

    def violation(self, population: Population) -> np.ndarray:
        return (population.values[self.quantity] - self.deadline) / max(self.deadline, 1)

    def add_to_model(self, ctx: ModelContext) -> None:
        ctx.model.add(ctx.quantities[self.quantity] <= self.deadline)

    def unmet(self, best: float, proven: bool = True) -> str | None:
        if best <= self.deadline:
            return None
        return (f"deadline {self._show(self.deadline)} cannot be met: the fastest mapping takes {self._show(best)}"
                + ("" if proven else " (best found, not proven)"))

    def binds_nothing(self, tables: CostTables, bounds: Mapping[str, float]) -> str | None:
        """A note when ``bounds[quantity]`` (every mapping's latency or makespan at most) is within the deadline."""
        most = bounds.get(self.quantity)
        if most is None or most > self.deadline:
            return None
        unit, per = tables.display_time_unit, tables.display_per_time_unit  # as the spec gives it: ms or tu
        field = "deadline_ms" if unit == "ms" else "deadline"
        return (f"constraint {field} = {self.deadline * per:.6g} binds no mapping "
                f"(every mapping's {self.quantity} is at most {most * per:.4g} {unit})")


@dataclass(frozen=True)
class PowerCap(Constraint):
    """Average power over a period <= the cap: ``energy per item <= cap_mw x period``."""

    cap_mw: int
    name: ClassVar[str] = "power"
    unit: ClassVar[str] = "mW"
    description: ClassVar[str] = "energy per item <= P_cap x period"

    @property
    def limit(self) -> float:
        return float(self.cap_mw)

    def violation(self, population: Population) -> np.ndarray:
        budget = self.cap_mw * population.values["period"]
        return (population.values["energy"] - budget) / np.maximum(budget, 1)

    def add_to_model(self, ctx: ModelContext) -> None:
        ctx.model.add(ctx.quantities["energy"] <= self.cap_mw * ctx.quantities["period"])

    def unmet(self, best: float, proven: bool = True) -> str | None:
        """``best``: the lowest average power in W of any mapping meeting the other constraints."""
        if best * 1e3 <= self.cap_mw:
            return None
        return (f"power cap {self.cap_mw / 1e3:.4g} W cannot be met: the lowest average power of any "
                f"mapping meeting the other constraints is {best:.4g} W")

    def binds_nothing(self, tables: CostTables, bounds: Mapping[str, float]) -> str | None:
        """A note when ``bounds["power_mw"]`` (every mapping's average power at most) is within the cap."""
        most = bounds.get("power_mw")
        if most is None or most > self.cap_mw:
            return None
        return (f"constraint power_w = {self.cap_mw / 1e3:.6g} binds no mapping (every mapping's average power "
                f"is at most {most / 1e3:.4g} W)")


@dataclass(frozen=True, eq=False)
class Colocation(Constraint):
    """Ops of one colocation group on one device: ``members[k]`` with ``leaders[k]``."""

    members: np.ndarray
    leaders: np.ndarray
    name: ClassVar[str] = "colocation"
    unit: ClassVar[str] = "ops"
    relative: ClassVar[bool] = False
    description: ClassVar[str] = "every colocation group on one device"

    @classmethod
    def of(cls, tables: CostTables) -> Colocation | None:
        """The groups of ``tables.colocation`` (each member follows its group's first op); None if none."""
        leader: dict[str, int] = {}
        members, leaders = [], []
        for i, group in enumerate(tables.colocation or ()):
            if group is None:
                continue
            if group in leader:
                members.append(i)
                leaders.append(leader[group])
            else:
                leader[group] = i
        if not members:
            return None
        return cls(np.asarray(members, dtype=np.int64), np.asarray(leaders, dtype=np.int64))

    def violation(self, population: Population) -> np.ndarray:
        dev = population.devices
        return (dev[self.members] != dev[self.leaders]).sum(axis=0).astype(float)

    def add_to_model(self, ctx: ModelContext) -> None:
        for i, lead in zip(self.members.tolist(), self.leaders.tolist(), strict=True):
            for d in range(ctx.tables.n_dev):
                a, b = ctx.x.get((lead, d)), ctx.x.get((i, d))
                if a is None and b is not None:
                    ctx.model.add(b == 0)
                elif b is None and a is not None:
                    ctx.model.add(a == 0)
                elif a is not None:
                    ctx.model.add(a == b)

    def check(self, tables: CostTables) -> None:
        for i, lead in zip(self.members.tolist(), self.leaders.tolist(), strict=True):
            if not (tables.allowed[i] & tables.allowed[lead]).any():
                raise InfeasibleError(
                    f"colocation: {tables.op_names[i]} and {tables.op_names[lead]} must share a device, "
                    "but no device may run both")
