"""``dse.util.json_text.readable_json``: the same document as ``json.dumps`` (it parses back equal), objects
spread one entry a line, a list of numbers (a genome) on one line."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from dse.util.json_text import readable_json

_SCALARS = st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False) | st.text(max_size=8)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                            max_size=4), max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_readable_json_parses_back_to_the_document(doc) -> None:
    assert json.loads(readable_json(doc)) == doc


def test_a_genome_is_one_line_and_objects_one_entry_a_line() -> None:
    doc = {"problem": "p", "fronts": [{"points": [{"genome": [1, 2, 3], "objectives": [0.5, 2.0]}]}]}
    text = readable_json(doc)
    lines = text.splitlines()
    assert '          "genome": [1, 2, 3],' in lines  # by hand: five levels (doc, fronts, front, points, point)
    assert '  "problem": "p",' in lines
    assert lines[0] == "{" and lines[-1] == "}"
    assert readable_json({}) == "{}" and readable_json([]) == "[]"
