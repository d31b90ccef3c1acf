"""One interruption path for every solver: SIGINT and SIGTERM stop the search, nothing found is lost.

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
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
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


def run_cpsat(solver: Any, model: Any, token: StopToken, poll_s: float = 0.05) -> Any:
    """``solver.solve(model)`` in a worker thread while this thread watches ``token``; a stop request
    calls ``solver.stop_search()``, which ends the search within milliseconds with the best solution
    so far. OR-Tools' own SIGINT handler is switched off. Returns the solve status."""
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
