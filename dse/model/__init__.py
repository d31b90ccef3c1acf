"""Layer 2, model descriptions: platforms (devices, links, DVFS operating points), workloads (op
graphs), accelerator systems and element sizes; frozen dataclasses with validated loaders."""

from __future__ import annotations

from dse.model.platform import (
           Device,
           Link,
           OperatingPoint,
           Platform,
           load_platform,
           platform_from_dict,
)
from dse.model.workload import Op, Workload, load_workload, workload_from_dict

__all__ = ["Device", "Link", "Op", "OperatingPoint", "Platform", "Workload", "load_platform", "load_workload",
           "platform_from_dict", "workload_from_dict"]
