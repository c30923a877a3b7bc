"""HTTP/1 trailer fields are dropped, not a crash.

mitmproxy 12.3 (`proxy/layers/http/_http1.py`, `Http1Connection.read_body`) raises
`NotImplementedError("HTTP trailers are not implemented yet.")` when a chunked body ends with
trailer fields. Nothing catches it: the connection's layer logs "mitmproxy has crashed!" with a
traceback and the request is never answered, so any client, without a key, wrote a traceback into
the log per request and left a connection hanging (docs/mitmproxy.md "Hostile clients").

RFC 9112 7.1.2: "A recipient that removes the chunked coding from a message MAY selectively retain
or discard the received trailer fields". mitmproxy removes the coding (it buffers or re-frames the
body), so the trailer fields are discarded: the body reader each HTTP/1 connection reads with is
wrapped to end the message without them. A request or an answer with trailers goes on as one
without.

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import h11
from mitmproxy.proxy.layers.http._http1 import Http1Connection

INTERNALS = (
    "mitmproxy.proxy.layers.http._http1.Http1Connection.read_body",
    "mitmproxy.proxy.layers.http._http1.Http1Server.body_reader",
    "mitmproxy.proxy.layers.http._http1.Http1Client.body_reader",
)
"""What this module uses of mitmproxy's internals (tests/addon/patches/test_patches.py)."""
_WRAPS = "_gateway_wraps"
_ORIGINAL = getattr(Http1Connection.read_body, _WRAPS, Http1Connection.read_body)


class _Untrailed:
    """An h11 body reader whose end of message carries no trailer fields."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    def __call__(self, buf: Any) -> Any:
        event = self.reader(buf)
        if isinstance(event, h11.EndOfMessage) and event.headers:
            return h11.EndOfMessage()
        return event

    def read_eof(self) -> Any:
        return self.reader.read_eof()


def _read_body(self: Any, event: Any) -> Generator[Any, Any, None]:
    if not isinstance(self.body_reader, _Untrailed):
        self.body_reader = _Untrailed(self.body_reader)
    yield from _ORIGINAL(self, event)


def install() -> None:
    """Idempotent; every copy of this module wraps mitmproxy's own method (`_WRAPS`)."""
    setattr(_read_body, _WRAPS, _ORIGINAL)
    Http1Connection.read_body = _read_body  # type: ignore[method-assign]
