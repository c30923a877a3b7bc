"""A WebSocket message is bounded as it arrives, before mitmproxy buffers it.

mitmproxy 12.3 (`proxy/layers/websocket.py`, `WebsocketLayer.relay_messages`) relays a message only
once it is whole: every piece wsproto decodes is appended to the connection's `frame_buf`
(`frame_buf[-1] += data`, a copy of the whole frame so far for each read), and nothing bounds it:
`body_size_limit` is for HTTP bodies. The gateway's endpoint refused a message past
`gateway_max_request_bytes` only once mitmproxy had kept all of it: one socket sending a 2,000 MiB
fragmented message took the proxy from 1.8 to 5.8 GB, and a single 100 MiB frame held the event loop
for about 40 s, every other client with it (the copies grow with the square of the frame).

Wrapped here:

- `WebsocketConnection.events` (the wsproto events mitmproxy's relay reads): the pieces of one frame
  are kept in a list and handed on joined, once, when the frame ends (one append into `frame_buf`
  per frame: linear); the bytes of the message so far are counted as they arrive, and the frame
  header's length is read as soon as it is known. Past the socket's bound for that direction, the
  events end with a close (1009, "message too big", RFC 6455 7.4.1): mitmproxy's relay then sends a
  close frame to both ends and closes both connections, at once, without reading the rest.
- `WebsocketLayer.relay_messages`: gives each side of the socket its bound (`limits(flow,
  from_client)`, set by the connections addon) before the first message, and once the socket was
  closed for a message too big, says so on the flow (`TOO_LARGE`) and in the log.

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator
from logging import WARNING
from typing import Any

import wsproto
import wsproto.events
from mitmproxy import http
from mitmproxy.proxy import commands
from mitmproxy.proxy.layers import websocket as websocket_layer

INTERNALS = (
    "mitmproxy.proxy.layers.websocket.WebsocketLayer.relay_messages",
    "mitmproxy.proxy.layers.websocket.WebsocketLayer.client_ws",
    "mitmproxy.proxy.layers.websocket.WebsocketLayer.server_ws",
    "mitmproxy.proxy.layers.websocket.WebsocketConnection.frame_buf",
    "wsproto.connection.Connection.events",
    "wsproto.connection.Connection._proto",
    "wsproto.frame_protocol.FrameProtocol._frame_decoder",
    "wsproto.frame_protocol.FrameDecoder.header",
    "wsproto.frame_protocol.FrameDecoder.payload_consumed",
)
"""What this module uses of mitmproxy's and wsproto's internals (tests/addon/patches/test_patches.py)."""
_WRAPS = "_gateway_wraps"
_LAYER = websocket_layer.WebsocketLayer
_RELAY_ORIGINAL = getattr(_LAYER.relay_messages, _WRAPS, _LAYER.relay_messages)
_EVENTS_ORIGINAL = wsproto.Connection.events
TOO_BIG = 1009
"""RFC 6455 7.4.1: "a message that is too big for it to process"."""
TOO_LARGE = "gateway.websocket.too_large"
"""flow.metadata key: the socket was closed for a message past its bound: {"from": "client" |
"server", "limit": bytes}."""
_LIMIT, _SIZE, _PIECES, _CLOSED = "_gateway_limit", "_gateway_size", "_gateway_pieces", "_gateway_closed"


def _no_limit(_flow: http.HTTPFlow, _from_client: bool) -> int | None:
    return None


limits: Callable[[http.HTTPFlow, bool], int | None] = _no_limit
"""The bound of a message on `flow`'s socket from the client (True) or the server; None: none."""


def _size(data: str | bytes) -> int:
    return len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))


def _events(self: Any) -> Generator[wsproto.events.Event, None, None]:
    limit: int | None = getattr(self, _LIMIT, None)
    pieces: list[Any] = getattr(self, _PIECES, None) or []
    size: int = getattr(self, _SIZE, 0)
    try:
        for event in _EVENTS_ORIGINAL(self):
            if not isinstance(event, wsproto.events.Message):
                yield event
                continue
            size += _size(event.data)
            if limit is not None and (size > limit or size + _frame_left(self) > limit):
                pieces, size = [], 0
                setattr(self, _CLOSED, limit)
                yield wsproto.events.CloseConnection(TOO_BIG, f"message over {limit} bytes")
                return
            if not event.frame_finished:
                pieces.append(event.data)  # joined once, when the frame ends
                continue
            if pieces:
                pieces.append(event.data)
                joined = "".join(pieces) if isinstance(event.data, str) else b"".join(pieces)
                event, pieces = dataclasses.replace(event, data=joined), []
            if event.message_finished:
                size = 0
            yield event
    finally:
        setattr(self, _PIECES, pieces)
        setattr(self, _SIZE, size)


def _frame_left(connection: Any) -> int:
    """Payload bytes of the frame being read that have not arrived yet (its header says)."""
    decoder = connection._proto._frame_decoder
    header = decoder.header
    return max(0, header.payload_len - decoder.payload_consumed) if header is not None else 0


def _relay_messages(self: Any, event: Any) -> Generator[Any, Any, None]:
    if not hasattr(self.client_ws, _LIMIT):
        setattr(self.client_ws, _LIMIT, limits(self.flow, True))
        setattr(self.server_ws, _LIMIT, limits(self.flow, False))
    yield from _RELAY_ORIGINAL(self, event)
    for side, ws in (("client", self.client_ws), ("server", self.server_ws)):
        limit = getattr(ws, _CLOSED, None)
        if limit is not None and TOO_LARGE not in self.flow.metadata:
            self.flow.metadata[TOO_LARGE] = {"from": side, "limit": limit}
            if self.flow.websocket is not None:
                self.flow.websocket.closed_by_client = False  # the proxy closed it
            yield commands.Log(f"a WebSocket message from the {side} passed {limit} bytes: both ends "
                               f"closed ({TOO_BIG})", WARNING)


def install() -> None:
    """Idempotent; every copy of this module wraps mitmproxy's own method (`_WRAPS`)."""
    setattr(_relay_messages, _WRAPS, _RELAY_ORIGINAL)
    _LAYER.relay_messages = _relay_messages  # type: ignore[method-assign]
    websocket_layer.WebsocketConnection.events = _events  # type: ignore[method-assign]
