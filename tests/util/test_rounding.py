"""One rounding rule for float costs (:mod:`dse.util.rounding`), and no module writing its own."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from dse.util.rounding import CEIL_SLACK, ceil_all, ceil_int

PACKAGE = Path(__file__).resolve().parents[2] / "dse"


def test_a_hair_above_an_integer_rounds_to_it_and_a_real_excess_rounds_up() -> None:
    # by hand: (0.1 + 0.2) * 10 is 3.0000000000000004 in binary floating point; 3.01 is a hundredth above 3
    assert (0.1 + 0.2) * 10 > 3
    assert ceil_int((0.1 + 0.2) * 10) == 3
    assert ceil_int(3.01) == 4
    assert ceil_int(3.0) == 3
    assert ceil_int(-0.5) == 0
    assert ceil_int(3 + 10 * CEIL_SLACK) == 4
    assert ceil_all([(0.1 + 0.2) * 10, 3.01, 0.0]).tolist() == [3.0, 4.0, 0.0]
    assert ceil_all(np.array([[2.5]])).shape == (1, 1)


def test_no_module_writes_the_rounding_slack_out_itself() -> None:
    written = re.compile(r"ceil\([^\n]*-\s*1e-9")
    found = [f"{path.relative_to(PACKAGE.parent)}:{k + 1}" for path in sorted(PACKAGE.rglob("*.py"))
             for k, line in enumerate(path.read_text().splitlines()) if written.search(line)]
    assert found == []
