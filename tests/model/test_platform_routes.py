"""Platform routes (:meth:`dse.model.platform.Platform.route`) against a brute-force oracle.

The oracle enumerates, for every ordered pair of devices, all paths of fewest links
(:func:`networkx.all_shortest_paths`) and keeps the first one with the widest bottleneck, summing its
latency and energy from the source on: the rule the platform documents, and how the routes were
computed before one search per source device replaced two per pair. The tables must be identical,
values and order, on every catalog platform and on random ones with ties, parallel links and
disconnected devices.
"""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dse.inputs import catalog
from dse.model.platform import Device, Link, Platform, _all_routes, load_platform
from dse.model.unique_routes import unique_route_arrays


def oracle_routes(platform: Platform) -> dict[tuple[str, str], tuple[float, float, float]]:
    graph = nx.Graph()
    graph.add_nodes_from(platform.device_names)
    for link in platform.links:
        graph.add_edge(link.a, link.b, link=link)
    routes = {}
    for a, b in itertools.permutations(platform.device_names, 2):
        if not nx.has_path(graph, a, b):
            continue
        best = None
        for path in nx.all_shortest_paths(graph, a, b):
            hops = [graph.edges[u, v]["link"] for u, v in itertools.pairwise(path)]
            value = (min(h.bandwidth_gbps for h in hops), sum(h.latency_us for h in hops),
                     sum(h.energy_pj_per_byte for h in hops))
            if best is None or value[0] > best[0]:
                best = value
        routes[(a, b)] = best
    return routes


def test_catalog_platforms_route_as_the_oracle() -> None:
    names = catalog.platforms()
    assert names
    for name in names:
        platform = load_platform(catalog.models_dir() / "platforms" / f"{name}.yaml")
        assert list(_all_routes(platform).items()) == list(oracle_routes(platform).items()), name


def _device(name: str) -> Device:
    return Device(name=name, kind="cpu", peak_tflops={"fp32": 1.0}, mem_bw_gbps=10.0, mem_gib=1.0, idle_w=1.0,
                  active_w=2.0)


@st.composite
def platforms(draw: st.DrawFn) -> Platform:
    """2 to 10 devices and up to 25 links between random pairs (parallel links too), bandwidths from a
    small set so that many paths tie, latencies and energies that sum differently along each path."""
    n = draw(st.integers(2, 10))
    names = [f"d{i}" for i in range(n)]
    pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] != p[1])
    links = []
    for a, b in draw(st.lists(pairs, max_size=25)):
        links.append(Link(names[a], names[b], bandwidth_gbps=draw(st.sampled_from([1.0, 2.0, 4.0])),
                          latency_us=draw(st.floats(0.0, 10.0)), energy_pj_per_byte=draw(st.floats(0.0, 50.0))))
    order = draw(st.permutations(names))  # device order decides the search order
    return Platform("random", tuple(_device(x) for x in order), tuple(links))


@settings(max_examples=300, deadline=None)
@given(platforms())
def test_random_platforms_route_as_the_oracle(platform: Platform) -> None:
    assert list(_all_routes(platform).items()) == list(oracle_routes(platform).items())


def test_a_grid_with_many_tied_paths_takes_the_first_widest_in_networkx_order() -> None:
    # a 4x4 grid: corner to corner has 20 paths of 6 links; one narrow link in the middle of the first ones
    names = [f"n{r}{c}" for r in range(4) for c in range(4)]
    links = []
    for r, c in itertools.product(range(4), range(4)):
        for dr, dc in ((0, 1), (1, 0)):
            if r + dr < 4 and c + dc < 4:
                narrow = (r, c, dr, dc) == (1, 1, 0, 1)
                links.append(Link(f"n{r}{c}", f"n{r + dr}{c + dc}", 1.0 if narrow else 2.0,
                                  latency_us=0.1 * (r + 1) + 0.01 * c, energy_pj_per_byte=float(r * 4 + c)))
    platform = Platform("grid", tuple(_device(x) for x in names), tuple(links))
    assert list(_all_routes(platform).items()) == list(oracle_routes(platform).items())


def _oracle_arrays(platform: Platform) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    names = platform.device_names
    arrays = [np.full((len(names), len(names)), np.nan) for _ in range(3)]
    for k, value in enumerate((math.inf, 0.0, 0.0)):
        np.fill_diagonal(arrays[k], value)
    for (a, b), route in oracle_routes(platform).items():
        for k in range(3):
            arrays[k][names.index(a), names.index(b)] = route[k]
    return arrays[0], arrays[1], arrays[2]


def _has_tied_shortest_paths(platform: Platform) -> bool:
    graph = nx.Graph()
    graph.add_nodes_from(platform.device_names)
    graph.add_edges_from((link.a, link.b) for link in platform.links if link.a != link.b)
    return any(nx.has_path(graph, a, b) and len(list(itertools.islice(nx.all_shortest_paths(graph, a, b), 2))) > 1
               for a, b in itertools.permutations(platform.device_names, 2))


@st.composite
def trees(draw: st.DrawFn) -> Platform:
    """A random tree of 2 to 12 devices (each device links to one listed before it), some links doubled
    (the last counts), sometimes one device left unlinked: one shortest path per connected pair."""
    n = draw(st.integers(2, 12))
    names = [f"d{i}" for i in range(n)]
    links = []
    for i in range(1, n - draw(st.integers(0, 1))):
        parent = draw(st.integers(0, i - 1))
        for _ in range(draw(st.integers(1, 2))):
            links.append(Link(names[parent], names[i], bandwidth_gbps=draw(st.sampled_from([1.0, 2.0, 4.0])),
                              latency_us=draw(st.floats(0.0, 10.0)), energy_pj_per_byte=draw(st.floats(0.0, 50.0))))
    order = draw(st.permutations(names))
    return Platform("tree", tuple(_device(x) for x in order), tuple(links))


@settings(max_examples=150, deadline=None)
@given(st.one_of(platforms(), trees()))
def test_unique_routes_at_once_equal_the_oracle_or_decline_where_paths_tie(platform: Platform) -> None:
    # oracle: networkx's shortest paths per pair; the arrays must hold its floats exactly (NaN: no path)
    arrays = unique_route_arrays(platform)
    assert (arrays is None) == _has_tied_shortest_paths(platform)
    if arrays is not None:
        for got, expected in zip(arrays, _oracle_arrays(platform), strict=True):
            assert np.array_equal(got, expected, equal_nan=True)


def test_a_star_of_hosts_routes_every_pair_through_the_hub() -> None:
    # by hand: leaves 1 and 2 of a hub 0 meet over both their links: min(4, 2) GB/s, 1 + 3 us, 5 + 7 pJ/B
    links = (Link("d0", "d1", 4.0, 1.0, 5.0), Link("d0", "d2", 2.0, 3.0, 7.0))
    bw, lat, epb = unique_route_arrays(Platform("star", tuple(_device(f"d{j}") for j in range(3)), links))
    assert (bw[1, 2], lat[1, 2], epb[1, 2]) == (bw[2, 1], lat[2, 1], epb[2, 1]) == (2.0, 4.0, 12.0)
