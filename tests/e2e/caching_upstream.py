"""A fake Anthropic or Bedrock upstream that bills every turn by the vendor's prompt-cache rules
(tests/support/prompt_cache.py), for the long-session caching tests (docs/benchmarks.md "Prompt
caching").

Each model turn is answered from a plan by its number (the assistant turns already in the request,
plus one, so a retried request gets the same answer): tool calls (`Call`s, several at once for a
fan-out) or a closing text. The usage the answer reports is the cache's own figure for that
request; a request the vendor would refuse for its cache markers gets the vendor's 400. Each
request moves the fake's clock by `step` seconds (the cache's TTLs run on it, not on the wall).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from tests.support.fake_upstream import (
    BEDROCK_EVENTSTREAM,
    Reply,
    _anthropic_text_block,
    _anthropic_tool_use_block,
    _sse_event,
    empty_reply,
    json_reply,
    sse_reply,
)
from tests.support.prompt_cache import CacheRefused, CacheUsage, PromptCache
from tests.translators.bedrock.frames import event as bedrock_event


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    input: Mapping[str, Any]


Plan = Callable[[int], Sequence[Call] | str]
"""Model turn number (1-based) -> the calls it makes, or its closing text."""


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        return self.now


class CachingUpstream:
    """A `FakeUpstream` script for `dialect` (`anthropic` or `bedrock`)."""

    def __init__(self, dialect: str, plan: Plan, *, step: float = 20.0,
                 admits: Callable[[Mapping[str, str]], bool] = lambda _headers: True) -> None:
        self.dialect = dialect
        self.plan = plan
        self.step = step
        self.admits = admits
        self.clock = FakeClock()
        self.cache = PromptCache(clock=self.clock)
        self.turns: list[tuple[int, CacheUsage]] = []
        self.refused: list[str] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: Any, headers: Mapping[str, str], path: str) -> Reply:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return empty_reply(404)  # a models-endpoint GET: the gateway uses its table
        if not self.admits(headers):
            return empty_reply(403)
        number = 1 + sum(1 for m in body["messages"] if m.get("role") == "assistant")
        with self.clock.lock:
            self.clock.now += self.step
            try:
                usage = (self.cache.messages(body) if self.dialect == "anthropic"
                         else self.cache.converse(body, _model_of(path)))
            except CacheRefused as exc:
                self.refused.append(str(exc))
                return _refusal(self.dialect, str(exc))
            self.turns.append((number, usage))
            self.bodies.append(body)
        said = self.plan(number)
        if self.dialect == "anthropic":
            return anthropic_answer(said, usage)
        return bedrock_answer(said, usage)

    def cached_share(self, first: int = 2) -> float:
        """The share of the input tokens of turns `first` and later read from the cache."""
        used = [usage for number, usage in self.turns if number >= first]
        total = sum(u.total for u in used)
        return sum(u.read for u in used) / total if total else 0.0

    def table(self) -> str:
        """One line per request: turn, read, written (5m/1h), uncached."""
        return "\n".join(f"turn {n:2}: read {u.read:6} write {u.write_5m:5}/{u.write_1h:5} "
                         f"uncached {u.uncached:5}" for n, u in self.turns)


def _model_of(path: str) -> str:
    """`/model/{modelId}/converse-stream` -> the model id."""
    parts = path.split("?", 1)[0].split("/")
    return unquote(parts[2]) if len(parts) > 2 else ""


def _refusal(dialect: str, message: str) -> Reply:
    if dialect == "anthropic":
        error = {"type": "invalid_request_error", "message": message}
        return json_reply(400, {"type": "error", "error": error})
    status, headers, body = json_reply(400, {"message": message})
    return status, {**headers, "x-amzn-errortype": "ValidationException"}, body


def anthropic_answer(said: Sequence[Call] | str, usage: CacheUsage,
                     model: str = "claude-sonnet-4-6") -> Reply:
    """A Messages stream: the text, or one `tool_use` block per call; both `message_start` and
    `message_delta` carry the cache's usage, as Anthropic's do."""
    pad = "  "
    start = {"type": "message_start", "message": {
        "model": model, "id": f"msg_cache{len(str(said))}", "type": "message", "role": "assistant",
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage.messages_usage(1)}}
    chunks = [_sse_event("message_start", start, pad)]
    if isinstance(said, str):
        chunks += _anthropic_text_block(0, said)
        stop = "end_turn"
    else:
        for index, call in enumerate(said):
            chunks += _anthropic_tool_use_block(index, call.id, call.name, call.input)
        stop = "tool_use"
    delta = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": usage.messages_usage(12)}
    chunks += [_sse_event("message_delta", delta, pad), _sse_event("message_stop", {"type": "message_stop"})]
    return sse_reply(chunks)


def bedrock_answer(said: Sequence[Call] | str, usage: CacheUsage) -> Reply:
    """A ConverseStream answer: the text, or one `toolUse` block per call; `metadata` carries the
    cache's usage."""
    frames = [bedrock_event("messageStart", {"role": "assistant"})]
    if isinstance(said, str):
        frames += [bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": said}}),
                   bedrock_event("contentBlockStop", {"contentBlockIndex": 0})]
        stop = "end_turn"
    else:
        for index, call in enumerate(said):
            start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
            piece = {"toolUse": {"input": json.dumps(call.input)}}
            frames += [bedrock_event("contentBlockStart", {"contentBlockIndex": index, "start": start}),
                       bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": piece}),
                       bedrock_event("contentBlockStop", {"contentBlockIndex": index})]
        stop = "tool_use"
    frames += [bedrock_event("messageStop", {"stopReason": stop}),
               bedrock_event("metadata", {"usage": usage.converse_usage(12), "metrics": {"latencyMs": 9}})]
    return 200, {"content-type": BEDROCK_EVENTSTREAM}, frames


FAN_OUT = frozenset({8, 17, 25})
"""Turns that call a tool twelve times at once: one turn adds more than twenty blocks."""
TURNS = 30


def session_plan(tool: str, argument: Callable[[int, int], Mapping[str, Any]], *, turns: int = TURNS,
                 fan_out: frozenset[int] = FAN_OUT) -> Plan:
    """`turns` model turns: each before the last calls `tool` (twelve times on a fan-out turn,
    else once), the last answers in text."""
    def plan(number: int) -> Sequence[Call] | str:
        if number >= turns:
            return f"done after {number} turns"
        count = 12 if number in fan_out else 1
        return [Call(f"toolu_t{number}c{i}", tool, argument(number, i)) for i in range(count)]

    return plan
