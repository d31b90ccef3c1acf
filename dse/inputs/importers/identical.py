"""``platform: {identical: P}``: P identical processors with free communication."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dse.errors import SpecError
from dse.model.platform import MAX_DEVICES, Device, Link, Platform


def identical_platform(spec: Mapping[str, Any] | int, source: str = "<spec>") -> Platform:
    """P identical processors ``p0..p{P-1}`` (kind generic, speed 1) joined by free links.

    Raises :class:`SpecError` when P is not an integer in [1, MAX_DEVICES] or the mapping has other keys.
    """
    count = spec.get("identical") if isinstance(spec, Mapping) else spec
    if isinstance(spec, Mapping) and set(spec) - {"identical"}:
        extra = sorted(set(spec) - {"identical"})[0]
        raise SpecError(source, f"platform.{extra}", spec[extra], "the identical shorthand takes only 'identical'")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_DEVICES:
        raise SpecError(source, "platform.identical", count, f"must be an integer in [1, {MAX_DEVICES}]")
    devices = tuple(Device(f"p{i}", "generic", {}, 1.0, 1.0, 0.0, 1.0, speed=1.0) for i in range(count))
    links = tuple(Link(a.name, b.name, 1e15, 0.0) for i, a in enumerate(devices) for b in devices[i + 1:])
    return Platform(f"identical-{count}", devices, links, "identical processors, free communication")
