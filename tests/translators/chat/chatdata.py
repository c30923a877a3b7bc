"""Builders for Chat Completions test inputs: recorded streams, hand-built chunks, requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from openai.types.chat import completion_create_params
from pydantic import TypeAdapter

from tests.data import DATA as SHARED_DATA
from tests.translators.streamcheck import assert_valid_responses_stream, run, whole
from translators import Translation, translate_request
from translators.chat.stream import ChatDecoder
from translators.ir import events as ev

DATA = SHARED_DATA
DONE = b"data: [DONE]\n\n"


def recorded(name: str) -> bytes:
    """A recorded stream; `.jsonl` lines become `data:` frames ended by `[DONE]` (data/SOURCES.md)."""
    raw = next(p for p in (DATA / "openai_chat" / name, DATA / "deepseek" / name) if p.exists()).read_bytes()
    if name.endswith(".jsonl"):
        return b"".join(b"data: " + line + b"\n\n" for line in raw.splitlines() if line.strip()) + DONE
    return raw


def recorded_chunks(name: str) -> list[dict[str, Any]]:
    """The chunk objects of a recorded stream, read independently of the code under test."""
    out = []
    for block in recorded(name).decode().split("\n\n"):
        payload = block.strip().removeprefix("data: ")
        if payload and payload != "[DONE]":
            out.append(json.loads(payload))
    return out


_CHAT_REQUEST = TypeAdapter(completion_create_params.CompletionCreateParamsStreaming)


def assert_chat_request(body: dict[str, Any]) -> None:
    """Valid for the openai SDK's `chat.completions.create` params, its one system message first
    (docs/chat.md "System first"): every tool message answers a call of the assistant message
    before it."""
    _drain(_CHAT_REQUEST.validate_python(body))
    roles = [m["role"] for m in body["messages"]]
    assert "system" not in roles[1:] and "developer" not in roles, roles
    called: set[str] = set()
    for message in body["messages"]:
        if message["role"] == "assistant":
            called = {call["id"] for call in message.get("tool_calls", [])}
        elif message["role"] == "tool":
            assert message["tool_call_id"] in called, message
        else:
            called = set()


def _drain(value: Any) -> None:
    """Walk what a TypeAdapter gave back: an `Iterable` field is validated only as it is read."""
    if isinstance(value, str | bytes):
        return
    if isinstance(value, dict):
        for item in value.values():
            _drain(item)
    elif isinstance(value, list | tuple | Iterator) or hasattr(value, "__next__"):
        for item in value:
            _drain(item)


def codex_request(name: str) -> dict[str, Any]:
    return json.loads((DATA / "codex" / name).read_bytes())


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    *,
    choices: bool = True,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [],
        "usage": usage,
    }
    if choices:
        out["choices"] = [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}]
    return out


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    frames = b"".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n".encode() for c in chunks)
    return frames + (DONE if done else b"")


def text_stream(*pieces: str, finish: str = "stop") -> bytes:
    """A stream whose content arrives in exactly these deltas."""
    return sse(
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": p}) for p in pieces),
        chunk(finish=finish),
    )


def tool_call(
    index: int, call_id: str | None = None, name: str | None = None, arguments: str | None = None
) -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index}
    if call_id is not None:
        fragment.update(id=call_id, type="function")
    function = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    if function:
        fragment["function"] = function
    return fragment


def function(name: str, **properties: str) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": f"{name} tool",
        "parameters": {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}},
    }


def responses_request(
    model: str = "gpt-4o", tools: list[dict[str, Any]] | None = None, input: Any = "hi", **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "input": input, "stream": True, **extra}
    if tools is not None:
        body["tools"] = tools
    return body


def translation(
    model: str = "gpt-4o", tools: list[dict[str, Any]] | None = None, **extra: Any
) -> Translation:
    return translate_request(responses_request(model, tools, **extra), "chat")


def decode(data: bytes) -> list[ev.Event]:
    decoder = ChatDecoder()
    return decoder.feed(data) + decoder.close()


def client_stream(data: bytes, trans: Translation | None = None) -> list[dict[str, Any]]:
    """The client's Responses events for an upstream stream, validated against the openai SDK."""
    return assert_valid_responses_stream(run("chat", trans or translation(), whole(data)))


def run_report(data: bytes, trans: Translation) -> tuple[list[dict[str, Any]], Any]:
    """Events and the translator's report (dropped paths, notes)."""
    from translators import stream_translator
    from translators.core.ids import sequential_ids

    translator = stream_translator("chat", trans, new_id=sequential_ids(), clock=lambda: 0)
    out = translator.feed(data) + translator.close()
    return assert_valid_responses_stream(out), translator.report
