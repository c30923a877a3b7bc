"""Chat Completions in the shared suites (docs/chat.md "Errors")."""

from __future__ import annotations

import re
from typing import Any

from tests.support.conformance import BodyReader, Conformance, Turns, json_error


def _error(status: int, message: str) -> tuple[dict[str, str], bytes]:
    kind = {429: "rate_limit_exceeded", 500: "server_error"}.get(status, "invalid_request_error")
    return json_error({"error": {"message": message, "type": kind, "code": kind}})


def _turns(body: dict[str, Any]) -> Turns:
    turns: Turns = []
    for message in body["messages"]:
        if message["role"] == "tool":
            if turns and turns[-1][0] == "tool":
                turns[-1][2].append(message["tool_call_id"])
            else:
                turns.append(("tool", [], [message["tool_call_id"]]))
            continue
        calls: list[tuple[str | None, str]] = [
            (c["id"], (c.get("function") or c.get("custom"))["name"]) for c in message.get("tool_calls", [])]
        turns.append((message["role"], calls, []))
    return turns


def _chosen(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return (choice.get("function") or choice.get("custom") or {}).get("name")
    return None


BODY = BodyReader(  # docs/chat.md "Request"
    tool_name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    call_id=re.compile(r"^.{1,40}$", re.DOTALL),
    tool_names=lambda body: [t["function"]["name"] if t["type"] == "function" else t["custom"]["name"]
                             for t in body.get("tools", [])],
    chosen_tool=_chosen,
    turns=_turns,
)

CONFORMANCE = Conformance(
    dialect="chat",
    model="deepseek-chat",
    key_env="RELIABILITY_CHAT_KEY",
    key="sk-reliability-UPSTREAM-deepseek-0123456789abcdef",
    key_header=("authorization", "Bearer {key}"),
    base_suffix="/v1",
    is_mine=lambda path: "/chat/completions" in path,
    error=_error,
    whole={
        "id": "chatcmpl-whole",
        "object": "chat.completion",
        "created": 1,
        "model": "deepseek-chat",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hello whole."}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    },
    whole_tool_call={"id": "chatcmpl-w", "object": "chat.completion", "created": 1, "model": "deepseek-chat",
                     "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                         "role": "assistant", "content": None, "tool_calls": [
                             {"id": "call_w1", "type": "function",
                              "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]}}],
                     "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}},
    recordings=(
        "openai_chat/parallel_tool_calls.sse",
        "openai_chat/tool_call_fragmented_args.sse",
        "openai_chat/tool_call_single.sse",
        "deepseek/reasoning_content_stream.sse",
        "deepseek/reasoning_then_tool_call.jsonl",
    ),
    default_stream="tool_call_single.sse",
    finish_marker=rb'"finish_reason":\s*"',
    done_line=True,
    models=("deepseek-chat", "deepseek-reasoner", "gpt-4o", "gpt-5.5", "qwen3-coder"),
    body=BODY,
    unknown_event=b'data: {"id":"x","object":"chat.completion.mystery","choices":[],"mystery":{"a":1}}\n\n',
)
