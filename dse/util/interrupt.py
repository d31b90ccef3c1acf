"""SIGINT and SIGTERM stop every solver and long command at a safe point; nothing finished is lost.

Inside :func:`interruptible` the process's SIGINT and SIGTERM handlers are
replaced by one that only records the signal in a :class:`StopToken`; solvers
poll ``token.stopped`` at safe points (each NSGA-II generation, each
exhaustive chunk, every 50 ms while CP-SAT searches in a worker thread, see
:func:`run_cpsat`) and return the best set found so far with status
``interrupted``. On leaving the block the caller's handlers are restored
exactly, so in a Jupyter kernel the next Ctrl-C behaves as before; a second
signal while the first is being honoured still only stops the search.

Nested blocks share the outermost token, so the CLI learns which signal
arrived (exit 130 for SIGINT, 143 for SIGTERM). Handlers can only be
installed from the main thread; elsewhere (a worker thread of a batch run)
the block yields a token that no signal sets.

The same rule holds for every long command (``solve``, ``simulate`` of both
families, ``batch``, ``calibrate``, ``coexec``): the command runs inside
:func:`interruptible`; loops that are not solvers call :func:`stop_point` at
their safe points (every event batch of a simulation, every regime of a
library, every measurement), which raises :class:`Interrupted` once a stop was
requested. The command writes what finished, marked partial, and the CLI prints
one line (``interrupted: ...``) and exits 130 or 143. Child processes are
started with SIGINT ignored (:func:`children_ignore_sigint`), so a Ctrl-C that
reaches the whole process group stops only the parent, which stops them
silently.

**Inside one long step** (a heuristic seeding a solver, a CP-SAT model build,
one scheduler's simulation) the same rule holds at a finer grain: the step calls
:func:`cut_point` in its loops, at least every :data:`CHECK_EVERY_S` seconds of work
whatever the input's size, which raises :class:`Cut` once a stop was requested or
the deadline of the enclosing :func:`work_limits` block (a solver run's time limit)
has passed. The caller catches it and keeps what finished before it.
"""

from __future__ import annotations

import contextvars
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: Exit status of a process stopped by each signal (128 + the signal number).
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


def exit_code(signum: int | None) -> int:
    """The exit status after a stop by signal ``signum``: 130 after SIGINT, 143 after SIGTERM (0 when None)."""
    return EXIT_CODES.get(signal.Signals(signum), 128 + signum) if signum is not None else 0


class StopToken:
    """Whether a stop was requested, and by which signal."""

    def __init__(self) -> None:
        self.signum: int | None = None

    @property
    def stopped(self) -> bool:
        return self.signum is not None

    def request(self, signum: int = signal.SIGINT) -> None:
        """Ask the search to stop (what the signal handler does; also usable from code)."""
        if self.signum is None:
            self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        """130 after SIGINT, 143 after SIGTERM (0 when not stopped)."""
        return exit_code(self.signum)


_active: StopToken | None = None


@contextmanager
def interruptible() -> Iterator[StopToken]:
    """Route SIGINT and SIGTERM to a :class:`StopToken` for the duration of the block; yields the token."""
    global _active
    if _active is not None:
        yield _active
        return
    token = StopToken()
    if threading.current_thread() is not threading.main_thread():
        yield token
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, frame: Any) -> None:
        token.request(signum)

    for sig in previous:
        signal.signal(sig, handler)
    _active = token
    try:
        yield token
    finally:
        _active = None
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


class Interrupted(Exception):  # noqa: N818 - a stop, not an error
    """A long command's loop stopped at a safe point because a signal asked it to.

    ``signum``: the signal; ``note``: what was kept (one line for the user, filled in by the command
    that wrote the partial results); ``partial``: what had finished, for the caller to write.
    """

    def __init__(self, signum: int | None, note: str = "", partial: Any = None) -> None:
        self.signum = signum if signum is not None else int(signal.SIGINT)
        self.note = note
        self.partial = partial
        super().__init__(note or "stopped by a signal")

    @property
    def exit_code(self) -> int:
        """130 after SIGINT, 143 after SIGTERM."""
        return exit_code(self.signum)

    def noted(self, note: str) -> Interrupted:
        """The same stop with ``note`` saying what was written."""
        return Interrupted(self.signum, note, self.partial)


def active_token() -> StopToken | None:
    """The token of the :func:`interruptible` block the process is in (None outside every block)."""
    return _active


def stop_requested() -> bool:
    """Whether a stop was requested in the current :func:`interruptible` block."""
    return _active is not None and _active.stopped


def stop_point(partial: Callable[[], Any] | None = None) -> None:
    """Raise :class:`Interrupted` (with ``partial()`` as what finished) when a stop was requested;
    a no-op otherwise, and outside every :func:`interruptible` block."""
    token = _active
    if token is not None and token.stopped:
        raise Interrupted(token.signum, partial=partial() if partial is not None else None)


#: Longest stretch of work between two checks for a stop inside a long step (seconds): loops call
#: :func:`cut_point` (or :func:`stop_point`) at least this often, whatever the size of their input.
CHECK_EVERY_S = 0.5

#: The enclosing :func:`work_limits` block's deadline (a ``time.monotonic()`` value) and stop token.
_LIMITS: contextvars.ContextVar[tuple[float, StopToken | None]] = contextvars.ContextVar(
    "dse_work_limits", default=(math.inf, None))


class Cut(Exception):  # noqa: N818 - a stop, not an error
    """A long step stopped at a :func:`cut_point`: ``stopped`` True when a stop was requested (the
    status ``interrupted``; ``signum``: the signal that asked, when one did), False when the deadline
    passed (``time_limit``); ``where``: how far it got."""

    def __init__(self, stopped: bool, where: str = "", signum: int | None = None) -> None:
        self.stopped = stopped
        self.where = where
        self.signum = signum
        reason = "a stop was requested" if stopped else "the time limit ran out"
        super().__init__(f"{reason}{f' ({where})' if where else ''}")


@contextmanager
def work_limits(deadline: float = math.inf, token: StopToken | None = None) -> Iterator[None]:
    """Within the block, :func:`cut_point` raises :class:`Cut` once ``token`` is set or ``time.monotonic()``
    passes ``deadline`` (an enclosing block's earlier deadline still holds; ``token`` None keeps the
    enclosing block's, or the :func:`interruptible` block's). Per thread (a context variable)."""
    outer_deadline, outer_token = _LIMITS.get()
    handle = _LIMITS.set((min(deadline, outer_deadline), token if token is not None else outer_token))
    try:
        yield
    finally:
        _LIMITS.reset(handle)


@contextmanager
def without_deadline() -> Iterator[None]:
    """Within the block, :func:`cut_point` ignores the enclosing :func:`work_limits` deadline (a stop request
    still cuts): for the one short step whose result a run returns however short its time limit."""
    handle = _LIMITS.set((math.inf, _LIMITS.get()[1]))
    try:
        yield
    finally:
        _LIMITS.reset(handle)


def cut_status() -> bool | None:
    """True once a stop was requested (the :func:`work_limits` block's token, else the :func:`interruptible`
    block's), False once the block's deadline passed, else None: an attribute read and a clock read."""
    deadline, token = _LIMITS.get()
    token = token if token is not None else _active
    if token is not None and token.stopped:
        return True
    if deadline < math.inf and time.monotonic() > deadline:
        return False
    return None


def cut_point(where: str = "") -> None:
    """Raise :class:`Cut` (``where``: how far the step got) when :func:`cut_status` says stop; cheap
    enough for every iteration of a loop whose iteration does a few microseconds of work or more."""
    state = cut_status()
    if state is not None:
        token = _LIMITS.get()[1] or _active
        raise Cut(state, where, token.signum if state and token is not None else None)


@contextmanager
def children_ignore_sigint() -> Iterator[None]:
    """SIGINT ignored by the processes started inside the block (main thread only; elsewhere a no-op):
    they inherit the ignored disposition, so a Ctrl-C that reaches the whole process group stops only
    this process, which then stops them (SIGTERM, which ``kill`` sends to one process, is left alone so
    that they can still be terminated). Keep the block to the start of a process (a fork server, say,
    whose children inherit it in turn): the main thread blocks SIGINT meanwhile, which holds one that
    arrives for the caller's handler unless another thread (a native BLAS worker) takes it first."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # blocked and ignored: Linux keeps it pending
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)


#: Models of more variables than this are presolved (:func:`run_cpsat`); smaller ones are solved without.
#: quickstart's model has 155 variables, the 72-op ResNet-50 DVFS example's 1,454 (presolved: not measured
#: without presolve).
PRESOLVE_FROM_VARIABLES = 1000


def run_cpsat(solver: Any, model: Any, token: StopToken, poll_s: float = 0.05) -> Any:
    """``solver.solve(model)`` in a worker thread while this thread watches ``token``; a stop request
    calls ``solver.stop_search()``, which ends the search within milliseconds with the best solution
    so far. OR-Tools' own SIGINT handler is switched off. Returns the solve status.

    A model of at most :data:`PRESOLVE_FROM_VARIABLES` variables is solved without presolve: on the test
    suite's exact-search files (models of a few hundred variables) that took 54.7 s, against 59.1 s with
    presolve and 78.4 s with presolve and the check below. On a larger model, an ``INFEASIBLE`` found
    with presolve on is confirmed by a second solve without presolve (same parameters otherwise), whose
    status is returned: OR-Tools 9.15's presolve was seen to report
    ``INFEASIBLE`` for a model with feasible solutions (a 14-op pipeline whose objectives were bounded
    to a box that held three Pareto points: minimizing one objective gave ``INFEASIBLE``, another gave
    ``OPTIMAL``, and both gave ``OPTIMAL`` without presolve; ``docs/exact-solving.md``). A proof of
    infeasibility closes a search region for good, so one is taken only when both agree; a second solve
    cut short by its time limit or a stop returns ``UNKNOWN``, which proves nothing, and so does an
    unconfirmed ``INFEASIBLE`` when the stop came before the second solve could start."""
    from ortools.sat.python import cp_model

    if len(model.proto.variables) <= PRESOLVE_FROM_VARIABLES:
        solver.parameters.cp_model_presolve = False
    status = _solve_watched(solver, model, token, poll_s)
    if status == cp_model.INFEASIBLE and solver.parameters.cp_model_presolve:
        if token.stopped:
            return cp_model.UNKNOWN
        solver.parameters.cp_model_presolve = False
        try:
            status = _solve_watched(solver, model, token, poll_s)
        finally:
            solver.parameters.cp_model_presolve = True
    return status


def _solve_watched(solver: Any, model: Any, token: StopToken, poll_s: float) -> Any:
    """One ``solver.solve(model)`` in a worker thread, stopped through ``token`` (:func:`run_cpsat`)."""
    solver.parameters.catch_sigint_signal = False
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["status"] = solver.solve(model)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="cpsat", daemon=True)
    worker.start()
    asked = False
    while worker.is_alive():
        worker.join(poll_s)
        if token.stopped and not asked:
            solver.stop_search()
            asked = True
    if "error" in outcome:
        raise outcome["error"]
    return outcome["status"]
