"""Multi-accelerator systems and real-time multi-model scenarios (the ``multimodel`` family's inputs).

* :class:`Layer`: one CONV, DSCONV (depthwise) or GEMM layer in MAESTRO's loop dimensions
  ``N K C Y X R S``;
* :class:`Model`: a network with its frame rate, an optional trigger (``depends_on`` with a
  ``probability``) and the window in which it is active (``join_s``, ``leave_s``);
* :class:`Scenario`: the models that run together;
* :class:`Accelerator` and :class:`System`: PE arrays with a dataflow, an on-chip buffer,
  off-chip bandwidth and power, sharing one off-chip memory of ``shared_bw_gbps``.

YAML files (``models/systems/*.yaml``, ``models/scenarios/*.yaml``) are read with
:func:`load_system` / :func:`load_scenario`; every error is a :class:`~dse.errors.SpecError`
naming the file, the field and the value. Example::

    system = load_system(catalog.find("systems", "Quad_4K"))
    scenario = load_scenario(catalog.find("scenarios", "VR_gaming"))
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.errors import SpecError
from dse.util.rounding import ceil_int
from dse.util.validation import spec_error_from_validation
from dse.util.yamlio import read_yaml

#: Dataflows of a PE array: weight-, output- and row-stationary.
DATAFLOWS = ("ws", "os", "rs")
#: Layer types the cost model maps onto a PE array.
LAYER_TYPES = ("CONV", "DSCONV", "GEMM")
#: Largest loop dimension accepted.
MAX_DIM = 1 << 20
#: Most multiply-accumulates one layer may take (N K C Y X R S multiplied): with every count, time and
#: energy summed over a model's layers and a scenario's frames, this keeps the integer arithmetic far
#: inside int64 (2^50 MACs is about a day of a 1K-PE array at 1 GHz).
MAX_LAYER_MACS = 1 << 50
#: Frame rates accepted, in frames per second (a frame every 100 s up to 10,000 a second).
MIN_FPS = 0.01
MAX_FPS = 10_000.0
#: Clock frequencies accepted, in MHz.
MIN_FREQ_MHZ = 1.0
MAX_FREQ_MHZ = 1e5
#: Default active power per PE (mW) at 1 GHz: about 0.5 pJ per 8-bit MAC with its register file
#: (a documented assumption in the range reported for edge accelerators, not a measurement).
ACTIVE_MW_PER_PE = 0.5
#: Default idle power as a fraction of active power (leakage and clock tree; an assumption).
IDLE_FRACTION = 0.1
#: Default off-chip access energy (pJ per byte): LPDDR4 at about 4 pJ/bit.
DRAM_PJ_PER_BYTE = 32.0


def array_shape(pes: int) -> tuple[int, int]:
    """``(rows, cols)`` of a PE array of ``pes`` PEs (rows the largest power of two <= sqrt(pes))."""
    rows = 1 << int(math.floor(math.log2(math.sqrt(pes))))
    return rows, max(1, pes // rows)


def spatial_dims(layer: Layer, dataflow: str) -> tuple[int, int]:
    """The loop products mapped onto the array's rows and columns under ``dataflow``."""
    if dataflow == "ws":
        return layer.reduce_channels, layer.out_channels
    if dataflow == "os":
        return layer.y, layer.x
    if dataflow == "rs":
        return layer.r * layer.reduce_channels, layer.y
    raise ValueError(f"unknown dataflow {dataflow!r}")


@dataclass(frozen=True)
class Layer:
    """One layer: ``type`` in :data:`LAYER_TYPES` and its loop dimensions.

    DSCONV is depthwise: ``C`` channels, each filtered on its own (``K`` is ignored), so its
    MACs are ``N C Y X R S``. ``Y, X`` are taken as the output's rows and columns (stride 1,
    same padding), GEMM is a CONV with ``R = S = 1``. One byte per element (int8).
    """

    name: str
    type: str
    n: int
    k: int
    c: int
    y: int
    x: int
    r: int
    s: int

    @property
    def depthwise(self) -> bool:
        return self.type == "DSCONV"

    @property
    def out_channels(self) -> int:
        return self.c if self.depthwise else self.k

    @property
    def reduce_channels(self) -> int:
        """Input channels summed into one output (1 for depthwise)."""
        return 1 if self.depthwise else self.c

    @property
    def macs(self) -> int:
        return self.n * self.out_channels * self.reduce_channels * self.y * self.x * self.r * self.s

    @property
    def weight_bytes(self) -> int:
        return self.out_channels * self.reduce_channels * self.r * self.s

    @property
    def input_bytes(self) -> int:
        return self.n * self.c * self.y * self.x

    @property
    def output_bytes(self) -> int:
        return self.n * self.out_channels * self.y * self.x


@dataclass(frozen=True)
class Model:
    """A network running at ``fps`` frames per second while active (``join_s <= t < leave_s``).

    With ``depends_on``, a frame runs only after the parent's latest frame completes, and only
    with ``probability``.
    """

    name: str
    fps: float
    layers: tuple[Layer, ...]
    depends_on: str | None = None
    probability: float = 1.0
    join_s: float = 0.0
    leave_s: float | None = None

    @property
    def period_s(self) -> float:
        return 1.0 / self.fps


@dataclass(frozen=True)
class Scenario:
    """Models that run together; names are unique and every ``depends_on`` names one of them."""

    name: str
    models: tuple[Model, ...]
    source: str = ""

    def model(self, name: str) -> Model:
        """The model called ``name``; raises ``KeyError``."""
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)

    def with_timeline(self, timeline: Mapping[str, tuple[float, float | None]]) -> Scenario:
        """A copy whose models named in ``timeline`` join and leave at the given ``(join_s, leave_s)``."""
        return replace(self, models=tuple(
            replace(m, join_s=timeline[m.name][0], leave_s=timeline[m.name][1]) if m.name in timeline else m
            for m in self.models))


@dataclass(frozen=True)
class Accelerator:
    """A PE array: ``pes`` PEs at ``freq_mhz`` with a ``dataflow``, an on-chip buffer of ``buffer_kib``,
    ``offchip_bw_gbps`` to memory, ``idle_w`` and ``active_w``.

    Optional (:mod:`dse.cost.pe_energy`): ``node_nm``, the technology node, costs energy access by access
    instead of ``active_w``; ``word_bits`` is the width of one element; ``buffer_bw_gbps`` and
    ``noc_bw_gbps`` bound a layer's time by its on-chip traffic."""

    name: str
    pes: int
    dataflow: str = "ws"
    buffer_kib: float = 2048.0
    offchip_bw_gbps: float = 128.0
    idle_w: float = 0.0
    active_w: float = 0.0
    freq_mhz: float = 1000.0
    node_nm: float | None = None
    word_bits: int = 8
    buffer_bw_gbps: float | None = None
    noc_bw_gbps: float | None = None


@dataclass(frozen=True)
class System:
    """Accelerators sharing one off-chip memory of ``shared_bw_gbps``; ``dram_pj_per_byte`` per access."""

    name: str
    accelerators: tuple[Accelerator, ...]
    shared_bw_gbps: float
    dram_pj_per_byte: float = DRAM_PJ_PER_BYTE
    source: str = ""

    @property
    def total_pes(self) -> int:
        return sum(a.pes for a in self.accelerators)


# --------------------------------------------------------------------------- YAML schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AcceleratorModel(_Strict):
    name: str = Field(min_length=1)
    pes: int = Field(ge=1, le=1 << 24)
    dataflow: Literal["ws", "os", "rs"] = "ws"
    buffer_kib: float = Field(default=2048.0, gt=0, le=1 << 30, allow_inf_nan=False)
    offchip_bw_gbps: float = Field(default=128.0, ge=1e-6, le=1e9, allow_inf_nan=False)
    idle_w: float | None = Field(default=None, ge=0, le=1e6, allow_inf_nan=False)
    active_w: float | None = Field(default=None, ge=0, le=1e6, allow_inf_nan=False)
    freq_mhz: float = Field(default=1000.0, ge=MIN_FREQ_MHZ, le=MAX_FREQ_MHZ, allow_inf_nan=False)
    node_nm: float | None = Field(default=None, ge=1, le=1000, allow_inf_nan=False)
    word_bits: int = Field(default=8, ge=1, le=64)
    buffer_bw_gbps: float | None = Field(default=None, ge=1e-6, le=1e9, allow_inf_nan=False)
    noc_bw_gbps: float | None = Field(default=None, ge=1e-6, le=1e9, allow_inf_nan=False)


class SystemModel(_Strict):
    name: str = Field(min_length=1)
    source: str = ""
    shared_bw_gbps: float | None = Field(default=None, ge=1e-6, le=1e9, allow_inf_nan=False)
    dram_pj_per_byte: float = Field(default=DRAM_PJ_PER_BYTE, ge=0, le=1e6, allow_inf_nan=False)
    accelerators: list[AcceleratorModel] = Field(min_length=1, max_length=64)


class ModelModel(_Strict):
    name: str = Field(min_length=1)
    fps: float = Field(ge=MIN_FPS, le=MAX_FPS, allow_inf_nan=False)
    depends_on: str | None = None
    probability: float = Field(default=1.0, ge=0, le=1, allow_inf_nan=False)
    join_s: float = Field(default=0.0, ge=0, le=1e6, allow_inf_nan=False)
    leave_s: float | None = Field(default=None, gt=0, le=1e6, allow_inf_nan=False)
    #: ``[name, type, N, K, C, Y, X, R, S]`` per layer
    layers: list[tuple[str, str, int, int, int, int, int, int, int]] = Field(min_length=1, max_length=100_000)


class ScenarioModel(_Strict):
    name: str = Field(min_length=1)
    source: str = ""
    models: list[ModelModel] = Field(min_length=1, max_length=64)


def _validated(model: type[BaseModel], data: Any, source: str) -> Any:
    if not isinstance(data, Mapping):
        raise SpecError(source, "<root>", type(data).__name__, "must be a YAML mapping")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(source, exc, data) from None


def make_layer(name: str, type_: str, dims: Mapping[str, int], source: str, field: str) -> Layer:
    """A checked :class:`Layer`; ``SpecError(source, field...)`` for an unknown type or a bad dimension."""
    kind = str(type_).upper()
    if kind not in LAYER_TYPES:
        raise SpecError(source, f"{field}.type", type_, f"unknown layer type; known: {', '.join(LAYER_TYPES)}")
    values = {}
    for key in "NKCYXRS":
        value = dims.get(key)
        if value is None:
            raise SpecError(source, f"{field}.{key}", None, "missing dimension (N K C Y X R S are required)")
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_DIM:
            raise SpecError(source, f"{field}.{key}", value, f"must be an integer in [1, {MAX_DIM}]")
        values[key.lower()] = value
    macs = math.prod(values.values())
    if macs > MAX_LAYER_MACS:
        raise SpecError(source, field, f"{name} ({' x '.join(str(v) for v in values.values())})",
                        f"{macs:.3g} multiply-accumulates; a layer may take at most 2^50 = {MAX_LAYER_MACS:.3g}")
    return Layer(name, kind, **values)


def scenario_from_dict(data: Any, source: str = "<scenario>") -> Scenario:
    """A validated :class:`Scenario`; raises :class:`SpecError` naming the field and the value."""
    spec = _validated(ScenarioModel, data, source)
    models = []
    for i, m in enumerate(spec.models):
        layers = tuple(make_layer(row[0], row[1], dict(zip("NKCYXRS", row[2:], strict=True)), source,
                                  f"models[{i}].layers[{j}]") for j, row in enumerate(m.layers))
        if m.leave_s is not None and m.leave_s <= m.join_s:
            raise SpecError(source, f"models[{i}].leave_s", m.leave_s, f"must be after join_s = {m.join_s}")
        models.append(Model(m.name, m.fps, layers, m.depends_on, m.probability, m.join_s, m.leave_s))
    return check_scenario(Scenario(spec.name, tuple(models), spec.source), source)


def check_scenario(scenario: Scenario, source: str) -> Scenario:
    """``scenario`` if its names are unique and its dependencies name models of it without a cycle."""
    names = [m.name for m in scenario.models]
    for i, m in enumerate(scenario.models):
        if names.count(m.name) > 1:
            raise SpecError(source, f"models[{i}].name", m.name, "two models have this name")
        if m.depends_on is not None and m.depends_on not in names:
            raise SpecError(source, f"models[{i}].depends_on", m.depends_on,
                            f"unknown model; models: {', '.join(names)}")
        seen, parent = {m.name}, m.depends_on
        while parent is not None:
            if parent in seen:
                raise SpecError(source, f"models[{i}].depends_on", m.depends_on, "dependencies form a cycle")
            seen.add(parent)
            parent = scenario.model(parent).depends_on
    return scenario


def system_from_dict(data: Any, source: str = "<system>") -> System:
    """A validated :class:`System`; default powers from :data:`ACTIVE_MW_PER_PE` and :data:`IDLE_FRACTION`."""
    spec = _validated(SystemModel, data, source)
    accs = []
    for a in spec.accelerators:
        active = a.active_w if a.active_w is not None else a.pes * ACTIVE_MW_PER_PE * 1e-3 * a.freq_mhz / 1000
        idle = a.idle_w if a.idle_w is not None else active * IDLE_FRACTION
        accs.append(Accelerator(a.name, a.pes, a.dataflow, a.buffer_kib, a.offchip_bw_gbps, idle, active, a.freq_mhz,
                                a.node_nm, a.word_bits, a.buffer_bw_gbps, a.noc_bw_gbps))
    names = [a.name for a in accs]
    for i, name in enumerate(names):
        if names.count(name) > 1:
            raise SpecError(source, f"accelerators[{i}].name", name, "two accelerators have this name")
    shared = spec.shared_bw_gbps if spec.shared_bw_gbps is not None else max(a.offchip_bw_gbps for a in accs)
    return System(spec.name, tuple(accs), shared, spec.dram_pj_per_byte, spec.source)


def _optional_fields(acc: Accelerator) -> dict[str, Any]:
    """The optional fields ``acc`` declares (:mod:`dse.cost.pe_energy`), as in its YAML form."""
    fields = {"node_nm": acc.node_nm, "buffer_bw_gbps": acc.buffer_bw_gbps, "noc_bw_gbps": acc.noc_bw_gbps}
    out = {k: v for k, v in fields.items() if v is not None}
    if acc.word_bits != 8:
        out["word_bits"] = acc.word_bits
    return out


def system_to_dict(system: System) -> dict[str, Any]:
    """The YAML form of ``system`` (every field explicit)."""
    return {
        "name": system.name, "source": system.source, "shared_bw_gbps": system.shared_bw_gbps,
        "dram_pj_per_byte": system.dram_pj_per_byte,
        "accelerators": [{"name": a.name, "pes": a.pes, "dataflow": a.dataflow, "buffer_kib": a.buffer_kib,
                          "offchip_bw_gbps": a.offchip_bw_gbps, "idle_w": round(a.idle_w, 6),
                          "active_w": round(a.active_w, 6), "freq_mhz": a.freq_mhz, **_optional_fields(a)}
                         for a in system.accelerators],
    }


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """The YAML form of ``scenario`` (layers as ``[name, type, N, K, C, Y, X, R, S]`` rows)."""
    models = []
    for m in scenario.models:
        entry: dict[str, Any] = {"name": m.name, "fps": m.fps}
        if m.depends_on is not None:
            entry.update(depends_on=m.depends_on, probability=m.probability)
        if m.join_s:
            entry["join_s"] = m.join_s
        if m.leave_s is not None:
            entry["leave_s"] = m.leave_s
        entry["layers"] = [[la.name, la.type, la.n, la.k, la.c, la.y, la.x, la.r, la.s] for la in m.layers]
        models.append(entry)
    return {"name": scenario.name, "source": scenario.source, "models": models}


def _read_yaml(path: str | Path) -> Any:
    """``path``'s YAML document (:func:`dse.util.yamlio.read_yaml`: libyaml when present, with its limits on size,
    alias expansion and depth); raises its SpecError."""
    return read_yaml(path)


def load_system(path: str | Path) -> System:
    """Read a system YAML file; raises :class:`SpecError`."""
    return system_from_dict(_read_yaml(path), str(path))


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario YAML file; raises :class:`SpecError`."""
    return scenario_from_dict(_read_yaml(path), str(path))


def frames_in(model: Model, duration_s: float) -> int:
    """Number of frame indices ``i`` with ``i / fps`` in ``[0, duration_s)``."""
    return max(0, ceil_int(duration_s * model.fps))
