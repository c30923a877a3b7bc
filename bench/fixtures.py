"""Upstream streams to translate: recorded streams of each dialect, and a long synthetic Anthropic
answer (the one the proxy benchmark streams too).

Each stream is split into the chunks an upstream flushes (one event each), with the JSON payload of
every event kept apart for the floor (json.loads + json.dumps of each payload).
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.workloads import REPO

DATA = Path(os.environ.get("BENCH_FIXTURES", str(REPO / "tests" / "data")))
"""The recorded streams (the repo's test data, or $BENCH_FIXTURES)."""

FIXTURE_DIRS: dict[str, tuple[Path, ...]] = {
    "anthropic": (DATA / "anthropic",),
    "chat": (DATA / "openai_chat", DATA / "deepseek"),
    "gemini": (DATA / "gemini",),
    "bedrock": (DATA / "bedrock",),
}

_SSE_BREAK = re.compile(rb"(?<=\r\n\r\n)|(?<=\n\n)")
_SSE_EOL = {"anthropic": b"\n\n", "chat": b"\n\n", "gemini": b"\r\n\r\n"}


@dataclass(frozen=True, slots=True)
class Stream:
    dialect: str
    name: str
    chunks: tuple[bytes, ...]
    """What the upstream writes, one event per chunk."""
    payloads: tuple[bytes, ...]
    """The JSON payload of every event (the floor parses and writes these)."""

    @property
    def size(self) -> int:
        return sum(map(len, self.chunks))

    @property
    def events(self) -> int:
        return len(self.payloads)


def recorded(dialect: str) -> tuple[list[Stream], list[str]]:
    """The recorded streams of one dialect, and notes on files left out."""
    notes: list[str] = []
    folders = FIXTURE_DIRS[dialect]
    files = sorted(f for folder in folders if folder.is_dir() for f in folder.iterdir() if f.is_file())
    streams = []
    for path in files:
        stream = _load(dialect, path)
        if stream is None:
            if path.suffix != ".md":
                notes.append(f"{dialect}: {path.name} left out (not an SSE or event-stream body)")
        else:
            streams.append(stream)
    if not streams:
        notes.append(f"{dialect}: no recorded streams found")
    return streams, notes


def _load(dialect: str, path: Path) -> Stream | None:
    raw = path.read_bytes()
    name = path.name
    if dialect == "bedrock":
        return _eventstream(name, raw) if path.suffix == ".eventstream" else None
    if path.suffix == ".jsonl":
        raw = _jsonl_to_sse(dialect, raw)
    elif path.suffix != ".sse" or raw.startswith(b"event: response."):
        return None  # Gemini's JSON-array bodies, Responses streams in a chat folder
    chunks = tuple(c for c in _SSE_BREAK.split(raw) if c.strip())
    return Stream(dialect, name, chunks, tuple(p for c in chunks for p in _sse_payloads(c)))


def _jsonl_to_sse(dialect: str, raw: bytes) -> bytes:
    """vercel/ai chunk files keep one payload per line and drop `event:` lines and `[DONE]`."""
    eol = _SSE_EOL[dialect]
    out = []
    for line in raw.splitlines():
        if not line.strip():
            continue
        head = f"event: {json.loads(line)['type']}\n".encode() if dialect == "anthropic" else b""
        out.append(head + b"data: " + line + eol)
    if dialect == "chat":
        out.append(b"data: [DONE]" + eol)
    return b"".join(out)


def _sse_payloads(chunk: bytes) -> list[bytes]:
    out = []
    for line in chunk.splitlines():
        if line.startswith(b"data:"):
            payload = line[5:].strip()
            if payload and payload != b"[DONE]":
                out.append(payload)
    return out


def _eventstream(name: str, raw: bytes) -> Stream:
    """application/vnd.amazon.eventstream: prelude (total length, headers length, CRC), headers,
    payload, CRC; one frame per chunk."""
    chunks, payloads = [], []
    at = 0
    while at + 12 <= len(raw):
        total, headers = struct.unpack_from(">II", raw, at)
        frame = raw[at:at + total]
        chunks.append(frame)
        payloads.append(frame[12 + headers:total - 4])
        at += total
    return Stream("bedrock", name, tuple(chunks), tuple(payloads))


# -- the synthetic long answer --------------------------------------------------------------------

_WORDS = ("The", " parser", " now", " reads", " each", " chunk", " and", " keeps", " the", " tail",
          " until", " a", " blank", " line", " ends", " the", " event", ".", " Tests", " cover", " every",
          " split", ",")


def answer_head(model: str = "claude-sonnet-4-6") -> list[bytes]:
    start = {"type": "message_start", "message": {
        "id": "msg_01BenchLongAnswer0000000", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 35210, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                  "output_tokens": 1}}}
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    return [_anthropic_event(start), _anthropic_event(block)]


def answer_delta(text: str) -> bytes:
    return _anthropic_event({"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": text}})


def answer_word(i: int) -> str:
    """A few words, as Claude's text deltas carry (deterministic)."""
    return "".join(_WORDS[(i * 3 + k) % len(_WORDS)] for k in range(3))


def answer_tail(deltas: int) -> list[bytes]:
    return [_anthropic_event({"type": "content_block_stop", "index": 0}),
            _anthropic_event({"type": "message_delta",
                              "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                              "usage": {"output_tokens": deltas * 3}}),
            _anthropic_event({"type": "message_stop"})]


ISSUE_DELTAS = 161
"""Text deltas of the long answer as long as the real gpt-5.5 answer issue 39 measured: 169 events
for the client (`bench.websocket`'s default answer, `bench.stream_path --answer long`)."""


def long_answer(deltas: int) -> Stream:
    chunks = [*answer_head(), *(answer_delta(answer_word(i)) for i in range(deltas)), *answer_tail(deltas)]
    return Stream("anthropic", f"synthetic/{deltas}_text_deltas", tuple(chunks),
                  tuple(p for c in chunks for p in _sse_payloads(c)))


def _anthropic_event(payload: Mapping[str, object]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()
