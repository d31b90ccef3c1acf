"""The plain-Python graph checks agree with networkx (brute force over random graphs)."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from dse.util.graphs import is_connected, lexicographic_topological_order


@pytest.mark.parametrize("seed", range(40))
def test_topological_order_is_networkx_lexicographic_one_or_stops_at_a_cycle(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 12)
    edges = {(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 2 * n))}
    edges = {(s, d) for s, d in edges if s != d and (seed % 3 == 0 or s < d)}  # every third may hold a cycle
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    order = lexicographic_topological_order(n, edges)
    if nx.is_directed_acyclic_graph(graph):
        assert order == list(nx.lexicographical_topological_sort(graph))
    else:
        assert len(order) < n


@pytest.mark.parametrize("seed", range(30))
def test_connected_as_networkx_says(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [f"d{i}" for i in range(rng.randint(1, 8))]
    pairs = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randint(0, 8))]
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(pairs)
    assert is_connected(nodes, pairs) == nx.is_connected(graph)
