"""Element types: the bytes per element of every precision a workload or a GEMM may name.

One table for the builders (tensor sizes), the cost models (bytes moved per FLOP) and
calibration (the dtypes a GEMM is profiled in), so that no layer borrows it from another.
"""

from __future__ import annotations

#: Bytes per element of each precision (``int8`` rates are TOP/s).
BYTES: dict[str, int] = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}

#: The floating-point dtypes a GEMM runs in on the co-execution devices (``BYTES`` without ``fp8`` and ``int8``).
DTYPE_BYTES: dict[str, int] = {k: v for k, v in BYTES.items() if k not in ("fp8", "int8")}

#: Relative error (max |C - ref| / max |ref|) accepted when checking a co-executed GEMM result.
DTYPE_TOLERANCE: dict[str, float] = {"fp64": 1e-9, "fp32": 1e-4, "tf32": 5e-3, "fp16": 1e-2, "bf16": 5e-2}
