"""Every recorded upstream stream in tests/data, as the bytes its upstream sent, plus an
independent reading of it (payloads and framing) so fuzzers can mutate the content and write the
same framing back. Nothing here uses the code under test to read a recording.

Framings (fixtures/SOURCES.md):
- `named-sse`: `event: <type>` + `data: <json>` (Anthropic, OpenAI Responses);
- `data-sse`: `data: <json>` only (Chat Completions ending `data: [DONE]`, Gemini `alt=sse`);
- `json-array`: Gemini without `alt=sse`, one JSON array written element by element;
- `eventstream`: Bedrock's binary `application/vnd.amazon.eventstream` frames.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from tests.data import DATA
from tests.translators.bedrock.frames import decode as decode_frames
from tests.translators.bedrock.frames import encode_frame
from translators import Translation, translate_request
from translators.dialect import BUILTIN, get

FIXTURES = DATA
DONE = b"data: [DONE]\n\n"

# dialect -> (folder/file, framing); `.jsonl` files hold one data payload per line (vercel/ai).
_SOURCES: dict[str, list[str]] = {
    "anthropic": [
        "anthropic/parallel_tool_use_no_args.sse",
        "anthropic/redacted_thinking.sse",
        "anthropic/text_after_tool_result.sse",
        "anthropic/text_server_tool_then_tool_use.sse",
        "anthropic/text_then_tool_use.jsonl",
        "anthropic/thinking_prompt.sse",
        "anthropic/thinking_signature_text.jsonl",
        "anthropic/thinking_then_text.sse",
    ],
    "chat": [
        "openai_chat/parallel_tool_calls.sse",
        "openai_chat/tool_call_fragmented_args.sse",
        "openai_chat/tool_call_single.sse",
        "deepseek/reasoning_content_stream.sse",
        "deepseek/reasoning_then_tool_call.jsonl",
    ],
    "gemini": [
        "gemini/json_array_function_call_signature.json",
        "gemini/json_array_function_call_with_id.json",
        "gemini/sse_function_call_gemini2.sse",
        "gemini/sse_function_call_thought_signature.sse",
        "gemini/sse_text_after_function_response.sse",
        "gemini/text_with_trailing_signature_part.jsonl",
        "gemini/vertex_thought_then_streamed_args.jsonl",
    ],
    "bedrock": [
        "bedrock/converse_stream_reasoning.eventstream",
        "bedrock/converse_stream_text.eventstream",
        "bedrock/converse_stream_tool_use.eventstream",
    ],
    "responses": [
        "openai_responses/function_call_gpt4o.sse",
        "openai_responses/function_call_gpt5_reasoning.sse",
        "deepseek/responses_api_function_call.sse",
    ],
}
DECODER_DIALECTS = tuple(name for name in BUILTIN
                         if get(name).stream_decoder is not None and get(name).passthrough is None)
"""The shipped dialects a Responses client reaches through a stream decoder (`responses` is its
passthrough; its decoder serves other clients); each needs recordings in `_SOURCES` (a KeyError
says which does not have them)."""

# Where in the raw bytes each dialect says "the answer is complete": a stream cut before this
# text cannot have been finished by the upstream, so the client must get response.failed.
_FINISH_MARKER = {
    "anthropic": rb'"type":\s*"message_stop"',
    "chat": rb'"finish_reason":\s*"',
    "gemini": rb'"finishReason"',
    "bedrock": rb"messageStop",
    "responses": rb'"type":\s*"response\.completed"',
}

# Names the recordings call, declared so the request side has them (any name works either way).
_TOOL_NAMES = (
    "get_capital",
    "get_country",
    "get_product_name",
    "get_weather",
    "weather",
    "json",
    "pelican_name_generator",
    "multiply",
    "read_theme",
    "read_screen",
    "get_weather_forecast",
)


@dataclass(frozen=True)
class Recording:
    dialect: str
    name: str
    data: bytes
    framing: str
    payloads: tuple[Any, ...] = field(repr=False)
    """Parsed payloads in order: JSON values, or (headers, JSON) pairs for `eventstream`."""
    crlf: bool = False

    @property
    def id(self) -> str:
        return f"{self.dialect}:{self.name}"

    @property
    def finish_at(self) -> int:
        """Byte offset of the first finish marker (a prefix shorter than this is unfinished)."""
        match = re.search(_FINISH_MARKER[self.dialect], self.data)
        assert match is not None, f"{self.id} has no finish marker"
        return match.start()

    def encode(self, payloads: list[Any]) -> bytes:
        """`payloads` written back in this recording's framing (what the fuzzers mutate)."""
        return encode(self.framing, payloads, done=self.dialect == "chat", crlf=self.crlf)


def encode(framing: str, payloads: list[Any], *, done: bool = False, crlf: bool = False) -> bytes:
    if framing == "eventstream":
        return b"".join(
            encode_frame(
                {k: str(v) for k, v in headers.items()}, json.dumps(payload, ensure_ascii=False).encode()
            )
            for headers, payload in payloads
        )
    if framing == "json-array":
        return ("[" + ",\r\n".join(json.dumps(p, ensure_ascii=False) for p in payloads) + "]").encode()
    out = []
    for payload in payloads:
        text = json.dumps(payload, ensure_ascii=False)
        if framing == "named-sse":
            kind = payload.get("type") if isinstance(payload, dict) else None
            out.append(f"event: {kind if isinstance(kind, str) else 'message'}\ndata: {text}\n\n")
        else:
            out.append(f"data: {text}\n\n")
    data = "".join(out).encode()
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    return data + (DONE if done else b"")


def _sse_payloads(raw: bytes) -> list[Any]:
    out = []
    for block in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
        if data and data != [b"[DONE]"]:
            out.append(json.loads(b"\n".join(data)))
    return out


def _load(dialect: str, relative: str) -> Recording:
    raw = (FIXTURES / relative).read_bytes()
    name = relative.split("/", 1)[1]
    if relative.endswith(".eventstream"):
        return Recording(dialect, name, raw, "eventstream", tuple(decode_frames(raw)))
    if relative.endswith(".json"):
        return Recording(dialect, name, raw, "json-array", tuple(json.loads(raw)))
    if relative.endswith(".jsonl"):
        payloads = [json.loads(line) for line in raw.splitlines() if line.strip()]
        framing = "named-sse" if dialect in ("anthropic", "responses") else "data-sse"
        return Recording(
            dialect, name, encode(framing, payloads, done=dialect == "chat"), framing, tuple(payloads)
        )
    framing = "named-sse" if dialect in ("anthropic", "responses") else "data-sse"
    return Recording(dialect, name, raw, framing, tuple(_sse_payloads(raw)), crlf=b"\r\n" in raw)


@cache
def recordings() -> tuple[Recording, ...]:
    return tuple(_load(dialect, rel) for dialect, files in _SOURCES.items() for rel in files)


def recordings_of(*dialects: str) -> list[Recording]:
    return [r for r in recordings() if r.dialect in dialects]


def request_body(stream: bool = True) -> dict[str, Any]:
    tools = [
        {
            "type": "function",
            "name": n,
            "description": f"{n} tool",
            "parameters": {"type": "object", "properties": {}},
        }
        for n in _TOOL_NAMES
    ]
    return {"model": "gpt-5.5", "input": "hello", "tools": tools, "stream": stream}


@cache
def translation_for(dialect: str) -> Translation:
    """One fixed translation per dialect: the stream side needs its tool index and model."""
    model = {
        "anthropic": "claude-sonnet-4-6",
        "chat": "deepseek-chat",
        "gemini": "gemini-2.5-flash",
        "bedrock": "us.anthropic.claude-sonnet-4-6",
        "responses": "gpt-5.5",
    }.get(dialect, "toy-model")  # a dialect registered from tests/
    return translate_request(request_body(), dialect, model)
