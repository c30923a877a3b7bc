"""mitmproxy reaches the gateway's loopback server through a pipe in the process, not a socket
(docs/pools.md "The loopback server", docs/benchmarks.md "The pipe").

A flow the gateway sends upstream is re-targeted to the loopback server (addon/upstream/server.py).
Over TCP, every event of a streamed answer was written to a socket by the leg, woke mitmproxy's
reader task for that connection, was read back and only then parsed: about 70 µs per event, most of
a paced turn's cost over plain mitmdump. Here `ConnectionHandler.open_connection` is wrapped: a
connection to the address the server listens on (`listening`) is a `Pipe` instead of a socket. The
bytes mitmproxy writes reach the server's reader; the bytes the server writes are handed to
mitmproxy's layers when the server drains them, in the server's own task, as the connection's
reader task would (`server_event(DataReceived)`, then `drain_writers`, which waits for the client
to take them). mitmproxy's HTTP/1 client still parses them: the flow, its hooks, its streaming and
its keep-alive are those of any server connection. What the socket gave for free is kept: a close
from either side reaches the other (mitmproxy cancels an answer by closing; the server ends one by
aborting), the hooks of a server connection run (`server_connect` can still kill it), and its
`server connect` / `server disconnect` lines are logged.

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from mitmproxy import connection as mitm_connection
from mitmproxy.proxy import events, server, server_hooks
from mitmproxy.utils import human

from addon.patches.body_relay import BodyRelay

INTERNALS = (
    "mitmproxy.proxy.server.ConnectionHandler.open_connection",
    "mitmproxy.proxy.server.ConnectionHandler.handle_connection",
    "mitmproxy.proxy.server.ConnectionHandler.server_event",
    "mitmproxy.proxy.server.ConnectionHandler.drain_writers",
    "mitmproxy.proxy.server.ConnectionHandler.handle_hook",
    "mitmproxy.proxy.server.ConnectionHandler.transports",
    "mitmproxy.proxy.server.ConnectionHandler.client",
    "mitmproxy.proxy.server.ConnectionHandler.log",
    "mitmproxy.proxy.server.ConnectionIO",
)
"""What this module uses of mitmproxy's internals (tests/addon/patches/test_patches.py)."""
_WRAPS = "_gateway_wraps"
_HANDLER = server.ConnectionHandler
_ORIGINAL = getattr(_HANDLER.open_connection, _WRAPS, _HANDLER.open_connection)

Accept = Callable[["ServerEnd", "ServerEnd"], Any]
"""The server's side of a new pipe, as `asyncio.start_server` hands a connection over: (reader,
writer). The loopback server's `accept`."""


def _nowhere(_address: Any) -> Accept | None:
    return None


listening: Callable[[Any], Accept | None] = _nowhere
"""The server that takes connections to `address` through a pipe, or None (then a socket is
opened as usual). Set by the upstream leg once its loopback server listens."""

_open: dict[str, Pipe] = {}
"""The pipes mitmproxy is connected through, by its server connection's id."""


def relay_of(flow: Any) -> BodyRelay | None:
    """The body relay of the pipe `flow`'s answer comes through; None when it came otherwise."""
    pipe = _open.get(flow.server_conn.id)
    return pipe.relay if pipe is not None else None


class Pipe:
    """One connection between mitmproxy (`mitm`, its reader and writer) and the loopback server
    (`server`, its reader, writer and transport)."""

    def __init__(self, handler: Any, connection: mitm_connection.Server) -> None:
        self.handler = handler
        self.connection = connection
        self.relay = BodyRelay(handler)
        """The answer's body to the client straight, once mitmproxy streams it (body_relay.py)."""
        self.mitm = MitmEnd(self)
        self.server = ServerEnd(self)
        self.to_server = bytearray()
        self.to_server_ready = asyncio.Event()
        self.to_mitm: list[bytes] = []
        self.mitm_closed = False
        """mitmproxy closed its side (or half-closed it): the server reads its end."""
        self.server_closed = asyncio.Event()
        """The server closed or aborted its side: mitmproxy's reader sees the end."""


class MitmEnd:
    """What mitmproxy's connection handler reads from and writes to (`ConnectionIO`)."""

    def __init__(self, pipe: Pipe) -> None:
        self._pipe = pipe

    async def read(self, _n: int = -1) -> bytes:
        """Nothing but the end: the server's bytes are handed over when it drains them. Bytes it
        wrote and never drained (it aborted) are delivered before the end, as a socket would."""
        pipe = self._pipe
        await pipe.server_closed.wait()
        if pipe.to_mitm:
            data, pipe.to_mitm = b"".join(pipe.to_mitm), []
            return data
        return b""

    def write(self, data: bytes) -> None:
        pipe = self._pipe
        if pipe.mitm_closed or pipe.server_closed.is_set():
            return
        pipe.to_server += data
        pipe.to_server_ready.set()

    async def drain(self) -> None:
        return None

    def is_closing(self) -> bool:
        return self._pipe.mitm_closed

    def write_eof(self) -> None:
        self.close()

    def close(self) -> None:
        pipe = self._pipe
        pipe.mitm_closed = True
        pipe.to_server_ready.set()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "peername":
            return self._pipe.connection.address
        if name == "sockname":
            return ("127.0.0.1", 0)
        return default


class ServerEnd:
    """What the loopback server reads from and writes to: the slice of `asyncio.StreamReader`,
    `StreamWriter` and its transport that addon/upstream/server.py uses. A write is kept until
    the next `drain`, which hands it to mitmproxy; the transport reports it as buffered beyond a
    high-water mark of 0, so the server drains after every write."""

    def __init__(self, pipe: Pipe) -> None:
        self._pipe = pipe
        self.relay = pipe.relay

    @property
    def transport(self) -> ServerEnd:
        return self

    async def read(self, n: int = -1) -> bytes:
        pipe = self._pipe
        while not pipe.to_server:
            if pipe.mitm_closed:
                return b""
            pipe.to_server_ready.clear()
            await pipe.to_server_ready.wait()
        size = len(pipe.to_server) if n < 0 else min(n, len(pipe.to_server))
        data = bytes(pipe.to_server[:size])
        del pipe.to_server[:size]
        return data

    def write(self, data: bytes) -> None:
        if data and not self.is_closing():
            self._pipe.to_mitm.append(data)

    async def drain(self) -> None:
        """The bytes written so far, handed to mitmproxy's layers; then, as mitmproxy does after
        each read, its writers drained (the client's connection takes them, or holds this back)."""
        pipe = self._pipe
        if self.is_closing():
            pipe.to_mitm.clear()
            raise ConnectionResetError("mitmproxy closed the connection")
        if not pipe.to_mitm:
            return
        data = pipe.to_mitm[0] if len(pipe.to_mitm) == 1 else b"".join(pipe.to_mitm)
        pipe.to_mitm = []
        event = events.DataReceived(pipe.connection, data)
        if data.startswith(b"HTTP/"):
            # an answer's head: mitmproxy reads it in a task of its own, started from the event
            # loop (not eagerly, in this call). Making its `Response` leaves reference cycles
            # through the stack it runs on (`typecheck.check_option_type` keeps the TypeErrors it
            # raises and catches); on this stack they would hold the loopback server's frames, and
            # with them the whole turn, until the cyclic collector's next pass
            # (docs/benchmarks.md "The fixed cost of a turn")
            await asyncio.Task(pipe.handler.server_event(event), eager_start=False)
        else:
            await pipe.handler.server_event(event)
        await pipe.handler.drain_writers()

    def is_closing(self) -> bool:
        pipe = self._pipe
        return pipe.mitm_closed or pipe.server_closed.is_set()

    def get_write_buffer_size(self) -> int:
        return sum(map(len, self._pipe.to_mitm))

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (0, 0)

    def abort(self) -> None:
        self._pipe.server_closed.set()

    def close(self) -> None:
        self._pipe.server_closed.set()


async def _open_connection(self: Any, command: Any) -> None:
    """mitmproxy's own, but a connection to the loopback server is a `Pipe` (its success path:
    the same hooks, state and handling as a socket's)."""
    conn = command.connection
    accept = listening(conn.address) if conn.address else None
    if accept is None:
        await _ORIGINAL(self, command)
        return
    # mitmproxy's tasks start eagerly: what `server_event` does after starting this one (it records
    # the connection's handler) must be done before this records the pipe, as a socket's connect
    # always gives it time to
    await asyncio.sleep(0)
    hook_data = server_hooks.ServerConnectionHookData(client=self.client, server=conn)
    await self.handle_hook(server_hooks.ServerConnectHook(hook_data))
    if err := conn.error:
        await self.handle_hook(server_hooks.ServerConnectErrorHook(hook_data))
        await self.server_event(events.OpenConnectionCompleted(command, f"Connection killed: {err}"))
        return
    conn.timestamp_start = conn.timestamp_tcp_setup = time.time()
    pipe = Pipe(self, conn)
    conn.state = mitm_connection.ConnectionState.OPEN
    conn.peername = pipe.mitm.get_extra_info("peername")
    conn.sockname = pipe.mitm.get_extra_info("sockname")
    self.transports[conn] = server.ConnectionIO(handler=asyncio.current_task(), reader=pipe.mitm,
                                                writer=pipe.mitm)
    accept(pipe.server, pipe.server)
    addr = human.format_address(conn.address)
    self.log(f"server connect {addr}")  # mitmproxy's own line, as a socket's connect writes it
    await self.handle_hook(server_hooks.ServerConnectedHook(hook_data))
    await self.server_event(events.OpenConnectionCompleted(command, None))
    _open[conn.id] = pipe
    try:
        await self.handle_connection(conn)
    finally:
        del _open[conn.id]
        self.log(f"server disconnect {addr}")
        conn.timestamp_end = time.time()
        pipe.mitm.close()
        await self.handle_hook(server_hooks.ServerDisconnectedHook(hook_data))


def serve(accepting: Callable[[Any], Accept | None]) -> None:
    """Connections to an address `accepting` takes go through a pipe to it from now on."""
    global listening
    listening = accepting


def install() -> None:
    """Idempotent; every copy of this module wraps mitmproxy's own method (`_WRAPS`)."""
    setattr(_open_connection, _WRAPS, _ORIGINAL)
    _HANDLER.open_connection = _open_connection  # type: ignore[method-assign]
