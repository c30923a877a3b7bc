"""One socket request sent through the gateway's own HTTP path (docs/websocket.md "One
translation path").

The request becomes an ordinary `POST .../responses` flow, made by the proxy itself as mitmproxy's
client replay makes one (`ReplayHandler`): every addon hook runs for it, so the gateway's `request`
hook translates it, the upstream call, stream translation, store write, report and saved flow are
the HTTP path's own, and mitmweb lists it as its own flow. Where the replay's stand-in client
drops the answer, `_Client` hands the bytes the gateway wrote for the client to the `Relay`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any

from mitmproxy import connection, http
from mitmproxy.addons.clientplayback import MockServer, ReplayHandler
from mitmproxy.proxy import events
from mitmproxy.proxy.layers import http as http_layer

from addon.serve.websocket.relay import Relay
from addon.team import keys as clients

_SOCKET_HEADERS = ("upgrade", "connection", "content-length", "transfer-encoding", "content-encoding",
                   "keep-alive", "proxy-authorization")
"""Upgrade headers that describe the handshake, never the POST made from it."""

END_SECONDS = 10.0
"""How long the answer may take to reach the stand-in client after the flow's last hook: it is
sent right after it, on the same loop; past this the socket's request ends with an error."""

METADATA = "gateway.websocket"
"""A flow's socket: on the upgrade, the URL the client asked for; on each request, its connection."""


@dataclass(frozen=True)
class Upgrade:
    """What a re-targeted upgrade leaves for its connection: where its requests go and as whom."""

    url: str
    headers: tuple[tuple[str, str], ...]
    client: str | None
    """The gateway client `identify` found for the upgrade (addon/team/keys.py)."""
    client_conn: connection.Client

    @classmethod
    def of(cls, flow: http.HTTPFlow) -> Upgrade:
        headers = tuple((k, v) for k, v in flow.request.headers.items(multi=True)
                        if k.lower() not in _SOCKET_HEADERS and not k.lower().startswith("sec-websocket-"))
        return cls(flow.request.url, headers, flow.metadata.get(clients.METADATA), flow.client_conn)


def make_flow(upgrade: Upgrade, content: bytes, connection_id: str) -> http.HTTPFlow:
    """The POST a socket request is, with the upgrade's headers (its client's own: credentials of
    a route to OpenAI itself, Codex's session headers)."""
    request = http.Request.make("POST", upgrade.url, content, [
        *((k.encode(), v.encode()) for k, v in upgrade.headers),
        (b"content-type", b"application/json"), (b"accept", b"text/event-stream")])
    flow = http.HTTPFlow(upgrade.client_conn, connection.Server(address=(request.host, request.port)))
    flow.request = request
    flow.is_replay = "request"  # made by the proxy: clients.identify takes the upgrade's client
    if upgrade.client:
        flow.metadata[clients.METADATA] = upgrade.client
    flow.metadata[METADATA] = connection_id
    return flow


class _Client(MockServer):
    """The replay's client end: the answer's bytes go to the relay instead of nowhere."""

    def __init__(self, flow: http.HTTPFlow, context: Any, relay: Relay, ended: asyncio.Event) -> None:
        super().__init__(flow, context)
        self.relay = relay
        self.ended = ended

    def _handle_event(self, event: events.Event) -> Generator[Any, Any, None]:
        if isinstance(event, http_layer.ResponseHeaders):
            headers: Mapping[str, str] = event.response.headers
            self.relay.headers(event.response.status_code, headers.get("content-type", ""),
                               headers.get("retry-after"))
        elif isinstance(event, http_layer.ResponseData):
            self.relay.data(event.data)
        elif isinstance(event, http_layer.ResponseEndOfMessage):
            self.relay.end(None)
            self.ended.set()
        elif isinstance(event, http_layer.ResponseProtocolError):
            self.relay.end(event.message)
            self.ended.set()
        else:
            yield from super()._handle_event(event)


class Turn(ReplayHandler):
    def __init__(self, flow: http.HTTPFlow, options: Any, relay: Relay) -> None:
        super().__init__(flow, options)
        self.ended = asyncio.Event()
        client = self.layer.context.client
        self.layer.connections[client] = _Client(flow, self.layer.context.fork(), relay, self.ended)
        self.relay = relay

    async def run(self) -> None:
        await self.replay()  # returns at the response (or error) hook ...
        if not self.ended.is_set():  # ... before the answer the proxy itself wrote is sent
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ended.wait(), END_SECONDS)
        if self.flow.error is not None:
            self.relay.end(self.flow.error.msg)  # a no-op once the relay ended it

    def stop(self) -> None:
        """End the upstream call: its connection is closed, the flow ends with an error."""
        for io in self.transports.values():
            if io.handler is not None:
                io.handler.cancel()
        self.done.set()


async def run(turn: Turn) -> None:
    try:
        await turn.run()
    except asyncio.CancelledError:
        turn.stop()
        raise
