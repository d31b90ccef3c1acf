"""The ``scenario:`` mapping of a pipeline spec (``dse simulate``): the stream of inputs, the switching cost,
how the configuration library is built and which policies run (:class:`ScenarioSpec`, validated by pydantic)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dse.runtime.policies import POLICIES

__all__ = ["MAX_STREAM", "STREAM_BUILDERS", "DriftSpec", "LibrarySpec", "PhaseSpec", "ScenarioSpec", "StreamSpec",
           "SwitchSpec"]


#: Most inputs a stream may hold.
MAX_STREAM = 100_000
#: Builders a scenario may stream inputs through.
STREAM_BUILDERS = ("gcn", "graphsage", "gin", "cg", "pagerank")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class PhaseSpec(_Strict):
    """``length`` consecutive inputs of the named input."""

    input: str
    length: int = Field(ge=1, le=MAX_STREAM)


class DriftSpec(_Strict):
    """A synthetic input drifting from ``start`` to ``end`` (geometric in density, linear in skew) in ``steps``."""

    rows: int = Field(ge=2, le=10**7)
    width: int = Field(default=64, ge=1, le=10**6)
    density_from: float = Field(gt=0, le=1)
    density_to: float = Field(gt=0, le=1)
    degree_from: Literal["uniform", "powerlaw"] = "uniform"
    degree_to: Literal["uniform", "powerlaw"] = "powerlaw"
    steps: int = Field(default=6, ge=2, le=1000)


class StreamSpec(_Strict):
    """How the stream is made: ``phases`` (repeated ``repeat`` times), ``drift`` or ``mix`` (``length`` inputs)."""

    kind: Literal["phases", "drift", "mix"] = "phases"
    phases: list[PhaseSpec] = Field(default_factory=list)
    repeat: int = Field(default=1, ge=1, le=MAX_STREAM)
    drift: DriftSpec | None = None
    mix: dict[str, float] = Field(default_factory=dict, description="input name -> weight")
    length: int = Field(default=40, ge=1, le=MAX_STREAM)

    @model_validator(mode="after")
    def _check(self) -> StreamSpec:
        if self.kind == "phases" and not self.phases:
            raise ValueError("a phases stream needs at least one phase (the stream has no inputs)")
        if self.kind == "drift" and self.drift is None:
            raise ValueError("a drift stream needs its drift settings")
        if self.kind == "mix" and (not self.mix or any(w < 0 for w in self.mix.values())
                                   or sum(self.mix.values()) <= 0):
            raise ValueError("a mix stream needs input weights >= 0 with a positive sum")
        if self.kind == "phases" and sum(p.length for p in self.phases) * self.repeat > MAX_STREAM:
            raise ValueError(f"more than {MAX_STREAM} inputs")
        return self


class SwitchSpec(_Strict):
    """Re-mapping cost: ``reconfigure_ms`` per device whose ops or level change, transfers of moved
    ops' resident data, both multiplied by ``scale`` (0: free switches)."""

    reconfigure_ms: float = Field(default=1.0, ge=0, le=1e7)
    scale: float = Field(default=1.0, ge=0, le=1e9)


class LibrarySpec(_Strict):
    """How the configuration library is built (or ``file``: reloaded from JSON without re-solving)."""

    regimes: int = Field(default=4, ge=1, le=64)
    exact: Literal["cpsat", "exhaustive"] = "cpsat"
    nsga2: bool = True
    time_limit_s: float = Field(default=10.0, gt=0, le=3600)
    file: str | None = None


class ScenarioSpec(_Strict):
    """The ``scenario:`` mapping of a pipeline spec (``dse simulate``)."""

    workload: dict[str, Any] = Field(default_factory=lambda: {"builder": "gcn", "layers": 2, "hidden": 16},
                                     description="builder and its parameters; each input supplies the data")
    inputs: dict[str, str | dict[str, Any]] = Field(default_factory=dict,
                                                    description="named inputs: a dataset name or {synthetic: ...}")
    stream: StreamSpec
    items_per_input: int = Field(default=100, ge=1, le=10**9)
    preference: Literal["throughput", "energy", "weighted"] = "throughput"
    weight: float = Field(default=0.5, ge=0, le=1)
    min_throughput: float | None = Field(default=None, gt=0)
    horizon_inputs: float = Field(default=10.0, ge=0, le=1e9,
                                  description="expected phase length in inputs: a switch must repay itself over it")
    switch: SwitchSpec = Field(default_factory=SwitchSpec)
    library: LibrarySpec = Field(default_factory=LibrarySpec)
    policies: list[Literal["gpu_only", "static_average", "static_hand", "dynamic", "oracle"]] = Field(
        default_factory=lambda: list(POLICIES), min_length=1, max_length=len(POLICIES))  # type: ignore[arg-type]

    @field_validator("workload")
    @classmethod
    def _workload(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("builder") not in STREAM_BUILDERS:
            raise ValueError(f"builder must be one of {', '.join(STREAM_BUILDERS)}")
        if {"dataset", "nodes", "edges", "rows", "nnz"} & set(value):
            raise ValueError("the stream's inputs supply the data: leave dataset and sizes out")
        return value

    @field_validator("policies")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        twice = sorted({p for p in value if value.count(p) > 1})
        if twice:
            raise ValueError(f"policy {twice[0]} is listed twice")
        return value

    @model_validator(mode="after")
    def _names(self) -> ScenarioSpec:
        used = [p.input for p in self.stream.phases] + list(self.stream.mix)
        for name in used:
            if name not in self.inputs:
                raise ValueError(f"input {name!r} is not among the named inputs ({', '.join(self.inputs) or 'none'})")
        return self
