"""``front.csv`` without pandas (:func:`dse.util.csv_text.csv_text`): the text pandas wrote before, byte for byte.

The first table's text is written by hand from pandas' rules (a column of numbers that misses a value is
written as floats, a missing value as an empty cell, quoting only where a cell holds a comma, a quote or a
line break); the others are checked against ``pandas.DataFrame(...).to_csv(index=False)``, what
``dse solve`` called until this module replaced it, on the cases its fronts hold.
"""

from __future__ import annotations

import math

import pandas as pd

from dse.util.csv_text import csv_text


def test_the_types_of_a_column_decide_how_it_is_written() -> None:
    rows = [{"solver": "cpsat", "proven": True, "n": 3, "x": 1.5, "y": 2, "note": "a,b"},
            {"solver": "nsga2", "proven": False, "n": 4, "x": math.nan, "note": 'say "hi"'},
            {"solver": "all\non two lines", "proven": True, "n": 5, "x": 1e16, "y": None, "note": None}]
    assert csv_text(rows, ["solver", "proven"]).splitlines(keepends=True) == [
        "solver,proven,n,x,y,note\n",
        'cpsat,True,3,1.5,2.0,"a,b"\n',
        'nsga2,False,4,,,"say ""hi"""\n',
        '"all\n', 'on two lines",True,5,1e+16,,\n',
    ]


def test_it_writes_what_pandas_wrote_for_fronts() -> None:
    front = [{"solver": "cpsat", "proven": True, "status": "optimal", "feasible": True,
              "throughput_items_per_s": 2090.2, "energy_mj_per_item": 0.1 + 0.2, "latency_ms": 1.3e-05,
              "genome": "0 1 2 2", "throughput_items_per_s_lo": -math.inf, "throughput_items_per_s_hi": math.inf},
             {"solver": "cpsat", "proven": False, "status": "optimal", "feasible": False,
              "throughput_items_per_s": 834.0, "energy_mj_per_item": 101.6, "latency_ms": 123456789012345.67,
              "genome": "2 2 2 2", "throughput_items_per_s_lo": 800.25, "throughput_items_per_s_hi": 900.0}]
    assert csv_text(front) == pd.DataFrame(front).to_csv(index=False)
    columns = ["solver", "proven", "status", "feasible", "makespan_tu", "genome"]
    assert csv_text([], columns) == pd.DataFrame(columns=columns).to_csv(index=False)  # a front with no point
    one = [{"solver": "heuristic:heft", "value": math.nan}]  # a lone empty cell is quoted, as csv writes it
    assert csv_text(one) == pd.DataFrame(one).to_csv(index=False)
