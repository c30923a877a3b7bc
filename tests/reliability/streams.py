"""Driving decoders and stream translators, and reading what the client got."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tests.translators.streamcheck import TERMINAL, assert_valid_responses_stream
from translators import Translation, stream_translator
from translators import dialect as dialects
from translators.core.ids import sequential_ids
from translators.ir import events as ev


def translate(dialect: str, translation: Translation, chunks: Iterable[bytes]) -> bytes:
    """The public stream translator over `chunks` (deterministic ids and clock), then close()."""
    translator = stream_translator(dialect, translation, new_id=sequential_ids(), clock=lambda: 1_700_000_000)
    out = [translator.feed(chunk) for chunk in chunks]
    out.append(translator.close())
    out.append(translator.close())  # close is idempotent: a second one adds nothing
    return b"".join(out)


def decode(dialect: str, translation: Translation, chunks: Iterable[bytes]) -> list[ev.Event]:
    """A dialect decoder called directly, the way StreamTranslator calls it: every chunk, then
    close(). Any exception propagates: a decoder ends a stream it cannot read with a `Failed`
    event and never raises (translators/wire/decoding.py); the property tests look for that."""
    decoder = dialects.get(dialect).codec.stream_decoder(translation)
    out: list[ev.Event] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    out += decoder.close()
    return out


def client_stream(dialect: str, out: bytes) -> list[dict[str, Any]]:
    """The client's events: framed right, exactly one terminal event and it is the last; for
    translated dialects every event also validates as the openai SDK's typed event. (The
    Responses passthrough forwards OpenAI's own events, and the older recordings predate
    `sequence_number`, so only the framing and the terminal rule are checked there.)"""
    assert out.decode("utf-8"), "the client stream is not UTF-8"
    if dialect != "responses":
        return assert_valid_responses_stream(out)
    payloads = data_payloads(out, strict=False)
    kinds = [p["type"] for p in payloads if isinstance(p, dict) and isinstance(p.get("type"), str)]
    assert sum(k in TERMINAL for k in kinds) == 1 and kinds[-1] in TERMINAL, kinds
    return payloads


def data_payloads(out: bytes, *, strict: bool = True) -> list[Any]:
    """The JSON of each `data:` line (for the passthrough, whose `event:` lines are the
    upstream's own and not necessarily well formed). Not strict: lines that are not JSON are
    skipped (the passthrough forwards them, see test_passthrough_never_forwards_...)."""
    out_payloads = []
    for line in out.decode().split("\n"):
        if line.startswith("data:"):
            try:
                out_payloads.append(json.loads(line[5:]))
            except ValueError:
                if strict:
                    raise
    return out_payloads


def terminal_type(out: bytes) -> str:
    return str(data_payloads(out)[-1]["type"])


def deltas(payloads: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Every streamed piece the client got, of any kind (text, reasoning, arguments)."""
    return [(p["type"], p["delta"]) for p in payloads if p["type"].endswith(".delta")]


def text_of(payloads: list[dict[str, Any]]) -> str:
    return "".join(p.get("delta", "") for p in payloads if p["type"] == "response.output_text.delta")


def sized(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def sse_data_lines(data: bytes) -> list[tuple[int, int]]:
    """(start, end) offsets of the JSON after every `data:` line (not `[DONE]`)."""
    out = []
    at = 0
    while (found := data.find(b"data:", at)) >= 0:
        end = data.find(b"\n", found)
        end = len(data) if end < 0 else end
        start = found + 5 + (data[found + 5 : found + 6] == b" ")
        value = data[start:end].rstrip(b"\r")
        if value.strip() != b"[DONE]":
            out.append((start, start + len(value)))
        at = end
    return out


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()
