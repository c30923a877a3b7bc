"""A WebSocket the gateway serves is served where mitmproxy hands it over (docs/websocket.md "Where
the socket is served").

mitmproxy 12.3 switches a flow answered `101` to its `WebsocketLayer` (`HttpStream.flow_done`),
which relays every message to a server connection, runs every addon's `websocket_message` hook for
it and keeps it in the flow. A socket the gateway answers itself (`served(flow)`: its endpoint set
the 101 in `requestheaders`, addon/serve/websocket/endpoint.py) has no server: `flow_done` is
wrapped so that such a flow gets `Served` instead, a layer on the client's connection only. It
reads the client's frames (wsproto, as mitmproxy's layer does, with the bound of
addon/patches/websocket_bound.py), answers pings, and hands each whole message to the endpoint's
`Peer`. Frames for the client are written by `Handover.send`: an `Outgoing` event injected into the
connection's handler, as mitmproxy's own `inject.websocket` does (`Proxyserver.inject_event`), so
they pass the connection's TLS layer like any other bytes, and no hook runs per frame; on a plain
connection, where every layer above passes them on unchanged, they are written to its transport.

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Generator
from typing import Any, Protocol

import wsproto
import wsproto.events
import wsproto.utilities
from mitmproxy import http
from mitmproxy.proxy import commands, events, layer
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers import websocket as websocket_layer

from addon.patches import websocket_bound

INTERNALS = (
    "mitmproxy.proxy.layers.http.HttpStream.flow_done",
    "mitmproxy.proxy.layers.http.HttpStream.passthrough",
    "mitmproxy.proxy.layers.http.HttpStream.child_layer",
    "mitmproxy.proxy.layers.http.HttpStream._handle_event",
    "mitmproxy.proxy.layers.http.HttpStream.stream_id",
    "mitmproxy.proxy.layers.websocket.WebsocketConnection",
    "mitmproxy.addons.proxyserver.Proxyserver.connections",
    "mitmproxy.proxy.server.ConnectionHandler.server_event",
    "mitmproxy.proxy.server.ConnectionHandler.transports",
    "mitmproxy.proxy.server.ConnectionHandler.client",
    "mitmproxy.proxy.server.ConnectionHandler.timeout_watchdog",
    "mitmproxy.proxy.server.TimeoutWatchdog.register_activity",
    "mitmproxy.proxy.server.ConnectionIO.writer",
)
"""What this module uses of mitmproxy's internals (tests/addon/patches/test_patches.py)."""
_WRAPS = "_gateway_wraps"
_STREAM = http_layer.HttpStream
_ORIGINAL = getattr(_STREAM.flow_done, _WRAPS, _STREAM.flow_done)
log = logging.getLogger(__name__)


class Peer(Protocol):
    """The endpoint's side of one served socket (addon/serve/websocket/endpoint.py `Connection`)."""

    def message(self, data: str | bytes) -> None: ...
    def pong(self) -> None: ...
    def gone(self) -> None: ...


def _never(_flow: http.HTTPFlow) -> bool:
    return False


def _nobody(_flow: http.HTTPFlow, _socket: Handover) -> Peer:
    raise RuntimeError("no WebSocket endpoint")


served: Callable[[http.HTTPFlow], bool] = _never
"""Whether a flow answered 101 is a socket the gateway serves (set by the endpoint)."""
opened: Callable[[http.HTTPFlow, Handover], Peer] = _nobody
"""The endpoint's peer for a served socket that just opened (set by the endpoint)."""


@dataclasses.dataclass
class Outgoing(events.MessageInjected[bytes]):
    """Frames for the client of a served socket (`message`, already framed), then a close when
    `close` is set (the close frame is in `message`)."""

    close: bool = False


class Served(layer.Layer):
    """The client's end of a socket the gateway serves: no server connection, no hook per message."""

    def __init__(self, context: Any, flow: http.HTTPFlow) -> None:
        super().__init__(context)
        self.flow = flow
        self.ws = websocket_layer.WebsocketConnection(wsproto.ConnectionType.SERVER, conn=context.client)
        self.pieces: list[str | bytes] = []
        self.peer: Peer | None = None
        self.closed = False

    def _handle_event(self, event: events.Event) -> layer.CommandGenerator[None]:
        client = self.context.client
        if isinstance(event, events.Start):
            setattr(self.ws, websocket_bound._LIMIT, websocket_bound.limits(self.flow, True))
            self.peer = opened(self.flow, Handover(self.flow))
        elif isinstance(event, Outgoing):
            if self.closed:
                return
            if event.message:
                yield commands.SendData(client, event.message)
            if event.close:
                yield from self._close()
        elif isinstance(event, events.DataReceived) and event.connection == client:
            yield from self._received(event.data)
        elif isinstance(event, events.ConnectionClosed) and event.connection == client:
            yield from self._close()
        # the server side has no connection: nothing else reaches this layer

    def _received(self, data: bytes) -> Generator[commands.Command, None, None]:
        if self.closed:
            return
        self.ws.receive_data(data)
        for ws_event in self.ws.events():
            if isinstance(ws_event, wsproto.events.Message):
                self.pieces.append(ws_event.data)
                if ws_event.message_finished:
                    pieces, self.pieces = self.pieces, []
                    whole = pieces[0] if len(pieces) == 1 else (
                        "".join(pieces) if isinstance(pieces[0], str) else b"".join(pieces))  # type: ignore[arg-type]
                    if self.peer is not None:
                        self.peer.message(whole)
            elif isinstance(ws_event, wsproto.events.Ping):
                yield commands.SendData(self.context.client, self.ws.send(ws_event.response()))
            elif isinstance(ws_event, wsproto.events.Pong):
                if self.peer is not None:
                    self.peer.pong()
            elif isinstance(ws_event, wsproto.events.CloseConnection):
                limit = getattr(self.ws, websocket_bound._CLOSED, None)
                if limit is not None:
                    self.flow.metadata[websocket_bound.TOO_LARGE] = {"from": "client", "limit": limit}
                    yield commands.Log(f"a WebSocket message from the client passed {limit} bytes: "
                                       f"its socket is closed ({websocket_bound.TOO_BIG})", logging.WARNING)
                try:
                    reply = self.ws.send(wsproto.events.CloseConnection(ws_event.code, ws_event.reason))
                except wsproto.utilities.LocalProtocolError:
                    reply = b""
                if reply:
                    yield commands.SendData(self.context.client, reply)
                yield from self._close()
                return

    def _close(self) -> Generator[commands.Command, None, None]:
        if self.closed:
            return
        self.closed = True
        yield commands.CloseConnection(self.context.client)
        if self.peer is not None:
            self.peer.gone()


class Gone(Exception):
    """The socket's connection is over: nothing more can be written to it."""


class Handover:
    """Writes to a served socket's client from outside the layer (the endpoint's tasks)."""

    def __init__(self, flow: http.HTTPFlow) -> None:
        self.flow = flow

    def _handler(self) -> Any:
        from mitmproxy import ctx  # the running master's proxy server

        server = ctx.master.addons.get("proxyserver")
        handler = server.connections.get(self.flow.client_conn.id) if server is not None else None
        if handler is None:
            raise Gone
        return handler

    async def send(self, data: bytes, close: bool = False) -> None:
        """Write `data` (frames) to the client, then wait until the client's connection has taken
        them (its write buffer drained), so a client that does not read holds back its writer."""
        handler = self._handler()
        transport = handler.transports.get(handler.client)
        writer = transport.writer if transport is not None else None
        if writer is not None and not close and not self.flow.client_conn.tls and not writer.is_closing():
            # a plain connection: after its 101 every layer above `Served` passes the bytes on as
            # they are (HTTP/1 after an upgrade writes a response's data unframed), so they are
            # written here, without a walk through the layers per write
            handler.timeout_watchdog.register_activity()
            writer.write(data)
        else:  # TLS (regular mode's tunnel), or the close: through the layers
            await handler.server_event(Outgoing(self.flow, data, close))
        if writer is not None and not close:  # an asyncio StreamWriter, or mitmproxy_rs's Stream
            try:
                await writer.drain()
            except (ConnectionError, RuntimeError, OSError) as exc:
                raise Gone from exc
        if self.flow.client_conn.timestamp_end is not None:
            raise Gone


def _flow_done(self: Any) -> Generator[Any, Any, None]:
    """mitmproxy's own, but a socket the gateway serves goes to `Served`, not to a relay."""
    response = self.flow.response
    if response is None or response.status_code != 101 or not self.flow.websocket or not served(self.flow):
        yield from _ORIGINAL(self)
        return
    self.child_layer = Served(self.context, self.flow)
    self._handle_event = self.passthrough
    yield from self.child_layer.handle_event(events.Start())
    yield http_layer.SendHttp(http_layer.ResponseEndOfMessage(self.stream_id), self.context.client)


def install() -> None:
    """Idempotent; every copy of this module wraps mitmproxy's own method (`_WRAPS`)."""
    setattr(_flow_done, _WRAPS, _ORIGINAL)
    _STREAM.flow_done = _flow_done  # type: ignore[method-assign]
