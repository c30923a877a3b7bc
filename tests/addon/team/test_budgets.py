"""addon/team/budgets.py: the per-minute window of a client's requests."""

from __future__ import annotations

import pytest

from addon.team import budgets


def test_the_minute_window_counts_requests_and_says_when_the_next_may_go() -> None:
    now = [100.0]
    window = budgets.RateWindow(lambda: now[0])
    assert window.take("ana", 2) == 0 and window.take("ana", 2) == 0
    assert window.take("ana", 2) == pytest.approx(60.0)
    assert window.take("bob", 2) == 0  # another client's own window
    now[0] += 30
    assert window.take("ana", 2) == pytest.approx(30.0)
    now[0] += 30
    assert window.take("ana", 2) == 0
    assert window.take("ana", 0) == 0  # no limit
    assert budgets.retry_after(0.2) == "1" and budgets.retry_after(30.5) == "31"
