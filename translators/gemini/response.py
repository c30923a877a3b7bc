"""Whole Gemini answers (`generateContent`) and error bodies (docs/gemini.md "Streaming", "Errors")."""

from __future__ import annotations

from typing import Any

from translators.core.errors import UpstreamProtocolError
from translators.core.translation import Translation
from translators.dialect import ErrorInfo
from translators.gemini import failures
from translators.gemini.chunks import ChunkReader
from translators.gemini.stream import seed_for
from translators.ir import events as ev
from translators.wire.upstream_errors import code_for, text_of


def response_events(body: Any, translation: Translation) -> list[ev.Event]:
    """A `GenerateContentResponse` reads like a one-chunk stream; a list of them (the array
    framing, read whole) like the stream it is."""
    chunks = body if isinstance(body, list) else [body]
    if not chunks or not all(isinstance(c, dict) for c in chunks):
        raise UpstreamProtocolError("the Gemini answer is not a GenerateContentResponse object")
    reader = ChunkReader(seed_for(translation))
    out: list[ev.Event] = []
    for chunk in chunks:
        out += reader.chunk(chunk)
    return out + reader.end()


def error_info(status: int, body: Any) -> ErrorInfo:
    """`{"error": {"code", "status", "message", "details"}}`; anything else is kept as text."""
    error = failures.error_object(body)
    if error is not None:
        failure = failures.describe_error(error, status)
        return ErrorInfo(failure.code, failure.message)
    text = text_of(body)
    return ErrorInfo(code_for(status, text, table=failures.ERRORS), text or f"HTTP {status}")
