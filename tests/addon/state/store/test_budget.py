"""addon/state/store/sql.py budgets: holds within a limit, all or none, settled with what a turn
spent; and requests per minute. Both backends; several store objects on one database stand for
several gateway processes (each has its own connection, as a process has)."""

from __future__ import annotations

import threading

import pytest

from addon.state.store.budget import HOLD_SECONDS
from addon.state.store.records import Hold


def test_a_hold_fits_or_says_what_stood_in_its_way_and_settling_frees_it(make_store) -> None:
    store = make_store()
    tokens = Hold("2026-12-06", "tokens", 60, 100)
    assert store.reserve("ana", [tokens]) is None
    over = store.reserve("ana", [tokens])
    assert over is not None and (over.hold, over.spent, over.held) == (tokens, 0.0, 60.0)
    assert store.reserve("bob", [tokens]) is None  # another client's own budget
    store.settle("ana", [tokens], [49])
    assert store.spent("ana", "2026-12-06", "tokens") == (49.0, 0.0)
    assert store.reserve("ana", [Hold("2026-12-06", "tokens", 51, 100)]) is None
    assert store.reserve("ana", [Hold("2026-12-06", "tokens", 1, 100)]) is not None
    assert store.reserve("ana", [Hold("2026-12-07", "tokens", 100, 100)]) is None  # a new day


def test_holds_are_all_or_none(make_store) -> None:
    store = make_store()
    day, month = Hold("2026-12-06", "usd", 0.5, 1.0), Hold("2026-12", "usd", 0.5, 0.6)
    assert store.reserve("ana", [day, month]) is None
    over = store.reserve("ana", [day, month])
    assert over is not None and over.hold == month
    assert store.spent("ana", "2026-12-06", "usd") == (0.0, 0.5)  # the day's hold was rolled back
    store.settle("ana", [day, month], [0.0, 0.0])  # a turn that failed: nothing spent
    assert store.spent("ana", "2026-12", "usd") == (0.0, 0.0)


def test_turns_reserved_at_once_by_several_processes_never_pass_the_limit(make_store) -> None:
    """Without the conditional update, each reads the budget free and all thirty are held."""
    stores = [make_store() for _ in range(3)]
    hold = Hold("2026-12-06", "tokens", 45, 100)
    held: list[bool] = []
    start = threading.Barrier(30)

    def turn(n: int) -> None:
        start.wait()
        held.append(stores[n % 3].reserve("ana", [hold]) is None)

    threads = [threading.Thread(target=turn, args=(n,)) for n in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert held.count(True) == 2
    assert stores[0].spent("ana", "2026-12-06", "tokens") == (0.0, 90.0)


def test_requests_per_minute_count_on_every_process_of_the_store(make_store, clock) -> None:
    one, two = make_store(), make_store()
    two.clock = clock
    assert [one.take_request("ana", 3), two.take_request("ana", 3), one.take_request("ana", 3)] == [0, 0, 0]
    assert two.take_request("ana", 3) == pytest.approx(60.0)
    assert one.take_request("bob", 3) == 0
    clock.now += 45
    assert one.take_request("ana", 3) == pytest.approx(15.0)
    clock.now += 15
    assert two.take_request("ana", 3) == 0


def test_budgets_of_months_past_are_purged(make_store, clock) -> None:
    store = make_store()
    store.settle("ana", [Hold("1970-01-12", "tokens", 0, 10)], [5])
    clock.now = 5_000_000.0  # 1970-02-27
    store.settle("ana", [Hold("1970-02-27", "tokens", 0, 10)], [5])
    store.purge()
    assert store.spent("ana", "1970-01-12", "tokens") == (0.0, 0.0)
    assert store.spent("ana", "1970-02-27", "tokens") == (5.0, 0.0)


def test_holds_of_a_process_that_died_are_let_go_of_and_never_twice(make_store, clock) -> None:
    store = make_store()
    hold = Hold("2026-12-06", "tokens", 60, 100)
    assert store.reserve("ana", [hold], "turn-1") is None  # its process dies: never settled
    assert store.reserve("ana", [hold], "turn-2") is not None
    assert store.reserve("ana", [Hold("2026-12-06", "tokens", 30, 100)], "turn-3") is None
    clock.now += HOLD_SECONDS + 61
    assert store.reserve("ana", [Hold("2026-12-06", "tokens", 10, 100)], "turn-4") is None  # 1 and 3 let go
    assert store.spent("ana", "2026-12-06", "tokens") == (0.0, 10.0)
    # turn 3 ends late: what it spent counts, its hold is not let go of twice
    store.settle("ana", [Hold("2026-12-06", "tokens", 30, 100)], [25], "turn-3")
    assert store.spent("ana", "2026-12-06", "tokens") == (25.0, 10.0)
    store.settle("ana", [Hold("2026-12-06", "tokens", 10, 100)], [8], "turn-4")
    assert store.spent("ana", "2026-12-06", "tokens") == (33.0, 0.0)
