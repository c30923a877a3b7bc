"""What an HTTP/1 client sends before its request's head ends, and while an answer is in flight,
is bounded.

mitmproxy 12.3 (`proxy/layers/http/_http1.py`, `Http1Server`) appends every byte a client sends to
its receive buffer and looks for the end of the head in it ("FIXME: protect against header size
DoS"): 200 MiB of header lines without an end grew the proxy by 194 MiB, and nothing ever
answered. The same buffer takes what a client sends while its answer is in flight (`wait`, for a
pipelined request), also without a bound. (HTTP/2 has its own: h2 bounds a header list to 64 KiB
and its CONTINUATION frames to 64.)

Wrapped here: `read_headers`, which past `gateway_max_head_bytes` without the head's end answers
`431` (in Responses' shape) and closes; and `wait`, which closes a connection whose client sent
more than `gateway_max_head_bytes` + `gateway_max_request_bytes` ahead of its answer.

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mitmproxy.proxy import commands
from mitmproxy.proxy.layers.http._base import ReceiveHttp
from mitmproxy.proxy.layers.http._events import ErrorCode, RequestProtocolError
from mitmproxy.proxy.layers.http._http1 import Http1Server

from translators import client_dialects
from translators.wire import wirejson

INTERNALS = (
    "mitmproxy.proxy.layers.http._http1.Http1Server.read_headers",
    "mitmproxy.proxy.layers.http._http1.Http1Server.wait",
    "mitmproxy.proxy.layers.http._http1.Http1Server.done",
    "mitmproxy.proxy.layers.http._http1.Http1Server.buf",
    "mitmproxy.proxy.layers.http._http1.Http1Server.state",
    "mitmproxy.proxy.layers.http._http1.Http1Server.stream_id",
    "mitmproxy.proxy.layers.http._events.ErrorCode.CLIENT_DISCONNECTED",
    "mitmproxy.proxy.layers.http._base.ReceiveHttp",
)
"""What this module uses of mitmproxy's internals (tests/addon/patches/test_patches.py)."""
_WRAPS = "_gateway_wraps"
_HEADERS_ORIGINAL = getattr(Http1Server.read_headers, _WRAPS, Http1Server.read_headers)
_WAIT_ORIGINAL = getattr(Http1Server.wait, _WRAPS, Http1Server.wait)
MAX_HEAD_BYTES = 64 * 1024
"""Without the gateway's option (`gateway_max_head_bytes`)."""


def _limit(layer: Any, name: str, default: int) -> int:
    return int(getattr(layer.context.options, name, default))


def too_large_answer(limit: int) -> bytes:
    """A whole HTTP/1.1 431 in Responses' error shape, closing the connection."""
    speaks = client_dialects.get(client_dialects.DEFAULT)  # nothing is known of the client yet
    body = wirejson.dumps(speaks.error_body(431, "request_header_fields_too_large",
                                            f"the request's head passed {limit} bytes without its end "
                                            "(gateway_max_head_bytes)"))
    head = (f"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    return head.encode() + body


def _read_headers(self: Any, event: Any) -> Generator[Any, Any, None]:
    yield from _HEADERS_ORIGINAL(self, event)
    limit = _limit(self, "gateway_max_head_bytes", MAX_HEAD_BYTES)
    if self.state == self.read_headers and len(self.buf) > limit:
        self.buf = type(self.buf)()
        self.state = self.done
        yield commands.SendData(self.conn, too_large_answer(limit))
        yield commands.CloseConnection(self.conn)


def _wait(self: Any, event: Any) -> Generator[Any, Any, None]:
    yield from _WAIT_ORIGINAL(self, event)
    limit = _limit(self, "gateway_max_head_bytes", MAX_HEAD_BYTES) + _limit(
        self, "gateway_max_request_bytes", 32 * 1024 * 1024)
    if self.state == self.wait and len(self.buf) > limit:
        self.buf = type(self.buf)()
        self.state = self.done
        yield commands.CloseConnection(self.conn)
        yield ReceiveHttp(RequestProtocolError(
            self.stream_id, f"the client sent more than {limit} bytes ahead of its answer",
            ErrorCode.CLIENT_DISCONNECTED))


def install() -> None:
    """Idempotent; every copy of this module wraps mitmproxy's own methods (`_WRAPS`)."""
    setattr(_read_headers, _WRAPS, _HEADERS_ORIGINAL)
    setattr(_wait, _WRAPS, _WAIT_ORIGINAL)
    Http1Server.read_headers = _read_headers  # type: ignore[method-assign]
    Http1Server.wait = _wait  # type: ignore[method-assign]
