"""One socket request run as mitmproxy runs a client replay, its answer handed to the socket
(docs/websocket.md "One translation path"): a subclass of mitmproxy's `clientplayback.ReplayHandler`
and `MockServer` (mitmproxy 12.3 offers no public way to run a flow made by an addon through the
proxy and read the bytes its client would get).

`ReplayHandler` runs the flow (addon/serve/websocket/turn.py `make_flow`) through every addon's
hooks and the upstream, with a stand-in client that drops the answer; `_Client` overrides the
stand-in's private `_handle_event` so the bytes the gateway wrote for the client reach the
socket's `Relay` (addon/serve/websocket/relay.py). `tests/addon/patches/test_replay_client.py`
fails, naming the attribute, if those internals change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Generator, Mapping
from typing import Any, Protocol

from mitmproxy import http
from mitmproxy.addons.clientplayback import MockServer, ReplayHandler
from mitmproxy.proxy import commands, events, server
from mitmproxy.proxy.layers import http as http_layer

END_SECONDS = 10.0
"""How long the answer may take to reach the stand-in client after the flow's last hook: it is
sent right after it, on the same loop; past this the socket's request ends with an error."""


class Relay(Protocol):
    """Where the answer goes (addon/serve/websocket/relay.py `Relay`)."""

    def headers(self, status: int, content_type: str, retry_after: str | None) -> None: ...
    def data(self, chunk: bytes) -> None: ...
    def end(self, failure: str | None) -> None: ...


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

    def hands_on(self, data: bytes) -> None:
        """Where a piece of the answer's body goes when it does not pass mitmproxy's layers
        (addon/patches/body_relay.py): where the stand-in client hands one (`_Client`)."""
        self.relay.data(data)

    def log(self, message: str, level: int = logging.INFO, exc_info: Any = None) -> None:
        """The turn's own lines (server connect, disconnect) as an HTTP turn's, with the socket
        client's address: mitmproxy's `ReplayHandler` prefixes them `[replay]`."""
        server.ConnectionHandler.log(self, message, level, exc_info)

    async def handle_hook(self, hook: commands.StartHook) -> None:
        await super().handle_hook(hook)
        if isinstance(hook, http_layer.HttpRequestHeadersHook):
            # the client is known (addon/team/keys.py reads `is_replay` to take the upgrade's):
            # from here on the turn is the client's flow, listed and printed as one, not a replay
            self.flow.is_replay = None

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
