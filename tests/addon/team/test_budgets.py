"""addon/team/budgets.py: what a client may ask (its models, its requests per minute) and what a
turn holds of its budgets until it ends, counted in the store (SQLite here; both backends in
tests/addon/state/store/test_budget.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mitmproxy.test import taddons, tflow

from addon.observe import flowinfo
from addon.state.storage import Storage
from addon.team import budgets, clients_file, usage
from addon.team.budgets import Budgets
from addon.team.clients_file import Client
from addon.team.keys import Keys
from translators import Translation

ANA = clients_file.KEY_PREFIX + "ana-unit-key-0123456789"
SONNET = "claude-sonnet-4-6"
"""$3 in, $15 out per million tokens (translators/anthropic/prices.toml)."""


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "clients.toml"
    path.write_text("".join(clients_file.table(c) for c in (
        Client("ana", clients_file.hash_key(ANA), ("gpt-5*",)), Client("cy", "c" * 64, (), 0, 1),
        Client("tight", "d" * 64, tokens_per_day=100), Client("cheap", "e" * 64, usd_per_day=0.001),
        Client("monthly", "f" * 64, usd_per_month=0.0007))))
    return path


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[Budgets, Storage]]:
    keys, storage = Keys(), Storage()
    with taddons.context(keys, storage) as tctx:
        tctx.configure(keys, gateway_clients=str(_file(tmp_path)))
        tctx.configure(storage, gateway_store_path=str(tmp_path / "store.sqlite"))
        yield Budgets(storage, keys), storage
        storage.close()


def _flow(client: str) -> Any:
    flow = tflow.tflow()
    flow.metadata[flowinfo.CLIENT] = client
    flow.metadata[flowinfo.KEY] = flowinfo.record("anthropic", SONNET)
    return flow


def _turn(estimate: int = 30, limit: int | None = 16) -> Translation:
    return Translation(target="anthropic", model=SONNET, client_model="gpt-5.5", path="/v1/messages", body={},
                       input_estimate=estimate, output_limit=limit)


def _spent(storage: Storage, client: str, kind: str = "tokens", per: str = "day") -> tuple[float, float]:
    now = budgets.datetime.datetime.now(budgets.datetime.UTC)
    return _in_store(storage, lambda store: store.spent(client, budgets.period(now, per), kind))


def _in_store(storage: Storage, fn: Any) -> Any:
    """`fn(store)` in the store's thread, after the writes queued before it."""
    return storage._thread().submit(lambda: fn(storage.store())).result()


def _rows(storage: Storage, client: str) -> list[dict[str, Any]]:
    return _in_store(storage, lambda store: store.usage(usage.today(), usage.today(), client))


def test_a_model_outside_the_patterns_is_403(team) -> None:
    gate, _ = team
    ana = gate.clients.clients[0]
    assert gate.refusal(ana, "o3").status == 403
    assert gate.refusal(ana, "gpt-5.5") is None


def test_requests_per_minute_are_counted_in_the_store(team) -> None:
    gate, _ = team

    async def two() -> list[Any]:
        return [await gate.admit(_flow("cy"), {"model": "o3"}) for _ in range(2)]

    first, second = asyncio.run(two())
    assert first is None
    assert (second.status, second.code) == (429, "rate_limit_exceeded")
    assert 1 <= int(second.headers["retry-after"]) <= 60
    assert budgets.retry_after(0.2) == "1" and budgets.retry_after(30.5) == "31"


def test_turns_at_once_hold_their_worst_case_and_never_pass_the_tokens_budget(team) -> None:
    """30 turns of 30 + 16 tokens at once against 100 tokens a day: two go. Without the holds
    each found the day unspent and all thirty went."""
    gate, storage = team
    flows = [_flow("tight") for _ in range(30)]

    async def at_once() -> list[Any]:
        return await asyncio.gather(*(gate.reserve(f, _turn(), None) for f in flows))

    refusals = asyncio.run(at_once())
    went = [f for f, r in zip(flows, refusals, strict=True) if r is None]
    assert len(went) == 2
    refused = next(r for r in refusals if r is not None)
    assert (refused.status, refused.code, refused.headers["retry-after"]) == (429, "rate_limit_exceeded", "5")
    assert "held by its turns in flight" in refused.message
    assert _spent(storage, "tight") == (0.0, 92.0)
    gate.settle(went[0], {"input_tokens": 42, "output_tokens": 7})  # the upstream's figures
    gate.release(went[1])  # it failed: nothing spent
    gate.settle(went[1], {"input_tokens": 1000, "output_tokens": 1000})  # counted once: settled already
    assert _spent(storage, "tight") == (49.0, 0.0)
    again = _flow("tight")
    assert asyncio.run(gate.reserve(again, _turn(), None)) is None  # 49 + 46 <= 100
    late = asyncio.run(gate.reserve(_flow("tight"), _turn(), None))
    assert late is not None and late.headers["retry-after"] == "5"  # the turn in flight may spend less
    gate.settle(again, {"input_tokens": 40, "output_tokens": 6})
    last = asyncio.run(gate.reserve(_flow("tight"), _turn(), None))
    assert last is not None and int(last.headers["retry-after"]) > 5  # spent: until midnight (UTC)
    rows = _rows(storage, "tight")
    assert [(r["requests"], r["input_tokens"], r["output_tokens"]) for r in rows] == [(2, 82, 13)]


def test_usd_budgets_hold_per_day_and_per_month(team) -> None:
    gate, storage = team
    # 30 x $3/M + 16 x $15/M = $0.00033 a turn: three fit in $0.001 a day, two in $0.0007 a month
    for client, fit in (("cheap", 3), ("monthly", 2)):
        flows = [_flow(client) for _ in range(10)]

        async def at_once(flows: list[Any] = flows) -> list[Any]:
            return await asyncio.gather(*(gate.reserve(f, _turn(), None) for f in flows))

        assert sum(r is None for r in asyncio.run(at_once())) == fit
    assert _spent(storage, "cheap", "usd")[1] == pytest.approx(0.00099)
    assert _spent(storage, "monthly", "usd", "month")[1] == pytest.approx(0.00066)


def test_a_turn_without_a_known_output_limit_holds_a_default(team) -> None:
    gate, _ = team
    flow = _flow("ana")
    assert asyncio.run(gate.reserve(flow, _turn(limit=None), None)) is None  # ana has no budget to hold
    assert gate.holding(flow)
    refused = asyncio.run(gate.reserve(_flow("tight"), _turn(limit=None), None))
    assert refused is not None and f"output limit {budgets.UNKNOWN_OUTPUT}" in refused.message
    assert int(refused.headers["retry-after"]) > 5  # it can never fit today


def test_a_partial_turn_is_counted_as_such(team) -> None:
    gate, storage = team
    flow = _flow("tight")
    asyncio.run(gate.reserve(flow, _turn(), None))
    gate.settle(flow, {"input_tokens": 42, "output_tokens": 0}, partial=True)
    rows = _rows(storage, "tight")
    assert [(r["requests"], r["partial_requests"], r["input_tokens"]) for r in rows] == [(1, 1, 42)]
