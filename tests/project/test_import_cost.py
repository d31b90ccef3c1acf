"""A fast start (issue 43, item 4): ``import dse`` and a small one-off heuristic solve load none of the
heavy third-party modules, checked in fresh processes through ``sys.modules`` (no timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Modules that cost 0.2-1 s each to import on a 2-core machine, and what needs them.
HEAVY = ("numba", "ortools", "pandas", "matplotlib", "scipy", "networkx", "pymoo", "plotly")


def _loaded_after(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    return sorted(m for m in heavy if m in loaded)


def test_import_dse_loads_no_heavy_module() -> None:
    assert _loaded_after("import dse") == []


def test_import_dse_loads_its_public_names_on_first_use() -> None:
    """``import dse`` loads the errors and the version only (before: numpy, pydantic, the cost model, the
    solvers' registry, about 0.7 s); each public name, or a submodule, is imported on first use."""
    assert _loaded_after("import dse", ("numpy", "pydantic", "dse.pareto", "dse.solvers", "dse.runs")) == []
    code = "import dse\nassert dse.ParetoSet.__module__ == 'dse.pareto' and dse.solvers.solve is dse.solve"
    assert _loaded_after(code, ("numpy", "dse.pareto", "dse.solvers")) == ["dse.pareto", "dse.solvers", "numpy"]


def test_a_small_heft_solve_loads_no_heavy_module() -> None:
    """Topcuoglu et al. 2002's 10 tasks: HEFT's published 80 time units, its kernels run interpreted."""
    code = ("import dse\nfront = dse.solve(dse.load_problem('topcuoglu2002'), 'heuristic:heft', progress=False)\n"
            "assert front.points[0].internal[0] == 80, front.points[0].internal")
    assert _loaded_after(code) == []


#: The families a dag solve has no use for, and the run-time simulators of theirs.
OTHER_FAMILIES = ("dse.mapping.pipeline", "dse.mapping.split", "dse.mapping.multimodel", "dse.mapping.serving",
                  "dse.runtime")


def test_dse_solve_of_a_small_graph_with_a_heuristic_loads_no_compiler_and_no_other_solver(tmp_path: Path) -> None:
    """The command writes pareto.png (matplotlib) and front.csv (without pandas: its text as pandas wrote
    it, 0.3 s less); its report and trace.json decode the mapping with the interpreted kernels too. The
    family registry imports the dag family alone (before: every family and the simulators of theirs)."""
    code = ("import sys\nfrom dse.cli.app import main\n"
            f"sys.argv = ['dse', 'solve', 'problems/topcuoglu2002.yaml', '--solver', 'heuristic:heft', '--out', "
            f"{str(tmp_path / 'out')!r}, '--quiet']\nassert main() == 0")
    heavy = ("numba", "ortools", "pandas", "scipy", "networkx", "pymoo", "plotly")
    assert _loaded_after(code, heavy + OTHER_FAMILIES) == []
    assert json.loads((tmp_path / "out" / "front.json").read_text())["fronts"][0]["points"][0]["internal"] == [80]
    assert (tmp_path / "out" / "front.csv").read_text().splitlines()[1].startswith(
        "heuristic:heft,False,feasible,True,80.0,")


def test_a_solver_preloads_its_heavy_modules_before_its_clock_starts() -> None:
    code = "from dse.solvers.cpsat import CPSAT\nCPSAT.preload()"
    assert _loaded_after(code) == ["ortools", "pandas"]  # ortools' CP-SAT module imports pandas
