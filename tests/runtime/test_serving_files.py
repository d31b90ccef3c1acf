"""The serving simulator's files: a request trace read from CSV, summary, per-request trace, trace.json."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dse.errors import SpecError
from dse.runtime.serving import SUMMARY_COLUMNS, TRACE_COLUMNS, read_trace, write_outputs
from dse.sim.serving.engine import simulate
from dse.sim.serving.inputs import Deployment, Pool, requests
from dse.store.trace import write_simulation_trace
from dse.util.files import PARTIAL_MARKER
from dse.util.interrupt import Interrupted, active_token, interruptible


def _split() -> Deployment:
    pre = Pool("pre", lambda c: 0.2, lambda kv: 1.0, 1000, role="prefill", busy_w=100.0, idle_w=10.0,
               kv_bytes_per_token=1e6)
    dec = Pool("dec", lambda c: 1.0, lambda kv: 0.05, 1000, role="decode", busy_w=100.0, idle_w=10.0)
    return Deployment((pre, dec), kv_link_gbps=10.0)


def test_read_trace_takes_the_three_columns_in_order(tmp_path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("arrival_s,input_len,output_len,user\n0,10,2,a\n0.5,20,3,b\n")
    reqs = read_trace(path)
    assert reqs.arrival_s.tolist() == [0.0, 0.5]
    assert reqs.input_len.tolist() == [10, 20] and reqs.output_len.tolist() == [2, 3]


@pytest.mark.parametrize(("text", "message"), [
    ("arrival_s,input_len\n0,1\n", "field 'output_len' = None: missing column"),
    ("arrival_s,input_len,output_len\n0,1,1\nsoon,1,1\n", r"field 'arrival_s\[1\]' = 'soon': is not a number"),
    ("arrival_s,input_len,output_len\n1,1,1\n0.5,1,1\n", r"field 'arrival_s\[1\]' = 0.5: is before the row above"),
    ("arrival_s,input_len,output_len\n0,1.5,1\n", r"field 'input_len\[0\]' = 1.5: must be an integer >= 1"),
    ("arrival_s,input_len,output_len\n", "field 'rows' = 0: no requests"),
])
def test_a_bad_trace_file_is_one_line_naming_the_file_field_and_value(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(SpecError, match=message) as err:
        read_trace(path)
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)
    with pytest.raises(SpecError, match="no such file"):
        read_trace(tmp_path / "missing.csv")


def test_summary_trace_and_chrome_trace_of_a_split_deployment(tmp_path) -> None:
    # Worked by hand (tests/sim/test_serving_engine.py's disaggregated run): prefill 0.2 s, transfer
    # 0.01 s, two steps of 0.05 s: a 0.31 s run, 3 output tokens. Energy at 100 W busy, 10 W idle:
    # pre 0.2 x 100 + 0.11 x 10 = 21.1 J, dec 0.1 x 100 + 0.21 x 10 = 12.1 J; all 33.2 J, 11.0667 J/token.
    deployment = _split()
    result = simulate(deployment, requests([0.0], [100], [3]), trace=True)
    write_outputs(result, deployment, tmp_path)
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert tuple(summary.columns) == SUMMARY_COLUMNS
    rows = summary.set_index("pool")
    assert rows.loc["pre", "energy_j"] == pytest.approx(21.1)
    assert rows.loc["dec", "energy_j"] == pytest.approx(12.1)
    assert rows.loc["all", "energy_j_per_token"] == pytest.approx(33.2 / 3)
    assert rows.loc["all", "throughput_tok_s"] == pytest.approx(3 / 0.31)
    assert rows.loc["all", "ttft_p90_s"] == pytest.approx(0.21)
    assert rows.loc["dec", "tpot_p50_s"] == pytest.approx(0.05)
    trace = pd.read_csv(tmp_path / "trace.csv")
    assert tuple(trace.columns) == TRACE_COLUMNS
    assert trace.loc[0, ["prefill_pool", "decode_pool"]].tolist() == ["pre", "dec"]
    assert not (tmp_path / PARTIAL_MARKER).exists()
    doc = json.loads(write_simulation_trace(tmp_path).read_text())
    threads = [e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"]
    assert threads == ["pre", "dec"]
    spans = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    assert [s["ts"] for s in spans] == pytest.approx([0.0, 2.1e5, 2.6e5])  # microseconds
    assert [s["dur"] for s in spans] == pytest.approx([2e5, 5e4, 5e4])


def test_a_stopped_run_is_written_and_marked_partial(tmp_path) -> None:
    calls = [0]

    def prefill(chunks) -> float:
        calls[0] += 1
        if calls[0] == 10:
            active_token().request()
        return 0.5

    deployment = Deployment((Pool("p", prefill, lambda kv: 0.1, 100),))
    n = 3000
    with interruptible(), pytest.raises(Interrupted) as stop:
        simulate(deployment, requests([float(k) for k in range(n)], [5] * n, [1] * n))
    write_outputs(stop.value.partial, deployment, tmp_path)
    marker = json.loads((tmp_path / PARTIAL_MARKER).read_text())
    assert marker["complete"] is False
    assert 0 < marker["requests_finished"] < n
    assert len(pd.read_csv(tmp_path / "trace.csv")) == n
