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

from dse.errors import (
    DseError,
    GenomeError,
    GenomeTypeError,
    InfeasibleError,
    SpaceTooLargeError,
    SpecError,
)
from dse.pareto import ParetoPoint, ParetoSet
from dse.runs.spec import build_problem, load_problem, load_spec, with_changes
from dse.solvers import solve
from dse.solvers.certify import certify
from dse.version import __version__
from dse.viz import plot_fronts

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
