"""One classic heuristic as a solver: ``solve(problem, "heuristic:heft")``.

The front holds the single mapping of :func:`dse.heuristics.run`. Its objectives are
those of the problem's own evaluation (``problem.evaluate``, with ``problem.insertion``).
So that they equal the heuristic's own makespan, the genome comes from
:func:`dse.heuristics.genome_of`: for an insertion-based heuristic (HEFT, CPOP, PEFT)
on a problem that decodes without insertion, the genome orders tasks by their start
times in the heuristic's insertion schedule, which the non-insertion decoder turns back
into exactly that schedule. (Partitioner+scheduler pairs are simulated without insertion;
on a problem that decodes with insertion they give the same schedule whenever every task
time is positive.) The stats message records the heuristic's makespan and whether the
evaluated one differs.
"""

from __future__ import annotations

import time

from dse.pareto import ParetoSet, SolveStats
from dse.solvers.common import result


def solve_heuristic(problem, name: str, time_limit: float | None = None, seed: int = 0) -> ParetoSet:
    """Run heuristic ``name`` on a ``dag`` problem; ``time_limit`` and ``seed`` are accepted and unused
    (the heuristics are deterministic and fast). Raises ``ValueError`` for an unknown name or a
    problem that is not of the ``dag`` family."""
    from dse.heuristics import genome_of, run

    if getattr(problem, "family", None) != "dag":
        raise ValueError(f"heuristic:{name} needs a dag problem, got {type(problem).__name__}")
    start = time.monotonic()
    res = run(problem, name)
    genome = genome_of(problem, res)
    evaluated = int(problem.evaluate(genome[None, :]).F[0, 0])
    message = f"{res.name}: makespan {res.makespan} ({'insertion' if res.insertion else 'no insertion'})"
    if evaluated != res.makespan:
        message += f"; the problem's evaluation gives {evaluated}"
    stats = SolveStats(wall_s=time.monotonic() - start, evaluations=1, message=message)
    return result(problem, genome[None, :], f"heuristic:{res.name}", "feasible", stats, proven=False)
