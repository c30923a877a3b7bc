"""addon/team/budgets.py: what a client may ask (its models, its requests per minute), and the
per-minute window."""

from __future__ import annotations

from pathlib import Path

import pytest
from mitmproxy.test import taddons

from addon.state.storage import Storage
from addon.team import budgets, clients_file
from addon.team.budgets import Budgets
from addon.team.clients_file import Client
from addon.team.keys import Keys

ANA = clients_file.KEY_PREFIX + "ana-unit-key-0123456789"


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "clients.toml"
    path.write_text("".join(clients_file.table(c) for c in (
        Client("ana", clients_file.hash_key(ANA), ("gpt-5*",)), Client("cy", "c" * 64, (), 0, 1))))
    return path


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


def test_a_model_outside_the_patterns_is_403_and_a_busy_minute_429(tmp_path: Path) -> None:
    keys = Keys()
    budgets = Budgets(Storage(), keys)
    with taddons.context(keys) as tctx:
        tctx.configure(keys, gateway_clients=str(_file(tmp_path)))
        ana, cy = keys.clients[0], keys.clients[1]
        assert budgets.refusal(ana, "o3").status == 403
        assert budgets.refusal(ana, "gpt-5.5") is None
        assert budgets.refusal(cy, "o3") is None
        refused = budgets.refusal(cy, "o3")
        assert (refused.status, refused.code) == (429, "rate_limit_exceeded")
        assert int(refused.headers["retry-after"]) >= 1
