"""Calibration files: the YAML a ``dse calibrate`` run writes, read back with every field checked."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.cost.calibration.model import (
    _DEVICE_RE,
    FIT_PARAMS,
    GPU_DEVICES,
    KERNEL_TERMS,
    KERNELS,
    Calibration,
    KernelFit,
    MachineInfo,
    PairContention,
    check_dtypes,
)
from dse.errors import SpecError
from dse.util.files import replace_atomically
from dse.util.validation import spec_error_from_validation
from dse.util.yamlio import read_yaml

#: Version tag written at the top of every calibration file.
FILE_FORMAT = "dse-calibration/1"

class _MachineModel(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    kind: str = Field(min_length=1)
    cpu_model: str
    logical_cores: int = Field(ge=1)
    gpu: str | None = None


class _FitModel(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    kernel: str
    device: str
    dtype: str
    terms: list[str] = Field(min_length=1)
    coefficients_s: list[float]
    mape_heldout: float | None = None
    n_samples: int = Field(ge=0)
    n_heldout: int = Field(default=0, ge=0)
    params: dict[str, float] = Field(default_factory=dict)


class _ContentionModel(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    device: str
    beside: str
    slowdown: float = Field(ge=1.0, le=100.0)
    spread: float = Field(default=0.0, ge=0.0)
    rounds: int = Field(default=0, ge=0)


class _FileModel(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    format: str
    machine: _MachineModel
    note: str = ""
    fits: list[_FitModel]
    contention: list[_ContentionModel] = Field(default_factory=list)  # absent in files made before it was measured


def _fit_from_model(model: _FitModel, i: int, source: str) -> KernelFit:
    where = f"fits[{i}]"
    if model.kernel not in KERNELS:
        raise SpecError(source, f"{where}.kernel", model.kernel, f"unknown kernel; known: {', '.join(KERNELS)}")
    check_dtypes([model.dtype], source, f"{where}.dtype")
    if model.device not in GPU_DEVICES and _DEVICE_RE.match(model.device) is None:
        raise SpecError(source, f"{where}.device", model.device, "unknown device; known: cpu, cpu:tN, cuda, tensorcore")
    known = KERNEL_TERMS[model.kernel]
    for j, term in enumerate(model.terms):
        if term not in known:
            raise SpecError(source, f"{where}.terms[{j}]", term, f"unknown {model.kernel} term; known: {', '.join(known)}")
    if len(set(model.terms)) != len(model.terms):
        raise SpecError(source, f"{where}.terms", model.terms, "a term is listed twice")
    if len(model.coefficients_s) != len(model.terms):
        raise SpecError(source, f"{where}.coefficients_s", model.coefficients_s,
                        f"needs one coefficient per term ({len(model.terms)})")
    for j, value in enumerate(model.coefficients_s):
        if not math.isfinite(value) or value < 0:
            raise SpecError(source, f"{where}.coefficients_s[{j}]", value, "must be finite and >= 0")
    for name, value in model.params.items():
        if name not in FIT_PARAMS:
            raise SpecError(source, f"{where}.params.{name}", value, f"unknown parameter; known: {', '.join(FIT_PARAMS)}")
        if not math.isfinite(value) or value <= 0:
            raise SpecError(source, f"{where}.params.{name}", value, "must be finite and > 0")
    error = math.nan if model.mape_heldout is None else model.mape_heldout
    if not (math.isnan(error) or error >= 0):
        raise SpecError(source, f"{where}.mape_heldout", model.mape_heldout, "must be >= 0")
    return KernelFit(model.kernel, model.device, model.dtype, tuple(model.terms), tuple(model.coefficients_s),
                     error, model.n_samples, model.n_heldout, tuple(sorted(model.params.items())))


def calibration_from_dict(data: Any, source: str, *, check_machine: bool = True) -> Calibration:
    """Build a :class:`Calibration` from a parsed YAML mapping; :class:`SpecError` naming ``source``."""
    if not isinstance(data, Mapping):
        raise SpecError(source, "<root>", type(data).__name__, "a calibration file is a mapping (format, machine, fits)")
    try:
        model = _FileModel.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None
    if model.format != FILE_FORMAT:
        raise SpecError(source, "format", model.format, f"expected {FILE_FORMAT}")
    machine = MachineInfo(model.machine.kind, model.machine.cpu_model, model.machine.logical_cores, model.machine.gpu)
    fits = tuple(_fit_from_model(f, i, source) for i, f in enumerate(model.fits))
    seen: set[tuple[str, str, str]] = set()
    for i, f in enumerate(fits):
        if (f.kernel, f.device, f.dtype) in seen:
            raise SpecError(source, f"fits[{i}]", f"{f.kernel}/{f.device}/{f.dtype}", "a second fit of the same "
                                                                                        "kernel, device and dtype")
        seen.add((f.kernel, f.device, f.dtype))
    if check_machine:
        here = MachineInfo.current()
        if machine.kind != here.kind:
            raise SpecError(source, "machine.kind", machine.kind,
                            f"calibrated on another machine kind; this machine is {here.kind!r} "
                            f"(run dse calibrate here, or load with check_machine=False)")
        gpu_fits = any(f.device in GPU_DEVICES for f in fits)
        if gpu_fits and machine.gpu and here.gpu and machine.gpu != here.gpu:
            raise SpecError(source, "machine.gpu", machine.gpu, f"GPU fits made on another GPU; this one is {here.gpu!r}")
    contention = tuple(_contention_from_model(c, i, source) for i, c in enumerate(model.contention))
    return Calibration(machine, fits, source, model.note, contention)


def _contention_from_model(model: _ContentionModel, i: int, source: str) -> PairContention:
    for name in ("device", "beside"):
        value = getattr(model, name)
        if _DEVICE_RE.match(value) is None:
            raise SpecError(source, f"contention[{i}].{name}", value, "a CPU worker group: cpu or cpu:tN")
    return PairContention(model.device, model.beside, model.slowdown, model.spread, model.rounds)


def load_calibration(path: str | Path, *, check_machine: bool = True) -> Calibration:
    """Read a calibration YAML file.

    Raises :class:`SpecError` naming the file, the field and the value for a missing or
    malformed file, and (field ``machine.kind``) for one made on another machine kind when
    ``check_machine``.
    """
    return calibration_from_dict(read_yaml(path), str(path), check_machine=check_machine)


def calibration_to_dict(cal: Calibration) -> dict[str, Any]:
    """The YAML mapping of ``cal`` (what :func:`save_calibration` writes)."""
    return {
        "format": FILE_FORMAT,
        "machine": {"kind": cal.machine.kind, "cpu_model": cal.machine.cpu_model,
                    "logical_cores": cal.machine.logical_cores, "gpu": cal.machine.gpu},
        "note": cal.note,
        "fits": [{"kernel": f.kernel, "device": f.device, "dtype": f.dtype, "terms": list(f.terms),
                  "coefficients_s": [float(c) for c in f.coefficients],
                  "mape_heldout": None if math.isnan(f.mape_heldout) else float(f.mape_heldout), "n_samples": f.n_samples, "n_heldout": f.n_heldout,
                  "params": dict(f.params)}
                 for f in cal.fits],
        "contention": [{"device": c.device, "beside": c.beside, "slowdown": float(c.slowdown),
                        "spread": float(c.spread), "rounds": c.rounds} for c in cal.contention],
    }


def save_calibration(cal: Calibration, path: str | Path) -> None:
    """Write ``cal`` as YAML to ``path`` (replaced atomically); :class:`SpecError` if it cannot be written."""
    import yaml

    path = Path(path)
    text = "# Kernel calibration written by `dse calibrate`; see docs/calibration.md.\n" + \
        yaml.safe_dump(calibration_to_dict(cal), sort_keys=False, width=120, default_flow_style=None)
    try:
        replace_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    except OSError as exc:
        raise SpecError(str(path), "<file>", str(path), f"cannot write: {exc.strerror or exc}") from None
