"""The Responses WebSocket transport, served (docs/websocket.md).

An addon. The gateway's `requestheaders` hands it a matched upgrade (`take`): it is answered `101`
right there, and mitmproxy hands the socket to the gateway's own layer on the client's connection
(addon/patches/websocket_served.py) instead of relaying it: no server connection, no hook per
message. Each `Connection` then turns each `response.create` into an ordinary POST through the
gateway's own HTTP path (addon/serve/websocket/turn.py, run by addon/patches/replay_client.py), its
answer's SSE events into text frames (addon/serve/websocket/relay.py), with the history rules of
addon/serve/websocket/session.py.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
import time
import weakref
from typing import Any, Protocol

from mitmproxy import ctx, http
from mitmproxy.websocket import WebSocketMessage
from wsproto.frame_protocol import Opcode
from wsproto.utilities import generate_accept_token

from addon.observe import flowinfo
from addon.patches import replay_client, websocket_served
from addon.patches.websocket_served import Gone, Handover
from addon.routes import plugins
from addon.serve.answers import error_response
from addon.serve.flow import speaks_of
from addon.serve.websocket import frames
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
WAITING_MESSAGES = 16
"""Client messages read and not yet taken up (one request runs at a time): past this many, or past
`gateway_max_request_bytes` of them, the client is not waiting for its answers and the socket is
closed (1008) (docs/websocket.md "Limits"). Codex and the Agents SDK send one request and wait."""


class Socket(Protocol):
    """Where a connection's frames go (addon/patches/websocket_served.py `Handover`)."""

    async def send(self, data: bytes, close: bool = False) -> None: ...


class Endpoint:
    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self.running_now = False
        self._answered: weakref.WeakSet[http.HTTPFlow] = weakref.WeakSet()
        """The upgrades answered 101 here: their sockets are served by this endpoint."""
        self._connections: dict[Connection, asyncio.Task[None]] = {}

    def load(self, _loader: Any) -> None:
        websocket_served.served = self._answered.__contains__
        websocket_served.opened = self.open

    def running(self) -> None:
        self.running_now = True

    async def done(self) -> None:
        self.running_now = False
        for connection, task in list(self._connections.items()):
            connection.close(1001, "going away")  # the proxy stops: its turns are cancelled
            task.cancel()
        if self._connections:
            await asyncio.wait(list(self._connections.values()), timeout=5)

    # -- the upgrade --------------------------------------------------------------------------
    def take(self, flow: http.HTTPFlow, routes: Any) -> None:
        """A WebSocket upgrade on an intercepted Responses path (`routes`: the router's routes).
        When every route passes through to the client's own vendor, the socket goes on untouched,
        as those routes' HTTP requests do; otherwise it is answered `101` here and served."""
        if all(plugins.passes_through(route.dialect) for route in routes):
            return
        speaks = speaks_of(flow.metadata)
        if not self.running_now or not ctx.options.websocket:
            # not running (yet, or any more), or mitmproxy's WebSocket support is off: the client
            # falls back to HTTP
            flow.response = error_response(speaks, 503, "websocket_unavailable",
                                           "the gateway's WebSocket endpoint is not running: use the "
                                           "HTTP transport (POST .../responses)")
            return
        key = flow.request.headers.get("sec-websocket-key", "")
        if flow.request.headers.get("sec-websocket-version", "") != "13" or not key:
            # RFC 6455 4.4: a version the server does not speak is answered 426 with the one it does
            flow.response = error_response(speaks, 426, "unsupported_websocket_version",
                                           "send a WebSocket upgrade with Sec-WebSocket-Version: 13 "
                                           "and a Sec-WebSocket-Key")
            flow.response.headers["sec-websocket-version"] = "13"
            return
        flow.metadata[flowinfo.WEBSOCKET] = flow.request.url
        flow.response = http.Response.make(101, b"", {
            "upgrade": "websocket", "connection": "Upgrade",
            "sec-websocket-accept": generate_accept_token(key.encode()).decode()})
        self._answered.add(flow)

    def open(self, flow: http.HTTPFlow, socket: Handover) -> Connection:
        """The socket of an upgrade answered here is open (addon/patches/websocket_served.py)."""
        self._answered.discard(flow)
        connection = Connection(socket, turns.Upgrade.of(flow), self.idle_seconds, flow)
        SOCKETS.register(connection.id, connection.upgrade.client, connection.close)  # addon/team/sockets.py
        task = asyncio.ensure_future(connection.run())
        self._connections[connection] = task
        task.add_done_callback(lambda _t: self._gone(connection))
        return connection

    def _gone(self, connection: Connection) -> None:
        self._connections.pop(connection, None)
        SOCKETS.unregister(connection.id)


def keep(flow: http.HTTPFlow, content: bytes) -> None:
    """A client message on a served socket's flow, which keeps at most `gateway_max_kept_bytes` of
    them, the latest: one Codex connection carries every request of a session, and each request's
    events are in its own flow (docs/websocket.md "Limits")."""
    if flow.websocket is None:
        return
    messages = flow.websocket.messages
    messages.append(WebSocketMessage(Opcode.TEXT, True, content))
    kept = flow.metadata.get(flowinfo.WEBSOCKET_KEPT, 0) + len(content)
    limit = int(ctx.options.gateway_max_kept_bytes)
    if kept > limit:
        drop = 0
        while kept > limit and drop < len(messages) - 1:
            kept -= len(messages[drop].content)
            drop += 1
        del messages[:drop]
        flow.metadata[flowinfo.WEBSOCKET_DROPPED] = flow.metadata.get(flowinfo.WEBSOCKET_DROPPED, 0) + drop
    flow.metadata[flowinfo.WEBSOCKET_KEPT] = kept


class Connection:
    """One client socket: its messages in order, one request at a time. Its frames go out through
    `socket` in batches (all those queued when the writer wakes up), each batch written once the
    previous one was taken by the client's connection."""

    def __init__(self, socket: Socket, upgrade: turns.Upgrade, idle_seconds: float,
                 flow: http.HTTPFlow | None = None) -> None:
        self.socket = socket
        self.upgrade = upgrade
        self.idle_seconds = idle_seconds
        self.flow = flow
        """The upgrade's flow: it keeps the client's messages (`keep`)."""
        self.id = f"ws_{secrets.token_hex(8)}"
        self.session = Session(max_bytes=int(ctx.options.gateway_max_request_bytes))
        self._in: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._waiting = 0
        """Bytes of the client messages in `_in`."""
        self._out: collections.deque[bytes] = collections.deque()
        self._wake = asyncio.Event()
        self._backlog = 0
        """Bytes of the frames queued for the client and not yet taken; -1 once closing."""
        self._ending: bytes | None = None
        """Set once the connection ends: the close frame to write last (b"": the client left)."""
        self._closing: asyncio.Future[None] | None = None
        self._sending = False
        """The writer waits for the client's connection to take a batch."""
        self._turn: asyncio.Task[None] | None = None
        self._relay: Relay | None = None
        self._quiet_since = time.monotonic()
        self._ponged = time.monotonic()

    # -- what the client's end hands over (addon/patches/websocket_served.py `Peer`) ---------
    def message(self, data: str | bytes) -> None:
        if self._ending is not None:
            return
        if self.flow is not None:
            keep(self.flow, data.encode() if isinstance(data, str) else data)
        self._waiting += len(data)
        if self._in.qsize() >= WAITING_MESSAGES or self._waiting > self.session.max_bytes:
            log.warning("gateway: a WebSocket client sent %d messages without waiting for their "
                        "answers; its connection is closed", self._in.qsize() + 1)
            if self._turn is not None and not self._turn.done():
                self._turn.cancel()
            self.close(1008, "one request at a time: wait for each answer")
            return
        self._in.put_nowait(data)

    def pong(self) -> None:
        self._ponged = time.monotonic()

    def gone(self) -> None:
        self._in.put_nowait(None)
        if self._ending is None:
            self._ending = b""
            self._wake.set()

    def close(self, code: int, reason: str) -> None:
        """Close the socket: what is queued is written, then the close frame; while a write waits
        for a client that does not read, the close frame goes at once and the queue is dropped."""
        if self._ending is None:
            frame = frames.close(code, reason)
            if self._sending:
                self._ending = b""
                self._closing = asyncio.ensure_future(self._close_now(frame))
            else:
                self._ending = frame
            self._wake.set()
        self._in.put_nowait(None)

    async def _close_now(self, frame: bytes) -> None:
        with contextlib.suppress(Gone):
            await self.socket.send(frame, close=True)

    # -- the connection's life ---------------------------------------------------------------
    async def run(self) -> None:
        writer = asyncio.create_task(self._write())
        pinger = asyncio.create_task(self._ping())
        try:
            while (message := await self._next()) is not None:
                await self._handle(message)
        finally:
            pinger.cancel()
            if self._turn is not None:
                self._turn.cancel()  # the client left: its upstream call ends too
                with contextlib.suppress(asyncio.CancelledError):
                    await self._turn
            if self._ending is None:
                self._ending = frames.close(1000, "")
            self._wake.set()
            await writer

    async def _next(self) -> str | bytes | None:
        """The next client message; None once the client closed, or after `idle_seconds` with
        no request in flight (then this side closes)."""
        while True:
            if self._ending is not None:
                return None  # closing: what the client sent meanwhile is not served
            busy = self._turn is not None and not self._turn.done()
            wait = None if busy else self.idle_seconds - (time.monotonic() - self._quiet_since)
            try:
                if wait is not None and wait <= 0:
                    raise TimeoutError
                message = await asyncio.wait_for(self._in.get(), timeout=wait)
                if message is not None:
                    self._waiting -= len(message)
                return message
            except TimeoutError:
                if self._turn is not None and not self._turn.done():
                    continue
                self.close(1000, "idle")
                return None

    async def _ping(self) -> None:
        """A ping every `PING_SECONDS`; a peer that answered none of the last one is gone."""
        while True:
            sent = time.monotonic()
            self._send_frame(frames.PING)
            await asyncio.sleep(PING_SECONDS)
            if self._ponged < sent:
                self.close(1011, "keepalive ping timeout")
                return

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
                self._put(wirejson.dumps(event))
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
        self._put(wirejson.dumps(refused.event()))

    def _put(self, payload: bytes) -> None:
        """A text frame for the client. Past `limits.SOCKET_BACKLOG_BYTES` not yet taken, the client
        is not reading: its upstream call ends and the connection closes (1008), so memory stays
        bounded."""
        if self._backlog < 0 or self._ending is not None:
            return  # closing already
        frame = frames.text(payload)
        self._backlog += len(frame)
        if self._backlog <= limits.SOCKET_BACKLOG_BYTES:
            self._out.append(frame)
            self._wake.set()
            return
        self._backlog = -1
        log.warning("gateway: a WebSocket client left %d bytes of answers unread; its connection "
                    "is closed", limits.SOCKET_BACKLOG_BYTES)
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
        self.close(1008, "the client does not read its answers")

    def _send_frame(self, frame: bytes) -> None:
        """A control frame: written with the next batch, outside the backlog's count."""
        if self._ending is None:
            self._out.append(frame)
            self._wake.set()

    async def _write(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch = b"".join(self._out) if len(self._out) > 1 else (self._out[0] if self._out else b"")
            self._out.clear()
            ending = self._ending
            try:
                if ending is not None:
                    if ending:  # this side closes: what was queued, then the close frame
                        await self.socket.send(batch + ending, close=True)
                    return
                if batch:
                    self._sending = True
                    await self.socket.send(batch)
            except Gone:
                self.gone()
                return
            finally:
                self._sending = False
            if self._backlog >= 0:
                self._backlog = max(0, self._backlog - len(batch))
