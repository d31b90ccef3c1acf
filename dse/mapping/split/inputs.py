"""Inputs of the ``split`` family (POAS): the GEMM to cut and the devices that share it.

* :class:`GemmWorkload`: ``C[m, n] = A[m, k] @ B[k, n]`` in a dtype (a 2-D
  convolution enters as its implicit GEMM, :func:`conv2d_workload`), cut into
  ``chunks`` equal row chunks; :func:`resolve_workload` reads a spec's ``workload``;
* :class:`SplitDevice` / :class:`SplitPlatform`: the devices that share the
  work (CPU worker groups, GPU CUDA cores, GPU tensor cores), each with its
  memory pool (devices of one physical chip share memory and host link), its
  host link and its row granularity; :func:`resolve_platform` reads a spec's ``platform``.

Their costs are :mod:`dse.mapping.split.model`'s (which keeps these names importable).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dse.cost.calibrated import CALIBRATION_DEVICE
from dse.errors import SpecError
from dse.inputs import catalog
from dse.model.dtypes import DTYPE_BYTES
from dse.model.platform import Platform, load_platform, platform_from_dict
from dse.util.validation import spec_error_from_validation

#: Device kinds that can take a share of the rows (each costed by the calibration device that
#: :data:`dse.cost.calibrated.CALIBRATION_DEVICE` names for it; a CPU worker group of N threads is ``cpu:tN``).
SPLIT_KINDS = ("cpu", "gpu", "tensorcore")
#: Largest chunk count (the tables hold chunks + 1 part sizes per device).
MAX_CHUNKS = 4096


def tensorcore_granularity(dtype: str) -> int:
    """Rows of a tensor-core tile edge for ``dtype``: 16 for 8-bit types, 8 otherwise (fp16/bf16/tf32 MMA)."""
    return 16 if dtype in ("int8", "fp8") else 8


# --------------------------------------------------------------------------- workload


@dataclass(frozen=True)
class GemmWorkload:
    """``C[m, n] = A[m, k] @ B[k, n]`` in ``dtype``, split along ``m`` into ``chunks`` chunks.

    ``kernel`` is ``gemm`` or ``conv2d`` (then ``m, n, k`` are its implicit-GEMM
    dimensions and ``conv`` keeps the convolution's own figures).
    """

    name: str
    m: int
    n: int
    k: int
    dtype: str = "fp32"
    chunks: int = 20
    kernel: str = "gemm"
    conv: tuple[tuple[str, int], ...] = ()

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    @property
    def ops(self) -> Any:
        """A split workload is no op graph: the graph cost models (``roofline``, ``table``) that read
        ``ops`` get a :class:`SpecError` instead."""
        raise SpecError(self.name, "cost_model", "roofline or table",
                        "the split family's cost models are analytic and calibrated")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GemmSpec(_Strict):
    kernel: str = "gemm"
    m: int = Field(gt=0, le=2**24)
    n: int = Field(gt=0, le=2**24)
    k: int = Field(gt=0, le=2**24)
    dtype: str = "fp32"
    chunks: int = Field(default=20, ge=1, le=MAX_CHUNKS)
    name: str | None = None


class Conv2dSpec(_Strict):
    kernel: str = "conv2d"
    batch: int = Field(default=1, gt=0, le=2**16)
    c_in: int = Field(gt=0, le=2**16)
    height: int = Field(gt=0, le=2**16)
    width: int = Field(gt=0, le=2**16)
    c_out: int = Field(gt=0, le=2**16)
    kernel_h: int = Field(default=3, gt=0, le=2**10)
    kernel_w: int = Field(default=3, gt=0, le=2**10)
    stride: int = Field(default=1, gt=0, le=2**10)
    padding: int = Field(default=0, ge=0, le=2**10)
    dtype: str = "fp32"
    chunks: int = Field(default=20, ge=1, le=MAX_CHUNKS)
    name: str | None = None


def _check_dtype(dtype: str, source: str, field_name: str = "dtype") -> None:
    if dtype not in DTYPE_BYTES:
        raise SpecError(source, field_name, dtype, f"dtypes are {', '.join(DTYPE_BYTES)}")


def gemm_workload(m: int, n: int, k: int, dtype: str = "fp32", *, chunks: int = 20,
                  source: str = "<workload>", name: str | None = None) -> GemmWorkload:
    """A validated GEMM workload; raises :class:`SpecError` for a non-positive size or an unknown dtype."""
    for field_name, value in (("m", m), ("n", n), ("k", k), ("chunks", chunks)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise SpecError(source, field_name, value, "must be a positive integer")
    if chunks > MAX_CHUNKS:
        raise SpecError(source, "chunks", chunks, f"at most {MAX_CHUNKS}")
    _check_dtype(dtype, source)
    return GemmWorkload(name or f"gemm_{m}x{n}x{k}_{dtype}", int(m), int(n), int(k), dtype, int(chunks))


def conv2d_workload(spec: Conv2dSpec, source: str = "<workload>") -> GemmWorkload:
    """The implicit GEMM of a 2-D convolution: ``m = batch * h_out * w_out``, ``n = c_out``, ``k = c_in * kh * kw``.

    Raises :class:`SpecError` when the kernel does not fit the padded input or the dtype is unknown.
    """
    _check_dtype(spec.dtype, source, "workload.dtype")
    h_out = (spec.height + 2 * spec.padding - spec.kernel_h) // spec.stride + 1
    w_out = (spec.width + 2 * spec.padding - spec.kernel_w) // spec.stride + 1
    if h_out <= 0 or w_out <= 0:
        raise SpecError(source, "workload.kernel_h", spec.kernel_h, "the kernel is larger than the padded input")
    m, n, k = spec.batch * h_out * w_out, spec.c_out, spec.c_in * spec.kernel_h * spec.kernel_w
    conv = tuple(spec.model_dump(exclude={"kernel", "dtype", "chunks", "name"}).items())
    return GemmWorkload(spec.name or f"conv2d_{m}x{n}x{k}_{spec.dtype}", m, n, k, spec.dtype, spec.chunks,
                        "conv2d", conv)


def resolve_workload(ref: Any, source: str, base: Any = None) -> GemmWorkload:
    """The spec's ``workload: {kernel: gemm, m:, n:, k:, dtype:, chunks:}`` (or ``kernel: conv2d`` with
    ``c_in, height, width, c_out, kernel_h, kernel_w, stride, padding, batch``); raises :class:`SpecError`."""
    if not isinstance(ref, Mapping):
        raise SpecError(source, "workload", ref, "the split family takes {kernel: gemm, m: M, n: N, k: K, dtype: fp32}")
    kernel = ref.get("kernel", "gemm")
    models: dict[str, type[BaseModel]] = {"gemm": GemmSpec, "conv2d": Conv2dSpec}
    if not isinstance(kernel, str) or kernel not in models:
        raise SpecError(source, "workload.kernel", kernel, "kernels are gemm and conv2d")
    try:
        spec = models[kernel].model_validate(dict(ref))
    except ValidationError as exc:
        err = spec_error_from_validation(source, exc, dict(ref))
        raise SpecError(source, f"workload.{err.field}", err.value, err.reason) from None
    if isinstance(spec, Conv2dSpec):
        return conv2d_workload(spec, source)
    assert isinstance(spec, GemmSpec)
    _check_dtype(spec.dtype, source, "workload.dtype")
    return GemmWorkload(spec.name or f"gemm_{spec.m}x{spec.n}x{spec.k}_{spec.dtype}", spec.m, spec.n, spec.k,
                        spec.dtype, spec.chunks)


# --------------------------------------------------------------------------- devices


@dataclass(frozen=True)
class SplitDevice:
    """One device that takes a share of the rows.

    ``fit_device`` names its calibration fit (``cpu:t2``, ``cuda``, ``tensorcore``);
    ``pool`` the physical chip whose memory (``mem_bytes``) and host link it
    shares with the other devices of that pool; ``link_gbps`` its host link
    (``None``: it works in host memory, no copies); ``granularity`` the row
    multiple its parts must respect; ``peak_tflops`` and ``mem_bw_gbps`` feed
    the analytic cost model (empty: calibrated only).
    """

    name: str
    kind: str
    fit_device: str
    mem_bytes: int
    pool: str
    active_w: float
    idle_w: float
    threads: int = 1
    link_gbps: float | None = None
    link_latency_us: float = 0.0
    link_pj_per_byte: float = 0.0
    granularity: int = 1
    peak_tflops: tuple[tuple[str, float], ...] = ()
    mem_bw_gbps: float = 0.0

    def peak_flops(self, dtype: str) -> float | None:
        """Peak FLOP/s for ``dtype``: tensor cores run fp32 inputs as tf32 and only listed types; other
        devices run an unlisted type at their fp32 rate (as :meth:`dse.model.platform.Device.peak_flops`); ``None``
        when neither is listed."""
        rates = dict(self.peak_tflops)
        key = "tf32" if self.kind == "tensorcore" and dtype == "fp32" else dtype
        if key in rates:
            return rates[key] * 1e12
        if self.kind != "tensorcore" and "fp32" in rates:  # CPUs and CUDA cores run other types at fp32 rate
            return rates["fp32"] * 1e12
        return None


@dataclass(frozen=True)
class SplitPlatform:
    """The devices that share one kernel, in row order (device 0 takes the first rows)."""

    name: str
    devices: tuple[SplitDevice, ...]

    @property
    def device_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.devices)


def host_memory_bytes() -> int:
    """Physical memory of this machine in bytes (``os.sysconf``; 16 GiB where unknown)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 16 * 2**30


def cpu_group_platform(groups: tuple[int, ...] | list[int], *, mem_bytes: int | None = None,
                       watts_per_thread: float = 15.0, gflops_per_thread: float = 0.0, mem_bw_gbps: float = 0.0,
                       source: str = "<platform>") -> SplitPlatform:
    """CPU worker groups of ``groups[i]`` BLAS threads each, named ``cpu:tN/i``, sharing host memory.

    ``watts_per_thread`` is an estimate of a busy core's power (no idle power is charged);
    ``gflops_per_thread`` (fp32; fp64 at half) and ``mem_bw_gbps`` (per group) enable the analytic
    cost model. Raises :class:`SpecError` for an empty list or a non-positive thread count.
    """
    if not groups:
        raise SpecError(source, "platform.cpu_groups", list(groups), "give at least one group")
    for i, t in enumerate(groups):
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t <= 0:
            raise SpecError(source, f"platform.cpu_groups[{i}]", t, "must be a positive integer (BLAS threads)")
    mem = host_memory_bytes() if mem_bytes is None else mem_bytes
    devices = tuple(SplitDevice(name=f"cpu:t{t}/{i}", kind="cpu", fit_device=f"cpu:t{t}", mem_bytes=mem, pool="host",
                                active_w=watts_per_thread * t, idle_w=0.0, threads=int(t),
                                peak_tflops=(("fp32", gflops_per_thread * t * 1e-3), ("fp64", gflops_per_thread * t * 5e-4))
                                if gflops_per_thread > 0 else (), mem_bw_gbps=mem_bw_gbps)
                    for i, t in enumerate(groups))
    return SplitPlatform("cpu_groups_" + "_".join(map(str, groups)), devices)


def platform_devices(platform: Platform, dtype: str, source: str = "<platform>") -> SplitPlatform:
    """A catalog platform's CPU, GPU and tensor-core devices as split devices.

    Tensor-core device ``i`` shares the memory and host link of GPU device ``i``
    (a third device on the same chip); accelerators reach host memory over
    their route to the first CPU. Raises :class:`SpecError` for a device kind the
    family cannot split onto.
    """
    cpus = [d for d in platform.devices if d.kind == "cpu"]
    gpus = [d for d in platform.devices if d.kind == "gpu"]
    tensor = [d for d in platform.devices if d.kind == "tensorcore"]
    out = []
    for i, dev in enumerate(platform.devices):
        if dev.kind not in SPLIT_KINDS:
            raise SpecError(source, f"platform.devices[{i}].kind", dev.kind,
                            f"the split family runs on {', '.join(SPLIT_KINDS)} devices")
        pool, mem = "host", dev.mem_gib
        if dev.kind == "gpu":
            pool = dev.name
        elif dev.kind == "tensorcore":
            j = tensor.index(dev)
            owner = gpus[j] if j < len(gpus) else dev
            pool, mem = owner.name, owner.mem_gib
        link: tuple[float | None, float, float] = (None, 0.0, 0.0)
        if dev.kind != "cpu" and cpus:
            try:
                link = platform.route(cpus[0].name, dev.name)
            except ValueError:
                raise SpecError(source, "platform.links", dev.name, f"no link from {cpus[0].name} to {dev.name}") from None
        out.append(SplitDevice(
            name=dev.name, kind=dev.kind, fit_device=CALIBRATION_DEVICE[dev.kind], mem_bytes=int(mem * 2**30), pool=pool,
            active_w=dev.active_w, idle_w=dev.idle_w, link_gbps=link[0], link_latency_us=link[1],
            link_pj_per_byte=link[2], granularity=tensorcore_granularity(dtype) if dev.kind == "tensorcore" else 1,
            peak_tflops=tuple(sorted(dev.peak_tflops.items())), mem_bw_gbps=dev.mem_bw_gbps))
    return SplitPlatform(platform.name, tuple(out))


def resolve_platform(ref: Any, source: str, base: Any = None) -> Platform | SplitPlatform:
    """The spec's ``platform``: a catalog name or path, an inline platform mapping, or
    ``{cpu_groups: [1, 1]}`` (CPU worker groups of this machine). Raises :class:`SpecError`."""
    if isinstance(ref, Mapping):
        if "cpu_groups" in ref:
            known = ("cpu_groups", "watts_per_thread", "gflops_per_thread", "mem_bw_gbps", "name")
            extra = sorted(set(ref) - set(known))
            if extra:
                raise SpecError(source, f"platform.{extra[0]}", ref[extra[0]],
                                f"cpu_groups platforms take {', '.join(known)}")
            groups = ref["cpu_groups"]
            if not isinstance(groups, list):
                raise SpecError(source, "platform.cpu_groups", groups, "a list of BLAS thread counts, e.g. [1, 1]")
            figures = {}
            for key, default in (("watts_per_thread", 15.0), ("gflops_per_thread", 0.0), ("mem_bw_gbps", 0.0)):
                value = ref.get(key, default)
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e9:
                    raise SpecError(source, f"platform.{key}", value, "must be a number in [0, 1e9)")
                figures[key] = float(value)
            plat = cpu_group_platform(groups, watts_per_thread=figures["watts_per_thread"],
                                      gflops_per_thread=figures["gflops_per_thread"],
                                      mem_bw_gbps=figures["mem_bw_gbps"], source=source)
            return SplitPlatform(str(ref.get("name", plat.name)), plat.devices)
        return platform_from_dict(ref, f"{source} (platform)")
    found = catalog.find("platforms", str(ref), Path(base) if base is not None else None)
    if found is None:
        raise SpecError(source, "platform", ref,
                        f"no such platform file or catalog name; catalog platforms: {', '.join(catalog.platforms())}")
    return load_platform(found)


def as_split_platform(platform: Platform | SplitPlatform, dtype: str, source: str = "<platform>") -> SplitPlatform:
    """``platform`` as split devices (catalog platforms through :func:`platform_devices`)."""
    return platform if isinstance(platform, SplitPlatform) else platform_devices(platform, dtype, source)
