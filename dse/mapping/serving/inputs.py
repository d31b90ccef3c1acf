"""Inputs of the ``serving`` family: the request workload, the fleet and the search space.

* :class:`ServingWorkload` (the spec's ``workload``): a catalog LLM (``models/llm``), the requests'
  input and output lengths (means; a distribution may be named for a simulator, the analytical model
  reads the means), an arrival rate (requests/s; None: offline), the SLOs (TTFT and TPOT in ms at a
  percentile: the analytical model checks the mean prefill and decode-step times against them) and
  the runtime whose fitted mechanism values the GPUs take (``models/llm/runtimes``);
* :class:`Fleet` (the spec's ``platform``): GPU types from ``models/gpus`` with counts, GPUs per node
  and the network between nodes;
* :class:`ServingOptions` (the spec's ``options``): pools, and each pool gene's allowed values.

Errors are :class:`~dse.errors.SpecError` naming the file, the field and the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dse.errors import SpecError
from dse.inputs import catalog
from dse.inputs.builders.llm import ACTIVATION_PRECISIONS
from dse.inputs.builders.llm_config import LlmConfig, load_model
from dse.inputs.llm_runtime import runtime_fields
from dse.model.platform import Device, platform_from_dict
from dse.util.home import models_dir
from dse.util.validation import spec_error_from_validation
from dse.util.yamlio import read_yaml

#: Roles a pool can take: prefill and decode of its requests, prefill only, decode only.
ROLES = ("both", "prefill", "decode")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


#: The longest request length a spec may give (tokens).
MAX_TOKENS = 1 << 20


class LengthSpec(_Strict):
    """A length distribution the simulator may draw from (the analytical model reads the mean)."""

    kind: Literal["fixed", "uniform", "exponential", "lognormal"] = "fixed"
    mean: int = Field(gt=0, le=MAX_TOKENS)
    low: int | None = Field(default=None, gt=0)
    high: int | None = Field(default=None, gt=0)
    sigma: float | None = Field(default=None, gt=0, le=10)


class SloSpec(_Strict):
    """Service-level objectives: TTFT and TPOT in ms at a percentile (each optional)."""

    ttft_ms: float | None = Field(default=None, gt=0, le=1e7)
    tpot_ms: float | None = Field(default=None, gt=0, le=1e7)
    percentile: float = Field(default=50.0, gt=0, le=100)


class WorkloadSpec(_Strict):
    model: str = Field(min_length=1)
    input_tokens: int | LengthSpec
    output_tokens: int | LengthSpec
    arrival_rate: float | None = Field(default=None, gt=0, le=1e9, description="requests/s; null: offline")
    slo: SloSpec = Field(default_factory=SloSpec)
    runtime: str | None = Field(default="tensorrt_llm", description="LLM runtime of models/llm/runtimes; null: none")

    @field_validator("input_tokens", "output_tokens", mode="before")
    @classmethod
    def _token_count(cls, value: Any) -> Any:
        """A length given as one number is a fixed length's mean, in LengthSpec's range."""
        if isinstance(value, bool) or (isinstance(value, int) and not 0 < value <= MAX_TOKENS):
            raise ValueError(f"is a token count: give one in 1..{MAX_TOKENS}")
        return value


class FleetGpuSpec(_Strict):
    gpu: str = Field(min_length=1)
    count: int = Field(gt=0, le=4096)
    gpus_per_node: int | None = Field(default=None, gt=0, le=64)
    inter_node_gbps: float | None = Field(default=None, gt=0, le=1e5)
    inter_node_latency_us: float | None = Field(default=None, ge=0, le=1e6)
    price_per_hour: float | None = Field(
        default=None, ge=0.001, le=1e6,
        description="price of one GPU-hour, in any currency the fleet uses throughout (the cost objective); "
                    "null: 1, so cost counts GPU-hours")


class FleetSpec(_Strict):
    name: str = "fleet"
    gpus: list[FleetGpuSpec] = Field(min_length=1, max_length=16)
    description: str = ""


class ServingOptions(_Strict):
    """The search space: ``pools`` (K) and the values each pool gene may take."""

    pools: int = Field(default=2, ge=1, le=8)
    tp: list[int] = Field(default_factory=lambda: [1, 2, 4, 8], min_length=1)
    pp: list[int] = Field(default_factory=lambda: [1], min_length=1)
    batch: list[int] = Field(default_factory=lambda: [8, 32, 128], min_length=1)
    precisions: list[str] = Field(default_factory=lambda: ["fp16"], min_length=1)
    clocks: list[float] = Field(default_factory=lambda: [1.0], min_length=1)
    split: bool = Field(default=False, description="allow prefill-only and decode-only pools")
    max_gpus: int | None = Field(default=None, gt=0, le=1 << 16)


@dataclass(frozen=True)
class ServingWorkload:
    """The requests of a serving problem; lengths are the means (``*_spec`` keep the distributions)."""

    name: str
    config: LlmConfig
    input_tokens: int
    output_tokens: int
    arrival_rate: float | None
    ttft_ms: float | None
    tpot_ms: float | None
    percentile: float
    runtime: str | None
    input_spec: LengthSpec
    output_spec: LengthSpec


@dataclass(frozen=True)
class FleetGpu:
    """One GPU type of the fleet: its catalog name, its device figures, count, node shape and the price of
    one GPU-hour (1: none given)."""

    name: str
    device: Device
    count: int
    gpus_per_node: int
    price_per_hour: float = 1.0


@dataclass(frozen=True)
class Fleet:
    """The GPU types of a serving problem (``name`` for the engine's outputs)."""

    name: str
    gpus: tuple[FleetGpu, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.gpus)


def _validated(model: type[BaseModel], data: Any, source: str, field: str) -> Any:
    if not isinstance(data, Mapping):
        raise SpecError(source, field, data, "must be a mapping")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        err = spec_error_from_validation(source, exc, dict(data), model)
        raise SpecError(source, f"{field}.{err.field}", err.value, err.reason) from None


def _length(value: int | LengthSpec) -> LengthSpec:
    return value if isinstance(value, LengthSpec) else LengthSpec(mean=value)


def resolve_workload(ref: Any, source: str, base: Path) -> ServingWorkload:
    """The spec's ``workload`` mapping as a :class:`ServingWorkload`; :class:`SpecError` naming the field."""
    spec: WorkloadSpec = _validated(WorkloadSpec, ref, source, "workload")
    try:
        config = load_model(spec.model)
    except SpecError as exc:
        raise SpecError(source, "workload.model", spec.model, exc.reason) from None
    if spec.runtime is not None:
        runtime_fields(spec.runtime, source, "workload.runtime")
    inputs, outputs = _length(spec.input_tokens), _length(spec.output_tokens)
    return ServingWorkload(f"{config.name}-serving", config, inputs.mean, outputs.mean, spec.arrival_rate,
                           spec.slo.ttft_ms, spec.slo.tpot_ms, spec.slo.percentile, spec.runtime, inputs, outputs)


def fleet_gpu(spec: FleetGpuSpec, source: str, where: str) -> FleetGpu:
    """One fleet entry: the catalog GPU ``spec.gpu`` as a device with the entry's network figures."""
    path = catalog.find("gpus", spec.gpu)
    if path is None:
        known = sorted(p.stem for p in (models_dir() / "gpus").glob("*.yaml"))
        raise SpecError(source, f"{where}.gpu", spec.gpu, f"no such catalog GPU; models/gpus has {', '.join(known)}")
    device = dict(read_yaml(path)["device"])
    for key in ("inter_node_gbps", "inter_node_latency_us"):
        if getattr(spec, key) is not None:
            device[key] = getattr(spec, key)
    platform = platform_from_dict({"name": spec.gpu, "devices": [{"name": spec.gpu, **device}]}, f"{source}: {where}")
    return FleetGpu(spec.gpu, platform.devices[0], spec.count, spec.gpus_per_node or min(spec.count, 8),
                    1.0 if spec.price_per_hour is None else spec.price_per_hour)


def resolve_platform(ref: Any, source: str, base: Path) -> Fleet:
    """The spec's ``platform`` mapping (``gpus: [{gpu, count, ...}]``) as a :class:`Fleet`."""
    spec: FleetSpec = _validated(FleetSpec, ref, source, "platform")
    names = [g.gpu for g in spec.gpus]
    if len(set(names)) != len(names):
        raise SpecError(source, "platform.gpus", names, "each GPU type once")
    priced = [g.price_per_hour is not None for g in spec.gpus]
    if any(priced) and not all(priced):
        missing = next(i for i, given in enumerate(priced) if not given)
        raise SpecError(source, f"platform.gpus[{missing}].price_per_hour", None,
                        "give every GPU type a price, or none (the cost objective then counts GPU-hours)")
    return Fleet(spec.name, tuple(fleet_gpu(g, source, f"platform.gpus[{i}]") for i, g in enumerate(spec.gpus)))


def check_options(options: ServingOptions, source: str = "problem") -> None:
    """:class:`SpecError` naming ``options.FIELD`` for a precision the llm builder lacks, a clock outside
    (0, 1] or a repeated value."""
    for name in ("tp", "pp", "batch", "precisions", "clocks"):
        values = getattr(options, name)
        if len(set(values)) != len(values):
            raise SpecError(source, f"options.{name}", values, "each value once")
    for p in options.precisions:
        if p not in ACTIVATION_PRECISIONS:
            raise SpecError(source, "options.precisions", p, f"must be one of {', '.join(ACTIVATION_PRECISIONS)}")
    for name in ("tp", "pp", "batch"):
        if min(getattr(options, name)) < 1:
            raise SpecError(source, f"options.{name}", getattr(options, name), "every value >= 1")
    if not all(0.3 <= c <= 1 for c in options.clocks):
        raise SpecError(source, "options.clocks", options.clocks, "fractions of the top clock, in [0.3, 1]")
