"""A certificate's region as one outline (dse.viz.regions): the union of boxes, worked on small examples."""

from __future__ import annotations

from dse.viz.regions import region_loops

WINDOW = ((-10.0, 10.0), (-10.0, 10.0))


def test_two_overlapping_boxes_make_one_l_shaped_loop() -> None:
    # [0,2]x[0,1] and [1,3]x[0,2]: the union's corners, counter-clockwise from the lowest
    assert region_loops([((0, 0), (2, 1)), ((1, 0), (3, 2))], *WINDOW) == [
        [(0, 0), (3, 0), (3, 2), (1, 2), (1, 1), (0, 1)]]


def test_nested_boxes_and_corner_order_do_not_matter() -> None:
    # corners given either way round; a box inside another adds nothing
    assert region_loops([((2, 2), (0, 0)), ((0.5, 0.5), (1, 1))], *WINDOW) == [[(0, 0), (2, 0), (2, 2), (0, 2)]]


def test_a_ring_has_an_outer_loop_and_a_clockwise_hole() -> None:
    ring = [((0, 0), (3, 1)), ((0, 2), (3, 3)), ((0, 0), (1, 3)), ((2, 0), (3, 3))]
    outer, hole = region_loops(ring, *WINDOW)
    assert outer == [(0, 0), (3, 0), (3, 3), (0, 3)]
    assert hole == [(1, 1), (1, 2), (2, 2), (2, 1)]  # up, right, down: clockwise


def test_boxes_are_clipped_to_the_window() -> None:
    assert region_loops([((-100, 0), (100, 1))], (0, 5), (-1, 2)) == [[(0, 0), (5, 0), (5, 1), (0, 1)]]
    assert region_loops([((20, 20), (30, 30))], *WINDOW) == []
