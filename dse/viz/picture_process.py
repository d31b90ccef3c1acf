"""Pareto plots drawn by a forked child process, so that importing matplotlib overlaps a solver's run.

Importing matplotlib takes about 0.6 s of a short ``dse solve`` (drawing the plot 0.3 s more). A
command that will draw once its solvers end forks a child first (:meth:`PictureProcess.start`): the
child imports matplotlib at once, on another core while the parent solves, then draws each plot the
parent sends into the file the parent names and answers whether it wrote it: at once
(:meth:`PictureProcess.draw_fronts`, the parent waits), or in the background
(:meth:`PictureProcess.draw_later`: the child replaces the file atomically while the parent writes its
other files; :meth:`PictureProcess.settle` waits for it, and draws the plot in the parent when the child
could not). The plot is the one the parent would draw: the same code on the same fronts, in a copy of the
parent's state (the PNG files are byte for byte the same).

Where the child cannot help, the caller draws in its own process, so a plot is never lost to it:

* :meth:`PictureProcess.start` returns None without ``os.fork`` or outside Linux, when matplotlib is
  loaded already (nothing to overlap), when threads besides the caller's run (a fork copies only
  the calling thread; a lock another thread held would stay held in the child), and when the caller
  holds more than :data:`MAX_PARENT_RSS` of memory;
* :meth:`PictureProcess.draw_fronts` returns False when the child died, drawing raised there, or it
  gave no answer within :data:`ANSWER_S` seconds (it is then killed); :meth:`PictureProcess.settle`
  then draws a plot sent with :meth:`~PictureProcess.draw_later` itself, raising what drawing or
  writing it raises (:class:`~dse.errors.OutputError` for a path that cannot be written).

The child ignores SIGINT (Ctrl-C reaches the whole process group: the parent stops its solvers, still
sends the plot of what they found, and ends the child by closing its pipe). It exits when its pipe
closes, the parent's death included, without running the parent's exit handlers or flushing the
parent's buffered output.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import pickle
import select
import signal
import struct
import sys
import threading
from collections.abc import Sequence
from typing import BinaryIO, NoReturn

from dse.pareto import ParetoSet
from dse.util.files import replace_atomically
from dse.viz.figures import save
from dse.viz.fronts import plot_fronts

__all__ = ["ANSWER_S", "PictureProcess"]

#: Seconds the parent waits for the child to answer a plot (its import included) before it kills the
#: child and draws the plot itself.
ANSWER_S = 60.0
#: No child for a parent holding more resident memory (bytes): while the child lives, every page either
#: process writes is copied, which could double a large run's memory for half a second saved.
MAX_PARENT_RSS = 1 << 30

_LENGTH = struct.Struct("!Q")  # a message: its length, then the pickled (fronts, error, path, atomic)
_DRAWN, _FAILED = b"1", b"0"


class PictureProcess:
    """A forked child that imports matplotlib at once and draws the Pareto plots it is sent (see the
    module's docstring). Use :meth:`start`; end it with :meth:`close` (closing its pipe ends it)."""

    def __init__(self, pid: int, to_child: BinaryIO, from_child: BinaryIO, shared: tuple[object, ...]) -> None:
        self._pid: int | None = pid
        self._to_child = to_child
        self._from_child = from_child
        self._shared = {id(obj): k for k, obj in enumerate(shared)}
        self._pending: tuple[list[ParetoSet], float | None, str] | None = None  # sent by draw_later, unanswered

    @classmethod
    def start(cls, shared: Sequence[object] = ()) -> PictureProcess | None:
        """A child forked from this process, importing matplotlib; None where none can help (see the
        module's docstring). ``shared``: objects built before the fork (a problem's objectives, whose unit
        conversions are closures that do not pickle), which the plots sent later refer to: they go to the
        child as their place in ``shared``, and it takes its own copy from the fork."""
        if (not sys.platform.startswith("linux") or not hasattr(os, "fork") or threading.active_count() > 1
                or "matplotlib.figure" in sys.modules or _resident_bytes() > MAX_PARENT_RSS):
            return None
        down_read, down_write = os.pipe()
        up_read, up_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(down_write)
            os.close(up_read)
            _child(down_read, up_write, tuple(shared))
        os.close(down_read)
        os.close(up_write)
        return cls(pid, os.fdopen(down_write, "wb"), os.fdopen(up_read, "rb", buffering=0), tuple(shared))

    @property
    def pid(self) -> int | None:
        """The child's process id; None once it ended."""
        return self._pid

    def draw_fronts(self, fronts: Sequence[ParetoSet], error: float | None, path: str) -> bool:
        """Have the child draw :func:`dse.viz.plot_fronts` of ``fronts`` (with ``error`` bands) into the file
        ``path``; returns True once it wrote it, False when it could not (the caller then draws it)."""
        self.settle()
        return self._send(fronts, error, path, atomic=False) and self._answered()

    def draw_later(self, fronts: Sequence[ParetoSet], error: float | None, path: str) -> bool:
        """Have the child draw :func:`dse.viz.plot_fronts` of ``fronts`` (with ``error`` bands) and replace the
        file ``path`` with it atomically, while the caller goes on; returns True once sent (a plot sent before
        is settled first), False when no child can take it (the caller then draws it). The plot is in place
        once :meth:`settle` or :meth:`close` returns."""
        self.settle()
        if not self._send(fronts, error, path, atomic=True):
            return False
        self._pending = (list(fronts), error, str(path))
        return True

    def settle(self) -> None:
        """Wait for the plot sent by :meth:`draw_later`; where the child could not draw it, draw it here.
        Raises what drawing or writing it here raises (:class:`~dse.errors.OutputError`)."""
        pending, self._pending = self._pending, None
        if pending is not None and not self._answered():
            fronts, error, path = pending
            replace_atomically(path, lambda tmp: save(plot_fronts(fronts, error=error), tmp))

    def _send(self, fronts: Sequence[ParetoSet], error: float | None, path: str, atomic: bool) -> bool:
        """Send one plot to the child; False (the child ended) when it cannot."""
        if self._pid is None:
            return False
        try:
            buffer = io.BytesIO()
            _SharedPickler(buffer, self._shared).dump((list(fronts), error, str(path), atomic))
            message = buffer.getvalue()
            self._to_child.write(_LENGTH.pack(len(message)) + message)
            self._to_child.flush()
        except (OSError, pickle.PicklingError, TypeError, AttributeError):  # a dead child, a front that won't pickle
            self.close(kill=True)
            return False
        return True

    def _answered(self) -> bool:
        """Wait (up to :data:`ANSWER_S` seconds) for the child's answer to the plot sent last: True when it
        drew it; else False, and the child is ended."""
        try:
            ready, _, _ = select.select([self._from_child], [], [], ANSWER_S)
            answer = self._from_child.read(1) if ready else b""
        except (OSError, ValueError):  # a dead child, a pipe closed already
            answer = b""
        if answer != _DRAWN:
            self.close(kill=answer != _FAILED)
            return False
        return True

    def close(self, kill: bool = False) -> None:
        """End the child (closing its pipe; ``kill``: SIGKILL first) and wait for it: a plot it was drawing
        is then in place, unless it was killed. Safe to call twice."""
        pid, self._pid = self._pid, None
        if pid is None:
            return
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for stream in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                stream.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    def __enter__(self) -> PictureProcess:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            if exc_type is None:  # a plot sent with draw_later is in place (drawn here if the child could not)
                self.settle()
        finally:
            self.close()


def _resident_bytes() -> int:
    """This process's resident memory in bytes (Linux's ``/proc/self/statm``; 0 where it cannot be read)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _SharedPickler(pickle.Pickler):
    """A pickler that writes the objects of ``shared`` (their ids, mapped to their places) as their places."""

    def __init__(self, file: io.BytesIO, shared: dict[int, int]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._places = shared

    def persistent_id(self, obj: object) -> int | None:
        return self._places.get(id(obj))


class _SharedUnpickler(pickle.Unpickler):
    """The child's side of :class:`_SharedPickler`: a place stands for the child's copy of that object."""

    def __init__(self, data: bytes, shared: tuple[object, ...]) -> None:
        super().__init__(io.BytesIO(data))
        self._shared = shared

    def persistent_load(self, pid: int) -> object:
        return self._shared[pid]


def _child(down: int, up: int, shared: tuple[object, ...]) -> NoReturn:
    """The child's life: import matplotlib, then draw each plot sent on ``down`` (``shared``: the objects sent
    by their places) and answer on ``up``, until ``down`` closes; never returns into the parent's code."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        import matplotlib.backends.backend_agg  # noqa: F401  the imports the parent would have waited for
        import matplotlib.figure  # noqa: F401

        with os.fdopen(down, "rb") as requests, os.fdopen(up, "wb", buffering=0) as answers:
            while len(header := requests.read(_LENGTH.size)) == _LENGTH.size:
                fronts, error, path, atomic = _SharedUnpickler(requests.read(_LENGTH.unpack(header)[0]),
                                                               shared).load()
                try:
                    figure = plot_fronts(fronts, error=error)
                    if atomic:
                        replace_atomically(path, functools.partial(save, figure))
                    else:
                        save(figure, path)
                except Exception:  # the parent draws it and reports what went wrong
                    answers.write(_FAILED)
                else:
                    answers.write(_DRAWN)
    except BaseException:
        code = 1
    finally:
        os._exit(code)
