"""Labels in rows (dse.viz.labels.stagger), on hand-placed extents."""

from __future__ import annotations

from dse.viz.labels import stagger


def test_overlapping_labels_take_the_next_free_row_or_are_left_out() -> None:
    extents = [(0, 4), (3, 7), (5, 9), (6, 8)]
    # (0,4) row 0; (3,7) overlaps it: row 1; (5,9) clears (0,4): row 0; (6,8) overlaps both rows: left out
    assert stagger(extents, rows=2) == [0, 1, 0, None]
    assert stagger(extents, rows=3) == [0, 1, 0, 2]


def test_a_gap_keeps_touching_labels_apart() -> None:
    assert stagger([(0, 4), (4, 8)], rows=2) == [0, 0]
    assert stagger([(0, 4), (4, 8)], rows=2, gap=1) == [0, 1]


def test_priority_places_the_important_labels_first() -> None:
    # the wide label (priority 10) goes first and keeps row 0; of the two small ones it overlaps, one fits
    # row 1 and the other, overlapping that one too, is left out
    assert stagger([(0, 3), (2, 5), (1, 9)], rows=2, priority=[1, 1, 10]) == [1, None, 0]
