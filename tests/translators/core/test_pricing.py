"""Prices and the cost of a turn (translators/core/pricing.py, docs/prices.md)."""

from __future__ import annotations

import math

import pytest

from translators import dialect as dialects
from translators.anthropic import prices as anthropic_prices
from translators.bedrock import prices as bedrock_prices
from translators.core.pricing import Price, PriceTable, TokenUsage, cost, parse_price, read_table, usage_of
from translators.gemini import prices as gemini_prices

SONNET = Price(input=3.0, output=15.0, cache_read=0.3, cache_write_5m=3.75, cache_write_1h=6.0)


def test_each_kind_of_token_is_priced_at_its_own_rate():
    million = 1_000_000
    usage = TokenUsage(input=million, cache_read=million, cache_write_5m=million, cache_write_1h=million,
                       output=million, reasoning=400_000)
    # reasoning is part of output: priced once, as output
    assert math.isclose(cost(usage, SONNET), 3.0 + 0.3 + 3.75 + 6.0 + 15.0)


def test_a_price_without_cache_rates_bills_the_cache_as_input():
    usage = TokenUsage(input=100, cache_read=200, cache_write_5m=300, cache_write_1h=400, output=10)
    assert math.isclose(cost(usage, Price(input=1.0, output=2.0)), (1000 * 1.0 + 10 * 2.0) / 1_000_000)


def test_a_responses_usage_counts_cached_and_written_tokens_in_its_input():
    details = {"cached_tokens": 600, "cache_write_tokens": 300}
    usage = usage_of({"input_tokens": 1000, "input_tokens_details": details, "output_tokens": 50,
                      "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 1050})
    assert usage == TokenUsage(input=100, cache_read=600, cache_write_5m=300, output=50, reasoning=20)


def test_a_messages_usage_counts_them_apart_and_splits_the_writes_by_ttl():
    usage = usage_of({"input_tokens": 100, "cache_read_input_tokens": 600, "cache_creation_input_tokens": 300,
                      "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
                      "output_tokens": 50})
    assert usage == TokenUsage(input=100, cache_read=600, cache_write_5m=100, cache_write_1h=200, output=50)
    assert usage.input_total == 1000


@pytest.mark.parametrize("value", [None, "12", {}, {"tokens": 3}])
def test_anything_else_is_no_usage(value):
    assert usage_of(value) is None


def test_a_usage_that_does_not_add_up_is_clamped_never_negative():
    details = {"cached_tokens": 50, "cache_write_tokens": 5}
    usage = usage_of({"input_tokens": 10, "input_tokens_details": details, "output_tokens": -3})
    assert usage == TokenUsage(input=0, cache_read=10, cache_write_5m=0, output=0)


def test_a_route_price_is_a_table_of_usd_per_million_tokens():
    assert parse_price({"input": 3, "output": 15.0, "cache_read": 0.3}) == Price(3.0, 15.0, 0.3)


@pytest.mark.parametrize("value, message", [
    ({"output": 1.0}, "input is required"),
    ({"input": 1.0, "output": 1.0, "cache_write": 2.0}, "unknown key 'cache_write'; the keys are input"),
    ({"input": -1.0, "output": 1.0}, r"prices\.input: -1\.0 is not a price"),
    ({"input": True, "output": 1.0}, "not a price"),
    ({"input": "3", "output": 1.0}, "not a price"),
    ({"input": float("nan"), "output": 1.0}, "not a price"),
    (3.0, "must be a table"),
])
def test_a_price_that_is_not_one_is_refused_saying_what_to_write(value, message):
    with pytest.raises(ValueError, match=message):
        parse_price(value)


def test_a_table_finds_a_dated_release_but_not_another_model():
    table = PriceTable(taken="2026-12-06", source="s", models={"claude-opus-4": Price(15, 75),
                                                               "claude-opus-4-1": Price(15, 75, 1.5)})
    assert table.find("claude-opus-4-1-20250805") == Price(15, 75, 1.5)
    assert table.find("claude-opus-4-20250514") == Price(15, 75)
    assert table.find("claude-opus-4-9") is None  # a newer model, not Opus 4


def test_a_table_must_say_when_and_where_its_prices_were_taken():
    with pytest.raises(ValueError, match="taken"):
        read_table('[models."m"]\ninput = 1.0\noutput = 2.0\n')
    with pytest.raises(ValueError, match=r"models\.m.*output is required"):
        read_table('taken = 2026-12-06\nsource = "x"\n[models."m"]\ninput = 1.0\n')


def test_anthropics_shipped_table_is_dated_sourced_and_keeps_the_documented_multipliers():
    table = anthropic_prices.table()
    assert table.taken == "2026-12-06" and table.source.startswith("https://platform.claude.com/")
    assert "claude-sonnet-5-5" not in table.models  # conflicting figures: left out, not guessed
    for model, price in table.models.items():
        # cache reads 0.1x, 5-minute writes 1.25x, hour writes 2x the input price (pricing page;
        # its cents are rounded: Haiku 3's 5-minute write reads $0.30, not $0.3125)
        assert math.isclose(price.cache_read, price.input * 0.1, rel_tol=0.2), model
        assert math.isclose(price.cache_write_5m, price.input * 1.25, rel_tol=0.05), model
        assert math.isclose(price.cache_write_1h, price.input * 2), model


def test_each_dialect_finds_a_price_by_its_own_ids():
    assert dialects.list_price(dialects.get("anthropic"), "claude-sonnet-4-5-20250929") == SONNET
    table = PriceTable(taken="2026-12-06", source="s", models={"anthropic.claude-sonnet-4-6": SONNET,
                                                               "gemini-3-pro-preview": Price(2.0, 12.0)})
    for bedrock_id in ("us.anthropic.claude-sonnet-4-6", "anthropic.claude-sonnet-4-6-v1:0",
                       "global.anthropic.claude-sonnet-4-6",
                       "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6-v1:0"):
        assert bedrock_prices.price(bedrock_id, table) == SONNET, bedrock_id
    assert gemini_prices.price("models/gemini-3-pro-preview", table) == Price(2.0, 12.0)
    assert gemini_prices.price("gemini-3-pro-preview", table) == Price(2.0, 12.0)


def test_a_dialect_without_a_table_has_no_price():
    assert dialects.list_price(dialects.get("chat"), "deepseek-chat") is None
    # no row yet
    assert dialects.list_price(dialects.get("bedrock"), "us.anthropic.claude-sonnet-4-6") is None
