"""Every device pair's route at once, in numpy, for platforms whose shortest link paths are unique.

:meth:`Platform.route <dse.model.platform.Platform.route>` takes, between two devices without a direct
link, the path of fewest links with the widest bottleneck (the first in networkx's order when several
tie). Where every pair has exactly one path of fewest links (a star, a tree, a chain: the large generated
platforms), there is nothing to choose: the route is that path, and a breadth-first search from every
device at once, one level of hops at a time over the links as arrays, gives all of them
(:func:`unique_route_arrays`). A platform with two shortest paths between some pair is left to the
per-pair search (the function returns None). The sums run from the source on, hop by hop, as the
per-pair search adds them, so the floats are the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dse.model.platform import Platform

__all__ = ["MAX_SOURCE_EDGE_CELLS", "unique_route_arrays"]

#: No search past devices x directed links cells: a platform that large and that sparse is left to the
#: per-pair search (a 1,024-device star has 2.1 million).
MAX_SOURCE_EDGE_CELLS = 50_000_000


def unique_route_arrays(platform: Platform) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(bandwidth_gbps, latency_us, energy_pj_per_byte)``, each an (m, m) array over the platform's
    devices in order: every connected pair's route (diagonal inf, 0, 0; a pair without a link path NaN);
    None when some connected pair has more than one path of fewest links, a link names a device the
    platform lacks, or the search would pass :data:`MAX_SOURCE_EDGE_CELLS`."""
    names = platform.device_names
    m = len(names)
    index = {name: j for j, name in enumerate(names)}
    last: dict[tuple[int, int], tuple[float, float, float]] = {}  # the last of parallel links counts
    for link in platform.links:
        a, b = index.get(link.a), index.get(link.b)
        if a is None or b is None:
            return None
        if a != b:
            last[(a, b)] = last[(b, a)] = (link.bandwidth_gbps, link.latency_us, link.energy_pj_per_byte)
    if m * len(last) > MAX_SOURCE_EDGE_CELLS:
        return None
    tails = np.array([a for a, _ in last], dtype=np.int64)
    heads = np.array([b for _, b in last], dtype=np.int64)
    hop = np.array(list(last.values()), dtype=float).reshape(-1, 3)
    hops = np.full((m, m), -1, dtype=np.int64)  # links from the source; -1: not reached
    bw, lat, epb = np.full((m, m), np.nan), np.full((m, m), np.nan), np.full((m, m), np.nan)
    diagonal = np.arange(m)
    hops[diagonal, diagonal] = 0
    bw[diagonal, diagonal], lat[diagonal, diagonal], epb[diagonal, diagonal] = np.inf, 0.0, 0.0
    level = 0
    while True:
        sources, edges = np.nonzero(hops[:, tails] == level)  # links leaving the devices reached last level
        cells = sources * m + heads[edges]
        new = hops.ravel()[cells] == -1
        sources, edges, cells = sources[new], edges[new], cells[new]
        if not len(cells):
            return bw, lat, epb
        if len(np.unique(cells)) != len(cells):  # a device reached over two links at once: two shortest paths
            return None
        level += 1
        before = tails[edges]
        hops.ravel()[cells] = level
        bw.ravel()[cells] = np.minimum(bw[sources, before], hop[edges, 0])
        lat.ravel()[cells] = lat[sources, before] + hop[edges, 1]
        epb.ravel()[cells] = epb[sources, before] + hop[edges, 2]
