"""The stop rule of every benchmark: the first SIGINT or SIGTERM ends the run, and a run cut short is never a result.

A benchmark's work runs inside :func:`benchmark_stops`, which routes both signals to the project's
stop token (:func:`dse.util.interrupt.interruptible`): the solver or simulation running when the signal
arrives returns at its next safe point, and every later one sees the same stop. The script

* calls ``stop.check()`` before each case (raises once a stop was requested),
* passes each measured result through ``stop.keep(result, case)``, which raises instead of returning
  when the signal arrived while that case ran (its figures come from a search cut short, so they are
  printed as cut short and never as a result),
* runs child processes with ``stop.run(...)`` (the child is terminated on a stop, not waited for),

and prints or writes each row as its case finishes, so what finished is kept. On a stop the block
prints one line on stderr (how many cases finished, which one was cut short) and the process exits
130 after SIGINT or 143 after SIGTERM.

    with benchmark_stops("exact_vs_approx") as stop:
        for case in cases:
            stop.check()
            row = stop.keep(measure(case), case=str(case))
            print(row)
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from dse.util.interrupt import Interrupted, StopToken, interruptible

T = TypeVar("T")

#: Seconds a terminated child process gets to exit before it is killed.
CHILD_GRACE_S = 5.0


class BenchmarkStop:
    """The stop state of one benchmark run: how many cases finished, and the one a signal cut short."""

    def __init__(self, token: StopToken) -> None:
        self.token = token
        self.finished = 0
        self.cut_short: str | None = None

    @property
    def requested(self) -> bool:
        """Whether SIGINT or SIGTERM arrived."""
        return self.token.stopped

    def check(self) -> None:
        """Raise :class:`Interrupted` when a stop was requested (call before each case)."""
        if self.token.stopped:
            raise Interrupted(self.token.signum)

    def keep(self, result: T, case: str = "") -> T:
        """``result`` when no stop arrived while its case ran; raises :class:`Interrupted` otherwise."""
        if self.token.stopped:
            self.cut_short = case or "the case running"
            raise Interrupted(self.token.signum)
        self.finished += 1
        return result

    def run(self, args: Sequence[str], *, poll_s: float = 0.1, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """``subprocess.run(args, text=True, **kwargs)`` that terminates the child on a stop and raises
        :class:`Interrupted` instead of waiting for it (``capture_output``, ``env``, ``cwd``, ``timeout`` are
        passed through; raises ``subprocess.TimeoutExpired`` as ``subprocess.run`` does)."""
        self.check()
        timeout = kwargs.pop("timeout", None)
        if kwargs.pop("capture_output", False):
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        started = time.monotonic()
        with subprocess.Popen(list(args), text=True, **kwargs) as child:
            while True:
                try:
                    out, err = child.communicate(timeout=poll_s)
                    return subprocess.CompletedProcess(child.args, child.returncode, out, err)
                except subprocess.TimeoutExpired:
                    pass
                if self.token.stopped:
                    _end(child)
                    self.cut_short = " ".join(Path(str(a)).name for a in args[:3])
                    raise Interrupted(self.token.signum) from None
                if timeout is not None and time.monotonic() - started > timeout:
                    _end(child)
                    raise subprocess.TimeoutExpired(child.args, timeout)


def _end(child: subprocess.Popen[str]) -> None:
    """Terminate ``child``, kill it after :data:`CHILD_GRACE_S`, and reap it."""
    child.terminate()
    try:
        child.communicate(timeout=CHILD_GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()


@contextmanager
def benchmark_stops(name: str) -> Iterator[BenchmarkStop]:
    """Run the block under the benchmark stop rule; on SIGINT or SIGTERM print one line and exit 130 or 143."""
    with interruptible() as token:
        stop = BenchmarkStop(token)
        try:
            yield stop
        except Interrupted:
            pass
    if token.signum is not None:
        signame = signal.Signals(token.signum).name
        cut = f"; cut short and not reported: {stop.cut_short}" if stop.cut_short else ""
        print(f"{name}: interrupted by {signame} after {stop.finished} finished case(s), printed above{cut}",
              file=sys.stderr, flush=True)
        sys.exit(token.exit_code)
