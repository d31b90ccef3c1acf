"""The vocabulary of collective ops: which collective and which algorithm a ``collective`` op's
``features`` name (by index), shared by the builders that make them and the mechanism that costs
them (:mod:`dse.cost.mechanisms.collective`)."""

from __future__ import annotations

#: Op class of collectives.
COLLECTIVE_CLASS = "collective"
#: ``features["collective"]`` indexes this tuple.
COLLECTIVES = ("all_reduce", "all_gather", "all_to_all", "send")
#: ``features["algorithm"]`` indexes this tuple (all-reduce only).
ALGORITHMS = ("ring", "tree")
