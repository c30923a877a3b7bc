"""Every recorded upstream stream in tests/data, as the bytes its upstream sent, plus an
independent reading of it (payloads and framing) so fuzzers can mutate the content and write the
same framing back. Nothing here uses the code under test to read a recording.

Framings (tests/data/SOURCES.md):
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
from tests.support import conformance
from tests.translators.bedrock.frames import decode as decode_frames
from tests.translators.bedrock.frames import encode_frame
from translators import Translation, translate_request
from translators.dialect import BUILTIN, get

FIXTURES = DATA
DONE = b"data: [DONE]\n\n"

# Each dialect's recordings are in its conformance data (tests/support/conformance/<name>.py):
# tests/data-relative paths; `.jsonl` files hold one data payload per line (vercel/ai).
DECODER_DIALECTS = tuple(name for name in BUILTIN
                         if get(name).codec is not None and get(name).passthrough is None)
"""The shipped dialects a Responses client reaches through a stream decoder (`responses` is its
passthrough; its decoder serves other clients); each needs recordings in its conformance data
(an import error says which has none)."""

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
        # where in the raw bytes the dialect says "the answer is complete": a stream cut before
        # it cannot have been finished by the upstream, so the client must get response.failed
        marker = conformance.of(self.dialect).finish_marker
        assert marker, f"{self.dialect} declares no finish marker (tests/support/conformance/)"
        match = re.search(marker, self.data)
        assert match is not None, f"{self.id} has no finish marker"
        return match.start()

    def encode(self, payloads: list[Any]) -> bytes:
        """`payloads` written back in this recording's framing (what the fuzzers mutate)."""
        return encode(self.framing, payloads, done=conformance.of(self.dialect).done_line, crlf=self.crlf)


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
    declared = conformance.of(dialect)
    framing = "named-sse" if declared.named_events else "data-sse"
    if relative.endswith(".jsonl"):
        payloads = [json.loads(line) for line in raw.splitlines() if line.strip()]
        return Recording(
            dialect, name, encode(framing, payloads, done=declared.done_line), framing, tuple(payloads)
        )
    return Recording(dialect, name, raw, framing, tuple(_sse_payloads(raw)), crlf=b"\r\n" in raw)


@cache
def recordings() -> tuple[Recording, ...]:
    return tuple(_load(dialect, rel) for dialect in BUILTIN for rel in conformance.of(dialect).recordings)


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
    return translate_request(request_body(), dialect, conformance.of(dialect).model)
