"""A problem with one field changed, validated: ``spec.with_changes``, ``dse.load_problem(changes=...)``,
``dse.with_changes``.

The yardstick is the same spec written out as a file with the changed value: both must give the same
problem (same tables, constraints and evaluation of every genome).
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml

import dse
from dse.mapping.pipeline.problem import example_problem
from dse.runs.spec import load_spec
from tests.conftest import ROOT, write_yaml


def quickstart_with(tmp_path, **constraints) -> str:
    """problems/quickstart.yaml with ``constraints`` written into the file itself."""
    data = yaml.safe_load((ROOT / "problems" / "quickstart.yaml").read_text())
    data["constraints"] = {**data["constraints"], **constraints}
    return str(write_yaml(tmp_path / "quickstart.yaml", data))


def same_problem(a, b) -> bool:
    """Whether two problems evaluate every genome of a seeded sample alike (objectives and constraints)."""
    rng = np.random.default_rng(0)
    X = a.repair(rng.integers(a.lower, a.upper + 1, size=(500, a.n_genes)))
    ea, eb = a.evaluate(X), b.evaluate(X)
    return (np.array_equal(ea.F, eb.F) and np.array_equal(ea.G, eb.G)
            and [c.name for c in a.constraints] == [c.name for c in b.constraints])


def test_a_changed_constraint_is_the_spec_written_with_it(tmp_path) -> None:
    original = dse.load_problem("quickstart")
    changed = dse.load_problem("quickstart", changes={"constraints.power_w": 300})
    assert changed.power_cap_mw == 300_000 and original.power_cap_mw == 450_000
    assert same_problem(changed, dse.load_problem(quickstart_with(tmp_path, power_w=300)))
    again = dse.with_changes(original, {"constraints.power_w": 300})
    assert same_problem(again, changed) and original.power_cap_mw == 450_000  # the original stays as it was
    # None removes an optional constraint
    assert [c.name for c in dse.with_changes(original, {"constraints.deadline_ms": None}).constraints] == [
        "memory", "power"]


def test_a_changed_workload_or_platform_is_built_again() -> None:
    spec = load_spec("quickstart")
    wider = spec.with_changes({"workload.hidden": 1024})  # the quickstart's width is 512
    assert dse.build_problem(wider).tables.time.sum() > dse.build_problem(spec).tables.time.sum()  # twice the width
    plain = spec.with_changes({"platform": "server_cpu_gpu_fpga"})  # the same server without DVFS levels
    assert dse.build_problem(plain).n_genes == dse.build_problem(spec).tables.n_ops


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"constraints.power_w": -5}, "constraints.power_w", "greater than 0"),
    ({"constraints.powr_w": 300}, "constraints.powr_w", "'powr_w' is not a constraints field"),
    ({"objectives": ["throughput", "joy"]}, "objectives", "unknown objective"),
    ({"platform.devices.0.mem_gib": 4}, "platform.devices.0.mem_gib", "not a mapping"),
    ({"no_such_field": 1}, "no_such_field", "is not a spec field"),
])
def test_a_bad_change_is_one_spec_error_line(changes, field, words) -> None:
    with pytest.raises(dse.SpecError) as caught:
        dse.load_problem("quickstart", changes=changes)
    error = caught.value
    assert error.field == field and words in error.reason, str(error)
    assert error.source.endswith("quickstart.yaml with changes") and "\n" not in str(error)
    with pytest.raises(dse.SpecError, match=words):
        load_spec("quickstart").with_changes(changes)


def test_a_problem_built_without_a_spec_cannot_be_changed() -> None:
    with pytest.raises(dse.SpecError, match="was not built from a spec"):
        dse.with_changes(example_problem(0), {"constraints.power_w": 300})
