"""HTTP/1 trailer fields are dropped, not a crash.

mitmproxy 12.3 (`proxy/layers/http/_http1.py`, `Http1Connection.read_body`) raises
`NotImplementedError("HTTP trailers are not implemented yet.")` when a chunked body ends with
trailer fields. Nothing catches it: the connection's layer logs "mitmproxy has crashed!" with a
traceback and the request is never answered, so any client, without a key, wrote a traceback into
the log per request and left a connection hanging (docs/mitmproxy.md "Hostile clients").

RFC 9112 7.1.2: "A recipient that removes the chunked coding from a message MAY selectively retain
or discard the received trailer fields". mitmproxy removes the coding (it buffers or re-frames the
body), so the trailer fields are discarded: the chunked body reader mitmproxy makes for each
message (`make_body_reader`) is one whose end of message carries none. A request or an answer
with trailers goes on as one without. Only a chunked body can have trailers; the other readers
are mitmproxy's own. The reader is a subclass, not a wrapper around each read: a streamed answer
reads a chunk per event (docs/benchmarks.md "The per-event path").

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes.
"""

from __future__ import annotations

from typing import Any

import h11
from h11._readers import ChunkedReader
from mitmproxy.proxy.layers.http import _http1

INTERNALS = (
    "mitmproxy.proxy.layers.http._http1.make_body_reader",
    "mitmproxy.proxy.layers.http._http1.Http1Connection.read_body",
    "h11._readers.ChunkedReader._reading_trailer",
)
"""What this module uses of mitmproxy's (and h11's) internals (tests/addon/patches/test_patches.py)."""
_WRAPS = "_gateway_wraps"
_ORIGINAL = getattr(_http1.make_body_reader, _WRAPS, _http1.make_body_reader)


class UntrailedChunkedReader(ChunkedReader):
    """h11's chunked reader, but its end of message carries no trailer fields (h11 still reads
    and checks them)."""

    def __call__(self, buf: Any) -> Any:
        if not self._reading_trailer:
            return ChunkedReader.__call__(self, buf)  # at the last chunk it calls this again
        event = ChunkedReader.__call__(self, buf)
        if event is not None and event.headers:
            return h11.EndOfMessage()
        return event


def _make_body_reader(expected_size: int | None) -> Any:
    if expected_size is None:  # chunked (mitmproxy's own `make_body_reader`)
        return UntrailedChunkedReader()
    return _ORIGINAL(expected_size)


def install() -> None:
    """Idempotent; every copy of this module wraps mitmproxy's own function (`_WRAPS`)."""
    setattr(_make_body_reader, _WRAPS, _ORIGINAL)
    _http1.make_body_reader = _make_body_reader
