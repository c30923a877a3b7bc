"""The callable mitmproxy calls per upstream body chunk (docs/mitmproxy.md "Streaming callables").

mitmproxy facts it lives with: return `[]`, never `b""`, when there is nothing to send (an empty
chunk ends an HTTP/1.1 chunked body); an exception inside the callable silently loses the chunk,
so nothing may escape; the end of the body is one more call with `b""`.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

from addon.credentials import scrub_bytes
from translators import PassthroughTranslator, StreamTranslator, wirejson
from translators.sse import encode_event

Translator = StreamTranslator | PassthroughTranslator


class StreamHook:
    def __init__(self, translator: Translator, on_end: Callable[[StreamHook], None] | None = None,
                 secrets: tuple[str, ...] = ()) -> None:
        self.translator = translator
        self.secrets = secrets
        """The credentials sent upstream: an event that repeats one (an error message) reaches
        the client without it. Translators emit whole events, so no value spans two chunks."""
        self.upstream = bytearray()
        """The upstream's own bytes, kept for the saved flow and the views."""
        self.client = bytearray()
        """What the client got."""
        self.ended = False
        self.error: str | None = None
        self._on_end = on_end

    def __call__(self, data: bytes) -> bytes | list[bytes]:
        if data:
            self.upstream += data
        try:
            if not data:
                out = self.end()
            elif self.ended:
                out = b""  # after a failure the client's stream is over; later bytes are only kept
            else:
                out = self.translator.feed(data)
        except Exception as exc:
            out = self._fail(repr(exc))
        if out:
            out = scrub_bytes(out, self.secrets)
            self.client += out
            return out
        return []

    def end(self) -> bytes:
        """End of the upstream body (or the upstream cut it): flush, and guarantee a terminal event."""
        if self.ended:
            return b""
        self.ended = True
        out = self.translator.close()
        if self._on_end is not None:
            self._on_end(self)
        return out

    def cut(self, reason: str) -> bytes:
        """The upstream connection broke mid-body: what the client still gets before the end."""
        self.error = reason
        try:
            out = self.end()
        except Exception as exc:
            out = self._fail(repr(exc))
        if out:
            out = scrub_bytes(out, self.secrets)
            self.client += out
        return out

    def _fail(self, reason: str) -> bytes:
        """The translator raised: it is not called again, and unless the client already has a
        terminal event it gets one `response.failed`, so it never waits for an end that will
        not come."""
        self.error = reason
        self.ended = True
        if _TERMINAL.search(self.client):
            return b""
        return failed_event(bytes(self.client), f"gateway error while translating the stream: {reason}")


_TERMINAL = re.compile(rb"(?m)^event: response\.(completed|incomplete|failed)$")
_CREATED = re.compile(rb'"response":\s*\{"id":\s*"([^"]+)"')
_MODEL = re.compile(rb'"model":\s*"([^"]*)"')


def failed_event(sent: bytes, message: str) -> bytes:
    """A `response.failed` that continues what the client already got: same response id and
    model as its `response.created`, the next sequence number."""
    response_id = _CREATED.search(sent)
    model = _MODEL.search(sent)
    response = {
        "id": response_id[1].decode() if response_id else f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response", "created_at": int(time.time()), "status": "failed",
        "model": wirejson.loads(b'"%s"' % model[1]) if model else "", "output": [],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "error": {"code": "server_error", "message": message}, "incomplete_details": None, "usage": None,
    }
    sequence = len(re.findall(rb"(?m)^event: ", sent))
    return encode_event("response.failed", {"type": "response.failed", "response": response,
                                            "sequence_number": sequence})
