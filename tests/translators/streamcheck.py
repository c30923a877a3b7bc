"""Shared checks for stream translators: chunking invariance and Responses event validity."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from typing import Any

from pydantic import TypeAdapter

from translators import Translation, stream_translator
from translators.ids import sequential_ids

TERMINAL = {"response.completed", "response.failed", "response.incomplete"}


def run(source: str, translation: Translation, chunks: Iterable[bytes]) -> bytes:
    translator = stream_translator(source, translation, new_id=sequential_ids(), clock=lambda: 1_700_000_000)
    out = [translator.feed(chunk) for chunk in chunks]
    out.append(translator.close())
    return b"".join(out)


def whole(data: bytes) -> list[bytes]:
    return [data]


def sized(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def split_at(data: bytes, at: int) -> list[bytes]:
    return [data[:at], data[at:]]


def assert_chunking_invariant(source: str, translation: Translation, data: bytes, *,
                              every_split: bool = True) -> bytes:
    """Whole, 7-byte, 1-byte and (optionally) every two-way split give identical bytes."""
    expected = run(source, translation, whole(data))
    assert run(source, translation, sized(data, 7)) == expected
    assert run(source, translation, sized(data, 1)) == expected
    if every_split:
        for at in range(1, len(data)):
            assert run(source, translation, split_at(data, at)) == expected, f"split at byte {at}"
    return expected


def events(sse: bytes) -> list[dict[str, Any]]:
    """Parse Responses SSE (our own output) into payloads, checking the `event:` line matches."""
    out = []
    for block in sse.decode().split("\n\n"):
        if not block.strip():
            continue
        lines = block.split("\n")
        assert lines[0].startswith("event: "), block
        assert lines[1].startswith("data: "), block
        payload = json.loads(lines[1][6:])
        assert payload["type"] == lines[0][7:]
        out.append(payload)
    return out


@cache
def _adapter() -> TypeAdapter[Any]:
    from openai.types.responses import ResponseStreamEvent

    return TypeAdapter(ResponseStreamEvent)


def assert_valid_responses_stream(sse: bytes) -> list[dict[str, Any]]:
    """Every event parses as the openai SDK's typed event; exactly one terminal event, last."""
    payloads = events(sse)
    for payload in payloads:
        _adapter().validate_python(payload)
    kinds = [p["type"] for p in payloads]
    assert sum(k in TERMINAL for k in kinds) == 1, kinds
    assert kinds[-1] in TERMINAL, kinds
    return payloads


def done_items(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p["item"] for p in payloads if p["type"] == "response.output_item.done"]


def terminal(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    return payloads[-1]
