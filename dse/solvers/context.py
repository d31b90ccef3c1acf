"""What every solver run shares: :class:`SolveContext`, its one stopping rule, and :func:`solve_context`.

A solver is ``run(problem, ctx, options) -> ParetoSet``: ``options`` its settings (a
:class:`~dse.solvers.registry.SolverOptions` model, defaults there only), ``ctx`` the run itself:

* ``seed``; ``start`` and ``time_limit`` (seconds), hence ``deadline`` (``time.monotonic()`` values);
* ``token``, the :class:`~dse.util.interrupt.StopToken` that SIGINT and SIGTERM set;
* ``progress``, the :class:`~dse.util.progress.Progress` reporter (silent unless asked for);
* the Python objects that are no setting, so no spec can give them: ``resume``, the genomes of a
  previous front to continue from (``dse solve --resume``, :func:`dse.certify`); ``seeds``, extra
  starting genomes; ``callback(step, elapsed_s, front_X, front_F)``, called after each step of a
  search (an NSGA-II generation), which stops the run by returning True; ``client``, a Dask
  ``distributed.Client`` to farm the work out to (:mod:`dse.solvers.cpsat_distributed`); ``checkpoint``, a
  :class:`~dse.solvers.checkpoint.Checkpoint`: where the exact box search keeps its state while it runs
  and which previous state it goes on from. A solver declares which of
  them it reads (:attr:`~dse.solvers.registry.Solver.inputs`, names from :data:`INPUTS`);
  :func:`dse.solve` refuses the others.

**One stopping rule**, :meth:`SolveContext.stop_status`: ``interrupted`` once a stop was requested
(it wins), ``time_limit`` once the deadline has passed, else None. A solver asks it at its safe
points and ends with that status, returning the best it has, never less than the ``resume`` and
seed genomes it was handed.

:func:`solve_context` opens a context for a whole run: it enters :func:`~dse.util.interrupt.interruptible`,
:func:`~dse.util.jit.time_limit_ends` and :func:`~dse.util.interrupt.work_limits` (the deadline and token that
the loops inside one long step check, :func:`~dse.util.interrupt.cut_point`) once, so no solver enters them
itself. A solver that runs
another (the memetic search's NSGA-II phase, the LNS's local search, :func:`dse.certify`'s CP-SAT, the
runtime library's configurations) hands it :meth:`SolveContext.derived`: a sub-deadline, the same token.

Example::

    with solve_context(seed=0, time_limit=10) as ctx:
        front = solve_nsga2(problem, ctx, Nsga2Options(pop_size=40))
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from dse.pareto import INTERRUPTED, TIME_LIMIT
from dse.solvers.checkpoint import Checkpoint
from dse.util.interrupt import StopToken, interruptible, work_limits
from dse.util.jit import time_limit_ends
from dse.util.progress import Progress, silent

#: ``callback(step, elapsed_s, front_X, front_F)`` after each step of a search; True stops the run.
StepCallback = Callable[[int, float, np.ndarray, np.ndarray], bool | None]

#: The context's Python objects that a solver may read (:attr:`~dse.solvers.registry.Solver.inputs`).
RESUME, SEEDS, CALLBACK, CLIENT, CHECKPOINT = "resume", "seeds", "callback", "client", "checkpoint"
INPUTS = (RESUME, SEEDS, CALLBACK, CLIENT, CHECKPOINT)


def _genomes(rows: Sequence[np.ndarray] | Sequence[Sequence[int]]) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(g, dtype=np.int64) for g in rows)


@dataclass(frozen=True)
class SolveContext:
    """One solver run's shared state (module docstring): ``seed``, ``start`` and ``time_limit`` (seconds;
    ``math.inf``: none), the stop ``token``, the ``progress`` reporter, ``resume`` and ``seeds`` genomes and
    the per-step ``callback``, the Dask ``client`` (None: this process only), the ``checkpoint`` (None:
    none kept)."""

    seed: int
    time_limit: float
    start: float
    token: StopToken
    progress: Progress
    resume: tuple[np.ndarray, ...] = ()
    seeds: tuple[np.ndarray, ...] = ()
    callback: StepCallback | None = None
    client: Any = None
    checkpoint: Checkpoint | None = None

    @property
    def deadline(self) -> float:
        """The ``time.monotonic()`` instant the time limit ends (``math.inf`` without one)."""
        return self.start + self.time_limit

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.start

    def remaining(self) -> float:
        """Seconds left before the deadline, never below 0."""
        return max(0.0, self.deadline - time.monotonic())

    def stop_status(self) -> str | None:
        """The one stopping rule: ``interrupted`` once a stop was requested, else ``time_limit`` once the
        deadline has passed, else None (go on)."""
        if self.token.stopped:
            return INTERRUPTED
        if time.monotonic() >= self.deadline:
            return TIME_LIMIT
        return None

    def cut_status(self) -> str:
        """The status of a run that ends unfinished (its search cut short, by whichever came): ``interrupted``
        once a stop was requested, else ``time_limit``."""
        return self.stop_status() or TIME_LIMIT

    def derived(self, time_limit: float | None = None, *, deadline: float | None = None,
                progress: Progress | None = None, resume: Sequence[np.ndarray] | None = None,
                seeds: Sequence[np.ndarray] | None = None, callback: StepCallback | None = None) -> SolveContext:
        """A context for a solver run inside this one, starting now with the same seed and token: its
        deadline is this one's, or ``time_limit`` seconds from now, or the instant ``deadline``
        (``time.monotonic()``), whichever comes first; ``progress``, ``resume`` and ``seeds`` replace
        this one's when given; ``callback`` is the inner run's own (this one's is not passed down); no
        checkpoint is passed down (an inner run does not keep its state in the outer run's file)."""
        now = time.monotonic()
        end = min(self.deadline, math.inf if time_limit is None else now + time_limit,
                  math.inf if deadline is None else deadline)
        return dataclasses.replace(
            self, start=now, time_limit=max(0.0, end - now),
            progress=self.progress if progress is None else progress,
            resume=self.resume if resume is None else _genomes(resume),
            seeds=self.seeds if seeds is None else _genomes(seeds),
            callback=callback, checkpoint=None)


@contextmanager
def solve_context(seed: int = 0, time_limit: float | None = None, progress: Progress | None = None, *,
                  resume: Sequence[np.ndarray] = (), seeds: Sequence[np.ndarray] = (),
                  callback: StepCallback | None = None, client: Any = None,
                  checkpoint: Checkpoint | None = None) -> Iterator[SolveContext]:
    """A :class:`SolveContext` for a whole run, starting now (``time_limit`` None: no deadline), within
    :func:`~dse.util.interrupt.interruptible` (its token: a signal stops the run, the caller's handlers
    come back after) and, with a limit, :func:`~dse.util.jit.time_limit_ends` (no kernel compiles inline
    past it).
    Checks nothing: :func:`dse.solve` checks the seed and the time limit first."""
    limit = math.inf if time_limit is None else float(time_limit)
    with interruptible() as token:
        ctx = SolveContext(seed=seed, time_limit=limit, start=time.monotonic(), token=token,
                           progress=progress or silent(), resume=_genomes(resume), seeds=_genomes(seeds),
                           callback=callback, client=client, checkpoint=checkpoint)
        # without a limit, the caller's (a command's reports, say) still holds
        with time_limit_ends(ctx.deadline) if math.isfinite(limit) else nullcontext(), \
                work_limits(ctx.deadline, token):
            yield ctx
