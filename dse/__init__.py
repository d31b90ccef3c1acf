"""dse: design-space exploration of workload mappings on heterogeneous systems.

Typical use::

    import dse
    problem = dse.load_problem("problems/quickstart.yaml")
    front = dse.solve(problem, solver="cpsat", time_limit=30, seed=0)
    front.to_frame(); front.plot(); front.hypervolume()
    print(problem.decode(front.points[0].genome).explain())
"""

from dse.errors import DseError, InfeasibleError, SpaceTooLargeError, SpecError
from dse.pareto import ParetoPoint, ParetoSet
from dse.solvers import solve
from dse.spec import build_problem, load_problem, load_spec

__version__ = "0.1.0"

__all__ = [
    "DseError",
    "InfeasibleError",
    "ParetoPoint",
    "ParetoSet",
    "SpaceTooLargeError",
    "SpecError",
    "build_problem",
    "load_problem",
    "load_spec",
    "solve",
]
