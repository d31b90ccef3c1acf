"""dse: design-space exploration of workload mappings on heterogeneous systems.

Typical use::

    import dse
    problem = dse.load_problem("quickstart")   # a catalog name or a spec path
    front = dse.solve(problem, solver="cpsat", time_limit=30, seed=0)
    front.to_frame(); front.plot(); front.hypervolume()
    front.certificate().describe()             # how far from the true front it can be
    dse.certify(problem, nsga2_front, time_limit=30)   # the same for any solver's front
    print(problem.decode(front.points[0].genome).explain())
"""

from dse.errors import DseError, GenomeError, InfeasibleError, SpaceTooLargeError, SpecError
from dse.pareto import ParetoPoint, ParetoSet
from dse.solvers import solve
from dse.solvers.certify import certify
from dse.spec import build_problem, load_problem, load_spec


def _version() -> str:
    """The installed distribution's version (pyproject.toml), or ``0+unknown`` when not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dse")
    except PackageNotFoundError:
        return "0+unknown"


__version__ = _version()

__all__ = [
    "DseError",
    "GenomeError",
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
    "solve",
]
