"""The prompt-cache fake applies each of Anthropic's rules (tests/support/prompt_cache.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.prompt_cache import CacheRefused, CacheUsage, PromptCache, minimum_tokens

EPHEMERAL = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}
BIG = "x" * 8000  # 2000 tokens: above every model's minimum but Haiku 4.5's and Opus 4.5/4.6's


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def text(value: str, mark: dict[str, Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": value}
    if mark is not None:
        block["cache_control"] = mark
    return block


def body(messages: list[dict[str, Any]], system: list[dict[str, Any]] | None = None,
         model: str = "claude-sonnet-4-6", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": model, "max_tokens": 10, "messages": messages, **extra}
    if system is not None:
        out["system"] = system
    return out


def turns(n: int, mark_last: dict[str, Any] | None = EPHEMERAL) -> list[dict[str, Any]]:
    """n alternating one-block turns, user first; the last block marked."""
    out = [{"role": "user" if i % 2 == 0 else "assistant", "content": [text(f"turn {i}")]} for i in range(n)]
    if mark_last is not None:
        out[-1]["content"][-1]["cache_control"] = mark_last
    return out


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(clock: Clock) -> PromptCache:
    return PromptCache(clock=clock)


def test_a_first_request_writes_the_prefix_and_the_same_request_then_reads_it(cache: PromptCache) -> None:
    request = body([{"role": "user", "content": [text("hi", EPHEMERAL)]}], system=[text(BIG)])
    first = cache.messages(request)
    assert first.read == 0 and first.written == first.total and first.uncached == 0
    second = cache.messages(request)
    assert second == CacheUsage(read=first.total, write_5m=0, write_1h=0, uncached=0)


def test_nothing_is_cached_without_a_breakpoint(cache: PromptCache) -> None:
    request = body(turns(3, mark_last=None), system=[text(BIG)])
    cache.messages(request)
    assert cache.messages(request).read == 0


def test_what_follows_the_last_breakpoint_is_paid_in_full(cache: PromptCache) -> None:
    request = body([{"role": "user", "content": [text("question")]}], system=[text(BIG, EPHEMERAL)])
    first = cache.messages(request)
    assert first.uncached > 0 and first.written == first.total - first.uncached
    assert cache.messages(request).read == first.written


def test_a_breakpoint_finds_an_entry_within_twenty_blocks_behind_it(cache: PromptCache) -> None:
    history = turns(10)
    cache.messages(body(history, system=[text(BIG)]))
    grown = turns(29)  # the old breakpoint's block is the 19th before the new one's
    usage = cache.messages(body(grown, system=[text(BIG)]))
    assert usage.read > 0


def test_an_entry_more_than_twenty_blocks_behind_is_not_found(cache: PromptCache) -> None:
    cache.messages(body(turns(10), system=[text(BIG)]))
    usage = cache.messages(body(turns(30), system=[text(BIG)]))  # 20 blocks on: outside the window
    assert usage.read == 0


def test_a_second_breakpoint_at_the_old_end_reads_what_the_lookback_misses(cache: PromptCache) -> None:
    cache.messages(body(turns(10), system=[text(BIG)]))
    grown = turns(40)
    grown[9]["content"][-1]["cache_control"] = EPHEMERAL
    usage = cache.messages(body(grown, system=[text(BIG)]))
    assert usage.read > 0 and usage.written > 0


def test_a_changed_block_invalidates_every_entry_after_it(cache: PromptCache) -> None:
    cache.messages(body(turns(4), system=[text(BIG, EPHEMERAL)]))
    changed = turns(4)
    changed[0]["content"][0]["text"] = "edited"
    usage = cache.messages(body(changed, system=[text(BIG, EPHEMERAL)]))
    assert usage.read == usage.total - usage.written - usage.uncached
    assert usage.read > 0  # the system prefix still reads
    assert usage.written > 0  # the history is written again


def test_tools_come_before_the_system_prompt(cache: PromptCache) -> None:
    tools = [{"name": "a", "input_schema": {"type": "object"}, "description": BIG}]
    system = [text("s", EPHEMERAL)]
    cache.messages(body(turns(1, mark_last=None), system=system, tools=tools))
    other = [{**tools[0], "description": BIG + "!"}]
    assert cache.messages(body(turns(1, mark_last=None), system=system, tools=other)).read == 0


def test_moving_a_breakpoint_does_not_change_the_prefix(cache: PromptCache) -> None:
    cache.messages(body(turns(3), system=[text(BIG)]))
    moved = turns(5)  # turns(3)'s last block now has no cache_control
    assert cache.messages(body(moved, system=[text(BIG)])).read > 0


def test_an_entry_expires_after_its_ttl_and_a_read_refreshes_it(cache: PromptCache, clock: Clock) -> None:
    request = body(turns(2), system=[text(BIG)])
    cache.messages(request)
    clock.now += 299
    assert cache.messages(request).read > 0  # read at 299 s: refreshed
    clock.now += 299
    assert cache.messages(request).read > 0
    clock.now += 301
    assert cache.messages(request).read == 0


def test_an_hour_entry_outlives_five_minutes(cache: PromptCache, clock: Clock) -> None:
    request = body(turns(2, mark_last=HOUR), system=[text(BIG)])
    first = cache.messages(request)
    assert first.write_1h == first.total and first.write_5m == 0
    clock.now += 3000
    assert cache.messages(request).read == first.total


def test_writes_are_split_by_the_ttl_of_the_breakpoint_that_covers_them(cache: PromptCache) -> None:
    usage = cache.messages(body(turns(2), system=[text(BIG, HOUR)]))
    assert usage.write_1h > 0 and usage.write_5m > 0
    assert usage.messages_usage()["cache_creation"] == {"ephemeral_5m_input_tokens": usage.write_5m,
                                                         "ephemeral_1h_input_tokens": usage.write_1h}


def test_a_prefix_below_the_model_minimum_is_not_cached(cache: PromptCache) -> None:
    small = body([{"role": "user", "content": [text("hi", EPHEMERAL)]}])
    assert cache.messages(small).written == 0
    haiku = body([{"role": "user", "content": [text(BIG, EPHEMERAL)]}], model="claude-haiku-4-5")
    assert cache.messages(haiku).written == 0  # 2000 tokens < Haiku 4.5's 4096
    assert minimum_tokens("us.anthropic.claude-opus-4-6-v1") == 4096


def test_the_top_level_cache_control_marks_the_last_cacheable_block(cache: PromptCache) -> None:
    request = body(turns(2, mark_last=None), system=[text(BIG)], cache_control=HOUR)
    first = cache.messages(request)
    assert first.write_1h == first.total
    assert cache.messages(request).read == first.total


@pytest.mark.parametrize("marks, message", [
    ([EPHEMERAL] * 5, "A maximum of 4 blocks"),
    ([EPHEMERAL, HOUR], "may not follow"),
    ([{"type": "persistent"}], "must be"),
    ([{"type": "ephemeral", "ttl": "2h"}], "'5m' or '1h'"),
])
def test_markers_the_api_refuses_are_refused(cache: PromptCache, marks: list[dict[str, Any]],
                                              message: str) -> None:
    messages = [{"role": "user", "content": [text(f"b{i}", mark) for i, mark in enumerate(marks)]}]
    with pytest.raises(CacheRefused, match=message):
        cache.messages(body(messages))


def test_a_thinking_block_cannot_be_a_breakpoint(cache: PromptCache) -> None:
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s",
                                                   "cache_control": EPHEMERAL}]}]
    with pytest.raises(CacheRefused, match="thinking"):
        cache.messages(body(messages))


def test_converse_cache_points_mark_the_block_before_them(cache: PromptCache) -> None:
    converse = {"system": [{"text": BIG}, {"cachePoint": {"type": "default"}}],
                "messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default",
                                                                                       "ttl": "1h"}}]}],
                "toolConfig": {"tools": [{"toolSpec": {"name": "t", "inputSchema": {"json": {}}}}]}}
    with pytest.raises(CacheRefused, match="may not follow"):
        cache.converse(converse, "us.anthropic.claude-sonnet-4-6")
    converse["messages"][0]["content"][1]["cachePoint"] = {"type": "default"}
    first = cache.converse(converse, "us.anthropic.claude-sonnet-4-6")
    assert first.written == first.total
    second = cache.converse(converse, "us.anthropic.claude-sonnet-4-6")
    usage = second.converse_usage(7)
    assert usage["cacheReadInputTokens"] == first.total and usage["inputTokens"] == 0
    assert "cacheDetails" not in usage


def test_a_model_without_lookback_reads_only_at_its_checkpoints(cache: PromptCache) -> None:
    first = {"system": [{"text": BIG}],
             "messages": [{"role": "user", "content": [{"text": "a"}, {"cachePoint": {"type": "default"}}]}]}
    cache.converse(first, "amazon.nova-pro-v1:0", lookback=1)
    grown = {"system": [{"text": BIG}],
             "messages": [{"role": "user", "content": [{"text": "a"}]},
                          {"role": "assistant", "content": [{"text": "b"}]},
                          {"role": "user", "content": [{"text": "c"}, {"cachePoint": {"type": "default"}}]}]}
    assert cache.converse(grown, "amazon.nova-pro-v1:0", lookback=1).read == 0
    assert cache.converse(grown, "amazon.nova-pro-v1:0").read > 0  # with the lookback it would read


def test_every_breakpoint_refreshes_the_entry_it_finds(cache: PromptCache, clock: Clock) -> None:
    """The system prompt's own breakpoint keeps its entry alive while longer prefixes are read."""
    system = [text(BIG, EPHEMERAL)]
    for n in range(2, 40, 2):  # a conversation growing two blocks a turn, 60 s apart
        clock.now += 60
        cache.messages(body(turns(n), system=system))
    changed = turns(40)
    changed[0]["content"][0]["text"] = "the history was compacted"
    clock.now += 60
    usage = cache.messages(body(changed, system=system))
    assert usage.read > 0  # the system prompt's entry, written 19 minutes ago, was kept fresh
