"""Graph checks in plain Python for the validation of every spec: a topological order and
connectivity, without importing networkx (which costs a few tenths of a second to import)."""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Sequence


def lexicographic_topological_order(n: int, edges: Iterable[tuple[int, int]]) -> list[int]:
    """The nodes ``0..n-1`` in topological order, the smallest ready node first (as networkx's
    ``lexicographical_topological_sort``). With a cycle the list is shorter than ``n``: it stops where
    every node left waits on a cycle."""
    successors: list[list[int]] = [[] for _ in range(n)]
    waiting = [0] * n
    for s, d in edges:
        successors[s].append(d)
        waiting[d] += 1
    ready = [i for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for d in successors[node]:
            waiting[d] -= 1
            if waiting[d] == 0:
                heapq.heappush(ready, d)
    return order


def is_connected(nodes: Sequence[Hashable], pairs: Iterable[tuple[Hashable, Hashable]]) -> bool:
    """Whether the undirected graph over ``nodes`` with edges ``pairs`` is connected (True for one node;
    False for none, as networkx)."""
    if not nodes:
        return False
    neighbours: dict[Hashable, list[Hashable]] = {v: [] for v in nodes}
    for a, b in pairs:
        neighbours[a].append(b)
        neighbours[b].append(a)
    seen = {nodes[0]}
    stack = [nodes[0]]
    while stack:
        for w in neighbours[stack.pop()]:
            if w not in seen:
                seen.add(w)
                stack.append(w)
    return len(seen) == len(neighbours)
