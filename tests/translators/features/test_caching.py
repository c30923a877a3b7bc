"""Where the gateway adds prompt-cache breakpoints (translators/features/caching.py): each rule."""

from __future__ import annotations

from translators.features.caching import LIMIT, Slot, place, relocate


def slots(n: int, *, ends: tuple[int, ...] = (), marks: dict[int, str] | None = None,
          uncacheable: tuple[int, ...] = ()) -> list[Slot]:
    marks = marks or {}
    return [Slot(cacheable=i not in uncacheable, ttl=marks.get(i), turn_end=i in ends) for i in range(n)]


def test_without_client_marks_the_newest_block_the_last_request_end_the_stable_prefix_and_an_earlier_end():
    placed = place(slots(40, ends=(9, 20, 30)), stable=2)
    assert placed == {2: "5m", 20: "5m", 30: "5m", 39: "5m"}


def test_no_more_than_four_breakpoints_are_placed():
    assert len(place(slots(100, ends=tuple(range(5, 95, 5))), stable=1)) == LIMIT


def test_the_clients_marks_count_against_the_limit_and_are_kept_where_they_are():
    # Claude Code's: two on the system prompt, one on the newest block
    placed = place(slots(40, ends=(9, 30), marks={1: "5m", 2: "5m", 39: "5m"}), stable=2)
    assert placed == {30: "5m"}  # the one left reads where the last request ended


def test_four_client_marks_leave_nothing_to_add():
    assert place(slots(10, ends=(5,), marks={0: "5m", 1: "5m", 2: "5m", 3: "5m"}), stable=3) == {}


def test_a_mark_before_a_clients_hour_mark_lasts_an_hour_too():
    # the client caches its system prompt for an hour and the rest for five minutes
    placed = place(slots(30, ends=(20,), marks={5: "1h", 29: "5m"}), stable=3)
    assert placed == {3: "1h", 20: "5m"}


def test_a_mark_after_every_hour_mark_is_five_minutes():
    placed = place(slots(30, ends=(20,), marks={2: "1h"}), stable=2)
    assert placed == {20: "5m", 29: "5m"}


def test_blocks_that_take_no_breakpoint_are_skipped():
    # the newest block is a thinking block: the one before it takes the mark
    assert place(slots(5, uncacheable=(4,)), stable=None) == {3: "5m"}


def test_a_first_turn_has_no_earlier_request_end():
    assert place(slots(4), stable=1) == {1: "5m", 3: "5m"}


def test_the_same_slot_is_never_counted_twice():
    assert place(slots(3, ends=(2,)), stable=2) == {2: "5m"}


def test_a_client_mark_out_of_reach_inside_the_newest_turn_moves_to_the_last_request_end():
    # Claude Code after twelve parallel calls: system x2, the 10th of 12 results, the newest block
    marks = {0: "1h", 1: "1h", 30: "1h", 33: "5m"}
    moved = slots(34, ends=(7,), marks=marks)
    assert relocate(moved) == [(30, 7)]  # with its TTL
    assert [(i, s.ttl) for i, s in enumerate(moved) if s.ttl] == [(0, "1h"), (1, "1h"), (7, "1h"), (33, "5m")]


def test_a_client_mark_within_reach_or_with_a_slot_free_stays():
    four = {0: "5m", 1: "5m", 30: "5m", 33: "5m"}
    assert relocate(slots(34, ends=(20,), marks=four)) == []  # ten blocks back: the lookback reads it
    assert relocate(slots(34, ends=(7,), marks={0: "5m", 30: "5m", 33: "5m"})) == []  # a slot is free
    there = {0: "5m", 1: "5m", 7: "5m", 33: "5m"}
    assert relocate(slots(34, ends=(7,), marks=there)) == []  # there already


def test_a_client_mark_the_translation_moved_off_the_newest_block_goes_back_to_it():
    # Claude Code marks its last result; results put back in call order moved it to the 9th of 12
    moved = slots(34, ends=(9,), marks={0: "5m", 1: "5m", 30: "5m"})
    assert relocate(moved) == [(30, 33)]
    assert place(moved, stable=1) == {9: "5m"}  # the slot left reads where the last request ended
