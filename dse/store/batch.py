"""Batch sweeps on Dask distributed, every finished job committed to a SQLite store the moment it ends.

:func:`run` expands specs times a grid into jobs (:mod:`dse.runs.sweep`), skips the
jobs the store already holds, runs the rest on a Dask cluster (a
``LocalCluster`` by default, a scheduler by its address, or a client the caller
already has) and records each job's result (:mod:`dse.store.database`) as it arrives.
A rerun of the same sweep therefore resumes: finished jobs are not redone,
none is lost or recorded twice. A job that fails (invalid spec, infeasible,
error, a worker that died under it, past its time limit) is recorded with its
status and message, and the sweep goes on.

Example::

    import dse.store.batch
    frame = dse.store.batch.run("problems/quickstart.yaml", store="out/sweep.sqlite",
                          grid={"solver.seed": [0, 1, 2], "constraints.power_w": [300, 400]})
    dse.store.batch.load("out/sweep.sqlite")          # the jobs, one row each
    dse.store.batch.load_points("out/sweep.sqlite")   # every Pareto point with its job's swept fields
"""

from __future__ import annotations

import logging
import multiprocessing.forkserver
import os
import signal
import socket
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dse.errors import DseError, InfeasibleError, SpecError
from dse.runs.runner import check_some_feasible, run_spec_solvers
from dse.runs.sweep import Job, SpecInput, expand_jobs
from dse.store.database import RETRYABLE, JobResult, Store, jobs_frame, points_frame
from dse.util.interrupt import StopToken, children_ignore_sigint
from dse.util.progress import Progress
from dse.version import __version__

if TYPE_CHECKING:
    import pandas as pd

#: Tasks a worker died under this many times are recorded as failed (Dask's ``allowed-failures``).
ALLOWED_WORKER_DEATHS = 2
#: Seconds between checks for stop requests, finished jobs and jobs past their time limit.
POLL_S = 0.05
#: Seconds a stopped sweep gives its client and cluster to close.
STOP_CLOSE_S = 1.0


@dataclass(frozen=True)
class BatchReport:
    """What a run did: jobs in the sweep, already in the store (skipped), run now and finished, of those
    failed (``invalid``, ``failed`` or ``timeout``) and infeasible (an answer: no mapping meets the
    constraints, the job's message says which and by how much), the store's write time, and the stop
    signal if any."""

    jobs: int
    skipped: int
    finished: int
    failed: int
    store_write_s: float
    wall_s: float
    interrupted: int | None = None
    infeasible: int = 0
    #: Each infeasible job run now: its swept fields (``path=value, ...``, or its spec's name) and diagnosis.
    diagnoses: tuple[tuple[str, str], ...] = ()

    @property
    def done(self) -> int:
        """Jobs run now that found at least one feasible mapping."""
        return self.finished - self.failed - self.infeasible

    @property
    def exit_code(self) -> int:
        """0, or 130/143 when stopped by SIGINT/SIGTERM."""
        from dse.util.interrupt import exit_code

        return exit_code(self.interrupted)


def _engine_version() -> str:
    return __version__


def run_job(spec: Mapping[str, Any], source: str = "<spec>", base: str = ".") -> dict[str, Any]:
    """Solve one resolved spec mapping as ``dse solve`` would (its solver settings, ``all`` included);
    returns a :class:`~dse.store.database.JobResult` as a dict. Never raises for a bad spec, an infeasible
    problem or a solver error: the status and message say what happened. Runs on the workers."""
    from dse.runs.spec import build_problem, spec_from_dict
    from dse.util.interrupt import StopToken

    start = time.perf_counter()
    fronts: list[Any] = []
    status, message = "done", ""
    try:
        resolved = spec_from_dict(dict(spec), source, Path(base))
        problem = build_problem(resolved)
        problem.check_feasible()
        settings = resolved.solver
        fronts, _ = run_spec_solvers(problem, settings, settings.name, settings.time_limit_s,
                                     settings.seed, StopToken(), quiet=True, source=source)
        check_some_feasible(problem, fronts)
    except InfeasibleError as exc:
        status, message = "infeasible", str(exc)
    except DseError as exc:
        status, message = "invalid", str(exc)
    except Exception as exc:  # noqa: BLE001 - recorded with the job; the sweep goes on
        status, message = "failed", f"{type(exc).__name__}: {exc}"
    return JobResult(status, message, [f.to_dict() for f in fronts], time.perf_counter() - start,
                     _engine_version(), f"{socket.gethostname()}:{os.getpid()}").to_dict()


def _jobs(jobs_or_grid: Any, grid: Any) -> list[Job]:
    if isinstance(jobs_or_grid, Job):
        return [jobs_or_grid]
    if isinstance(jobs_or_grid, Sequence) and not isinstance(jobs_or_grid, str) and jobs_or_grid \
            and all(isinstance(j, Job) for j in jobs_or_grid):
        if grid is not None:
            raise SpecError("dse.store.batch.run", "grid", "...", "give a grid with specs, not with jobs already expanded")
        return list(jobs_or_grid)
    return expand_jobs(jobs_or_grid, grid)


def _check_timeout(timeout: float | None) -> None:
    if timeout is not None and not (0 < timeout <= 30 * 24 * 3600):
        raise SpecError("command line", "--timeout-per-job", timeout, "must be a number of seconds in (0, 2592000]")


def _local_client(workers: int | None, n_jobs: int) -> tuple[Any, Any]:
    """A LocalCluster of single-threaded worker processes and its client. The workers are forked from a
    fork server started with SIGINT ignored (the ``forkserver`` method is set by :func:`execute`): a
    Ctrl-C that reaches the whole process group stops only this process, which then stops the workers
    without a word from them."""
    from distributed import Client, LocalCluster
    from distributed.utils import get_mp_context

    n = workers if workers is not None else max(1, min(os.cpu_count() or 1, n_jobs))
    get_mp_context()  # the forkserver's preload list, as distributed sets it
    with children_ignore_sigint():  # the fork server, and so every worker forked from it, ignores it
        multiprocessing.forkserver.ensure_running()
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.CRITICAL)
    return cluster, Client(cluster)


def _start_local_client(workers: int | None, n_jobs: int, token: StopToken) -> tuple[Any, Any] | None:
    """:func:`_local_client`, or None when a stop came before or while it started: a SIGTERM sent to the
    whole process group kills the fork server and the workers it is starting as well as asking this
    process to stop, so Dask's nannies fail to start and the cluster's start raises (LocalCluster's
    ``silence_logs`` keeps what Dask logs meanwhile off the terminal). Raises what the start raised when
    no stop came."""
    if token.stopped:
        return None
    try:
        return _local_client(workers, n_jobs)
    except Exception:
        if token.stopped:
            return None
        raise


def _close(own: tuple[Any, Any] | None, stopped: bool) -> None:
    """Close the client and the cluster this run started. After a stop, quickly and without a word: the
    local worker processes are killed first (a job they were running is not in the store and runs again
    on the next resume), then the close gets :data:`STOP_CLOSE_S` seconds."""
    if own is None:
        return
    cluster, client = own
    if stopped:
        _silence_dask_logs()
    if stopped and cluster is not None:
        _kill_workers(cluster)
    timeout = STOP_CLOSE_S if stopped else None
    try:
        client.close(timeout=timeout)
        if cluster is not None:
            cluster.close(timeout=timeout)
    except Exception:  # noqa: BLE001 - after a stop, whatever the close meets: a worker still starting
        if not stopped:  # when the signal came (an AssertionError in the nanny's kill), a timeout, a dead pipe
            raise


def _silence_dask_logs() -> None:
    """Turn off every logger of Dask and its network layer in this process: after a stop, the connections
    the killed workers leave behind close with INFO lines and tracebacks that say nothing to the user."""
    manager = logging.Logger.manager
    for name in ["distributed", "tornado", "asyncio", *manager.loggerDict]:
        if name.split(".")[0] in ("distributed", "tornado", "asyncio"):
            logging.getLogger(name).disabled = True


def _kill_workers(cluster: Any) -> None:
    """SIGKILL a LocalCluster's worker processes, their nannies told not to start new ones."""
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(nanny, "pid", None)
        if hasattr(nanny, "auto_restart"):
            nanny.auto_restart = False
        if isinstance(pid, int):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _executing_on_workers(dask_scheduler: Any) -> dict[str, float]:
    """Every task the workers said in their last heartbeat they were running, with the seconds it had run
    (run on the scheduler by ``Client.run_on_scheduler``)."""
    return {str(ts.key): float(ran) for ws in dask_scheduler.workers.values() for ts, ran in ws.executing.items()}


class _Run:
    """The submit-and-record loop of one sweep (see :func:`execute`)."""

    def __init__(self, client: Any, store: Store, todo: list[Job], timeout: float | None, progress: Progress) -> None:
        self.client = client
        self.store = store
        self.timeout = timeout
        self.progress = progress
        self.jobs: dict[str, Job] = {}
        self.futures: dict[str, Any] = {}
        for job in todo:
            key = f"dse-job-{job.job_id[:16]}-{uuid.uuid4().hex[:8]}"
            self.jobs[key] = job
        self.started: dict[str, float] = {}
        self.finished = 0
        self.failed = 0
        self.infeasible = 0
        self.diagnoses: list[tuple[str, str]] = []
        self.begin = time.monotonic()

    def submit(self) -> None:
        for key, job in self.jobs.items():
            self.futures[key] = self.client.submit(run_job, job.spec, job.source, job.base, key=key, pure=False)

    def record(self, key: str, result: JobResult) -> None:
        self.store.record(self.jobs[key], result)
        self.finished += 1
        self.failed += result.status not in ("done", "infeasible")
        if result.status == "infeasible":
            self.infeasible += 1
            job = self.jobs[key]
            fields = ", ".join(f"{k}={v}" for k, v in job.swept.items()) or str(job.spec.get("name", job.source))
            self.diagnoses.append((fields, result.message))
        future = self.futures.pop(key, None)
        if future is not None:
            future.release()

    def collect(self, future: Any) -> bool:
        """Record what ``future``'s job ended with; False when its result is not there to record: it died
        with the worker holding it after the job finished, and Dask runs the job again (the caller waits
        for the future once more)."""
        key = future.key
        if key not in self.futures:
            return True
        if future.status not in ("finished", "cancelled", "error"):  # lost with its worker, running again
            return False
        if future.status == "finished":
            try:
                result = JobResult.from_dict(future.result())
            except CancelledError:  # lost with its worker, and cancelled since
                result = JobResult("failed", "the worker holding its result died and Dask cancelled it",
                                   engine_version=_engine_version())
        elif future.status == "cancelled":
            return True
        else:
            exc = future.exception()
            name = type(exc).__name__
            if name == "KilledWorker":
                message = f"the worker running it died ({ALLOWED_WORKER_DEATHS + 1} tries): {exc}"
            else:
                message = f"{name}: {exc}"
            result = JobResult("failed", message, engine_version=_engine_version())
        self.record(key, result)
        return True

    def running(self) -> dict[str, float]:
        """The jobs the workers are running now, each with the seconds it has run, as the workers last
        reported them (their heartbeats, every half second on small clusters). A job the scheduler has
        sent to a busy worker waits there and is not counted: a worker runs one job per thread."""
        try:
            executing = self.client.run_on_scheduler(_executing_on_workers)
        except Exception:  # noqa: BLE001 - a progress figure and the timeouts' clock only
            return {}
        return {k: s for k, s in executing.items() if k in self.futures}

    def enforce_timeout(self, running: dict[str, float]) -> None:
        now = time.monotonic()
        for key, ran in running.items():
            self.started.setdefault(key, now - ran)
        if self.timeout is None:
            return
        late = [k for k in running if now - self.started[k] > self.timeout]
        if not late:
            return
        try:
            processing = self.client.processing()
        except Exception:  # noqa: BLE001 - then no worker is restarted
            processing = {}
        for key in late:
            future = self.futures.get(key)
            if future is None:
                continue
            where = [w for w, keys in processing.items() if key in keys]
            future.cancel()
            self.record(key, JobResult("timeout", f"ran past --timeout-per-job {self.timeout:g} s",
                                       wall_s=now - self.started[key], engine_version=_engine_version()))
            try:  # a worker thread cannot be stopped: restart the process that runs the job
                if where:
                    self.client.restart_workers(where, raise_for_error=False)
            except Exception:  # noqa: BLE001 - the job is already recorded
                pass

    def report_progress(self, running: int, total: int) -> None:
        remaining = total - self.finished
        elapsed = time.monotonic() - self.begin
        eta = f"{elapsed / self.finished * remaining:.0f} s" if self.finished else "?"
        done = self.finished - self.failed - self.infeasible
        self.progress.update(f"{done} done, {self.infeasible} infeasible, {self.failed} failed, {running} running, "
                             f"{remaining - running} queued of {total}; ETA {eta}")


def execute(jobs: Sequence[Job], store: str | Path, client: Any = None, *, workers: int | None = None,
            scheduler: str | None = None, timeout_per_job: float | None = None, retry_failed: bool = False,
            quiet: bool = True) -> BatchReport:
    """Run the ``jobs`` the store does not hold yet (and, with ``retry_failed``, those it holds as
    ``failed`` or ``timeout``); returns a :class:`BatchReport`. SIGINT/SIGTERM stop submitting and
    cancel what has not finished; what finished is in the store (``report.interrupted`` says which
    signal). Raises :class:`SpecError` when another process writes the store or an argument is bad."""
    from dse.util.interrupt import interruptible

    _check_timeout(timeout_per_job)
    if workers is not None and not (1 <= workers <= 4096):
        raise SpecError("command line", "--workers", workers, "must be an integer in [1, 4096]")
    begin = time.monotonic()
    with Store(store) as db:
        held = db.finished()
        todo = [j for j in jobs if j.job_id not in held or (retry_failed and held[j.job_id] in RETRYABLE)]
        skipped = len(jobs) - len(todo)
        if not todo:
            return BatchReport(len(jobs), skipped, 0, 0, 0.0, time.monotonic() - begin)
        progress = Progress("batch", enabled=False if quiet else None)
        import dask
        import distributed  # noqa: F401 - its config defaults loaded before dask.config.set below records
        # what to restore: set first, distributed's whole section would be removed on exit and a second
        # run in the same process would find no distributed.comm settings

        with interruptible() as token, dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_WORKER_DEATHS,
                                                        "distributed.scheduler.worker-saturation": 1.0,
                                                        "distributed.worker.multiprocessing-method": "forkserver"}):
            own: tuple[Any, Any] | None = None
            if client is None:
                if scheduler is not None:
                    client = _connect(scheduler)
                    own = (None, client)
                else:
                    own = _start_local_client(workers, len(todo), token)
                    if own is None:  # stopped while the workers started: nothing ran
                        return BatchReport(len(jobs), skipped, 0, 0, db.write_s, time.monotonic() - begin,
                                           token.signum)
                    client = own[1]
            loop = _Run(client, db, todo, timeout_per_job, progress)
            try:
                _drive(loop, token, len(todo))
            finally:
                if loop.futures:
                    client.cancel(list(loop.futures.values()))
                _close(own, token.stopped)
        return BatchReport(len(jobs), skipped, loop.finished, loop.failed, db.write_s, time.monotonic() - begin,
                           token.signum, loop.infeasible, tuple(loop.diagnoses))


@contextmanager
def cluster_client(workers: int | None, scheduler: str | None, token: StopToken) -> Iterator[Any]:
    """A Dask client for one search (``dse solve --workers N`` / ``--scheduler ADDR``): on the scheduler at
    ``scheduler``, or on a LocalCluster of ``workers`` single-threaded processes started here (forked from
    a fork server that ignores SIGINT, as :func:`execute`'s), or None when neither is given or a stop came
    while the workers started. Closes what it started on exit. Raises :class:`SpecError` naming
    ``--workers`` outside [1, 4096] or a ``--scheduler`` it cannot reach."""
    if workers is not None and not (1 <= workers <= 4096):
        raise SpecError("command line", "--workers", workers, "must be an integer in [1, 4096]")
    if workers is None and scheduler is None:
        yield None
        return
    import dask
    import distributed  # noqa: F401 - its config defaults loaded before dask.config.set (see execute)

    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        own = (None, _connect(scheduler)) if scheduler is not None else _start_local_client(workers, workers or 1,
                                                                                             token)
        try:
            yield None if own is None else own[1]
        finally:
            _close(own, token.stopped)


def _connect(address: str) -> Any:
    from distributed import Client

    try:
        return Client(address, timeout=30)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SpecError("command line", "--scheduler", address, f"cannot reach the scheduler: {exc}") from None


def _drive(loop: _Run, token: Any, total: int) -> None:
    from distributed import as_completed

    loop.submit()
    ready = as_completed(list(loop.futures.values()))
    next_check = 0.0
    while loop.futures and not token.stopped:
        batch = ready.next_batch(block=False) if ready.has_ready() else []
        for future in batch:
            if token.stopped:
                break
            if not loop.collect(future):
                ready.add(future)  # its result died with a worker: wait for the job's second run
        now = time.monotonic()
        if now >= next_check and (loop.timeout is not None or loop.progress.due()):
            running = loop.running()
            loop.enforce_timeout(running)
            loop.report_progress(len(running), total)
            next_check = now + 0.5
        if not batch:
            time.sleep(POLL_S)
    if not token.stopped:
        loop.report_progress(0, total)


def run(jobs_or_grid: SpecInput | Sequence[SpecInput] | Sequence[Job], store: str | Path, client: Any = None, *,
        grid: str | Path | Mapping[str, Any] | None = None, workers: int | None = None,
        scheduler: str | None = None, timeout_per_job: float | None = None, retry_failed: bool = False,
        quiet: bool = True) -> pd.DataFrame:
    """Run a sweep and return its jobs as a DataFrame (one row each, see :func:`dse.store.database.jobs_frame`).

    ``jobs_or_grid``: spec files, folders, glob patterns or spec mappings (times ``grid``: a YAML
    file or a mapping from dotted spec paths to values), or jobs from :func:`dse.runs.sweep.expand_jobs`.
    ``client``: a ``distributed.Client`` to run on (default: a LocalCluster of ``workers``
    processes, or the cluster at ``scheduler``). Jobs already in ``store`` are not run again.
    Raises :class:`SpecError` for bad input or a store in use by another process; an interrupt
    (Ctrl-C) returns the jobs finished so far.
    """
    jobs = _jobs(jobs_or_grid, grid)
    execute(jobs, store, client, workers=workers, scheduler=scheduler, timeout_per_job=timeout_per_job,
            retry_failed=retry_failed, quiet=quiet)
    return jobs_frame(store, [j.job_id for j in jobs])


def load(store: str | Path) -> pd.DataFrame:
    """The jobs of ``store``, one row each (status, swept fields, front size, best objective values,
    wall time, message); raises :class:`SpecError` when the file is missing or not a store."""
    return jobs_frame(store)


def load_points(store: str | Path) -> pd.DataFrame:
    """Every Pareto point in ``store`` with its job's id, status and swept fields as columns."""
    return points_frame(store)


#: Infeasible jobs whose diagnosis the summary prints (the others are in the store).
SHOWN_DIAGNOSES = 5


def print_summary(report: BatchReport, store: str | Path) -> None:
    """On stdout: one line saying how many jobs ran, were skipped, done, infeasible and failed, then the
    diagnosis of each infeasible job (the first :data:`SHOWN_DIAGNOSES`): an infeasible job is an answer,
    which constraint cannot be met and by how much, not a fault."""
    line = (f"{report.jobs} jobs: {report.skipped} already in {store}, {report.finished} run now "
            f"({report.done} done, {report.infeasible} infeasible, {report.failed} failed) in {report.wall_s:.1f} s")
    print(line)
    for fields, message in report.diagnoses[:SHOWN_DIAGNOSES]:
        print(f"  infeasible: {fields}: {message.removeprefix('infeasible: ')}")
    if len(report.diagnoses) > SHOWN_DIAGNOSES:
        print(f"  ... and {len(report.diagnoses) - SHOWN_DIAGNOSES} more: dse results {store} "
              "--where \"status == 'infeasible'\"")
    if report.interrupted is not None:
        print(f"interrupted: {report.jobs - report.skipped - report.finished} jobs not run; "
              "run the same command again to resume", file=sys.stderr)
