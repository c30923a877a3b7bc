"""Gemini `streamGenerateContent` bytes -> IR events (docs/gemini.md "Endpoints and auth", "Streaming").

Sans-I/O: bytes in any chunking, events out as soon as a whole chunk is in. The framing (SSE or
JSON array, `framing.py`) is chosen by the first bytes; the chunks are read by `chunks.py`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from translators.core.errors import UpstreamProtocolError
from translators.core.translation import Translation
from translators.gemini import framing
from translators.gemini.chunks import ChunkReader
from translators.ir import events as ev
from translators.wire import decoding, wirejson


def seed_for(translation: Translation) -> Callable[[], str]:
    """A stand-in response id for made-up call ids, fixed by the request (so output is
    reproducible) and different on every turn (each turn's history is longer). Lazy and cached."""

    known: list[str] = []  # a closure, not functools.cache: that costs more per stream than a chunk

    def seed() -> str:
        if not known:
            body = json.dumps(translation.body, sort_keys=True, ensure_ascii=False).encode()
            known.append("r" + hashlib.sha1(body, usedforsecurity=False).hexdigest()[:8])
        return known[0]

    return seed


class GeminiDecoder:
    def __init__(self, seed: str | Callable[[], str]) -> None:
        self._reader = ChunkReader(seed)
        self._framing: framing.Framing | None = None
        self._head = b""
        self._closed = False

    def feed(self, data: bytes) -> list[ev.Event]:
        if self._closed:
            return []
        out = decoding.each(lambda: self._frames(data), self._payload)
        self._closed = decoding.ended(out)  # a failure ends the stream: nothing more is read
        return out

    def close(self) -> list[ev.Event]:
        if self._closed:
            return []
        self._closed = True
        payloads, clean = self._framing.close() if self._framing is not None else ([], True)
        out = decoding.each(lambda: payloads, self._payload)
        if decoding.ended(out):
            return out
        if not clean and not self._reader.finished:
            out.append(ev.Note("the Gemini stream was cut off inside its JSON array"))
        out += self._reader.end()
        return out

    def _frames(self, data: bytes) -> list[str]:
        if self._framing is None:
            self._head += data
            body = framing.strip_bom(self._head)
            chosen = framing.detect(body) if body is not None else None
            if chosen is None:
                return []
            self._framing, self._head = chosen, b""
            data = body or b""
        return self._framing.feed(data)

    def _payload(self, text: str, out: list[ev.Event]) -> None:
        if self._reader.finished:
            return
        try:
            payload: Any = wirejson.loads(text)
        except (ValueError, RecursionError):
            raise UpstreamProtocolError(f"Gemini sent a chunk that is not JSON: {text[:120]!r}") from None
        if not isinstance(payload, list):
            out += self._reader.chunk(payload)
            return
        # an SSE event may carry a JSON array of chunks (a proxy re-framing the array stream)
        for chunk in payload:
            out += self._reader.chunk(chunk)
