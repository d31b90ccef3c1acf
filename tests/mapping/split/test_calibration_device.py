"""One table says which calibration device costs each platform device kind: the cost layer's
:data:`dse.cost.calibrated.CALIBRATION_DEVICE`. The split family's devices resolve through it (a change
to it reaches them), and no other module of the package writes the table out again.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dse
from dse.cost import calibrated
from dse.cost.calibration.model import GPU_DEVICES, device_threads
from dse.inputs import catalog
from dse.mapping.split.inputs import SPLIT_KINDS, platform_devices
from dse.model.platform import load_platform

PACKAGE = Path(dse.__file__).resolve().parent
#: The platform of the catalog with a CPU, a GPU's CUDA cores and its tensor cores (one device of each kind).
THREE_KINDS = "server_cpu_datacenter_gpu"


def test_every_split_kind_has_a_calibration_device_the_calibration_measures() -> None:
    for kind in SPLIT_KINDS:
        name = calibrated.CALIBRATION_DEVICE[kind]
        assert name in GPU_DEVICES or device_threads(name) >= 1, (kind, name)  # device_threads raises otherwise


def test_the_split_family_reads_its_fit_devices_from_the_cost_layers_table(
        monkeypatch: pytest.MonkeyPatch) -> None:
    found = catalog.find("platforms", THREE_KINDS)
    assert found is not None
    platform = load_platform(found)
    assert sorted(d.kind for d in platform.devices) == sorted(SPLIT_KINDS)
    before = {d.kind: d.fit_device for d in platform_devices(platform, "fp32").devices}
    assert before == {kind: calibrated.CALIBRATION_DEVICE[kind] for kind in SPLIT_KINDS}
    for kind in SPLIT_KINDS:  # a change to the one table reaches every split device kind
        monkeypatch.setitem(calibrated.CALIBRATION_DEVICE, kind, f"renamed-{kind}")
    after = {d.kind: d.fit_device for d in platform_devices(platform, "fp32").devices}
    assert after == {kind: f"renamed-{kind}" for kind in SPLIT_KINDS}


def _gpu_to_cuda_tables(tree: ast.AST) -> list[int]:
    """Lines of the dict literals in ``tree`` that map the key ``"gpu"`` to the value ``"cuda"``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            pairs = {(k.value, v.value) for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
            if ("gpu", "cuda") in pairs:
                lines.append(node.lineno)
    return lines


def test_no_other_module_writes_the_calibration_device_table() -> None:
    found = {path.relative_to(PACKAGE).as_posix(): lines for path in sorted(PACKAGE.rglob("*.py"))
             if (lines := _gpu_to_cuda_tables(ast.parse(path.read_text(), str(path))))}
    assert list(found) == ["cost/calibrated.py"], found
    assert len(found["cost/calibrated.py"]) == 1, found
