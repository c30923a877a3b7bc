"""Long growing sessions through the translators, billed by the prompt-cache fake
(tests/support/prompt_cache.py): the placement keeps the prompt in the cache turn after turn, and
what came before the new turn is byte-for-byte what the previous request sent (docs/anthropic.md,
docs/bedrock.md, docs/chat.md "Prompt caching"). The same sessions run through real mitmdump with
Codex and Claude Code in tests/e2e/test_prompt_caching.py."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.prompt_cache import CacheUsage, PromptCache
from tests.translators.bodies import body, function, function_call, function_output, user
from tests.translators.messages_client import messages as mc
from translators import translate_request
from translators.wire import wirejson

TURNS = 30
FAN_OUT = (8, 17, 25)
INSTRUCTIONS = "You are a coding agent. " * 400  # about 2,400 tokens, as Codex's own are larger
TOOLS = [function(f"tool_{i}", "A tool. " * 40, {"arg": {"type": "string"}}) for i in range(10)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def output(turn: int, call: int) -> str:
    first = turn * 1000 + call * 50
    return "\n".join(str(n) for n in range(first, first + 400))


def codex_session() -> Iterator[dict[str, Any]]:
    """The Responses body of each of `TURNS` turns: each turn's calls and outputs join the input."""
    items: list[dict[str, Any]] = [user("run the commands")]
    for turn in range(1, TURNS + 1):
        yield body(*copy.deepcopy(items), tools=TOOLS, instructions=INSTRUCTIONS)
        count = 12 if turn in FAN_OUT else 1
        calls = [f"call_{turn}_{i}" for i in range(count)]
        items += [function_call(c, "tool_0", '{"arg": "x"}') for c in calls]
        items += [function_output(c, output(turn, i)) for i, c in enumerate(calls)]


def share(used: list[CacheUsage]) -> float:
    later = used[1:]
    return sum(u.read for u in later) / sum(u.total for u in later)


@pytest.mark.parametrize("dialect, model", [("anthropic", "claude-sonnet-4-6"),
                                            ("bedrock", "us.anthropic.claude-sonnet-4-6"),
                                            ("bedrock", "us.amazon.nova-pro-v1:0")])
def test_a_growing_codex_session_reads_nine_tenths_of_its_prompt_from_the_cache(dialect: str, model: str):
    clock = Clock()
    cache = PromptCache(clock=clock)
    used = []
    for request in codex_session():
        clock.now += 20
        encoded = translate_request(request, dialect, model).body
        if dialect == "anthropic":
            used.append(cache.messages(encoded))
        else:  # Nova finds an entry only at a checkpoint
            used.append(cache.converse(encoded, model, lookback=1 if "nova" in model else None))
    assert share(used) >= 0.9, [(u.read, u.written, u.uncached) for u in used]


def claude_code_session(ttl: str) -> Iterator[dict[str, Any]]:
    """A Messages client that marks its system prompt and its newest block itself, as Claude Code
    does, for `ttl`."""
    mark = {"type": "ephemeral", "ttl": ttl}
    history: list[dict[str, Any]] = [mc.user(mc.text("run the commands"))]
    for turn in range(1, TURNS + 1):
        sent = copy.deepcopy(history)
        last = sent[-1]["content"][-1]
        last["cache_control"] = mark
        yield mc.body(*sent, system=[mc.text(INSTRUCTIONS, cache_control=mark)],
                      tools=[mc.tool(f"tool_{i}", description="A tool. " * 40) for i in range(10)])
        calls = [mc.tool_use(f"toolu_{turn}_{i}", "tool_0") for i in range(12 if turn in FAN_OUT else 1)]
        history += [mc.assistant(*calls),
                    mc.user(*[mc.tool_result(c["id"], output(turn, i)) for i, c in enumerate(calls)])]


@pytest.mark.parametrize("dialect, model", [("anthropic", "claude-sonnet-4-6"),
                                            ("bedrock", "us.anthropic.claude-sonnet-4-6")])
def test_a_clients_hour_breakpoints_outlive_ten_minute_pauses(dialect: str, model: str):
    clock = Clock()
    cache = PromptCache(clock=clock)
    used = []
    for request in claude_code_session("1h"):
        clock.now += 600  # the user reads for ten minutes between turns
        encoded = translate_request(request, dialect, model, client="messages").body
        used.append(cache.messages(encoded) if dialect == "anthropic" else cache.converse(encoded, model))
    assert share(used) >= 0.9
    assert all(u.write_5m == 0 for u in used)  # every mark the gateway added before them is 1h too


def test_five_minute_breakpoints_would_have_expired():
    """The same session with the TTL lost: nothing survives a ten-minute pause."""
    clock = Clock()
    cache = PromptCache(clock=clock)
    used = []
    for request in claude_code_session("5m"):
        clock.now += 600
        used.append(cache.messages(translate_request(request, "anthropic", "claude-sonnet-4-6",
                                                     client="messages").body))
    assert share(used) == 0


def without_marks(value: Any) -> Any:
    """A body with its cache markers taken out: what the cache hashes."""
    if isinstance(value, dict):
        return {k: without_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_marks(v) for v in value if not (isinstance(v, dict) and "cachePoint" in v)]
    return value


@pytest.mark.parametrize("dialect, model", [("anthropic", "claude-sonnet-4-6"),
                                            ("bedrock", "us.anthropic.claude-sonnet-4-6"),
                                            ("chat", "deepseek-chat"), ("gemini", "gemini-3-flash-preview")])
def test_what_a_request_sent_comes_back_unchanged_at_the_head_of_the_next(dialect: str, model: str):
    """Nothing before the new turn varies from turn to turn (ids, order, timestamps): the prefix
    a vendor caches, by its breakpoints or on its own (DeepSeek, Gemini), stays the same bytes."""
    previous: dict[str, Any] | None = None
    for request in codex_session():
        encoded = without_marks(translate_request(request, dialect, model).body)
        if previous is not None:
            turns_key = "contents" if dialect == "gemini" else "messages"
            before, now = previous.pop(turns_key), dict(encoded)
            grown = now.pop(turns_key)
            assert now == previous  # model, tools, system, settings: the same
            head = wirejson.dumps(before)[:-1]
            assert wirejson.dumps(grown).startswith(head)
        previous = encoded
