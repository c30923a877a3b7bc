"""The gateway's own HTTP/1.1 client for the upstream leg (docs/pools.md "The client").

h11 speaks the protocol (sans-I/O: bytes in, events out), asyncio's streams carry the bytes. What
it keeps to:

- TLS against certifi's roots (plus an operator's own CA file), or no verification at all when
  mitmproxy's `ssl_insecure` says so; ALPN offers `http/1.1` only.
- One pool of idle keep-alive connections per origin, bounded (`per_origin`, `origins`), each
  kept at most `keep_idle` seconds; a connection is reused only once its answer was read to its
  end. A reused connection that the server had closed meanwhile fails before any byte of an
  answer: the request is sent once more on a new connection (never after an answer began).
- Bounds: the connect (TCP and TLS) within `connect_timeout`; the answer's head within
  `max_head` bytes; a whole body within what the caller passes to `Response.read`. How long to
  wait for the head or the next chunk is the caller's (`asyncio.timeout` around the await).
- Cancellation anywhere closes the connection: a half-read answer is never pooled.
- `accept-encoding: identity`, always: the stream translators read raw bytes.
- Through an HTTP proxy when the flow's mitmproxy mode has one (`upstream:`, docs/pools.md "Through
  an upstream proxy"): an https origin through a `CONNECT` tunnel, TLS to the origin inside it; an
  http origin in absolute form to the proxy, as mitmproxy itself does. A connection kept idle is
  reused only for the same proxy.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping

import h11

from addon.upstream.chunked import Chunked, ChunkedError, is_chunked, keeps_alive
from addon.upstream.connect import (
    READ_SIZE,
    BodyTooLarge,
    Broken,
    ConnectFailed,
    HeadTooLarge,
    Origin,
    Proxy,
    TunnelRefused,
    tls_context,
    tunnel,
)

CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection, TLS handshake included."""
MAX_HEAD = 128 * 1024
"""Bytes of an answer's head (status line and headers). Twice the screen's bound
(`translators/wire/response_headers.py` `MAX_BYTES`), so a head the screen refuses with its own
502 still reaches it; past this the upstream is not answering HTTP the gateway reads."""
KEEP_IDLE = 30.0
"""Seconds an idle connection is kept for the next request to the same origin."""
PER_ORIGIN = 16
"""Idle connections kept per origin; more are closed as they are released."""
ORIGINS = 64
"""Origins whose idle connections are kept; the one used longest ago is let go first."""
class _Connection:
    __slots__ = ("h11", "idle_since", "max_head", "origin", "reader", "received", "uses", "writer")

    def __init__(self, origin: _Key, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 max_head: int) -> None:
        self.origin = origin
        self.reader = reader
        self.writer = writer
        self.max_head = max_head
        self.h11 = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=max_head)
        self.idle_since = 0.0
        self.uses = 0
        self.received = 0
        """Bytes read in the current exchange."""

    def usable(self, now: float, keep_idle: float) -> bool:
        return (not self.writer.is_closing() and not self.reader.at_eof()
                and now - self.idle_since < keep_idle and self.h11.our_state is h11.IDLE)

    def abort(self) -> None:
        """Closed at once, unread bytes dropped (no TLS close_notify wait)."""
        self.writer.transport.abort()

    def renew(self) -> bool:
        """A fresh h11 state for the next exchange, once an answer whose body was read without h11
        (`Response`, a chunked body) ended with the request sent whole; False otherwise."""
        if self.h11.our_state is not h11.DONE:
            return False
        self.h11 = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=self.max_head)
        return True

    async def receive(self) -> None:
        data = await self.reader.read(READ_SIZE)
        self.received += len(data)
        self.h11.receive_data(data)


class Client:
    """`await client.send(method, url, headers, body)` -> `Response`; `await client.close()`."""

    def __init__(self, *, insecure: bool = False, cafile: str | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT, max_head: int = MAX_HEAD,
                 keep_idle: float = KEEP_IDLE, per_origin: int = PER_ORIGIN, origins: int = ORIGINS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.connect_timeout = connect_timeout
        self.max_head = max_head
        self.keep_idle = keep_idle
        self.per_origin = per_origin
        self.origins = origins
        self._clock = clock
        self._tls = tls_context(insecure=insecure, cafile=cafile)
        self._idle: collections.OrderedDict[_Key, collections.deque[_Connection]]
        self._idle = collections.OrderedDict()
        self.opened = 0
        """Connections opened so far (what a test counts)."""

    def configure(self, *, insecure: bool = False, cafile: str | None = None) -> None:
        """New TLS settings (mitmproxy's options changed): idle connections made under the old
        ones are closed."""
        self._tls = tls_context(insecure=insecure, cafile=cafile)
        self._drop_idle()

    async def close(self) -> None:
        self._drop_idle()

    def close_now(self) -> None:
        """`close` from synchronous code (mitmproxy's `done`)."""
        self._drop_idle()

    def _drop_idle(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.abort()
        self._idle.clear()

    async def send(self, method: str, url: str, headers: Mapping[str, str] | Iterable[tuple[str, str]],
                   body: bytes = b"", via: Proxy | None = None) -> Response:
        """The request, and the answer's head once it arrives (its body is the `Response`'s to
        read), through `via` when given. Raises `ConnectFailed`, `HeadTooLarge` or `Broken`."""
        origin, target = Origin.of(url)
        request = _request(method, target, origin, headers, body, via)
        key = (origin, via)
        while True:
            connection = self._take(key)
            reused = connection is not None
            if connection is None:
                connection = await self._open(origin, via)
            try:
                head = await self._exchange(connection, request, body)
            except Broken:
                connection.abort()
                if reused and not connection.received:
                    continue  # a kept connection the server had closed: nothing of an answer came
                raise
            except BaseException:
                connection.abort()
                raise
            response = Response(self, connection, head, method)
            connection.uses += 1
            return response

    async def _exchange(self, connection: _Connection, request: h11.Request, body: bytes) -> h11.Response:
        connection.received = 0
        try:
            connection.writer.write(connection.h11.send(request) or b"")
            if body:
                connection.writer.write(connection.h11.send(h11.Data(data=body)) or b"")
            connection.writer.write(connection.h11.send(h11.EndOfMessage()) or b"")
            await connection.writer.drain()
            while True:
                event = connection.h11.next_event()
                if event is h11.NEED_DATA:
                    await connection.receive()
                elif isinstance(event, h11.Response):
                    return event
                elif isinstance(event, h11.InformationalResponse):
                    continue  # 100 Continue and friends: the real head follows
                else:
                    raise Broken("the upstream closed the connection before its answer "
                                 f"({type(event).__name__})")
        except h11.RemoteProtocolError as exc:
            if exc.error_status_hint == 431:
                raise HeadTooLarge(f"the upstream's answer head passed {self.max_head} bytes") from None
            if connection.reader.at_eof():
                raise Broken("the upstream closed the connection before its answer") from None
            raise Broken(f"the upstream's answer is not HTTP/1.1 the gateway reads: {exc}") from None
        except (OSError, ssl.SSLError) as exc:
            raise Broken(f"the connection to the upstream failed: {_said(exc)}") from None

    async def _open(self, origin: Origin, via: Proxy | None = None) -> _Connection:
        secure = origin.scheme == "https"
        where = origin.host_header if via is None else f"{origin.host_header} through the proxy {via.name}"
        hop: Origin | Proxy = origin if via is None else via  # the first connection: the origin or its proxy
        tls = hop.scheme == "https"
        writer: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(self.connect_timeout):
                reader, writer = await asyncio.open_connection(
                    hop.host, hop.port, ssl=self._tls if tls else None,
                    server_hostname=hop.host if tls else None, limit=READ_SIZE)
                if via is not None and secure:  # a tunnel to the origin, TLS inside it
                    await tunnel(reader, writer, origin, via, self.max_head)
                    await writer.start_tls(self._tls, server_hostname=origin.host)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TunnelRefused) as exc:
            _abort(writer)
            raise ConnectFailed(f"cannot reach {where}: {self._why(exc)}") from None
        self.opened += 1
        return _Connection((origin, via), reader, writer, self.max_head)

    def _why(self, exc: BaseException) -> str:
        """Why a connect failed, in the words the records and the client's error carry."""
        if isinstance(exc, TimeoutError):  # before OSError, whose subclass it is
            return f"no connection within {self.connect_timeout:g} s"
        if isinstance(exc, ssl.SSLError):
            return f"TLS handshake failed: {_said(exc)}"
        return str(exc) if isinstance(exc, TunnelRefused) else _said(exc)

    def _take(self, origin: _Key) -> _Connection | None:
        idle = self._idle.get(origin)
        now = self._clock()
        while idle:
            connection = idle.pop()
            if connection.usable(now, self.keep_idle):
                return connection
            connection.abort()
        return None

    def _release(self, connection: _Connection) -> None:
        """Back to the pool once both sides finished the exchange and may go on (h11's states
        DONE, or IDLE once `renew`ed)."""
        states = (connection.h11.our_state, connection.h11.their_state)
        if states == (h11.DONE, h11.DONE):
            try:
                connection.h11.start_next_cycle()
            except h11.LocalProtocolError:
                connection.abort()
                return
        elif states != (h11.IDLE, h11.IDLE):
            connection.abort()
            return
        connection.idle_since = self._clock()
        idle = self._idle.setdefault(connection.origin, collections.deque())
        self._idle.move_to_end(connection.origin)
        idle.append(connection)
        while len(idle) > self.per_origin:
            idle.popleft().abort()
        while len(self._idle) > self.origins:
            _, dropped = self._idle.popitem(last=False)
            for old in dropped:
                old.abort()


class Response:
    """An answer's head (`status`, `reason`, `headers` as lower-case names) and its body, read by
    `next_chunk` / `async for` / `read`. `aclose()` gives a connection read to its end back to
    the pool and closes any other."""

    def __init__(self, client: Client, connection: _Connection, head: h11.Response,
                 method: str = "GET") -> None:
        self._client = client
        self._connection: _Connection | None = connection
        self.status = head.status_code
        self.reason = head.reason.decode("latin-1")
        self.headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in head.headers]
        self.complete = False
        """The body was read to its end."""
        self.reused = connection.uses > 0
        """The exchange ran on a kept connection."""
        self._ended = False
        """The body's end was read with its last piece (returned first)."""
        self._chunked: Chunked | None = None
        """A chunked body, read without h11 (addon/upstream/chunked.py), from the bytes h11 had
        received past the head on."""
        self._early = b""
        self._keep_alive = keeps_alive(head)
        if is_chunked(head, method):
            self._chunked = Chunked(connection.max_head)
            self._early = connection.h11.trailing_data[0]

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((value for key, value in self.headers if key == name), None)

    async def next_chunk(self) -> bytes | None:
        """The body's next bytes: all that one read brought (every HTTP chunk in it, joined: one
        call of the stream hook and one write to the client per read, not per chunk); None at its
        end. Raises `Broken`; a cancellation closes the connection."""
        connection = self._connection
        if connection is None:
            return None
        if self._ended:
            self._end(connection)
            return None
        try:
            if self._chunked is not None:
                return await self._next_chunked(connection, self._chunked)
            return await self._next_h11(connection)
        except (h11.RemoteProtocolError, ChunkedError) as exc:
            self._abort()
            raise Broken(f"the upstream broke off its answer: {exc}") from None
        except (OSError, ssl.SSLError) as exc:
            self._abort()
            raise Broken(f"the connection to the upstream failed mid-answer: {_said(exc)}") from None
        except BaseException:
            self._abort()
            raise

    async def _next_h11(self, connection: _Connection) -> bytes | None:
        """`next_chunk` of a body h11 reads (a length, or up to the connection's end)."""
        parts: list[bytes | bytearray] = []
        while True:
            event = connection.h11.next_event()
            if event is h11.NEED_DATA:
                if parts:
                    return bytes(parts[0]) if len(parts) == 1 else b"".join(parts)
                await connection.receive()
            elif isinstance(event, h11.Data):
                if event.data:
                    parts.append(event.data)
            elif isinstance(event, h11.EndOfMessage):
                if parts:
                    self._ended = True
                    return bytes(parts[0]) if len(parts) == 1 else b"".join(parts)
                self._end(connection)
                return None
            else:
                raise Broken(f"the upstream's answer ended early ({type(event).__name__})")

    async def _next_chunked(self, connection: _Connection, body: Chunked) -> bytes | None:
        """`next_chunk` of a chunked body: all the data one read brought, decoded at once."""
        while True:
            if self._early:
                data, self._early = self._early, b""
            else:
                data = await connection.reader.read(READ_SIZE)
                connection.received += len(data)
                if not data:
                    raise ChunkedError("peer closed connection without sending complete message body "
                                       "(incomplete chunked read)")
            out = body.feed(data)
            if body.done:
                if out:
                    self._ended = True
                    return out
                self._end(connection)
                return None
            if out:
                return out

    def _end(self, connection: _Connection) -> None:
        self.complete = True
        self._connection = None
        if self._chunked is not None and (self._chunked.rest or not self._keep_alive
                                          or not connection.renew()):
            connection.abort()  # bytes past the body, or a server that closes: never pooled
            return
        self._client._release(connection)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        while (chunk := await self.next_chunk()) is not None:
            yield chunk

    async def read(self, limit: int) -> bytes:
        """The whole body, at most `limit` bytes (else `BodyTooLarge`, the connection closed)."""
        parts: list[bytes] = []
        size = 0
        while (chunk := await self.next_chunk()) is not None:
            size += len(chunk)
            if size > limit:
                self._abort()
                raise BodyTooLarge(f"the upstream's answer passed {limit} bytes")
            parts.append(chunk)
        return b"".join(parts)

    async def aclose(self) -> None:
        self._abort()

    def _abort(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.abort()

    async def __aenter__(self) -> Response:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


_Key = tuple[Origin, Proxy | None]
"""What an idle connection is kept for: its origin, through which proxy."""
OWN = frozenset({"content-length", "transfer-encoding", "accept-encoding", "connection", "keep-alive", "te",
                 "proxy-authorization", "proxy-connection"})
"""Headers the client writes itself (framing, encoding, the proxy's), never the caller's."""


def _request(method: str, target: str, origin: Origin,
             headers: Mapping[str, str] | Iterable[tuple[str, str]], body: bytes,
             via: Proxy | None = None) -> h11.Request:
    """The head sent: the caller's headers but framing and encoding, which are the client's own.
    To an http origin through a proxy: the absolute form, with the proxy's credentials (the
    proxy reads that head; an https origin's goes inside the tunnel, without them)."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out = [(name, value) for name, value in pairs if name.lower() not in OWN]
    if not any(name.lower() == "host" for name, _ in out):
        out.insert(0, ("host", origin.host_header))
    out += [("content-length", str(len(body))), ("accept-encoding", "identity")]
    if via is not None and origin.scheme == "http":
        target = f"http://{origin.host_header}{target}"
        if via.authorization:
            out.append(("proxy-authorization", via.authorization))
    return h11.Request(method=method, target=target, headers=out)


def _abort(writer: asyncio.StreamWriter | None) -> None:
    if writer is not None:
        writer.transport.abort()


def _said(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
