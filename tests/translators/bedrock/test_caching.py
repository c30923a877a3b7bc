"""Converse `cachePoint` blocks: the client's breakpoints kept with their TTL, the gateway's added
after them, on every model that takes them and only there (translators/bedrock/caching.py,
docs/bedrock.md "Prompt caching")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.translators.bedrock.support import CLAUDE, LLAMA, NOVA, SHELL, call, output, request, user
from tests.translators.messages_client import messages as mc
from translators import translate_request

POINT = {"cachePoint": {"type": "default"}}
HOUR_POINT = {"cachePoint": {"type": "default", "ttl": "1h"}}
HOUR = {"type": "ephemeral", "ttl": "1h"}


def points(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(what the point follows, the point) in cache order."""
    out = []
    tools = (body.get("toolConfig") or {}).get("tools") or []
    lists = [("tool", tools), ("system", body.get("system") or [])]
    lists += [(f"messages[{m}]", message["content"]) for m, message in enumerate(body["messages"])]
    for where, blocks in lists:
        for i, block in enumerate(blocks):
            if "cachePoint" in block:
                before = blocks[i - 1]
                label = before.get("text") or next(iter(before))
                out.append((f"{where}:{label}", block))
    return out


def session() -> dict[str, Any]:
    return request([user("go"), call("c1"), output("c1", "one"), call("c2"), output("c2", "two")],
                   tools=[SHELL], instructions="Be brief.")


def test_claude_gets_points_after_the_system_prompt_and_the_ends_of_the_last_requests() -> None:
    body = translate_request(session(), "bedrock", CLAUDE).body
    assert points(body) == [("system:Be brief.", POINT), ("messages[0]:go", POINT),
                            ("messages[2]:toolResult", POINT), ("messages[4]:toolResult", POINT)]


def test_nova_gets_them_too() -> None:
    body = translate_request(session(), "bedrock", NOVA).body
    assert len(points(body)) == 4


def test_a_model_the_guide_does_not_list_gets_none() -> None:
    body = translate_request(session(), "bedrock", LLAMA).body
    assert points(body) == []


def test_the_clients_breakpoints_become_points_with_their_ttl() -> None:
    request_ = mc.body(mc.user(mc.text("q", cache_control=HOUR)), mc.assistant(mc.text("a")),
                       mc.user(mc.text("next")), system=[mc.text("rules", cache_control=HOUR)],
                       tools=[mc.tool("A", cache_control=HOUR)])
    translation = translate_request(request_, "bedrock", CLAUDE, client="messages")
    assert not any("cache_control" in path for path in translation.dropped)
    assert points(translation.body) == [("tool:toolSpec", HOUR_POINT), ("system:rules", HOUR_POINT),
                                        ("messages[0]:q", HOUR_POINT), ("messages[2]:next", POINT)]


def test_nova_takes_no_point_among_its_tools_and_no_hour() -> None:
    request_ = mc.body(mc.user(mc.text("q", cache_control=HOUR)), tools=[mc.tool("A", cache_control=HOUR)])
    translation = translate_request(request_, "bedrock", NOVA, client="messages")
    assert translation.cosmetic == ["tools[0].cache_control"]
    assert points(translation.body) == [("messages[0]:q", POINT)]
    assert any("cache TTL" in note for note in translation.notes)


@pytest.mark.parametrize("model", [LLAMA, "anthropic.claude-3-haiku-20240307-v1:0"])
def test_elsewhere_the_clients_breakpoints_are_reported_dropped(model: str) -> None:
    request_ = mc.body(mc.user(mc.text("q", cache_control=HOUR)))
    translation = translate_request(request_, "bedrock", model, client="messages")
    assert "messages[0].content[0].cache_control" in translation.cosmetic
    assert "cachePoint" not in str(translation.body) and "\\x00" not in str(translation.body)


def test_no_tag_is_ever_sent() -> None:
    request_ = mc.body(mc.user(mc.text("q", cache_control=HOUR)), tools=[mc.tool("A", cache_control=HOUR)])
    for model in (CLAUDE, NOVA, LLAMA):
        body = translate_request(request_, "bedrock", model, client="messages").body
        assert "\x00" not in str(body)


def test_the_writes_for_an_hour_are_read_apart() -> None:
    from translators.bedrock.wire import usage_event
    details = [{"ttl": "1h", "inputTokens": 200}, {"ttl": "5m", "inputTokens": 100}]
    usage = usage_event({"inputTokens": 10, "outputTokens": 7, "totalTokens": 817,
                         "cacheReadInputTokens": 500, "cacheWriteInputTokens": 300, "cacheDetails": details})
    read = (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens)
    assert read == (810, 500, 300, 200)
