"""An answer known from the request's head is sent at once, and its body is never read.

mitmproxy 12.3 (`proxy/layers/http/__init__.py`, `HttpStream`): an answer an addon sets in
`requestheaders` (the gateway's 401 for a missing key, its 413 for a declared length past
`gateway_max_request_bytes`, a 407, a refusal) is sent only once the whole body has arrived:
`state_wait_for_request_headers` hands the stream to `state_consume_request_body`, which buffers
every byte before the `request` hook and the answer. A stranger's 1,000 MiB chunked POST without a
key was read whole (3.8 -> 6.7 GB), and an `Expect: 100-continue` client was even told to send it.
And a chunked body is bounded only once whole (mitmproxy's own `body_size_limit` closes the
connection without an answer the client reads). This module wraps both states:

- After the `requestheaders` hook, a flow with an answer gets no `100 Continue`; its answer goes out
  at once (the `responseheaders` and `response` hooks run for it, as for an answer set in
  `request`), and what arrives of its body is dropped unread. HTTP/1: the answer says
  `connection: close`, the connection is half-closed after it (RFC 9112 9.6: the client can still
  read the answer while it is sending) and closed once the client stops or has sent
  `LINGER_BYTES` more; the connections addon ends a lingering connection after
  `addon/work/limits.py` `LINGER_SECONDS`. HTTP/2: the stream is reset with `NO_ERROR` after the
  answer (RFC 9113 8.1: "stop sending, the answer is complete"); other streams go on.
- A flow given a `bound` (the gateway's own: `gateway_max_request_bytes`) is answered the same way
  as soon as its body, as sent, passes the bound: the client gets the gateway's 413, not a
  reset, and no byte past the bound is kept.

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Generator
from typing import Any

from mitmproxy import http
from mitmproxy.proxy import commands, events
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers.http._events import RequestData
from mitmproxy.proxy.layers.http._http1 import Http1Server
from mitmproxy.proxy.layers.http._http2 import Http2Server

from addon.observe import flowinfo
from addon.serve import bodies
from addon.serve.answers import answer, error_response
from addon.serve.flow import speaks_of

_WRAPS = "_gateway_wraps"
_STREAM = http_layer.HttpStream
_HEADERS_ORIGINAL = getattr(_STREAM.state_wait_for_request_headers, _WRAPS,
                            _STREAM.state_wait_for_request_headers)
_BODY_ORIGINAL = getattr(_STREAM.state_consume_request_body, _WRAPS, _STREAM.state_consume_request_body)
LINGER_BYTES = 32 * 1024 * 1024
"""Bytes of a refused body read and dropped after the answer (without the gateway's option:
`gateway_max_request_bytes`), so a client that sends its whole body before it reads (httpx, the
OpenAI SDKs) still finds the answer; past them the connection closes. Dropped unparsed: a read costs
the loop a few microseconds."""
UNREAD = "gateway.body_unread"
"""flow.metadata key: the answer went out before the body, which was never read."""
NO_ERROR = 0
"""HTTP/2 error code of a reset that asks the client to stop sending a body whose answer it has."""

INTERNALS = (
    "mitmproxy.proxy.layers.http.HttpStream.state_wait_for_request_headers",
    "mitmproxy.proxy.layers.http.HttpStream.state_consume_request_body",
    "mitmproxy.proxy.layers.http.HttpStream.state_done",
    "mitmproxy.proxy.layers.http.HttpStream.state_errored",
    "mitmproxy.proxy.layers.http.HttpStream.send_response",
    "mitmproxy.proxy.layers.http.HttpStream.check_killed",
    "mitmproxy.proxy.layers.http.HttpRequestHeadersHook",
    "mitmproxy.proxy.layers.http.HttpResponseHeadersHook",
    "mitmproxy.proxy.layers.http._http1.Http1Server.send",
    "mitmproxy.proxy.layers.http._http2.Http2Server.is_closed",
    "mitmproxy.proxy.layers.http._http_h2.BufferedH2Connection.stream_buffers",
    "mitmproxy.proxy.layers.http._http_h2.BufferedH2Connection.reset_stream",
    "mitmproxy.proxy.commands.CloseTcpConnection.half_close",
)
"""What this module uses of mitmproxy's internals (checked by tests/addon/patches/test_patches.py)."""
_bounds: weakref.WeakKeyDictionary[http.HTTPFlow, int] = weakref.WeakKeyDictionary()
lingering: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
"""Client connections half-closed after an early answer, and since when (time.monotonic)."""


def bound(flow: http.HTTPFlow, limit: int) -> None:
    """The flow's body, as sent, may not pass `limit` bytes (`gateway_max_request_bytes`): past it
    the flow is answered 413 `request_too_large` at once, in its client's shape."""
    _bounds[flow] = limit


def _wait_for_request_headers(self: Any, event: Any) -> Generator[Any, Any, None]:
    inner = _HEADERS_ORIGINAL(self, event)
    reply = None
    while True:
        try:
            command = inner.send(reply)
        except StopIteration:
            break
        reply = yield command
        if isinstance(command, http_layer.HttpRequestHeadersHook) and self.flow.response is not None:
            # no `100 Continue` for a body that will not be read
            self.flow.request.headers.pop("expect", None)
    if (not event.end_stream and self.flow.response is not None
            and self.client_state == self.state_consume_request_body):
        yield from _answer_now(self)


def _consume_request_body(self: Any, event: Any) -> Generator[Any, Any, None]:
    yield from _BODY_ORIGINAL(self, event)
    if not isinstance(event, RequestData) or self.client_state != self.state_consume_request_body:
        return
    limit = _bounds.get(self.flow)
    if limit is not None and len(self.request_body_buf) > limit:
        self.request_body_buf.clear()
        message = str(bodies.TooLarge(limit, None))
        self.flow.metadata.setdefault(flowinfo.KEY, flowinfo.record("-", refused=message))
        answer(self.flow, error_response(speaks_of(self.flow.metadata), 413, "request_too_large", message))
        yield from _answer_now(self)


def _answer_now(stream: Any) -> Generator[Any, Any, None]:
    """Send the flow's answer now; drop the rest of its body (module docstring)."""
    flow = stream.flow
    flow.metadata[UNREAD] = True
    stream.client_state = stream.state_errored  # what still arrives of the body is dropped
    connection = _connection_layer(stream)
    if isinstance(connection, Http1Server):
        flow.response.headers["connection"] = "close"
        connection.state = _drain(connection, int(getattr(stream.context.options, "gateway_max_request_bytes",
                                                          LINGER_BYTES)))
    flow.response.timestamp_start = time.time()
    yield http_layer.HttpResponseHeadersHook(flow)
    if (yield from stream.check_killed(True)):
        return
    stream.client_state = stream.state_done  # so that `send_response` ends the flow
    yield from stream.send_response()
    stream.client_state = stream.state_errored
    client = stream.context.client
    if isinstance(connection, Http1Server):
        lingering[client] = time.monotonic()
        yield commands.CloseTcpConnection(client, half_close=True)
    elif isinstance(connection, Http2Server):
        h2 = connection.h2_conn
        if not connection.is_closed(stream.stream_id) and not h2.stream_buffers.get(stream.stream_id):
            h2.reset_stream(stream.stream_id, NO_ERROR)
            if sent := h2.data_to_send():
                yield commands.SendData(client, sent)


def _connection_layer(stream: Any) -> Any:
    """The HTTP/1 or HTTP/2 server layer of the stream's client connection."""
    layers = stream.context.layers
    parent = layers[layers.index(stream) - 1] if stream in layers else None
    if isinstance(parent, http_layer.HttpLayer):
        return parent.connections.get(stream.context.client)
    return None


def _drain(connection: Http1Server, left: int) -> Callable[[events.Event], Generator[Any, Any, None]]:
    """An HTTP/1 connection state that drops what the client still sends, up to `left` bytes,
    then closes; or closes when the client does."""

    def drain(event: events.Event) -> Generator[Any, Any, None]:
        nonlocal left
        if isinstance(event, events.DataReceived):
            left -= len(event.data)
            connection.buf = type(connection.buf)()  # `_handle_event` appended it: dropped
            if left < 0:
                yield commands.CloseConnection(connection.conn)
        elif isinstance(event, events.ConnectionClosed):
            yield commands.CloseConnection(connection.conn)

    return drain


def install() -> None:
    """Idempotent; every copy of this module wraps mitmproxy's own methods (`_WRAPS`)."""
    setattr(_wait_for_request_headers, _WRAPS, _HEADERS_ORIGINAL)
    setattr(_consume_request_body, _WRAPS, _BODY_ORIGINAL)
    _STREAM.state_wait_for_request_headers = _wait_for_request_headers  # type: ignore[method-assign]
    _STREAM.state_consume_request_body = _consume_request_body  # type: ignore[method-assign]
