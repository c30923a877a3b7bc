"""Each upstream's fake answers for the Claude Code tests: a tool call preceded by reasoning that
carries the vendor's own state (Anthropic's signed thinking, DeepSeek's `reasoning_content`,
Gemini's thought signature, Bedrock's signed reasoning, OpenAI's `encrypted_content`), what a
second request must give back byte-exact, and the dialect's 429. Shaped like the recordings in
tests/data and the builders in
tests/support/fake_upstream.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tests.support.fake_upstream import (
    BEDROCK_EVENTSTREAM,
    Reply,
    _anthropic_finish,
    _anthropic_message_start,
    _anthropic_tool_use_block,
    _chat_chunk,
    _chat_end,
    _gemini_chunk,
    _sse_event,
    sse_reply,
)
from tests.translators.bedrock.frames import event as bedrock_event

THOUGHT = "The user wants a command run; Bash can do it."
SIGNATURE = "RXZvQ0NrWUlDeGdDS2tDWTU5M0RaSUxLUFQzK2NLNlB5M0hjdTh3WUdTVzJ2azZ5Z2Ux"
"""The opaque reasoning state each fake signs its thinking with (Anthropic, Gemini, Bedrock)."""


def anthropic_thinking_tool(name: str, tool_input: Mapping[str, Any], tool_id: str) -> Reply:
    start = {"type": "content_block_start", "index": 0,
             "content_block": {"type": "thinking", "thinking": "", "signature": ""}}

    def delta(value: dict[str, Any]) -> bytes:
        return _sse_event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": value})

    chunks = [_anthropic_message_start("claude-sonnet-4-6"), _sse_event("content_block_start", start),
              delta({"type": "thinking_delta", "thinking": THOUGHT}),
              delta({"type": "signature_delta", "signature": SIGNATURE}),
              _sse_event("content_block_stop", {"type": "content_block_stop", "index": 0}),
              *_anthropic_tool_use_block(1, tool_id, name, tool_input), *_anthropic_finish("tool_use", 20)]
    return sse_reply(chunks)


def chat_thinking_tool(name: str, arguments: Mapping[str, Any], call_id: str) -> Reply:
    model = "deepseek-chat"
    half = len(THOUGHT) // 2
    call = {"index": 0, "id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}
    chunks = [_chat_chunk(model, [{"index": 0, "delta": {"role": "assistant", "reasoning_content": part},
                                   "finish_reason": None}]) for part in (THOUGHT[:half], THOUGHT[half:])]
    chunks.append(_chat_chunk(model, [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]))
    return sse_reply([*chunks, *_chat_end(model, "tool_calls", 42)])


def gemini_thinking_tool(name: str, args: Mapping[str, Any], _call_id: str) -> Reply:
    model = "gemini-3-flash-preview"
    call = {"functionCall": {"name": name, "args": dict(args)}, "thoughtSignature": SIGNATURE}
    return sse_reply([_gemini_chunk([{"text": THOUGHT, "thought": True}], model, "fakeGeminiThink", 30, 5),
                      _gemini_chunk([call], model, "fakeGeminiThink", 30, 10),
                      _gemini_chunk([{"text": ""}], model, "fakeGeminiThink", 30, 10, "STOP")])


def bedrock_thinking_tool(name: str, tool_input: Mapping[str, Any], tool_id: str) -> Reply:
    def delta(index: int, value: dict[str, Any]) -> bytes:
        return bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": value})

    usage = {"inputTokens": 30, "outputTokens": 9, "totalTokens": 39}
    start = {"toolUse": {"toolUseId": tool_id, "name": name}}
    frames = [bedrock_event("messageStart", {"role": "assistant"}),
              delta(0, {"reasoningContent": {"text": THOUGHT}}),
              delta(0, {"reasoningContent": {"signature": SIGNATURE}}),
              bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
              bedrock_event("contentBlockStart", {"contentBlockIndex": 1, "start": start}),
              delta(1, {"toolUse": {"input": json.dumps(tool_input)}}),
              bedrock_event("contentBlockStop", {"contentBlockIndex": 1}),
              bedrock_event("messageStop", {"stopReason": "tool_use"}),
              bedrock_event("metadata", {"usage": usage, "metrics": {"latencyMs": 100}})]
    return 200, {"content-type": BEDROCK_EVENTSTREAM}, frames


def _responses_event(payload: dict[str, Any]) -> bytes:
    return _sse_event(payload["type"], payload)


RESPONSES_USAGE = {"input_tokens": 30, "output_tokens": 9, "total_tokens": 39,
                   "input_tokens_details": {"cached_tokens": 0},
                   "output_tokens_details": {"reasoning_tokens": 4}}


def responses_items(items: list[dict[str, Any]], deltas: Mapping[int, tuple[str, str]]) -> Reply:
    """A Responses stream of these output items: each added (empty), its deltas (`index ->
    (event type, text)`), then done whole, and `response.completed`."""
    created = {"type": "response.created", "response": {"id": "resp_cc", "status": "in_progress"}}
    chunks = [_responses_event(created)]
    for index, item in enumerate(items):
        empty = {**item, **({"content": []} if item["type"] == "message" else {}),
                 **({"arguments": ""} if item["type"] == "function_call" else {})}
        empty.pop("encrypted_content", None)
        chunks.append(_responses_event({"type": "response.output_item.added", "output_index": index,
                                        "item": empty}))
        if index in deltas:
            kind, delta = deltas[index]
            chunks.append(_responses_event({"type": kind, "output_index": index, "content_index": 0,
                                            "summary_index": 0, "delta": delta}))
        chunks.append(_responses_event({"type": "response.output_item.done", "output_index": index,
                                        "item": item}))
    chunks.append(_responses_event({"type": "response.completed", "response": {
        "id": "resp_cc", "status": "completed", "usage": RESPONSES_USAGE}}))
    return sse_reply(chunks)


def responses_text(text: str) -> Reply:
    message = {"id": "msg_cc", "type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": text, "annotations": []}]}
    return responses_items([message], {0: ("response.output_text.delta", text)})


def responses_tool(name: str, arguments: Mapping[str, Any], call_id: str) -> Reply:
    call = {"id": "fc_cc", "type": "function_call", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments)}
    return responses_items([call], {0: ("response.function_call_arguments.delta", json.dumps(arguments))})


def responses_thinking_tool(name: str, arguments: Mapping[str, Any], call_id: str) -> Reply:
    reasoning = {"id": "rs_cc", "type": "reasoning", "encrypted_content": SIGNATURE,
                 "summary": [{"type": "summary_text", "text": THOUGHT}]}
    call = {"id": "fc_cc", "type": "function_call", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments)}
    deltas = {0: ("response.reasoning_summary_text.delta", THOUGHT),
              1: ("response.function_call_arguments.delta", json.dumps(arguments))}
    return responses_items([reasoning, call], deltas)


THINKING_TOOL = {"anthropic": anthropic_thinking_tool, "chat": chat_thinking_tool,
                 "gemini": gemini_thinking_tool, "bedrock": bedrock_thinking_tool,
                 "responses": responses_thinking_tool}


def replayed_state(dialect: str, body: Any) -> list[Any]:
    """What a request gives back of the fake's reasoning, in the dialect's own fields: Anthropic's
    thinking blocks (text, signature), DeepSeek's `reasoning_content`, Gemini's thought
    signatures, Bedrock's reasoning text and signature."""
    found: list[Any] = []
    if dialect == "responses":
        return [i.get("encrypted_content") for i in body.get("input") or [] if i.get("type") == "reasoning"]
    if dialect == "gemini":
        for content in body.get("contents") or []:
            found += [p["thoughtSignature"] for p in content.get("parts") or [] if "thoughtSignature" in p]
        return found
    for message in body.get("messages") or []:
        if dialect == "chat":
            if message.get("reasoning_content"):
                found.append(message["reasoning_content"])
            continue
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if dialect == "anthropic" and block.get("type") == "thinking":
                found.append((block.get("thinking"), block.get("signature")))
            elif dialect == "bedrock" and "reasoningContent" in block:
                text = block["reasoningContent"].get("reasoningText") or {}
                found.append((text.get("text"), text.get("signature")))
    return found


EXPECTED_STATE = {"anthropic": [(THOUGHT, SIGNATURE)], "chat": [THOUGHT], "gemini": [SIGNATURE],
                  "bedrock": [(THOUGHT, SIGNATURE)], "responses": [SIGNATURE]}


RATE_LIMITED = {
    "anthropic": {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
    "chat": {"error": {"message": "Rate limit reached", "type": "rate_limit_error",
                       "code": "rate_limit_exceeded"}},
    "gemini": {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}},
    "bedrock": {"message": "Too many requests, please wait before trying again."},
    "responses": {"error": {"message": "Rate limit reached", "type": "requests",
                            "code": "rate_limit_exceeded"}},
}
"""Each dialect's own 429 body."""


def rate_limited(dialect: str, seconds: int = 1) -> Reply:
    return 429, {"content-type": "application/json", "retry-after": str(seconds)}, \
        json.dumps(RATE_LIMITED[dialect]).encode()
