"""Every upstream's recorded streams (tests/data/, provenance in data/SOURCES.md) as the upstream
sent them, each with the dialect whose decoder reads it, and a driver that runs one through that
decoder and the Messages encoder, as the proxy will (translators/api.py `StreamTranslator`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tests.data import DATA
from tests.translators.streamcheck import jsonl_to_sse
from translators import dialect as dialects
from translators.api import StreamTranslator
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.core.translation import Translation
from translators.messages_client import MessagesEncoder
from translators.wire import whole_body

TARGET_OF_FOLDER = {
    "anthropic": "anthropic",
    "deepseek": "chat",
    "openai_chat": "chat",
    "gemini": "gemini",
    "bedrock": "bedrock",
    "openai_responses": "responses",
}
"""Recording folder -> the upstream dialect that decodes it. DeepSeek's Responses recording
(`RESPONSES_WIRE`) is left out: the `deepseek` cases read Chat streams."""

RESPONSES_WIRE = frozenset({"deepseek/responses_api_function_call.sse"})

CLIENT_MODEL = "claude-opus-5-5"


def recordings() -> list[str]:
    names = []
    for folder in TARGET_OF_FOLDER:
        for path in sorted((DATA / folder).iterdir()):
            name = f"{folder}/{path.name}"
            # bedrock's reasoning_decoded.jsonl is a decoded copy, not a stream
            if path.name != "reasoning_decoded.jsonl" and name not in RESPONSES_WIRE:
                names.append(name)
    return names


def target_of(name: str) -> str:
    return TARGET_OF_FOLDER[name.split("/", 1)[0]]


def raw(name: str) -> bytes:
    """The bytes as the upstream sent them; a `.jsonl` recording (one payload a line) framed as its
    upstream frames it: Anthropic `event:` + `data:`, Chat `data:` ended by `[DONE]`, Gemini `data:`."""
    data = (DATA / name).read_bytes()
    if not name.endswith(".jsonl"):
        return data
    folder = name.split("/", 1)[0]
    if folder == "anthropic":
        return jsonl_to_sse(data)
    frames = b"".join(b"data: " + line + b"\n\n" for line in data.splitlines() if line.strip())
    return frames + (b"data: [DONE]\n\n" if target_of(name) == "chat" else b"")


def translation(target: str) -> Translation:
    return Translation(target=target, model="upstream-model", client_model=CLIENT_MODEL, path="", body={})


def run(name: str, chunks: Iterable[bytes], *, show_thinking: bool = True) -> tuple[bytes, Report]:
    """Upstream bytes in these chunks -> the client's Anthropic SSE, and the report."""
    out, report, _ = run_encoder(name, chunks, show_thinking=show_thinking)
    return out, report


def run_encoder(
    name: str, chunks: Iterable[bytes], *, show_thinking: bool = True
) -> tuple[bytes, Report, MessagesEncoder]:
    """`run`, and the encoder as it stands after the end (its whole `message()`)."""
    target = target_of(name)
    dialect = dialects.get(target)
    assert dialect.codec is not None
    report = Report()
    encoder = MessagesEncoder(
        model=CLIENT_MODEL, report=report, new_id=sequential_ids(), show_thinking=show_thinking
    )
    tr = translation(target)
    stream = StreamTranslator(
        dialect.codec.stream_decoder(tr),
        encoder,
        report,  # type: ignore[arg-type]
        whole=lambda: whole_body.WholeBody(dialect, tr),
    )
    out = [stream.feed(chunk) for chunk in chunks]
    out.append(stream.close())
    return b"".join(out), report, encoder


def sse_events(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Anthropic SSE (the encoder's output) -> (event name, payload), read without the code under
    test; every `data:` names the same type as its `event:` line."""
    out = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        name, payload = block.split("\n", 1)
        assert name.startswith("event: ") and payload.startswith("data: "), block
        parsed = json.loads(payload[len("data: ") :])
        assert parsed["type"] == name[len("event: ") :]
        out.append((name[len("event: ") :], parsed))
    return out
