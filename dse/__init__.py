"""dse: design-space exploration of workload mappings on heterogeneous systems.

Typical use::

    import dse
    problem = dse.load_problem("quickstart")   # a catalog name or a spec path
    problem.notes()                            # constraints that bind no mapping, from cheap bounds
    tighter = dse.with_changes(problem, {"constraints.power_w": 300})   # a new problem, validated
    front = dse.solve(problem, solver="cpsat", time_limit=30, seed=0)
    front.notes                                # with no feasible point: which constraint, by how much
    front.to_frame(); front.hypervolume()
    ax = dse.plot_fronts([front])              # a matplotlib axis (interactive=True: plotly)
    front.certificate().describe()             # how far from the true front it can be
    dse.certify(problem, nsga2_front, time_limit=30)   # the same for any solver's front
    print(problem.decode(front.points[0].genome).explain())
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dse.errors import (
    DseError,
    GenomeError,
    GenomeTypeError,
    InfeasibleError,
    SpaceTooLargeError,
    SpecError,
)
from dse.version import __version__

if TYPE_CHECKING:  # what the names below are; at run time each is imported on first use (__getattr__)
    from dse.pareto import ParetoPoint, ParetoSet
    from dse.runs.spec import build_problem, load_problem, load_spec, with_changes
    from dse.solvers import solve
    from dse.solvers.certify import certify
    from dse.viz import plot_fronts

#: The public names imported on first use, and their modules: ``import dse`` itself loads only the errors
#: and the version (no numpy, pydantic or solver), so a script or a CLI that needs one part pays for that part.
_LAZY = {"ParetoPoint": "dse.pareto", "ParetoSet": "dse.pareto", "build_problem": "dse.runs.spec",
         "load_problem": "dse.runs.spec", "load_spec": "dse.runs.spec", "with_changes": "dse.runs.spec",
         "solve": "dse.solvers", "certify": "dse.solvers.certify", "plot_fronts": "dse.viz"}


def __getattr__(name: str) -> Any:
    """A public name of :data:`_LAZY` (imported now), or a submodule (``dse.solvers``); ``AttributeError``
    otherwise."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DseError",
    "GenomeError",
    "GenomeTypeError",
    "InfeasibleError",
    "ParetoPoint",
    "ParetoSet",
    "SpaceTooLargeError",
    "SpecError",
    "__version__",
    "build_problem",
    "certify",
    "load_problem",
    "load_spec",
    "plot_fronts",
    "solve",
    "with_changes",
]
