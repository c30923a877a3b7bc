"""Shared checks for stream translators: chunking invariance and Responses event validity.

How many chunkings a check tries depends on the run (tests/support/depth.py): a seeded sample by
default, every split point under the `exhaustive` marker; a test that wants both is decorated with
`at_both_depths`."""

from __future__ import annotations

import itertools
import json
import random
import typing
import zlib
from collections.abc import Iterable
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter

from tests.data import DATA as SHARED_DATA
from tests.support import depth
from tests.support.depth import at_both_depths as at_both_depths
from translators import Translation, stream_translator
from translators.core.ids import sequential_ids

TERMINAL = {"response.completed", "response.failed", "response.incomplete"}


def run(source: str, translation: Translation, chunks: Iterable[bytes]) -> bytes:
    translator = stream_translator(source, translation, new_id=sequential_ids(), clock=lambda: 1_700_000_000)
    out = [translator.feed(chunk) for chunk in chunks]
    out.append(translator.close())
    return b"".join(out)


def whole(data: bytes) -> list[bytes]:
    return [data]


def sized(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def split_at(data: bytes, at: int) -> list[bytes]:
    return [data[:at], data[at:]]


def per_event(data: bytes) -> list[bytes]:
    """One chunk per SSE event, as an upstream writes them: the chunking the proxy sees most."""
    chunks = [piece + b"\n\n" for piece in data.split(b"\n\n")]
    chunks[-1] = chunks[-1][:-2]
    return [c for c in chunks if c]


BYTEWISE_UP_TO = 32 * 1024
"""A stream up to this long is also fed one byte at a time in the default run (linear in its
length); a longer one only in the exhaustive run (tests/support/depth.py)."""
SAMPLED_SPLITS = 48
"""Two-way split points per stream in the default run; the exhaustive run splits at every byte
(one whole pass per byte: quadratic in the stream's length)."""
SAMPLED_CUTS = 40
"""Random multi-cut chunkings per stream in the default run, at most."""


def split_points(data: bytes) -> list[int]:
    """Where to split `data` in two: every point in the exhaustive run; by default a fixed sample
    drawn from a generator seeded with the stream's own checksum (no offset chosen by hand, the
    same points on every run, so a failure repeats), always with the first and last byte."""
    every = range(1, len(data))
    if depth.exhaustive() or len(every) <= SAMPLED_SPLITS:
        return list(every)
    drawn = random.Random(zlib.crc32(data)).sample(every[1:-1], SAMPLED_SPLITS - 2)
    return [every[0], *sorted(drawn), every[-1]]


def assert_chunking_invariant(
    source: str, translation: Translation, data: bytes, *, every_split: bool = True
) -> bytes:
    """Whole, one event per chunk, 7-byte and 1-byte chunks and (unless `every_split` is false)
    two-way splits give identical bytes: split at every byte in the exhaustive run, at a seeded
    sample of points by default (`split_points`); a stream past BYTEWISE_UP_TO is fed byte by
    byte only in the exhaustive run."""
    expected = run(source, translation, whole(data))
    assert run(source, translation, per_event(data)) == expected
    assert run(source, translation, sized(data, 7)) == expected
    if len(data) <= BYTEWISE_UP_TO or depth.exhaustive():
        assert run(source, translation, sized(data, 1)) == expected
    if every_split:
        for at in split_points(data):
            assert run(source, translation, split_at(data, at)) == expected, f"split at byte {at}"
    return expected


def cut_at(data: bytes, points: list[int]) -> list[bytes]:
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def assert_random_cuts_invariant(source: str, translation: Translation, data: bytes, *, runs: int,
                                 cuts: int) -> None:
    """`runs` chunkings of the stream (SAMPLED_CUTS of them by default, all in the exhaustive
    run), each cut at `cuts` points drawn over the whole stream, give the bytes of the whole
    stream. The points come from a generator seeded with the stream's own checksum: no offset is
    chosen by hand, so every part of any recording gets cut, and a failure repeats (its message
    names the points)."""
    expected = run(source, translation, whole(data))
    rng = random.Random(zlib.crc32(data))
    for _ in range(runs if depth.exhaustive() else min(runs, SAMPLED_CUTS)):
        points = sorted(rng.sample(range(1, len(data)), min(cuts, len(data) - 1)))
        assert run(source, translation, cut_at(data, points)) == expected, f"cut at bytes {points}"


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


@cache
def _event_classes() -> dict[str, type[BaseModel]]:
    """`type` value -> the SDK's event class, so a failure names one class, not the whole union."""
    from openai.types.responses import ResponseStreamEvent

    union = typing.get_args(ResponseStreamEvent)[0]
    out: dict[str, type[BaseModel]] = {}
    for member in typing.get_args(union):
        for value in typing.get_args(member.model_fields["type"].annotation):
            out[value] = member
    return out


# Codes Codex acts on in `response.failed` that the SDK's `ResponseError.code` Literal does not list
# (docs/codex.md "Errors and retries"). The SDK itself builds responses with `construct`, which accepts them.
CODEX_ERROR_CODES = frozenset(
    {"context_length_exceeded", "insufficient_quota", "usage_not_included", "server_is_overloaded"}
)


def validate_event(payload: dict[str, Any]) -> BaseModel:
    """One payload against the SDK class its `type` names (strict pydantic validation)."""
    cls = _event_classes().get(payload.get("type", ""))
    assert cls is not None, f"not an openai Responses stream event type: {payload.get('type')!r}"
    response = payload.get("response")
    error = response.get("error") if isinstance(response, dict) else None
    if isinstance(error, dict) and error.get("code") in CODEX_ERROR_CODES:
        payload = {**payload, "response": {**payload["response"], "error": {**error, "code": "server_error"}}}
    return cls.model_validate(payload)


def assert_valid_responses_stream(sse: bytes) -> list[dict[str, Any]]:
    """Every event parses as the openai SDK's typed event; exactly one terminal event, last."""
    payloads = events(sse)
    for payload in payloads:
        validate_event(payload)
    kinds = [p["type"] for p in payloads]
    assert sum(k in TERMINAL for k in kinds) == 1, kinds
    assert kinds[-1] in TERMINAL, kinds
    return payloads


def done_items(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p["item"] for p in payloads if p["type"] == "response.output_item.done"]


def terminal(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    return payloads[-1]


# -- recorded data and hand-built upstream streams ------------------------------------------------

DATA = SHARED_DATA


def fixture(relative: str) -> bytes:
    """A recorded file under tests/data/ (provenance in data/SOURCES.md); `.jsonl`
    recordings (one payload per line, vercel/ai style) come back as SSE frames."""
    raw = (DATA / relative).read_bytes()
    if relative.endswith(".jsonl"):
        return jsonl_to_sse(raw)
    return raw


def jsonl_to_sse(raw: bytes) -> bytes:
    """`{"type": T, ...}` per line -> `event: T\\ndata: <line>\\n\\n`, the line kept byte for byte."""
    frames = []
    for line in raw.splitlines():
        if line.strip():
            frames.append(b"event: " + json.loads(line)["type"].encode() + b"\ndata: " + line + b"\n\n")
    return b"".join(frames)


def sse(*payloads: dict[str, Any]) -> bytes:
    """Upstream SSE frames named after each payload's `type` (Anthropic's framing, docs/anthropic.md
    "Streaming")."""
    return b"".join(
        f"event: {p['type']}\ndata: {json.dumps(p, ensure_ascii=False)}\n\n".encode() for p in payloads
    )


def codex_request(name: str) -> dict[str, Any]:
    return json.loads((DATA / "codex" / name).read_bytes())
