"""Anthropic Messages in the shared suites (docs/anthropic.md "Errors")."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from tests.support.conformance import BodyReader, Conformance, Turns, json_error


def _error(status: int, message: str) -> tuple[dict[str, str], bytes]:
    kind = {429: "rate_limit_error", 529: "overloaded_error", 500: "api_error"}.get(
        status, "invalid_request_error")
    return json_error({"type": "error", "error": {"type": kind, "message": message}})


def _huge(base: list[bytes], size: int, piece: str) -> Iterator[bytes]:
    yield from base[:3]  # message_start, content_block_start, ping
    for _ in range(size // len(piece)):
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
        yield f"event: content_block_delta\ndata: {json.dumps(delta)}\n\n".encode()
    yield from base[3:]


def _turns(body: dict[str, Any]) -> Turns:
    turns: Turns = []
    for message in body["messages"]:
        calls: list[tuple[str | None, str]] = []
        results: list[str | None] = []
        for block in message["content"]:
            if block.get("type") == "tool_use":
                calls.append((block["id"], block["name"]))
            elif block.get("type") == "tool_result":
                results.append(block["tool_use_id"])
        turns.append((message["role"], calls, results))
    return turns


def _chosen(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice") or {}
    return choice.get("name") if choice.get("type") == "tool" else None


BODY = BodyReader(  # docs/anthropic.md "Conversation rules", "Tool names"
    tool_name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    call_id=re.compile(r"^[a-zA-Z0-9_-]+$"),
    tool_names=lambda body: [t["name"] for t in body.get("tools", [])],
    chosen_tool=_chosen,
    turns=_turns,
    results_first=True,
)

CONFORMANCE = Conformance(
    dialect="anthropic",
    model="claude-sonnet-4-6",
    key_env="RELIABILITY_ANTHROPIC_KEY",
    key="sk-ant-api03-reliability-UPSTREAM-anthropic-0123456789",
    key_header=("x-api-key", "{key}"),
    is_mine=lambda path: path.startswith("/v1/messages"),
    error=_error,
    whole={
        "id": "msg_whole",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Hello whole."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 2},
    },
    whole_tool_call={"id": "msg_w", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                     "content": [{"type": "tool_use", "id": "toolu_w1", "name": "get_weather",
                                  "input": {"city": "Paris"}}],
                     "stop_reason": "tool_use", "stop_sequence": None,
                     "usage": {"input_tokens": 9, "output_tokens": 5}},
    recordings=(
        "anthropic/parallel_tool_use_no_args.sse",
        "anthropic/redacted_thinking.sse",
        "anthropic/text_after_tool_result.sse",
        "anthropic/text_server_tool_then_tool_use.sse",
        "anthropic/text_then_tool_use.jsonl",
        "anthropic/thinking_prompt.sse",
        "anthropic/thinking_signature_text.jsonl",
        "anthropic/thinking_then_text.sse",
    ),
    default_stream="text_after_tool_result.sse",
    finish_marker=rb'"type":\s*"message_stop"',
    named_events=True,
    models=("claude-sonnet-4-6", "claude-3-5-haiku-latest"),
    huge=_huge,
    body=BODY,
    unknown_event=b'event: content_block_mystery\ndata: {"type":"content_block_mystery","index":0}\n\n',
    reports_unknown=True,
)
