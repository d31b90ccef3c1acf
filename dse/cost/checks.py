"""What every cost model shares: integer entries checked against int64 (errors name the op, the
device and the value), worst-case totals checked against :data:`~dse.cost.tables.MAX_TOTAL`, and the
assembly of the per-op arrays with the platform's routes into :class:`~dse.cost.tables.CostTables`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dse.cost.tables import _INT64_LIMIT, MAX_TOTAL, CostTables
from dse.errors import SpecError
from dse.model.device_defaults import cost_path
from dse.model.platform import Device, Platform
from dse.model.unique_routes import unique_route_arrays
from dse.model.workload import Op, Workload
from dse.util.rounding import ceil_all, ceil_int


class _Unfit(OverflowError):
    """A value that does not fit an int64 table entry: ``what`` names the table."""

    def __init__(self, what: str, value: float) -> None:
        super().__init__(f"{what} {value!r} does not fit int64")
        self.what = what
        self.value = value


def _ceil_int(x: float, what: str = "value") -> int:
    """``ceil(x)`` as an int (0 for ``x <= 0``; see :func:`dse.util.rounding.ceil_int`).

    Raises :class:`_Unfit` (an ``OverflowError``) when ``x`` is NaN or its ceiling does not fit int64.
    """
    if not x < _INT64_LIMIT:
        raise _Unfit(what, x)
    return ceil_int(x) if x > 0 else 0


def _source(workload: Workload, platform: Platform) -> str:
    return f"workload {workload.name!r} on platform {platform.name!r}"


def _unit(what: str, time_unit: str) -> str:
    return {"energy": "pJ", "transfer_energy": "pJ", "mem": "bytes", "edge_bytes": "bytes",
            "idle_power": "mW", "mem_capacity": "bytes"}.get(what, time_unit)


def _too_large(source: str, field_name: str, value: float, unit: str, whose: str) -> SpecError:
    """The :class:`SpecError` of a table entry ``value`` (in ``unit``) past int64."""
    return SpecError(source, field_name, float(f"{value:.4g}"),
                     f"{whose} gives {value:.3g} {unit}, past the int64 cost tables (< {_INT64_LIMIT:.3g} "
                     f"{unit}): the workload's figures are too large for the platform's rates")


def _cell_error(workload: Workload, platform: Platform, i: int, j: int, exc: _Unfit, time_unit: str) -> SpecError:
    """The :class:`SpecError` of op ``i`` on device ``j`` whose ``exc.what`` entry does not fit int64."""
    op, dev = workload.ops[i], platform.devices[j]
    return _too_large(_source(workload, platform), f"{exc.what}[{op.name}, {dev.name}]", exc.value,
                      _unit(exc.what, time_unit), f"op {op.name!r} on device {dev.name!r}")


def _names(names: tuple[str, ...], limit: int = 20) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def check_device_costs(workload: Workload, platform: Platform) -> None:
    """Raise :class:`SpecError` when an op's ``device_costs`` names a device the platform lacks.

    The error names the op, the device and lists the platform's devices.
    """
    names = set(platform.device_names)
    for i, op in enumerate(workload.ops):
        for dev in op.device_costs:
            if dev not in names:
                raise SpecError(_source(workload, platform), f"ops[{i}].device_costs", dev,
                                f"op {op.name!r} has a cost for device {dev!r}, which platform "
                                f"{platform.name!r} does not have; its devices are {_names(platform.device_names)}")


def _check_fits(raw: np.ndarray, what: str, unit: str, source: str,
                where: Callable[[tuple[int, ...]], tuple[str, str]]) -> None:
    """Raise :class:`SpecError` at the first entry of float array ``raw`` whose ceiling does not fit int64;
    ``where(index)`` names that entry: ``(field subscript, whose figures)``."""
    bad = ~(raw < _INT64_LIMIT)  # NaN too
    if raw.size and bad.any():
        index = tuple(int(k) for k in np.unravel_index(int(np.argmax(bad)), raw.shape))
        field_name, whose = where(index)
        raise _too_large(source, f"{what}[{field_name}]", float(raw[index]), unit, whose)


def _check_totals(workload: Workload, platform: Platform, time: np.ndarray, energy: np.ndarray, mem: np.ndarray,
                  allowed: np.ndarray, edge_time_max: np.ndarray, edge_energy_max: np.ndarray, idle: np.ndarray,
                  send_time: np.ndarray | None, time_unit: str) -> None:
    """Raise :class:`SpecError` when a worst-case total of a mapping could pass :data:`MAX_TOTAL`.

    Totals, summed as floats so that they cannot wrap: time = over ops, their slowest allowed
    device + over edges, their slowest route (``edge_time_max``) and one send; energy = the same
    for energy + every device's idle power over that time; memory = over ops, their largest
    footprint. The error names the total and its largest term (an op and its device, an edge, or
    the idle power).
    """
    n_edges = len(edge_time_max)
    sends = float(send_time.max()) * n_edges if send_time is not None and send_time.size else 0.0
    span = 0.0
    for what, table, transfers in (("time", time, edge_time_max), ("energy", energy, edge_energy_max),
                                   ("mem", mem, None)):
        per_op = np.where(allowed, table, 0).astype(np.float64)
        op_max = per_op.max(axis=1)
        edge_max = np.zeros(0)
        if transfers is not None and n_edges:
            edge_max = transfers.astype(np.float64)
        extra = {"time": sends, "energy": float(idle.astype(np.float64).sum()) * span}.get(what, 0.0)
        total = float(op_max.sum()) + float(edge_max.sum()) + extra
        if what == "time":
            span = total
        if total <= MAX_TOTAL:
            continue
        unit = _unit(what, time_unit)
        i = int(np.argmax(op_max))
        terms = [(float(op_max[i]), f"op {workload.ops[i].name!r} on device "
                                    f"{platform.devices[int(np.argmax(per_op[i]))].name!r}")]
        if edge_max.size:
            k = int(np.argmax(edge_max))
            s, d = workload.edges[k]
            terms.append((float(edge_max[k]), f"edge {workload.ops[s].name!r} -> {workload.ops[d].name!r}"))
        if what == "energy":
            terms.append((extra, "the devices' idle power over that time"))
        value, whose = max(terms)
        raise SpecError(_source(workload, platform), f"total {what}", float(f"{total:.4g}"),
                        f"a mapping could sum to {total:.3g} {unit}, past what the int64 evaluators hold "
                        f"({MAX_TOTAL:.3g} {unit}); largest term: {whose} ({value:.3g} {unit})")


def pair_maximum(latency: np.ndarray, per_unit: np.ndarray, sizes: np.ndarray,
                 chunk_cells: int = 1 << 22) -> np.ndarray:
    """Per size ``s`` the largest ``latency[a, b] + s * per_unit[a, b]`` over the device pairs ``a != b``
    (float, computed as the cost tables do, so bit-identical to the maximum over a full table).

    Pairs dominated by another (no larger latency nor rate) are dropped first when every figure is
    finite and every size nonnegative, so a platform of uniform links costs O(sizes); 0 without pairs.
    """
    m = latency.shape[0]
    off = ~np.eye(m, dtype=bool)
    lat, rate = latency[off], per_unit[off]
    sizes = np.asarray(sizes, dtype=np.float64)
    if not lat.size:
        return np.zeros(len(sizes))
    if np.isfinite(lat).all() and np.isfinite(rate).all() and (sizes >= 0).all():
        order = np.lexsort((-rate, -lat))  # latency descending, then rate descending
        lat, rate = lat[order], rate[order]
        keep = rate > np.concatenate([[-np.inf], np.maximum.accumulate(rate[:-1])])  # not dominated, no repeat
        lat, rate = lat[keep], rate[keep]
    out = np.empty(len(sizes))
    step = max(1, chunk_cells // len(lat))
    with np.errstate(over="ignore", invalid="ignore"):  # inf / NaN are reported by the caller
        for lo in range(0, len(sizes), step):
            out[lo: lo + step] = (lat[None, :] + sizes[lo: lo + step, None] * rate[None, :]).max(axis=1)
    return out



def _type_ok(op: Op, dev: Device) -> bool:
    return op.device_type is None or op.device_type in (dev.kind, dev.name)


def route_arrays(platform: Platform) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per device pair ``platform.route``'s (bandwidth_gbps, latency_us, energy_pj_per_byte) as three (m, m)
    arrays (diagonal: inf, 0, 0). Where every pair has one shortest link path, all at once
    (:func:`~dse.model.unique_routes.unique_route_arrays`). Otherwise pairs with a direct link read it (the last
    one listed, as the route graph keeps it); only the others are routed, so a fully linked platform costs O(links), not a
    path search per pair. Raises ``ValueError`` when no chain of links connects two devices."""
    devices = platform.devices
    unique = unique_route_arrays(platform)  # a star, a tree, a chain: every route at once
    if unique is not None:
        rows, cols = np.nonzero(np.isnan(unique[0]))
        if len(rows):  # no link path: route() says which pair
            platform.route(devices[rows[0]].name, devices[cols[0]].name)
        return unique
    m = len(devices)
    index = {d.name: j for j, d in enumerate(devices)}
    bw, lat, epb = np.full((m, m), np.nan), np.full((m, m), np.nan), np.full((m, m), np.nan)
    diagonal = np.arange(m)
    bw[diagonal, diagonal], lat[diagonal, diagonal], epb[diagonal, diagonal] = np.inf, 0.0, 0.0
    for link in platform.links:
        a, b = index.get(link.a), index.get(link.b)
        if a is None or b is None or a == b:
            continue
        bw[a, b] = bw[b, a] = link.bandwidth_gbps
        lat[a, b] = lat[b, a] = link.latency_us
        epb[a, b] = epb[b, a] = link.energy_pj_per_byte
    rows, cols = np.nonzero(np.isnan(bw))
    if len(rows):
        routes, names = platform.routes(), [d.name for d in devices]
        pairs = [(names[a], names[b]) for a, b in zip(rows.tolist(), cols.tolist(), strict=True)]
        found = [routes.get(pair) for pair in pairs]
        if None in found:  # no link path: route() says which pair
            platform.route(*pairs[found.index(None)])
        bw[rows, cols], lat[rows, cols], epb[rows, cols] = np.array(found, dtype=float).T
    return bw, lat, epb


def ns_routes(platform: Platform) -> np.ndarray:
    """Per device pair (latency ns, ns per byte, pJ per byte), shape (m, m, 3); zeros on the diagonal."""
    bw, lat, epb = route_arrays(platform)
    routes = np.stack([lat * 1e3, 1.0 / bw, epb], axis=-1)  # 1 / (GB/s) = ns per byte
    diagonal = np.arange(len(bw))
    routes[diagonal, diagonal] = 0.0
    return routes


def _edge_name(workload: Workload, k: int) -> str:
    s, d = workload.edges[k]
    return f"{workload.ops[s].name} -> {workload.ops[d].name}"


def _checked_edge_sizes(workload: Workload, source: str) -> np.ndarray:
    """The workload's edge sizes (bytes, float64); :class:`SpecError` naming the first edge past int64."""
    raw_bytes = np.asarray(workload.edge_bytes, dtype=np.float64)
    _check_fits(raw_bytes, "edge_bytes", "bytes", source,
                lambda ix: (_edge_name(workload, ix[0]), f"edge {_edge_name(workload, ix[0])}"))
    return raw_bytes


def _checked_device_figures(platform: Platform, source: str) -> tuple[np.ndarray, np.ndarray]:
    """Per device its idle power (mW, rounded up) and memory capacity (bytes), int64; :class:`SpecError`
    naming the first device whose figure is past int64."""
    names = platform.device_names
    raw_idle = np.asarray([d.idle_w * 1e3 for d in platform.devices], dtype=np.float64)
    raw_capacity = np.asarray([d.mem_gib * 2**30 for d in platform.devices], dtype=np.float64)
    _check_fits(raw_idle, "idle_power", "mW", source, lambda ix: (names[ix[0]], f"device {names[ix[0]]!r}"))
    _check_fits(raw_capacity, "mem_capacity", "bytes", source, lambda ix: (names[ix[0]], f"device {names[ix[0]]!r}"))
    idle = np.asarray([_ceil_int(d.idle_w * 1e3) for d in platform.devices], dtype=np.int64)
    capacity = np.asarray([int(d.mem_gib * 2**30) for d in platform.devices], dtype=np.int64)
    return idle, capacity


def check_one_device(workload: Workload, platform: Platform, time: np.ndarray, energy: np.ndarray,
                     mem: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """The idle power (mW, int64, per device) of a one-device platform's tables; raises the
    :class:`SpecError` :func:`_assemble` raises for those tables (an edge size, the idle power or the
    memory capacity past int64, a worst-case total past :data:`~dse.cost.tables.MAX_TOTAL`); its
    transfers, device to itself, cost nothing."""
    source = _source(workload, platform)
    _checked_edge_sizes(workload, source)
    idle, _ = _checked_device_figures(platform, source)
    free = np.zeros(len(workload.edges), dtype=np.int64)
    _check_totals(workload, platform, time, energy, mem, allowed, free, free, idle, None, "ns")
    return idle


def _assemble(
    workload: Workload,
    platform: Platform,
    time: np.ndarray,
    energy: np.ndarray,
    mem: np.ndarray,
    allowed: np.ndarray,
    routes: np.ndarray,
    *,
    time_unit: str = "ns",
    seconds_per_time_unit: float = 1e-9,
    send_time: np.ndarray | None = None,
    display_time_unit: str = "ms",
    display_per_time_unit: float = 1e-6,
) -> CostTables:
    """Fill in edges and transfers (``routes`` as from :func:`ns_routes`) and build the tables.

    Raises :class:`SpecError` when an entry or a worst-case total does not fit int64.
    """
    source = _source(workload, platform)
    names = platform.device_names
    edges = np.asarray(workload.edges, dtype=np.int64).reshape(-1, 2)
    raw_bytes = _checked_edge_sizes(workload, source)
    edge_bytes = np.asarray([_ceil_int(b) for b in workload.edge_bytes], dtype=np.int64)

    def edge(k: int) -> str:
        return _edge_name(workload, k)

    diag = np.arange(len(platform.devices))
    latency, per_byte, epb = (np.array(routes[..., k], dtype=np.float64) for k in range(3))
    for rate in (latency, per_byte, epb):
        rate[diag, diag] = 0.0
    edge_max = {}
    for what, lat, rate in (("transfer_time", latency, per_byte), ("transfer_energy", np.zeros_like(epb), epb)):
        raw_max = pair_maximum(lat, rate, raw_bytes)
        bad = ~(raw_max < _INT64_LIMIT)
        if bad.any():  # name the first entry (edge, then device pair) past int64
            k = int(np.argmax(bad))
            with np.errstate(over="ignore", invalid="ignore"):
                row = lat + raw_bytes[k] * rate
            row[diag, diag] = 0

            def where(ix: tuple[int, ...], k: int = k) -> tuple[str, str]:
                return (f"{edge(k)}, {names[ix[1]]} -> {names[ix[2]]}",
                        f"edge {edge(k)} from device {names[ix[1]]!r} to {names[ix[2]]!r}")

            _check_fits(row[None], what, _unit(what, time_unit), source, where)
        edge_max[what] = ceil_all(np.maximum(raw_max, 0.0)).clip(min=0).astype(np.int64)
    idle, capacity = _checked_device_figures(platform, source)
    _check_totals(workload, platform, time, energy, mem, allowed, edge_max["transfer_time"],
                  edge_max["transfer_energy"], idle, send_time, time_unit)
    return CostTables(
        op_names=tuple(op.name for op in workload.ops),
        device_names=platform.device_names,
        time=time,
        energy=energy,
        mem=mem,
        allowed=allowed,
        edges=edges,
        edge_bytes=edge_bytes,
        idle_power_mw=idle,
        mem_capacity=capacity,
        send_time=send_time if send_time is not None else np.zeros(idle.shape[0], dtype=np.int64),
        time_unit=time_unit,
        seconds_per_time_unit=seconds_per_time_unit,
        device_kinds=tuple(d.kind for d in platform.devices),
        device_classes=tuple(d.device_class for d in platform.devices),
        device_paths=tuple(cost_path(d.device_class, d.runtime, d.provenance) for d in platform.devices),
        op_classes=tuple(op.op_class for op in workload.ops),
        display_time_unit=display_time_unit,
        display_per_time_unit=display_per_time_unit,
        colocation=tuple(op.colocation for op in workload.ops),
        edge_size=raw_bytes.copy(),
        link_latency=latency,
        link_time_per_byte=per_byte,
        link_energy_per_byte=epb,
    )
