"""The loopback server mitmproxy sends a gateway flow to (docs/pools.md "The loopback server").

mitmproxy can neither retry a request nor stream a body an addon writes, so a flow the gateway
sends upstream is re-targeted to this HTTP/1.1 server on 127.0.0.1 (an ephemeral port), at
`/<ticket>`: a one-shot, unguessable token that names what answers it in an in-process table
(`Tickets`). The answer (runner.py `Runner.answer` of the flow's leg) comes back as a `Reply`:
its head once decided, then its body, whole or chunk by chunk as it is made. Any local user can
reach the port; without a ticket it answers 404.

h11 speaks the protocol; the connection is kept alive for mitmproxy's next flow. Nothing here
blocks the event loop: each connection is a task, each write waits for the socket to drain.
When mitmproxy closes the connection (its client left), the answer in progress is cancelled,
which closes the upstream's connection too.
"""

from __future__ import annotations

import asyncio
import collections
import http
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import h11

from addon.upstream.chunked import frame
from addon.upstream.runner import Reply, reap

if TYPE_CHECKING:
    from addon.patches.body_relay import BodyRelay

Answer = Callable[[], Awaitable[Reply]]

TICKETS = 4096
"""Tickets not yet used that are remembered; the oldest is forgotten first (its flow gets 404)."""
TICKET_SECONDS = 120.0
"""A ticket not used within this long is forgotten: mitmproxy connects at once after the request
hook (`connection_strategy=lazy`)."""
HEAD_SECONDS = 60.0
"""A connection that sends no request head within this long (its first, or the next on a kept
connection) is closed."""
MAX_HEAD = 64 * 1024
READ_SIZE = 64 * 1024


class Tickets:
    """One-shot tokens -> what answers them; bounded and expiring, clock injected."""

    def __init__(self, size: int = TICKETS, ttl: float = TICKET_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.ttl = ttl
        self._clock = clock
        self._table: collections.OrderedDict[str, tuple[float, Answer]] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._table)

    def issue(self, answer: Answer) -> str:
        self._expire()
        token = secrets.token_urlsafe(24)
        self._table[token] = (self._clock() + self.ttl, answer)
        while len(self._table) > self.size:
            self._table.popitem(last=False)
        return token

    def take(self, token: str) -> Answer | None:
        """The answer of `token`, once; None when unknown, used or expired."""
        self._expire()
        found = self._table.pop(token, None)
        return found[1] if found is not None else None

    def discard(self, token: str) -> None:
        """The flow will not come (it failed, or was answered otherwise)."""
        self._table.pop(token, None)

    def _expire(self) -> None:
        now = self._clock()
        while self._table:
            token, (until, _) = next(iter(self._table.items()))
            if until > now:
                return
            del self._table[token]


class LoopbackServer:
    def __init__(self, tickets: Tickets | None = None, *, head_seconds: float = HEAD_SECONDS,
                 max_head: int = MAX_HEAD) -> None:
        self.tickets = tickets or Tickets()
        self.head_seconds = head_seconds
        self.max_head = max_head
        self._server: asyncio.Server | None = None
        self._port = 0
        """Where `_server` listens, read once: every turn asks (`base_url`, `accepting`)."""
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0, limit=READ_SIZE)
            self._port = int(self._server.sockets[0].getsockname()[1])

    @property
    def started(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        assert self._server is not None, "the loopback server is not started"
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def accepting(self, address: object) -> Callable[[Any, Any], None] | None:
        """How a connection to `address` is taken in the process (addon/patches/loopback_pipe.py):
        `accept`, when `address` is where this server listens."""
        if self._server is None or not isinstance(address, tuple) or len(address) != 2:
            return None
        return self.accept if address[1] == self._port and address[0] == "127.0.0.1" else None

    def accept(self, reader: Any, writer: Any) -> None:
        """A connection made in the process (a pipe's server end: the slice of asyncio's stream
        reader, writer and transport this server uses), served as a socket's is."""
        asyncio.get_running_loop().create_task(self._connection(reader, writer))

    def issue(self, answer: Answer) -> str:
        """The path mitmproxy asks for this answer: `/<ticket>`."""
        return "/" + self.tickets.issue(answer)

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for task in list(self._connections):
            await reap(task)
        await server.wait_closed()

    # -- one connection --------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.max_head)
        try:
            while await self._exchange(conn, reader, writer):
                conn.start_next_cycle()
        except (OSError, h11.ProtocolError, TimeoutError):
            pass  # a client that broke the protocol, left, or said nothing: the connection ends
        finally:
            self._connections.discard(task)
            writer.transport.abort()

    async def _exchange(self, conn: h11.Connection, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> bool:
        """One request and its answer; False when the connection is over."""
        async with asyncio.timeout(self.head_seconds):
            request = await self._request(conn, reader)
        if request is None:
            return False
        async with asyncio.timeout(self.head_seconds):
            await self._discard_body(conn, reader)  # the leg holds what goes upstream
        token = _path(request.target.decode("latin-1")).lstrip("/").split("?", 1)[0]
        answer = self.tickets.take(token)
        if answer is None:
            unknown = Reply(404, [("content-type", "text/plain")], b"unknown ticket\n", "refusal")
            await self._send(writer, conn, unknown)
        elif not await self._answer(conn, reader, writer, answer):
            return False
        return conn.our_state is h11.DONE and conn.their_state is h11.DONE

    async def _request(self, conn: h11.Connection, reader: asyncio.StreamReader) -> h11.Request | None:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(READ_SIZE))
            elif isinstance(event, h11.Request):
                return event
            elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                return None
            else:
                raise h11.RemoteProtocolError(f"unexpected {type(event).__name__}")

    async def _discard_body(self, conn: h11.Connection, reader: asyncio.StreamReader) -> None:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(READ_SIZE))
            elif isinstance(event, h11.EndOfMessage):
                return
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionResetError("the client left mid-request")

    async def _answer(self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      answer: Answer) -> bool:
        """The answer, while watching the client: a close from its side cancels it (the leg's
        attempt in flight with it). False when the connection is over."""

        async def respond() -> None:
            await self._send(writer, conn, await answer())

        work = asyncio.create_task(respond())
        watch = asyncio.create_task(reader.read(READ_SIZE))
        try:
            await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
            if watch.done() and not work.done():
                if not watch.result():  # the client closed its side
                    await reap(work)
                    return False
                conn.receive_data(watch.result())  # a next request already (kept for its turn)
                await work
            else:
                await work
                if watch.done():
                    data = watch.result()
                    if not data:
                        return False
                    conn.receive_data(data)
            return True
        finally:
            for task in (work, watch):
                if not task.done():
                    await reap(task)

    async def _send(self, writer: asyncio.StreamWriter, conn: h11.Connection, reply: Reply) -> None:
        """The head, then the body: whole with its length, or chunked as it comes. The reply is
        closed however this ends (its attempt abandoned if the body was not read to its end). The
        pipe's body relay (addon/patches/body_relay.py) lets go of each answer at its end: the next
        starts afresh, and a kept connection holds nothing of the flow it served."""
        relay: BodyRelay | None = getattr(writer.transport, "relay", None)
        try:
            body = reply.body
            headers = reply.headers
            if isinstance(body, bytes) and not any(name.lower() == "content-length" for name, _ in headers):
                headers = [*headers, ("content-length", str(len(body)))]
            head = conn.send(h11.Response(status_code=reply.status, headers=headers,
                                          reason=_reason(reply.status))) or b""
            writer.write(head)
            if not isinstance(body, bytes):
                await writer.drain()  # the head goes now: the body comes as it is made
            if isinstance(body, bytes):
                if body:
                    writer.write(conn.send(h11.Data(data=body)) or b"")
            else:
                if reply.attach is not None:
                    reply.attach(_sink(writer, conn, CHUNKED in head.lower(), relay))
                await self._stream(writer, conn, body, relay)
            writer.write(conn.send(h11.EndOfMessage()) or b"")
            await writer.drain()
        finally:
            if relay is not None:
                relay.reset()
            await reply.aclose()

    async def _stream(self, writer: asyncio.StreamWriter, conn: h11.Connection,
                      body: AsyncIterator[bytes], relay: BodyRelay | None) -> None:
        async for chunk in body:
            if chunk:
                if relay is not None:
                    relay.passed += len(chunk)
                writer.write(conn.send(h11.Data(data=chunk)) or b"")
                await writer.drain()


def _path(target: str) -> str:
    """The request target's path: mitmproxy in `upstream:` mode writes the absolute form
    (`http://127.0.0.1:<port>/<ticket>`)."""
    if target.startswith(("http://", "https://")):
        return "/" + target.split("://", 1)[1].partition("/")[2]
    return target


def _reason(status: int) -> bytes:
    """The status line's reason phrase (what mitmproxy's console and views show): the upstream's
    own words are not kept, the standard phrase is written (529 has none)."""
    try:
        return http.HTTPStatus(status).phrase.encode()
    except ValueError:
        return b""


CHUNKED = b"\r\ntransfer-encoding: chunked\r\n"
"""In the head h11 wrote: it frames the body in chunks (mitmproxy speaks HTTP/1.1 and a streamed
reply has no length)."""


def _sink(writer: asyncio.StreamWriter, conn: h11.Connection, chunked: bool,
          relay: BodyRelay | None) -> Callable[[bytes], Awaitable[None]]:
    """How the attempts write a piece of a streamed body themselves (`Reply.attach`): at once,
    waiting for the socket only once its buffer is past asyncio's high-water mark (what `drain`
    waits for anyway). A chunked body's frames are written here, not through h11 (its state
    does not count body bytes; its `EndOfMessage` still ends the body). Once mitmproxy streams the
    answer to a client the pipe's relay reaches, a piece goes there past mitmproxy's layers
    (addon/patches/body_relay.py); until then the relay counts what mitmproxy was handed. Nothing
    is written once the connection is closing (mitmproxy left: the answer is being cancelled)."""
    transport = writer.transport
    high = transport.get_write_buffer_limits()[1]

    async def write(data: bytes) -> None:
        if transport.is_closing() or not data:
            return
        if relay is not None:
            if relay.ready():
                await relay.send(data)
                return
            relay.passed += len(data)
        writer.write(frame(data) if chunked else conn.send(h11.Data(data=data)) or b"")
        if transport.get_write_buffer_size() > high:
            await writer.drain()

    return write
