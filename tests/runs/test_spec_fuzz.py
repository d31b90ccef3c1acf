"""Random mutations of the bundled specs never end in a traceback: either a problem, or a DseError.

Each example takes a bundled spec (YAML parsed to a dict), replaces, deletes or adds one entry at a
random path with a hostile value (wrong types, negative, huge, infinite and NaN numbers, empty and
unicode strings, nested structures), then loads and builds it as the CLI would.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dse.errors import DseError
from dse.inputs import catalog
from dse.runs.spec import build_problem, spec_from_dict
from dse.util.yamlio import read_yaml

SPECS = {p.name: read_yaml(p) for p in sorted(Path(catalog.problems_dir()).glob("*.yaml"))}
SPECS["inline"] = {  # platform and workload written out, so their every number gets mutated too
    "name": "inline", "family": "pipeline",
    "platform": {"name": "tiny", "devices": [
        {"name": "cpu", "kind": "cpu", "peak_tflops": {"fp32": 1.0}, "mem_bw_gbps": 100, "mem_gib": 64,
         "idle_w": 20, "active_w": 100},
        {"name": "gpu", "kind": "gpu", "peak_tflops": {"fp32": 10.0, "fp16": 20.0}, "mem_bw_gbps": 900,
         "mem_gib": 16, "idle_w": 30, "active_w": 250}],
        "links": [{"a": "cpu", "b": "gpu", "bandwidth_gbps": 16, "latency_us": 5, "energy_pj_per_byte": 20}]},
    "workload": {"name": "three", "ops": [
        {"name": "load", "op_class": "memcpy", "bytes_moved": 4e6, "output_bytes": 4e6},
        {"name": "mm", "op_class": "gemm", "flops": 2e10, "bytes_moved": 2e7, "resident_bytes": 1e7,
         "output_bytes": 1e6, "inputs": ["load"]},
        {"name": "act", "op_class": "elementwise", "flops": 1e6, "bytes_moved": 2e6, "output_bytes": 1e6,
         "inputs": ["mm"]}]},
    "objectives": ["throughput", "energy"],
    "constraints": {"deadline_ms": 5.0, "power_w": 400, "memory": True},
    "solver": {"name": "all", "time_limit_s": 10, "seed": 0},
}

hostile = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.just(0), st.just(-1),
    st.floats(allow_nan=True, allow_infinity=True), st.just(math.inf), st.just(1e300), st.just(1e-300),
    st.text(max_size=12), st.just(""), st.just("∞"),
    st.lists(st.integers(-3, 3), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a mapping entry or list item in ``node``."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


def _parent(doc: Any, path: tuple) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(SPECS)), data=st.data())
def test_mutated_specs_fail_cleanly(name: str, data: st.DataObject) -> None:
    doc = copy.deepcopy(SPECS[name])
    paths = _paths(doc)
    path = data.draw(st.sampled_from(paths))
    action = data.draw(st.sampled_from(["replace", "delete", "add"]))
    parent = _parent(doc, path)
    if action == "replace":
        parent[path[-1]] = data.draw(hostile)
    elif action == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=8))] = data.draw(hostile)
    else:
        parent.append(data.draw(hostile))
    try:
        problem = build_problem(spec_from_dict(doc, f"<{name}>"))
        problem.check_feasible()
    except DseError:
        pass
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{type(exc).__name__} escaped for {action} at {path}: {exc}")
