"""Cost models: (workload, platform) -> integer :class:`CostTables`.

The tables are the one cost truth that the vectorized evaluators, the CP-SAT
formulations and the simulators all read. Everything is an integer in fixed
units so that exact solvers and evaluators agree to the last unit:

* time in ``time_unit`` (``ns`` for the roofline model; an abstract unit for
  table-driven workloads), ``seconds_per_time_unit`` converts to seconds;
* energy in picojoules (pJ);
* power in milliwatts (mW), so that ``mW x ns = pJ`` exactly;
* memory in bytes.

Two models ship:

* :class:`RooflineCostModel`: analytic roofline with per-op-class efficiency
  per device kind and data-aware efficiency for sparse ops (see its docstring);
* :class:`TableCostModel`: explicit per-device costs (``Op.device_costs``) or
  ``Op.work / Device.speed``, as in the TF paper's simulator and in task-graph
  benchmarks.

Both check what they are given before trusting it: a ``device_costs`` entry must
name a device of the platform, every table entry must fit int64, and so must the
worst-case totals an evaluator sums over a mapping (:data:`MAX_TOTAL`); otherwise
they raise :class:`~dse.errors.SpecError` naming the op, the device and the value,
never an ``OverflowError`` or silently wrapped integers.

Where they live: the tables in :mod:`dse.cost.tables`, the roofline model in
:mod:`dse.cost.roofline` (measured ops: :mod:`dse.cost.calibrated`; per-device mechanisms:
:mod:`dse.cost.mechanisms`), the table-driven model in :mod:`dse.cost.table`, the shared int64
checks and assembly in :mod:`dse.cost.checks`; every public name of them is importable from
``dse.cost``. Beside them: DVFS levels (:mod:`dse.cost.dvfs`), the accelerator model of the
multimodel family (:mod:`dse.cost.accelerator`, :mod:`dse.cost.pe_energy`), random tables for tests
(:mod:`dse.cost.synthetic`), measured error bands (:mod:`dse.cost.error_bands`) and calibration on
this machine (:mod:`dse.cost.calibration`).
"""

from __future__ import annotations

from dse.cost.calibrated import CALIBRATION_DEVICE, calibrated_seconds
from dse.cost.checks import check_device_costs, ns_routes, pair_maximum, route_arrays
from dse.cost.roofline import (
    BANDWIDTH_EFFICIENCY,
    COMPUTE_EFFICIENCY,
    LAUNCH_OVERHEAD_S,
    SKEW_SENSITIVITY,
    SPARSE_BANDWIDTH_EFFICIENCY,
    SPARSE_DENSITY_EXPONENT,
    SPARSE_LINE_BYTES,
    RooflineCostModel,
)
from dse.cost.table import TableCostModel
from dse.cost.tables import MAX_TOTAL, CostModel, CostTables, LevelTables

__all__ = [
    "BANDWIDTH_EFFICIENCY", "CALIBRATION_DEVICE", "COMPUTE_EFFICIENCY", "LAUNCH_OVERHEAD_S", "MAX_TOTAL",
    "SKEW_SENSITIVITY", "SPARSE_BANDWIDTH_EFFICIENCY", "SPARSE_DENSITY_EXPONENT", "SPARSE_LINE_BYTES",
    "CostModel", "CostTables", "LevelTables", "RooflineCostModel", "TableCostModel", "calibrated_seconds",
    "check_device_costs", "ns_routes", "pair_maximum", "route_arrays",
]
