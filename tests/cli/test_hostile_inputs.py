"""Hostile inputs to the run-time commands: each is one clear line and exit 2 (bad input) or 3 (impossible
problem), or exit 2 with one line for a full disk; never a traceback, never a hang, never a huge message.

Each case writes its files into a fresh folder and runs the command in this process (``dse.cli.main``).
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dse.runs.sweep import Job
from dse.store.database import JobResult, Store
from tests.cli.test_cli import run

ROOT = Path(__file__).resolve().parents[2]
#: The longest message a case may print (a message quotes a short excerpt of a value, never all of it).
MAX_MESSAGE = 600


def _dype(tmp: Path, **scenario: object) -> Path:
    spec = yaml.safe_load((ROOT / "problems" / "dype_phases.yaml").read_text())
    spec["scenario"].update(scenario)
    spec["scenario"]["library"] = {**spec["scenario"]["library"], "time_limit_s": 2,
                                   **scenario.get("library", {})}  # type: ignore[dict-item]
    path = tmp / "specs" / "dype.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(spec))
    return path


#: A small XR system and scenario written inline (one accelerator, one model of one layer).
XR = {"name": "xr", "family": "multimodel",
      "platform": {"name": "one", "accelerators": [{"name": "a0", "pes": 256, "dataflow": "ws"}]},
      "workload": {"name": "tiny", "models": [{"name": "m0", "fps": 30.0,
                                               "layers": [["l0", "CONV", 1, 16, 16, 14, 14, 3, 3]]}]},
      "objectives": ["uxcost", "energy"], "scenario": {"duration_s": 1.0}}


def _xr(tmp: Path, change: Callable[[dict], None]) -> Path:
    spec = json.loads(json.dumps(XR))
    change(spec)
    path = tmp / "xr.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _maestro(tmp: Path, dataflow: object) -> Path:
    hw = tmp / "hw.m"
    hw.write_text("Accelerator a0 {\n  num_pes: 256\n  offchip_bw: 64\n}\n")
    spec = json.loads(json.dumps(XR))
    spec["platform"] = {"format": "maestro", "path": "hw.m", "dataflow": dataflow}
    path = tmp / "maestro.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _dvfs(tmp: Path, levels: list[dict]) -> Path:
    platform = yaml.safe_load((ROOT / "models" / "platforms" / "server_cpu_gpu_fpga_dvfs.yaml").read_text())
    platform["devices"][0]["dvfs"] = levels
    (tmp / "dvfs.yaml").write_text(yaml.safe_dump(platform))
    spec = {"name": "d", "family": "pipeline", "platform": "dvfs.yaml",
            "workload": {"builder": "random_pipeline", "n_ops": 4, "seed": 0}}
    path = tmp / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _bomb(tmp: Path) -> Path:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for k in range(1, 10):
        lines.append(f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 9) + "]")
    lines += ["name: *a9", "family: pipeline", "platform: edge_soc", "workload: {builder: random_pipeline}"]
    path = tmp / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _store(tmp: Path) -> Path:
    path = tmp / "s.sqlite"
    front = {"solver": "exhaustive", "status": "optimal", "complete": True, "stats": {"wall_s": 0.1},
             "objectives": [{"column": "t", "sense": "max"}, {"column": "e", "sense": "min"}],
             "points": [{"genome": [0], "objectives": {"t": 1.0, "e": 2.0}, "metrics": {}, "feasible": True,
                         "proven": True, "solver": "exhaustive"}]}
    with Store(path) as store:
        store.record(Job("a" * 64, {"name": "j", "family": "pipeline"}, {"seed": 0}), JobResult("done", "", [front]))
    return path


def _blocked(tmp: Path) -> Path:
    """A path whose folder cannot be made (its parent is a regular file)."""
    (tmp / "plain").write_text("a file, not a folder")
    return tmp / "plain" / "sub"


#: name -> (build the argv from a fresh folder, exit code, words the message must hold)
CASES: dict[str, tuple[Callable[[Path], list[str]], int, tuple[str, ...]]] = {
    "dype stream no mapping meets the power cap": (
        lambda t: ["simulate", str(_yaml_edit(_dype(t), ("constraints", "power_w"), 1))], 3,
        ("infeasible", "power cap 1 W")),
    "dype empty policy list": (lambda t: ["simulate", str(_dype(t, policies=[]))], 2, ("scenario.policies",)),
    "dype policy listed twice": (
        lambda t: ["simulate", str(_dype(t, policies=["oracle", "oracle"]))], 2, ("listed twice",)),
    "dype corrupt library next to the spec": (
        lambda t: ["simulate", str(_with_file(_dype(t, library={"file": "lib.json"}), "lib.json", "{not json"))], 2,
        ("lib.json", "cannot read a configuration library")),
    "dype library path that cannot be written": (
        lambda t: ["simulate", str(_with_file(_dype(t, library={"file": "plain/lib.json"}), "plain", "x"))], 2,
        ("scenario.library.file", "cannot write there")),
    "xr empty scheduler list": (
        lambda t: ["simulate", str(_xr(t, lambda s: s["scenario"].update(schedulers=[])))], 2,
        ("scenario.schedulers",)),
    "xr frame rate 1e-300": (
        lambda t: ["simulate", str(_xr(t, lambda s: s["workload"]["models"][0].update(fps=1e-300)))], 2,
        ("fps",)),
    "xr clock 1e-300": (
        lambda t: ["simulate", str(_xr(t, lambda s: s["platform"]["accelerators"][0].update(freq_mhz=1e-300)))],
        2, ("freq_mhz",)),
    "xr layer dimensions at their maximum": (
        lambda t: ["simulate", str(_xr(t, lambda s: s["workload"]["models"][0].update(
            layers=[["big", "CONV"] + [1 << 20] * 7])))], 2, ("multiply-accumulates",)),
    "maestro dataflow an empty list": (lambda t: ["validate", str(_maestro(t, []))], 2, ("platform.dataflow",)),
    "maestro dataflow a mapping": (
        lambda t: ["validate", str(_maestro(t, {"ws": 1}))], 2, ("platform.dataflow",)),
    "dvfs 1000 levels": (
        lambda t: ["validate", str(_dvfs(t, [{"freq_mhz": 1000.0 + k} for k in range(1000)]))], 2,
        ("dvfs", "16")),
    "dvfs clock 1e-300": (
        lambda t: ["validate", str(_dvfs(t, [{"freq_mhz": 1e-300}, {"freq_mhz": 1000.0}]))], 2, ("freq_mhz",)),
    "yaml anchors that expand exponentially": (
        lambda t: ["validate", str(_bomb(t))], 2, ("aliases expand",)),
    "solve a deadline of 1e300 ms": (
        lambda t: ["solve", str(_plain(t, {"deadline_ms": 1e300})), "--time-limit", "1", "--quiet"], 2,
        ("constraints.deadline_ms",)),
    "solve a deadline past the cost tables' range": (
        lambda t: ["solve", str(_plain(t, {"deadline": 1e14})), "--time-limit", "1", "--quiet"], 2,
        ("constraints.deadline", "leave the deadline out")),
    "solve --resume from a front with a huge gene": (
        lambda t: ["solve", "quickstart", "--resume", str(_front_with_huge_gene(t)), "--time-limit", "1", "--quiet"],
        2, ("fronts[0].points[0].genome[0]", "less than or equal to 2147483647")),
    "explain a huge gene": (
        lambda t: ["explain", "quickstart", "--genome", "0 " + "9" * 400 + " 1"], 2, ("--genome", "[0, 2147483647]")),
    "results --out into a folder that cannot be made": (
        lambda t: ["results", str(_store(t)), "--export", "csv", "--out", str(_blocked(t) / "p.csv")], 2,
        ("--out", "cannot write there")),
    "results --plot with an unknown suffix": (
        lambda t: ["results", str(_store(t)), "--plot", "--out", str(t / "fronts.xyz")], 2,
        ("unknown plot file type", "png")),
}


def _plain(tmp: Path, constraints: dict) -> Path:
    spec = {"name": "p", "family": "pipeline", "platform": "edge_soc",
            "workload": {"builder": "random_pipeline", "n_ops": 4, "seed": 0}, "constraints": constraints}
    path = tmp / "plain.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _front_with_huge_gene(tmp: Path) -> Path:
    folder = tmp / "previous"
    folder.mkdir()
    (folder / "front.json").write_text(json.dumps({"fronts": [{"points": [{"genome": [10**30, 0, 1]}]}]}))
    return folder


def _yaml_edit(path: Path, keys: tuple[str, ...], value: object) -> Path:
    data = yaml.safe_load(path.read_text())
    node = data
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    path.write_text(yaml.safe_dump(data))
    return path


def _with_file(spec: Path, name: str, text: str) -> Path:
    (spec.parent / name).write_text(text)
    return spec


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_one_line_and_its_exit_code(name, tmp_path, capsys, monkeypatch) -> None:
    build, code, words = CASES[name]
    argv = build(tmp_path)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # spec paths resolve from the spec's folder, not from here
    start = time.monotonic()
    got, out, err = run(capsys, *argv)
    assert time.monotonic() - start < 60
    assert got == code, (got, err[-2000:])
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("note:")]
    assert len(lines) == 1, err[-2000:]
    assert len(lines[0]) <= MAX_MESSAGE, f"{len(lines[0])} characters: {lines[0][:300]}"
    for word in words:
        assert word in lines[0], lines[0]
    assert not list(elsewhere.iterdir()), "something was written into the working directory"


def test_a_full_disk_during_an_export_is_one_line_and_leaves_nothing(tmp_path, capsys, monkeypatch) -> None:
    store = _store(tmp_path)
    out = tmp_path / "points.csv"

    def half_then_full(self, path, *args, **kwargs):
        Path(path).write_text("job,status\n")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_full)
    code, _, err = run(capsys, "results", str(store), "--export", "csv", "--out", str(out))
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [f"error: cannot write {out}: No space left on device (nothing written)"]
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm")))
    assert left == ["s.sqlite", "s.sqlite.lock"]


def test_a_dype_library_is_read_and_written_beside_the_spec(tmp_path, monkeypatch) -> None:
    """A relative ``library.file`` is the spec's folder's file, whatever the working directory."""
    from dse.runs.spec import load_spec
    from dse.runtime.stream import library_path

    spec_path = _dype(tmp_path, library={"file": "libs/lib.json"})
    monkeypatch.chdir(tmp_path)
    spec = load_spec(spec_path)
    assert library_path(spec) == spec_path.parent / "libs" / "lib.json"
