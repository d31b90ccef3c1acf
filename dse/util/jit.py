"""When the compiled kernels may be compiled: once per environment, never inside a solve's time limit.

The dag family's decoder, heuristics, lower bounds and memetic moves are numba kernels, compiled on
first use and cached on disk. A cold cache costs tens of seconds of compilation, which must not land
inside a solve's time limit. The rule:

* **Warm cache** (a stamp written after every kernel was compiled for this environment: the sources of
  the kernel modules, :data:`KERNEL_MODULES`, where the package lies, this numba, this Python, this cache
  folder): kernels load from the cache at once. numba keys each cached kernel on its own source file
  (its content and its path), so the stamp does too: an edit to any other module of the package leaves
  both valid, and a copy of the package elsewhere has a stamp of its own.
* **Cold cache, inside a time limit** (:func:`time_limit_ends` set by :func:`dse.solve` and the CLI) with
  less than :data:`INLINE_COMPILE_S` left: one background process compiles every kernel for the
  environment (announced in one progress line; it finishes even if the command ends first, and writes
  the stamp; ``DSE_BACKGROUND_COMPILE=0`` turns it off), while this process runs the kernels as the plain Python functions they are written as
  (same results, slower), switching to the compiled ones as soon as the stamp appears. Optional work
  that is only worth doing compiled (the lower bounds) is skipped meanwhile.
* **Cold cache, no time limit** (a script calling a family directly, the test suite): the kernels
  compile inline, as numba does by default.
* **A small one-off run** (:func:`one_off`: one heuristic and its evaluation, with at most
  :data:`PLAIN_WORK` cells) in a process that has not imported numba: the kernels run as plain Python,
  warm cache or not. Importing numba and loading the cached kernels costs 0.5-1 s, where such a run
  takes a few tens of milliseconds interpreted.

``python -m dse.solvers.warmup`` compiles every kernel in the foreground (``make demo`` runs it).
This module imports neither numba nor any other module of the package: it sits at the bottom.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

#: A solve with more than this many seconds left compiles its kernels inline: compiling every kernel
#: takes 10-40 s on a 2-core machine, and the compiled kernels then run 50-500x faster.
INLINE_COMPILE_S = 60.0
#: The module that compiles every kernel (run as ``python -m``); it lives above the families.
WARMUP_MODULE = "dse.solvers.warmup"

#: The package's root folder: :data:`KERNEL_MODULES` are relative to it.
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
#: The modules the compiled kernels depend on, as paths relative to :data:`PACKAGE_ROOT` (this module
#: imports none of them): those that define kernels and compile them with :func:`compile_functions`,
#: the warm-up (which kernels it compiles, for which argument types) and this module (how they are
#: compiled). The stamp is keyed on their sources, not on the other modules'; every module of the
#: package that calls :func:`compile_functions` or imports numba must be listed (a test scans for them).
KERNEL_MODULES = (
    "heuristics/base.py",
    "mapping/dag/bounds.py",
    "mapping/dag/chain_bound.py",
    "mapping/dag/structure.py",
    "solvers/local_search.py",
    "solvers/warmup.py",
    "util/jit.py",
)

#: The most work (tasks x devices + edges x devices) of a :func:`one_off` run that runs interpreted: a
#: HEFT solve of 50 tasks, about 100 edges and 4 devices (600) takes about 40 ms so.
PLAIN_WORK = 6_000

_PLAIN: contextvars.ContextVar[bool] = contextvars.ContextVar("dse_plain_kernels", default=False)
_ENDS: contextvars.ContextVar[float | None] = contextvars.ContextVar("dse_time_limit_ends", default=None)
_state: dict[str, Any] = {"warm": False, "child": None, "announce": None, "told": False}


@contextlib.contextmanager
def time_limit_ends(monotonic_end: float | None) -> Iterator[None]:
    """Within the block, kernels are not compiled inline when the cache is cold and fewer than
    :data:`INLINE_COMPILE_S` seconds are left before ``monotonic_end`` (a ``time.monotonic()`` value)."""
    token = _ENDS.set(monotonic_end)
    try:
        yield
    finally:
        _ENDS.reset(token)


@contextlib.contextmanager
def one_off(work: int) -> Iterator[None]:
    """Within the block, :func:`may_compile` is False (kernels run as plain Python) while numba is not
    imported and ``work`` (tasks x devices + edges x devices of the few kernel calls the block makes) is
    at most :data:`PLAIN_WORK`; otherwise the block changes nothing."""
    token = _PLAIN.set(work <= PLAIN_WORK)
    try:
        yield
    finally:
        _PLAIN.reset(token)


def set_announce(callback: Callable[[str], None] | None) -> None:
    """Where the one line announcing a background compilation goes (default: standard error)."""
    _state["announce"] = callback


def cache_folder() -> Path:
    """Where the stamp lives: the folder of numba's cache when ``NUMBA_CACHE_DIR`` is set, else this
    module's ``__pycache__`` when writable (numba then caches each kernel beside its own module), else a
    per-user folder."""
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        return Path(configured)
    beside = Path(__file__).resolve().parent / "__pycache__"
    if os.access(beside if beside.exists() else beside.parent, os.W_OK):
        return beside
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "dse"


def kernel_sources_digest(package: Path = PACKAGE_ROOT) -> str:
    """A hash of the sources of the :data:`KERNEL_MODULES` under ``package`` (a module that is not there
    counts as absent), numba's version and Python's."""
    digest = hashlib.sha256()
    for module in KERNEL_MODULES:
        path = package / module
        digest.update(module.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"absent")
        digest.update(b"\0")
    try:
        digest.update(metadata.version("numba").encode())
    except metadata.PackageNotFoundError:  # pragma: no cover - numba is a core dependency
        pass
    digest.update(sys.version.encode())
    return digest.hexdigest()


@functools.cache
def _sources_digest() -> str:
    """:func:`kernel_sources_digest` of this package (read once per process)."""
    return kernel_sources_digest(PACKAGE_ROOT)


def environment_key() -> str:
    """A hash of what the compiled kernels depend on: the sources of the :data:`KERNEL_MODULES`, numba's and
    Python's versions, where the package lies (numba caches a kernel per source path: copies sharing one
    ``NUMBA_CACHE_DIR`` share no kernel) and the cache folder."""
    where = f"{_sources_digest()}\0{PACKAGE_ROOT}\0{cache_folder()}"
    return hashlib.sha256(where.encode()).hexdigest()[:16]


def stamp_path() -> Path:
    """The file whose presence says every kernel is compiled and cached for this environment."""
    return cache_folder() / f"dse-kernels-{environment_key()}.stamp"


def write_stamp(seconds: float) -> Path:
    """Record that every kernel is compiled for this environment (``seconds``: how long it took)."""
    path = stamp_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{seconds:.1f}\n")
    _state["warm"] = True
    return path


def cache_is_warm() -> bool:
    """Whether every kernel is compiled and cached for this environment (checked on disk until true)."""
    if not _state["warm"]:
        _state["warm"] = stamp_path().exists()
    return bool(_state["warm"])


def may_compile() -> bool:
    """True when a kernel may be compiled (or loaded from the cache) now: the cache is warm, no time limit
    is running, or more than :data:`INLINE_COMPILE_S` seconds of it are left. Otherwise starts the
    background compilation (once per process) and returns False: the caller runs its kernel as plain
    Python, or skips work that is only worth doing compiled. False, starting nothing, inside a small
    :func:`one_off` block while numba is not imported."""
    if _PLAIN.get() and "numba" not in sys.modules:
        return False
    if cache_is_warm():
        return True
    ends = _ENDS.get()
    if ends is None or ends - time.monotonic() > INLINE_COMPILE_S:
        return True
    start_background_compilation()
    return False


def start_background_compilation() -> None:
    """Start ``python -m dse.solvers.warmup`` once per process (none when another one already runs: the
    warm-up holds a lock file), announcing it in one line."""
    if _state["child"] is not None:
        return
    if os.environ.get("DSE_BACKGROUND_COMPILE", "1") == "0":  # e.g. a batch worker that must start nothing
        _state["child"] = "disabled"
        return
    lock = cache_folder() / "dse-kernels.lock"
    if _locked(lock):
        _state["child"] = "elsewhere"
        return
    try:
        _state["child"] = subprocess.Popen(
            [sys.executable, "-m", WARMUP_MODULE, "--quiet"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # no process can be started: the kernels stay interpreted in this process
        _state["child"] = "failed"
        return
    _state["told"] = True
    _tell("compiling the dag kernels once for this environment, in the background (10-40 s); "
          "until then they run uncompiled")


def _tell(message: str) -> None:
    """One line to the announce callback (:func:`set_announce`), else to standard error."""
    announce = _state["announce"]
    if announce is not None:
        announce(message)
    else:
        print(f"note: {message}", file=sys.stderr, flush=True)


def _locked(lock: Path) -> bool:
    """Whether another process holds ``lock`` (an advisory lock; False where locks are unsupported)."""
    try:
        import fcntl

        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock, "a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
    except (ImportError, OSError):
        return False
    return False


@contextlib.contextmanager
def holding_lock() -> Iterator[None]:
    """Hold the warm-up lock for the block (so commands started meanwhile start no second warm-up)."""
    lock = cache_folder() / "dse-kernels.lock"
    try:
        import fcntl

        lock.parent.mkdir(parents=True, exist_ok=True)
        fh = open(lock, "a")  # noqa: SIM115 - held for the whole block
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
    finally:
        fh.close()


def plain(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` run as plain Python, with numpy's integer-overflow warnings off (compiled kernels wrap
    around silently, e.g. in hashes): what a kernel getter returns while it may not compile."""
    import numpy as np

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(over="ignore"):
            return function(*args, **kwargs)

    return run


def compile_functions(scope: dict[str, Any], names: Sequence[str]) -> dict[str, Callable[..., Any]]:
    """Compile the functions ``names`` of a module's globals ``scope`` with numba (``cache=True``,
    ``nogil=True``; callees first, so the later ones call the compiled earlier ones) and put the compiled
    versions in ``scope``; returns them by name. Imports numba."""
    import numba

    if not _state.get("told") and not cache_is_warm():  # once per process: the first use may take a while
        _state["told"] = True
        _tell("compiling the dag kernels for this environment, once (10-40 s; then cached on disk; "
              "python -m dse.solvers.warmup does it ahead)")
    compiled = {}
    for name in names:
        function = scope[name]
        if not hasattr(function, "py_func"):
            function = numba.njit(cache=True, nogil=True)(function)
            scope[name] = function
        compiled[name] = function
    return compiled
