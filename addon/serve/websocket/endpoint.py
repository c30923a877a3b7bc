"""The Responses WebSocket transport, served (docs/websocket.md).

An addon with its own WebSocket server on a loopback port, on mitmproxy's event loop (started in
`running`, closed in `done`). The gateway's `requestheaders` hands it a matched upgrade (`take`):
the upgrade is re-targeted to this server under a one-time path, so mitmproxy relays the socket
between two real ends and mitmweb shows it. Each connection then turns each `response.create` into
an ordinary POST through the gateway's own HTTP path (addon/serve/websocket/turn.py, run by
addon/patches/replay_client.py), its answer's SSE events into text frames
(addon/serve/websocket/relay.py), with the history rules of addon/serve/websocket/session.py.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
import socket
import time
from typing import Any

from mitmproxy import ctx, http
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from addon.observe import flowinfo
from addon.patches import replay_client
from addon.routes import plugins
from addon.serve.answers import error_response
from addon.serve.flow import speaks_of
from addon.serve.websocket import turn as turns
from addon.serve.websocket.relay import Relay
from addon.serve.websocket.session import Local, Refused, Send, Session
from addon.team.sockets import SOCKETS
from addon.work import limits
from translators.wire import wirejson

log = logging.getLogger(__name__)

IDLE_SECONDS = 30 * 60
"""A connection with no request for this long is closed (code 1000). Codex sends no pings of its
own and opens a new connection for its next request when the old one is gone; OpenAI's own sockets
last 60 minutes (docs/websocket.md "Limits")."""
PING_SECONDS = 20
"""The server pings; Codex answers pings (docs/codex.md "Transport"). A peer that stops answering
for as long is gone."""
PENDING_PER_CLIENT = 1024
"""Re-targeted upgrades of one client (its key's name, else its address) not yet connected by
mitmproxy; one more is refused at once (429 with `retry-after`), never an older one forgotten. An
upgrade is connected within milliseconds, so a burst of hundreds passes."""
PENDING = 16384
"""The same for all clients together (503)."""
PENDING_SECONDS = 30.0
"""An upgrade not connected by then is forgotten (its client left before mitmproxy connected it)."""


class Endpoint:
    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self._server: Server | None = None
        self._socket: socket.socket | None = None
        self._pending: collections.OrderedDict[str, tuple[turns.Upgrade, str, float]] = (
            collections.OrderedDict())
        """token -> (upgrade, its client, when it was re-targeted), oldest first."""
        self._waiting: collections.Counter[str] = collections.Counter()
        """Pending upgrades per client."""
        self._connections: set[Connection] = set()

    @property
    def port(self) -> int | None:
        if self._socket is None:
            return None
        return self._socket.getsockname()[1]

    def load(self, _loader: Any) -> None:
        # bound now, served from `running`: mitmproxy's listener may take an upgrade before this
        # addon's `running` has run, and the connection then waits in the backlog
        self._bind()

    async def running(self) -> None:
        await self.start()

    def _bind(self) -> None:
        if self._socket is None:
            self._socket = socket.create_server(("127.0.0.1", 0), backlog=128)
            self._socket.setblocking(False)

    async def start(self, max_size: int | None = None) -> None:
        if self._server is not None:
            return
        self._bind()
        if max_size is None:
            max_size = int(ctx.options.gateway_max_request_bytes)
        # a message is a request: bounded as an HTTP body is (docs/websocket.md "Limits")
        self._server = await serve(self._serve, sock=self._socket, process_request=self._admit,
                                   max_size=max_size, ping_interval=PING_SECONDS,
                                   ping_timeout=PING_SECONDS, server_header=None, logger=log,
                                   compression=None)

    async def done(self) -> None:
        server, bound = self._server, self._socket
        self._server = self._socket = None
        if server is None:
            if bound is not None:
                bound.close()
            return
        server.close()  # open connections get a 1001 close; their turns are cancelled
        await server.wait_closed()

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        """A served socket's flow keeps at most `gateway_max_kept_bytes` of its messages, the
        latest: mitmproxy keeps every message of a flow for as long as the proxy runs, and one
        Codex connection carries every event of every request of a session (each request's events
        are in its own flow too) (docs/websocket.md "Limits")."""
        if flowinfo.WEBSOCKET not in flow.metadata or flow.websocket is None:
            return
        messages = flow.websocket.messages
        kept = flow.metadata.get(flowinfo.WEBSOCKET_KEPT, 0) + len(messages[-1].content)
        limit = int(ctx.options.gateway_max_kept_bytes)
        if kept > limit:
            drop = 0
            while kept > limit and drop < len(messages) - 1:
                kept -= len(messages[drop].content)
                drop += 1
            del messages[:drop]
            dropped = flow.metadata.get(flowinfo.WEBSOCKET_DROPPED, 0) + drop
            flow.metadata[flowinfo.WEBSOCKET_DROPPED] = dropped
        flow.metadata[flowinfo.WEBSOCKET_KEPT] = kept

    # -- the upgrade --------------------------------------------------------------------------
    def take(self, flow: http.HTTPFlow, routes: Any) -> None:
        """A WebSocket upgrade on an intercepted Responses path (`routes`: the router's routes).
        When every route passes through to the client's own vendor, the socket goes on untouched,
        as those routes' HTTP requests do; otherwise it is re-targeted here."""
        if all(plugins.passes_through(route.dialect) for route in routes):
            return
        port = self.port
        if port is None:  # not running (yet, or any more): the client falls back to HTTP
            flow.response = error_response(speaks_of(flow.metadata), 503, "websocket_unavailable",
                                           "the gateway's WebSocket endpoint is not running: use the "
                                           "HTTP transport (POST .../responses)")
            return
        upgrade = turns.Upgrade.of(flow)
        owner = upgrade.client or _address(flow)
        self._forget_stale()
        if self._waiting[owner] >= PENDING_PER_CLIENT or len(self._pending) >= PENDING:
            every = self._waiting[owner] < PENDING_PER_CLIENT
            status, whose = (503, "all clients") if every else (429, "this client")
            limit = PENDING if every else PENDING_PER_CLIENT
            flow.response = error_response(speaks_of(flow.metadata), status, "too_many_websocket_upgrades",
                                           f"{limit} WebSocket upgrades of {whose} are waiting to be "
                                           "connected: retry in a second")
            flow.response.headers["retry-after"] = "1"
            return
        token = secrets.token_urlsafe(18)
        self._pending[token] = (upgrade, owner, time.monotonic())
        self._waiting[owner] += 1
        flow.metadata[flowinfo.WEBSOCKET] = flow.request.url
        flow.request.scheme, flow.request.host, flow.request.port = "http", "127.0.0.1", port
        flow.request.path = f"/{token}"

    def _forget(self, token: str) -> turns.Upgrade | None:
        found = self._pending.pop(token, None)
        if found is None:
            return None
        upgrade, owner, _since = found
        self._waiting[owner] -= 1
        if self._waiting[owner] <= 0:
            del self._waiting[owner]
        return upgrade

    def _forget_stale(self) -> None:
        deadline = time.monotonic() - PENDING_SECONDS
        while self._pending:
            token, (_upgrade, _owner, since) = next(iter(self._pending.items()))
            if since > deadline:
                return
            self._forget(token)

    def error(self, flow: http.HTTPFlow) -> None:
        """An upgrade that failed before mitmproxy connected it (its client left) waits no more."""
        if flowinfo.WEBSOCKET in flow.metadata and flow.websocket is None and self.port is not None \
                and flow.request.host == "127.0.0.1" and flow.request.port == self.port:
            self._forget(flow.request.path.lstrip("/"))

    def _admit(self, ws: ServerConnection, request: Request) -> Response | None:
        """Only an upgrade the gateway re-targeted, once: the port is reachable by any local user."""
        upgrade = self._forget(request.path.lstrip("/"))
        if upgrade is None:
            return ws.respond(404, "unknown WebSocket path\n")
        ws.upgrade = upgrade  # type: ignore[attr-defined]
        return None

    async def _serve(self, ws: ServerConnection) -> None:
        connection = Connection(ws, ws.upgrade, self.idle_seconds)  # type: ignore[attr-defined]
        self._connections.add(connection)
        SOCKETS.register(connection.id, connection.upgrade.client, ws.close)  # addon/team/sockets.py
        try:
            await connection.run()
        finally:
            self._connections.discard(connection)
            SOCKETS.unregister(connection.id)


def _address(flow: http.HTTPFlow) -> str:
    peer = flow.client_conn.peername
    return str(peer[0]) if peer else "?"


class Connection:
    """One client socket: its messages in order, one request at a time."""

    def __init__(self, ws: ServerConnection, upgrade: turns.Upgrade, idle_seconds: float) -> None:
        self.ws = ws
        self.upgrade = upgrade
        self.idle_seconds = idle_seconds
        self.id = f"ws_{secrets.token_hex(8)}"
        self.session = Session(max_bytes=int(ctx.options.gateway_max_request_bytes))
        self._out: asyncio.Queue[str | None] = asyncio.Queue()
        self._backlog = 0
        """Characters of the frames queued for the client and not yet written; -1 once closing."""
        self._closing: asyncio.Future[None] | None = None
        self._turn: asyncio.Task[None] | None = None
        self._relay: Relay | None = None
        self._quiet_since = time.monotonic()

    async def run(self) -> None:
        writer = asyncio.create_task(self._write())
        try:
            while (message := await self._next()) is not None:
                await self._handle(message)
        finally:
            if self._turn is not None:
                self._turn.cancel()  # the client left: its upstream call ends too
                with contextlib.suppress(asyncio.CancelledError):
                    await self._turn
            self._out.put_nowait(None)
            await writer

    async def _next(self) -> str | bytes | None:
        """The next client message; None once the client closed, or after `idle_seconds` with
        no request in flight (then this side closes)."""
        while True:
            busy = self._turn is not None and not self._turn.done()
            wait = None if busy else self.idle_seconds - (time.monotonic() - self._quiet_since)
            try:
                if wait is not None and wait <= 0:
                    raise TimeoutError
                return await asyncio.wait_for(self.ws.recv(), timeout=wait if not busy else None)
            except TimeoutError:
                if self._turn is not None and not self._turn.done():
                    continue
                await self.ws.close(1000, "idle")
                return None
            except ConnectionClosed:
                return None

    async def _handle(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            self._refuse(Refused(400, "invalid_request_error", "binary frames are not supported: send "
                                 "JSON text frames"))
            return
        try:
            data = wirejson.loads(message)
        except (ValueError, RecursionError):
            self._refuse(Refused(400, "invalid_json", "the message is not JSON"))
            return
        if isinstance(data, dict) and data.get("type") == "response.interrupt":
            self._interrupt(data.get("response_id"))
            return
        if self._turn is not None:
            await asyncio.wait([self._turn])  # one request at a time, in the order sent
        try:
            plan = self.session.plan(data, int(time.time()))
        except Refused as refused:
            self._refuse(refused)
            return
        if isinstance(plan, Local):
            for event in plan.events:
                self._put(wirejson.dumps(event).decode())
            self._quiet_since = time.monotonic()
            return
        self._turn = asyncio.create_task(self._send(plan))

    async def _send(self, plan: Send) -> None:
        content = wirejson.dumps(plan.body)
        relay = Relay(self._put, int(ctx.options.gateway_max_request_bytes))
        self._relay = relay
        turn = replay_client.Turn(turns.make_flow(self.upgrade, content, self.id), ctx.options, relay)
        try:
            await replay_client.run(turn)
        except asyncio.CancelledError:
            if not relay.interrupted:
                raise  # the client left
        except Exception as exc:  # the socket still gets its terminal event
            log.exception("gateway: WebSocket request failed")
            relay.end(f"{exc!r}"[:300])
        finally:
            relay.end("the request ended without an answer")  # a no-op once the relay ended it
            self._relay = None
            self._quiet_since = time.monotonic()
        self.session.finish(plan, relay.completed, relay.output, len(content) + relay.output_bytes)

    def _interrupt(self, response_id: object) -> None:
        relay, task = self._relay, self._turn
        if relay is None or task is None or task.done():
            return  # nothing in flight: the answer it names is over already
        if isinstance(response_id, str) and relay.response_id not in (None, response_id):
            return  # another answer than the one in flight
        relay.interrupt(int(time.time()))
        task.cancel()  # ends the upstream call (replay_client.run)

    def _refuse(self, refused: Refused) -> None:
        self._put(wirejson.dumps(refused.event()).decode())

    def _put(self, frame: str) -> None:
        """A frame for the client. Past `limits.SOCKET_BACKLOG_BYTES` unread, the client is not
        reading: its upstream call ends and the connection closes (1008), so memory stays bounded."""
        if self._backlog < 0:
            return  # closing already
        self._backlog += len(frame)
        if self._backlog <= limits.SOCKET_BACKLOG_BYTES:
            self._out.put_nowait(frame)
            return
        self._backlog = -1
        log.warning("gateway: a WebSocket client left %d bytes of answers unread; its connection "
                    "is closed", limits.SOCKET_BACKLOG_BYTES)
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
        self._closing = asyncio.ensure_future(self.ws.close(1008, "the client does not read its answers"))

    async def _write(self) -> None:
        while (frame := await self._out.get()) is not None:
            try:
                await self.ws.send(frame)
            except ConnectionClosed:
                return
            if self._backlog >= 0:
                self._backlog -= len(frame)

