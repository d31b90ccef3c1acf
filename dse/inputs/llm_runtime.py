"""The mechanism values of an LLM serving runtime: ``models/llm/runtimes/<name>.yaml``.

A runtime file gives what the runtime's kernels reach on any GPU that runs them, fitted once over the
fit rows of every GPU measured under it (``dse.runs.llm_fit``), never per GPU: ``precision_efficiency``
(the share of each precision class's peak its tensor-core GEMMs reach,
:mod:`dse.cost.mechanisms.precision_efficiency`), ``bandwidth_efficiency`` (the share of peak memory
bandwidth its decode-attention kernels reach, :mod:`dse.cost.mechanisms.bandwidth`),
``launch_overhead_us`` (per kernel) and ``call_overhead_us`` (per call of the workload,
:mod:`dse.cost.mechanisms.overhead`), each with its source in ``sources``. A measurement device that
names the runtime (``llm_runtime:`` in ``models/measurements/llm_*.yaml``) takes these fields; a field
the device declares itself wins.

Errors: an unknown runtime name or an ill-formed file raises :class:`~dse.errors.SpecError` naming the
file, the field and the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.errors import SpecError
from dse.util.home import models_dir
from dse.util.validation import spec_error_from_validation
from dse.util.yamlio import read_yaml

#: The device fields a runtime file gives (:class:`dse.model.platform.DeviceSpec`'s names).
RUNTIME_FIELDS = ("precision_efficiency", "bandwidth_efficiency", "launch_overhead_us", "call_overhead_us")

_Fraction = Annotated[float, Field(gt=0, le=1)]


class _RuntimeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    precision_efficiency: dict[str, dict[str, _Fraction]] = Field(default_factory=dict)
    bandwidth_efficiency: dict[str, _Fraction] = Field(default_factory=dict)
    launch_overhead_us: float = Field(ge=0, le=1e6)
    call_overhead_us: float = Field(ge=0, le=1e7)
    fit: str = Field(min_length=1, description="the procedure and the rows the values were fitted on")
    sources: dict[str, str] = Field(min_length=1)


def runtimes_dir() -> Path:
    """The catalog's ``models/llm/runtimes`` folder."""
    return models_dir() / "llm" / "runtimes"


def runtimes() -> list[str]:
    """Names of the catalog's LLM runtimes."""
    folder = runtimes_dir()
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def runtime_fields(name: str, source: str = "<device>", where: str = "llm_runtime") -> dict[str, Any]:
    """The device fields (:data:`RUNTIME_FIELDS`) of runtime ``name``. Raises :class:`SpecError` naming
    ``source`` and ``where`` for a name with no file, and the file and its field for an ill-formed one."""
    path = runtimes_dir() / f"{name}.yaml"
    if not path.is_file():
        raise SpecError(source, where, name, f"no such LLM runtime ({', '.join(runtimes()) or 'none'})")
    data = read_yaml(path)
    try:
        spec = _RuntimeSpec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(str(path), exc, data, _RuntimeSpec) from None
    return {k: getattr(spec, k) for k in RUNTIME_FIELDS}
