"""Regenerate the catalog's XRBench systems and scenarios (models/systems, models/scenarios) from the MAESTRO
files of the public XRBench repository (XRBench/XRBench-MLSys2023, MIT licence).

    python benchmarks/import_xrbench.py [--data ../shared/data/xrbench]

The facts carry over (layer shapes, frame rates, dependencies, PE counts, buffers, bandwidths); the
files are the project's own YAML. Besides the ten XRBench systems (weight-stationary arrays, as
the files name no dataflow), it writes ``Quad_4K_Hetero`` and ``Dual_8K_Hetero``: the same PE counts
with mixed dataflows (Herald-style heterogeneity), an assumption of this project.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stopping import benchmark_stops  # noqa: E402

from dse.inputs.importers.maestro import read_maestro_hardware, read_maestro_network  # noqa: E402
from dse.model.accelerators import scenario_to_dict, system_to_dict  # noqa: E402

HETERO = {"Quad_4K_Hetero": ("Quad_4K", ["ws", "os", "rs", "ws"]), "Dual_8K_Hetero": ("Dual_8K", ["ws", "rs"])}
HEADER = "# Imported by benchmarks/import_xrbench.py from XRBench (XRBench/XRBench-MLSys2023, MIT), {}.\n"


def _write(path: Path, data: dict, note: str) -> None:
    text = HEADER.format(note) + yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120)
    path.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "xrbench")
    args = parser.parse_args()
    if not (args.data / "usage_scenarios").is_dir():
        print(f"XRBench data not found under {args.data}; nothing regenerated", file=sys.stderr)
        return 1
    systems, scenarios = ROOT / "models" / "systems", ROOT / "models" / "scenarios"
    systems.mkdir(parents=True, exist_ok=True)
    scenarios.mkdir(parents=True, exist_ok=True)
    with benchmark_stops("import_xrbench") as stop:  # each file is written whole; a stop leaves the rest as they were
        for path in sorted((args.data / "hw_configs").glob("*.m")):
            stop.check()
            system = read_maestro_hardware(path)
            _write(systems / f"{system.name}.yaml", system_to_dict(system),
                   f"hw_configs/{path.name}; dataflow, power and DRAM energy are this project's documented defaults")
            stop.keep(system, path.name)
            print("system", system.name, [a.pes for a in system.accelerators])
        for name, (base, flows) in HETERO.items():
            stop.check()
            path = args.data / "hw_configs" / f"{base}.m"
            system = read_maestro_hardware(path, name, dataflow=flows)
            _write(systems / f"{name}.yaml", system_to_dict(system),
                   f"hw_configs/{path.name} with dataflows {'/'.join(flows)} (a heterogeneity assumption)")
            stop.keep(system, name)
            print("system", name, flows)
        for path in sorted((args.data / "usage_scenarios").glob("*.m")):
            stop.check()
            scenario = read_maestro_network(path)
            _write(scenarios / f"{scenario.name}.yaml", scenario_to_dict(scenario), f"usage_scenarios/{path.name}")
            stop.keep(scenario, path.name)
            print("scenario", scenario.name, [(m.name, m.fps, len(m.layers)) for m in scenario.models])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
