"""Files of the serving simulator: a request trace read from CSV, and a run's tables written out.

* :func:`read_trace`: ``arrival_s, input_len, output_len`` per request (a header row, one request a row,
  by arrival), validated: a bad file, column or row is one :class:`~dse.errors.SpecError` line;
* :func:`summary_table`, :func:`trace_table`, :func:`iterations_table`: a
  :class:`~dse.sim.serving.engine.ServingResult` as DataFrames (SI units in the column names);
* :func:`write_outputs`: ``summary.csv``, ``trace.csv`` (one row per request) and ``iterations.csv`` (one
  row per iteration of a replica, from which :func:`dse.store.trace.write_simulation_trace` draws
  ``trace.json``, one track per pool), each replaced atomically; a run a stop cut short is marked
  partial (``partial.json``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dse.errors import SpecError
from dse.sim.serving.engine import ITERATION_COLUMNS, ServingResult
from dse.sim.serving.inputs import Deployment, Requests, requests
from dse.util.files import clear_partial, mark_partial, replace_atomically

if TYPE_CHECKING:
    import pandas as pd

#: Columns a request trace file must have.
TRACE_FILE_COLUMNS = ("arrival_s", "input_len", "output_len")
#: Percentiles the summary gives of TTFT, TPOT and end-to-end latency.
PERCENTILES = (50, 90, 99)
#: Columns of ``summary.csv``: one row per pool, then ``all``.
SUMMARY_COLUMNS = ("pool", "role", "gpus", "requests", "finished", "output_tokens", "duration_s", "throughput_tok_s",
                   *(f"{m}_p{q}_s" for m in ("ttft", "tpot", "e2e") for q in PERCENTILES),
                   "busy_s", "utilization", "energy_j", "energy_j_per_token", "preemptions")
#: Columns of ``trace.csv``: one row per request.
TRACE_COLUMNS = ("request", "arrival_s", "input_len", "output_len", "prefill_pool", "decode_pool", "ttft_s",
                 "tpot_s", "e2e_s", "finish_s", "preemptions")


def read_trace(path: str | Path) -> Requests:
    """The requests of CSV file ``path`` (:data:`TRACE_FILE_COLUMNS`, other columns ignored). Raises
    :class:`SpecError` naming the file, and the column and row where one is at fault."""
    import pandas as pd
    source = str(path)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise SpecError(source, "file", source, "no such file") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise SpecError(source, "file", source, f"is not a readable CSV table: {str(exc).splitlines()[0]}") from None
    missing = [c for c in TRACE_FILE_COLUMNS if c not in table.columns]
    if missing:
        raise SpecError(source, missing[0], None, f"missing column; the columns are {', '.join(TRACE_FILE_COLUMNS)}")
    if table.empty:
        raise SpecError(source, "rows", 0, "no requests")
    values = {}
    for column in TRACE_FILE_COLUMNS:
        numbers = pd.to_numeric(table[column].str.strip(), errors="coerce")
        bad = np.flatnonzero(numbers.isna().to_numpy())
        if len(bad):
            raise SpecError(source, f"{column}[{bad[0]}]", table[column].iloc[bad[0]], "is not a number")
        values[column] = numbers.to_numpy(dtype=float)
    return requests(values["arrival_s"], values["input_len"], values["output_len"], source)


def _row(result: ServingResult, name: str, role: str, gpus: int, mine: np.ndarray, busy: float, energy: float,
         capacity_s: float) -> dict[str, object]:
    done = mine & result.finished
    tokens = int(result.requests.output_len[done].sum())
    horizon = result.horizon_s
    row: dict[str, object] = {"pool": name, "role": role, "gpus": gpus, "requests": int(mine.sum()),
                              "finished": int(done.sum()), "output_tokens": tokens, "duration_s": horizon,
                              "throughput_tok_s": tokens / horizon if horizon > 0 else 0.0}
    for metric in ("ttft", "tpot", "e2e"):
        values = getattr(result, f"{metric}_s")[mine]
        values = values[np.isfinite(values)]
        for q in PERCENTILES:
            row[f"{metric}_p{q}_s"] = float(np.percentile(values, q)) if len(values) else float("nan")
    row |= {"busy_s": busy, "utilization": busy / capacity_s if capacity_s > 0 else 0.0, "energy_j": energy,
            "energy_j_per_token": energy / tokens if tokens else float("nan"),
            "preemptions": int(result.preemptions[mine].sum())}
    return row


def summary_table(result: ServingResult, deployment: Deployment) -> pd.DataFrame:
    """``summary.csv`` (:data:`SUMMARY_COLUMNS`): per pool of ``deployment`` (the run's) the requests it prefilled or decoded, their output tokens per second of the run, TTFT, TPOT
    and end-to-end percentiles (s), busy time summed over replicas (s) and its share of the replicas'
    time, energy (J) and J per output token; then ``all``: the whole deployment."""
    import pandas as pd
    rows = []
    for p, pool in enumerate(deployment.pools):
        mine = (result.prefill_pool == p) | (result.decode_pool == p)
        rows.append(_row(result, pool.name, pool.role, pool.gpus * pool.replicas, mine, float(result.busy_s[p]),
                         float(result.energy_j[p]), result.horizon_s * pool.replicas))
    rows.append(_row(result, "all", "", sum(p.gpus * p.replicas for p in deployment.pools),
                     np.ones(len(result.requests), dtype=bool), float(result.busy_s.sum()),
                     float(result.energy_j.sum()), result.horizon_s * sum(p.replicas for p in deployment.pools)))
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def trace_table(result: ServingResult) -> pd.DataFrame:
    """``trace.csv`` (:data:`TRACE_COLUMNS`): one row per request, pools by name (empty where none), times
    in s (empty where the request had not got that far)."""
    import pandas as pd
    names = np.array(list(result.pool_names) + [""], dtype=object)
    reqs = result.requests
    return pd.DataFrame({"request": np.arange(len(reqs)), "arrival_s": reqs.arrival_s, "input_len": reqs.input_len,
                         "output_len": reqs.output_len, "prefill_pool": names[result.prefill_pool],
                         "decode_pool": names[result.decode_pool], "ttft_s": result.ttft_s, "tpot_s": result.tpot_s,
                         "e2e_s": result.e2e_s, "finish_s": result.finish_s, "preemptions": result.preemptions},
                        columns=list(TRACE_COLUMNS))


def iterations_table(result: ServingResult) -> pd.DataFrame:
    """``iterations.csv``: one row per iteration of a replica (:data:`~dse.sim.serving.engine.ITERATION_COLUMNS`;
    empty unless the run kept its trace)."""
    import pandas as pd
    return pd.DataFrame(list(result.iterations), columns=list(ITERATION_COLUMNS))


def _csv_writer(table: pd.DataFrame) -> Callable[[str], None]:
    """What writes ``table`` (no index) to a given path."""
    def write(tmp: str) -> None:
        table.to_csv(tmp, index=False)
    return write


def write_outputs(result: ServingResult, deployment: Deployment, out: str | Path) -> list[Path]:
    """Write ``summary.csv``, ``trace.csv`` and ``iterations.csv`` of ``result`` (a run of ``deployment``)
    into folder ``out`` (made when missing);
    a result a stop cut short is marked partial (``partial.json``), a complete one clears that mark.
    Returns the paths written; raises :class:`~dse.errors.OutputError` when one cannot be."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    tables = {"summary.csv": summary_table(result, deployment), "trace.csv": trace_table(result),
              "iterations.csv": iterations_table(result)}
    paths = []
    for name, table in tables.items():
        path = folder / name
        replace_atomically(path, _csv_writer(table))
        paths.append(path)
    if result.complete:
        clear_partial(folder)
    else:
        unfinished = int((~result.finished).sum())
        paths.append(mark_partial(folder, {"requests_finished": int(result.finished.sum()),
                                           "requests_unfinished": unfinished, "simulated_s": result.horizon_s}))
    return paths
