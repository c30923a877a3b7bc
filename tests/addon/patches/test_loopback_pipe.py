"""addon/patches/loopback_pipe.py: mitmproxy reaches the loopback server through a pipe in the
process. What mitmproxy writes reaches the server's reader; what the server writes reaches
mitmproxy's layers when it drains, as one read, before mitmproxy's writers are drained; a close on
either side ends the other's reading; and only a connection to the server's own address is a pipe,
with a server connection's hooks. The server's whole protocol over the pipe:
tests/addon/upstream/test_server.py; through real mitmdump: every test of tests/addon/e2e/ that
goes upstream (test_pools.py, test_budgets.py, ...)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mitmproxy import connection
from mitmproxy.proxy import commands, events, server_hooks

from addon.patches import loopback_pipe
from addon.patches.loopback_pipe import Pipe
from tests.support.loopback_pipe import Layers

ADDRESS = ("127.0.0.1", 40000)


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), 10))


def pipe() -> tuple[Pipe, Layers]:
    layers = Layers()
    return Pipe(layers, connection.Server(address=ADDRESS)), layers


def test_what_mitmproxy_writes_reaches_the_servers_reader_in_order_and_its_close_ends_it() -> None:
    async def scenario() -> list[bytes]:
        p, _ = pipe()
        p.mitm.write(b"POST /t HTTP/1.1\r\n")
        p.mitm.write(b"host: x\r\n\r\n")
        first = await p.server.read(65535)
        waiting = asyncio.create_task(p.server.read(65535))
        await asyncio.sleep(0)
        p.mitm.write(b"next")
        second = await waiting
        p.mitm.close()
        return [first, second, await p.server.read(65535)]

    assert run(scenario) == [b"POST /t HTTP/1.1\r\nhost: x\r\n\r\n", b"next", b""]


def test_the_servers_writes_reach_mitmproxys_layers_at_its_drain_as_one_read() -> None:
    async def scenario() -> tuple[list[bytes], list[bytes], int]:
        p, layers = pipe()
        p.server.write(b"HTTP/1.1 200 OK\r\n\r\n")
        p.server.write(b"5\r\nfirst\r\n")
        before = list(layers.received)
        assert p.server.transport.get_write_buffer_size() > p.server.transport.get_write_buffer_limits()[1]
        await p.server.drain()
        await p.server.drain()  # nothing more written: nothing handed over
        return before, layers.received, layers.drains

    before, received, drains = run(scenario)
    assert before == []
    assert received == [b"HTTP/1.1 200 OK\r\n\r\n5\r\nfirst\r\n"]
    assert drains == 1  # mitmproxy's writers (the client's) drained after the hand-over


def test_a_server_that_aborts_ends_mitmproxys_read_after_what_it_never_drained() -> None:
    async def scenario() -> list[bytes]:
        p, layers = pipe()
        reading = asyncio.create_task(p.mitm.read(65535))
        await asyncio.sleep(0)
        assert not reading.done()  # the server's bytes do not come through the reader
        p.server.write(b"0\r\n\r\n")
        p.server.transport.abort()
        return [await reading, await p.mitm.read(65535), *layers.received]

    assert run(scenario) == [b"0\r\n\r\n", b""]


def test_once_mitmproxy_closed_its_side_the_server_writes_nothing_more() -> None:
    async def scenario() -> tuple[bool, list[bytes]]:
        p, layers = pipe()
        p.mitm.close()
        p.server.write(b"late")
        with pytest.raises(ConnectionResetError):
            await p.server.drain()
        return p.server.transport.is_closing(), layers.received

    assert run(scenario) == (True, [])


class Handler:
    """mitmproxy's `ConnectionHandler` as `_open_connection` uses it."""

    def __init__(self, kill: str = "") -> None:
        self.client = connection.Client(peername=("127.0.0.1", 5000), sockname=("127.0.0.1", 8080))
        self.transports: dict[Any, Any] = {}
        self.hooks: list[str] = []
        self.events: list[Any] = []
        self.kill = kill
        self.lines: list[str] = []

    def log(self, message: str) -> None:
        self.lines.append(message)

    async def handle_hook(self, hook: commands.StartHook) -> None:
        self.hooks.append(hook.name)
        if isinstance(hook, server_hooks.ServerConnectHook) and self.kill:
            hook.data.server.error = self.kill

    async def server_event(self, event: events.Event) -> None:
        self.events.append(event)

    async def drain_writers(self) -> None:
        pass

    async def handle_connection(self, conn: connection.Server) -> None:
        assert await self.transports[conn].reader.read(65535) == b""


def test_a_connection_to_the_servers_address_is_a_pipe_with_a_server_connections_hooks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    accepted: list[Any] = []
    opened_as_socket: list[Any] = []

    def accept(reader: Any, writer: Any) -> None:
        accepted.append(reader)
        writer.transport.abort()  # the server ends at once: mitmproxy's reading ends

    async def original(_self: Any, command: Any) -> None:
        opened_as_socket.append(command.connection.address)

    monkeypatch.setattr(loopback_pipe, "_ORIGINAL", original)
    monkeypatch.setattr(loopback_pipe, "listening", lambda address: accept if address == ADDRESS else None)

    async def scenario() -> Handler:
        handler = Handler()
        ours = connection.Server(address=ADDRESS)
        await loopback_pipe._open_connection(handler, commands.OpenConnection(ours))
        await loopback_pipe._open_connection(handler, commands.OpenConnection(connection.Server(
            address=("api.anthropic.com", 443))))
        assert ours.peername == ADDRESS and ours.timestamp_end is not None
        return handler

    handler = run(scenario)
    assert len(accepted) == 1 and opened_as_socket == [("api.anthropic.com", 443)]
    assert handler.hooks == ["server_connect", "server_connected", "server_disconnected"]
    assert handler.lines == ["server connect 127.0.0.1:40000", "server disconnect 127.0.0.1:40000"]
    assert [(type(e).__name__, e.reply) for e in handler.events] == [("OpenConnectionCompleted", None)]


def test_a_server_connect_hook_that_kills_the_connection_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    accepted: list[Any] = []
    monkeypatch.setattr(loopback_pipe, "listening", lambda _address: accepted.append)

    async def scenario() -> Handler:
        handler = Handler(kill="killed by an addon")
        ours = connection.Server(address=ADDRESS)
        await loopback_pipe._open_connection(handler, commands.OpenConnection(ours))
        return handler

    handler = run(scenario)
    assert accepted == []
    assert handler.hooks == ["server_connect", "server_connect_error"]
    assert [e.reply for e in handler.events] == ["Connection killed: killed by an addon"]
