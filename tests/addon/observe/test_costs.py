"""addon/observe/costs.py and stamp.py: a turn's cost and finish reason in the flow's record."""

from __future__ import annotations

from typing import Any

import pytest

from addon.observe import costs, stamp
from addon.routes.routing import Route
from translators import dialect as registry
from translators.core.pricing import Price

ANTHROPIC = registry.get("anthropic")
USAGE = {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 0},
         "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0}}


def _route(model: str | None, prices: Price | None = None) -> Route:
    return Route("gpt-5*", ANTHROPIC, "https://api.anthropic.com", model, None, prices=prices)


def _info(model: str = "claude-sonnet-4-6", **more: Any) -> dict[str, Any]:
    return {"upstream": "anthropic", "model": model, "usage": USAGE, "dropped": [], "notes": [], **more}


def test_the_shipped_price_gives_the_cost_and_names_its_source_and_date() -> None:
    info = _info()
    stamp.answered(info, _route("claude-sonnet-4-6"), None)
    # 200 uncached x $3 + 1000 cache reads x $0.30 + 10 out x $15, per million
    assert info["cost_usd"] == pytest.approx((200 * 3 + 1000 * 0.3 + 10 * 15) / 1e6)
    assert info["price"]["source"].startswith("https://platform.claude.com/")
    assert info["price"]["taken"] == "2026-12-06"


def test_a_routes_prices_win_for_its_own_model_only() -> None:
    own = _route("claude-sonnet-4-6", Price(input=1.0, output=2.0))
    info = _info()
    stamp.answered(info, own, None)
    assert info["cost_usd"] == pytest.approx((1200 * 1.0 + 10 * 2.0) / 1e6)  # no cache price: the input's
    assert info["price"] == {"source": "route gpt-5*"}
    other = _info("claude-haiku-4-5")  # e.g. a fallback to another model answered
    stamp.answered(other, own, None)
    assert other["price"]["source"] != "route gpt-5*"


def test_no_usage_or_no_price_writes_no_cost() -> None:
    unknown = _info("claude-unknown-9")
    stamp.answered(unknown, _route(None), None)
    assert "cost_usd" not in unknown and "price" not in unknown
    empty = _info()
    del empty["usage"]
    stamp.answered(empty, _route(None), None)
    assert "cost_usd" not in empty
    chat = {"upstream": "chat", "model": "deepseek-chat", "usage": USAGE}
    stamp.answered(chat, None, None)  # a dialect that ships no table
    assert "cost_usd" not in chat


@pytest.mark.parametrize(("final", "reason"), [
    ({"object": "response", "status": "completed", "output": [{"type": "message"}]}, "stop"),
    ({"object": "response", "status": "completed", "output": [{"type": "function_call"}]}, "tool_calls"),
    ({"object": "response", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
     "max_output_tokens"),
    ({"object": "response", "status": "failed"}, "error"),
    ({"type": "message", "stop_reason": "tool_use"}, "tool_use"),
    (None, None),
])
def test_the_finish_reason_in_the_clients_own_words(final: Any, reason: str | None) -> None:
    assert stamp.finish_reason(final) == reason


@pytest.mark.parametrize(("value", "text"), [(0.003705, "$0.003705"), (1.5, "$1.50"), (1234.567, "$1,234.57"),
                                             (0.00001234, "$0.00001234"), (0, "$0"), (None, None), (-1, None),
                                             (True, None)])
def test_dollars(value: Any, text: str | None) -> None:
    assert costs.dollars(value) == text
