"""Builders for Gemini tests: recorded streams, hand-built chunks, translations."""

from __future__ import annotations

import json
from typing import Any

from tests.data import DATA as SHARED_DATA
from translators import Translation, translate_request
from translators.core.report import Report
from translators.gemini.chunks import ChunkReader
from translators.gemini.stream import GeminiDecoder
from translators.ir import events as ev

DATA = SHARED_DATA / "gemini"
MODEL = "gemini-3-pro-preview"

RECORDED = (
    "sse_function_call_thought_signature.sse",
    "sse_text_after_function_response.sse",
    "sse_function_call_gemini2.sse",
    "json_array_function_call_with_id.json",
    "json_array_function_call_signature.json",
    "vertex_thought_then_streamed_args.jsonl",
    "text_with_trailing_signature_part.jsonl",
)


def recorded(name: str) -> bytes:
    """A recorded body as the upstream sent it; `.jsonl` lines become `data:` events."""
    raw = (DATA / name).read_bytes()
    if name.endswith(".jsonl"):
        return b"".join(b"data: " + line + b"\n\n" for line in raw.splitlines() if line.strip())
    return raw


def recorded_chunks(name: str) -> list[dict[str, Any]]:
    """The GenerateContentResponse objects a recorded body holds, parsed independently of the
    code under test (to read expected values off the fixture)."""
    raw = (DATA / name).read_text()
    if name.endswith(".json"):
        return json.loads(raw)
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in raw.splitlines() if line.strip()]
    return [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]


def sse(*chunks: dict[str, Any]) -> bytes:
    """Gemini's `alt=sse` framing: `data: <json>` and a blank line, no event names."""
    return b"".join(f"data: {json.dumps(c, ensure_ascii=False)}\r\n\r\n".encode() for c in chunks)


def json_array(*chunks: dict[str, Any]) -> bytes:
    """Gemini's framing without `alt=sse`: one array, elements separated by `\\n,\\r\\n`."""
    elements = [json.dumps(c, ensure_ascii=False, indent=1) for c in chunks]
    return ("[" + "\n,\r\n".join(elements) + "\n]").encode()


def chunk(*parts: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None,
          response_id: str = "resp-A", **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL, "responseId": response_id}
    if usage is not None:
        out["usageMetadata"] = usage
    out.update(extra)
    return out


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"text": value, **extra}


def call(name: str, args: dict[str, Any] | None = None, *, call_id: str | None = None,
         signature: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, "args": args or {}}
    if call_id is not None:
        function["id"] = call_id
    part: dict[str, Any] = {"functionCall": function}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def decode(data: bytes, seed: str = "seed") -> list[ev.Event]:
    decoder = GeminiDecoder(seed)
    return decoder.feed(data) + decoder.close()


def read(*chunks: dict[str, Any], seed: str = "seed") -> list[ev.Event]:
    reader = ChunkReader(seed)
    out: list[ev.Event] = []
    for c in chunks:
        out += reader.chunk(c)
    return out + reader.end()


def of(kind: type, events: list[ev.Event]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def function_tool(name: str, parameters: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "function", "name": name, "description": f"{name} tool", "strict": False,
            "parameters": parameters or {"type": "object", "properties": {}}, **extra}


def responses_body(*items: Any, tools: list[dict[str, Any]] | None = None, **top: Any) -> dict[str, Any]:
    hello = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    body: dict[str, Any] = {"model": MODEL, "stream": True, "input": list(items) if items else [hello]}
    if tools is not None:
        body["tools"] = tools
    body.update(top)
    return body


def translation(*items: Any, tools: list[dict[str, Any]] | None = None, model: str | None = None,
                **top: Any) -> Translation:
    return translate_request(responses_body(*items, tools=tools, **top), "gemini", model)


def gemini_body(*items: Any, tools: list[dict[str, Any]] | None = None, model: str | None = None,
                **top: Any) -> tuple[dict[str, Any], Report]:
    """The Gemini body for a Responses request, and what the translation reported."""
    t = translation(*items, tools=tools, model=model, **top)
    return t.body, Report(t.dropped, t.notes)


def tools_for_recordings() -> list[dict[str, Any]]:
    """Declarations of every function the recorded streams call."""
    names = ("get_country", "get_capital", "multiply", "pelican_name_generator", "read_theme", "read_screen")
    return [function_tool(n) for n in names]
