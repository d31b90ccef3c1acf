"""The roofline tables cost devices alike but for their names (a ``count: N`` platform entry) once per op,
and each one apart where an op names it (``device_type``, ``device_costs``).

Expected values by hand: an op of 2e9 FLOPs (fp32, gemm) on a 10 TFLOP/s gpu at the gpu's gemm efficiency
0.75 takes 2e9 / 7.5e12 s = 266,666.67 ns, plus the 5 us launch: 271,667 ns rounded up; memory-bound time
(1 MB at 900 GB/s x 0.85 = 1,307 ns) is below it. ``device_costs`` of 1 ms gives 1,000,000 ns.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dse.cost import RooflineCostModel
from dse.model.platform import platform_from_dict
from dse.model.workload import Op, Workload

#: On the plain analytic model (``mechanisms: none``: the gpu kind's defaults, no class defaults such as tiles
#: or a fitted efficiency), which the hand calculation above is.
PLATFORM = {"name": "three_gpus", "mechanisms": "none", "devices": [
    {"name": "gpu", "kind": "gpu", "peak_tflops": {"fp32": 10.0}, "mem_bw_gbps": 900, "mem_gib": 16, "idle_w": 30,
     "active_w": 250, "count": 3}],
    "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gbps": 16, "latency_us": 5},
              {"a": "gpu1", "b": "gpu2", "bandwidth_gbps": 16, "latency_us": 5}]}


def _op(name: str, **changes) -> Op:
    op = Op(name=name, op_class="gemm", flops=2e9, bytes_moved=1e6, precision="fp32")
    return dataclasses.replace(op, **changes)


def test_alike_devices_share_a_cost_and_a_named_one_stands_apart() -> None:
    platform = platform_from_dict(PLATFORM)
    assert platform.device_names == ("gpu0", "gpu1", "gpu2")
    ops = (_op("plain"), _op("pinned", device_type="gpu1"), _op("measured", device_costs={"gpu2": 1e-3}))
    workload = Workload(name="w", ops=ops, edges=())
    tables = RooflineCostModel().tables(workload, platform)
    assert tables.time[0].tolist() == [271_667] * 3
    assert tables.allowed[1].tolist() == [False, True, False] and tables.time[1, 1] == 271_667
    assert tables.time[2].tolist() == [271_667, 271_667, 1_000_000]
    # energy: (250 - 30) W x the time, in pJ (220 W x 1 ns = 220,000 pJ)
    assert tables.energy[0].tolist() == [271_667 * 220_000] * 3
    assert np.array_equal(tables.energy[2], np.array([271_667, 271_667, 1_000_000]) * 220_000)
