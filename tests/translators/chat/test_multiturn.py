"""A Codex tool loop against DeepSeek, turn after turn: every assistant message that called tools
carries its `reasoning_content` back, so DeepSeek never answers 400 (docs/chat.md "DeepSeek")."""

from __future__ import annotations

import json
from typing import Any

from tests.translators.chat.chatdata import chunk, codex_request, recorded, recorded_chunks, sse, tool_call
from tests.translators.streamcheck import assert_valid_responses_stream, done_items, run
from translators import translate_request

DEEPSEEK = "deepseek-v4-flash"


def _turn(request: dict[str, Any], upstream: bytes) -> list[dict[str, Any]]:
    """What Codex keeps from one turn: the completed output items (docs/codex.md "What Codex needs back")."""
    translation = translate_request(request, "chat", DEEPSEEK)
    return done_items(assert_valid_responses_stream(run("chat", translation, [upstream])))


def _next(request: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """Codex's next request: the history, the turn's items as they came, and each call's output."""
    outputs = [
        {"type": "function_call_output", "call_id": i["call_id"], "output": f"output of {i['name']}"}
        for i in items
        if i["type"] == "function_call"
    ]
    return {**request, "input": request["input"] + items + outputs}


def _tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    body = translate_request(request, "chat", DEEPSEEK).body
    return [m for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls")]


def _exec_stream(reasoning: str | None) -> bytes:
    first = {"role": "assistant", "content": None, "reasoning_content": reasoning}
    return sse(
        chunk(first),
        chunk({"tool_calls": [tool_call(0, "call_01_x", "exec_command", '{"cmd": "date"}')]}),
        chunk(finish="tool_calls"),
    )


def test_every_assistant_tool_call_message_carries_its_own_reasoning_content() -> None:
    recorded_reasoning = "".join(
        c["choices"][0]["delta"].get("reasoning_content") or ""
        for c in recorded_chunks("reasoning_then_tool_call.jsonl")
        if c["choices"]
    )
    request = codex_request("request_classic_gpt55.json")
    request = _next(request, _turn(request, recorded("reasoning_then_tool_call.jsonl")))
    request = _next(request, _turn(request, _exec_stream("Now the date.")))
    messages = _tool_messages(request)
    assert [m["reasoning_content"] for m in messages] == [recorded_reasoning, "Now the date."]
    assert [json.loads(m["tool_calls"][0]["function"]["arguments"]) for m in messages] == [
        {"location": "San Francisco"},
        {"cmd": "date"},
    ]


def test_a_tool_call_turn_without_reasoning_replays_an_empty_reasoning_content() -> None:
    request = codex_request("request_classic_gpt55.json")
    request = _next(request, _turn(request, _exec_stream(None)))
    assert [m["reasoning_content"] for m in _tool_messages(request)] == [""]
