"""Test-only encoder for `application/vnd.amazon.eventstream` frames (docs/bedrock.md "Event-stream framing").

No public recording of an exception frame exists (tests/data/SOURCES.md "Not included"), so tests build them:
`total_length | headers_length | prelude_crc | headers | payload | message_crc`, big-endian,
CRC32 as `zlib.crc32`; headers here are all strings (type 7, u16 length), as Bedrock sends them.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from botocore.eventstream import EventStreamBuffer

from tests.data import DATA

FIXTURES = (DATA / "bedrock")
STRING_HEADER = 7


def encode_frame(headers: dict[str, str], payload: bytes) -> bytes:
    header_bytes = b"".join(
        struct.pack(">B", len(name.encode())) + name.encode()
        + struct.pack(">BH", STRING_HEADER, len(value.encode())) + value.encode()
        for name, value in headers.items())
    total = 12 + len(header_bytes) + len(payload) + 4
    prelude = struct.pack(">II", total, len(header_bytes))
    prelude += struct.pack(">I", zlib.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + header_bytes + payload
    return body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def event(event_type: str, payload: dict[str, Any] | None = None) -> bytes:
    return encode_frame({":event-type": event_type, ":content-type": "application/json",
                         ":message-type": "event"}, json.dumps(payload or {}).encode())


def exception(exception_type: str, payload: dict[str, Any]) -> bytes:
    return encode_frame({":exception-type": exception_type, ":content-type": "application/json",
                         ":message-type": "exception"}, json.dumps(payload).encode())


def text_turn(text: str = "Hello", stop: str = "end_turn", usage: dict[str, int] | None = None) -> bytes:
    """A minimal well-formed stream: one text block, messageStop, metadata."""
    return b"".join([
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": stop}),
        event("metadata", {"usage": usage or {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
                           "metrics": {"latencyMs": 1}}),
    ])


def decode(data: bytes) -> list[tuple[dict[str, Any], Any]]:
    """(headers, parsed payload) of every frame, read with botocore: how tests read fixtures."""
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(dict(m.headers), json.loads(m.payload) if m.payload else None) for m in buffer]


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def fixture_events(name: str) -> list[tuple[str, dict[str, Any]]]:
    return [(h[":event-type"], p) for h, p in decode(fixture(name))]


def frame_offsets(data: bytes) -> list[int]:
    """Start offset of every frame, read from the big-endian total_length fields."""
    offsets, at = [], 0
    while at < len(data):
        offsets.append(at)
        at += struct.unpack(">I", data[at:at + 4])[0]
    return offsets
