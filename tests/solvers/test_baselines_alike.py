"""Single-device baselines of devices alike are reported once (:func:`dse.solvers.common.merge_alike`).

Platform by hand: p0, p1, p2 of kind ``a`` and speed 1 (alike in every figure), p3 of kind ``b`` with the
same figures (another kind: its own baseline), p4 of kind ``a`` at speed 2 (other figures: its own). A
6-task chain of work 2, 4, ..., 12 on one device takes 2 + 4 + ... + 12 = 42 time units at speed 1, 21 at
speed 2.
"""

from __future__ import annotations

import numpy as np

from dse.cost import TableCostModel
from dse.mapping.dag import DagProblem
from dse.model.platform import Device, Link, Platform
from dse.model.workload import Op, Workload
from dse.solvers.common import alike_name, baseline_points


def _platform() -> Platform:
    kinds_speeds = [("a", 1.0), ("a", 1.0), ("a", 1.0), ("b", 1.0), ("a", 2.0)]
    devices = tuple(Device(f"p{i}", kind, {}, 1.0, 1.0, 0.0, 1.0, speed=speed)
                    for i, (kind, speed) in enumerate(kinds_speeds))
    links = tuple(Link(a.name, b.name, 1e15, 0.0) for i, a in enumerate(devices) for b in devices[i + 1:])
    return Platform("five", devices, links)


def test_baselines_of_devices_alike_are_one_entry_named_after_them_all() -> None:
    chain = Workload("chain", tuple(Op(f"t{k}", work=2.0 * k) for k in range(1, 7)),
                     tuple((k, k + 1) for k in range(5)))
    problem = DagProblem(TableCostModel().tables(chain, _platform()), ("makespan",), memory=False)
    assert len(problem.baselines()) == 5  # every device's baseline is still a seed
    baselines, _ = baseline_points(problem)
    assert list(baselines) == ["only p0 (alike: p1, p2)", "only p3", "only p4"]
    assert [p.internal[0] for p in baselines.values()] == [42, 42, 21]
    assert np.array_equal(baselines["only p0 (alike: p1, p2)"].genome[:6], np.zeros(6))  # p0's own mapping


def test_an_alike_name_writes_runs_of_numbered_devices_as_ranges() -> None:
    names = [f"only cpu{k}" for k in range(128)]
    assert alike_name(names) == "only cpu0 (alike: cpu1-cpu127)"
    assert alike_name(["only gpu0", "only gpu2", "only gpu3", "only gpu4", "only x"]) == \
        "only gpu0 (alike: gpu2-gpu4, x)"
    assert alike_name(["only p0"]) == "only p0"
