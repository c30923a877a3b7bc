"""mitmproxy's side of addon/patches/loopback_pipe.py `Pipe`, for tests that are not a whole
mitmdump: `Layers` stands for mitmproxy's connection handler (its layers get what the server
drains), and `connect` gives an asyncio-like (reader, writer) pair on the mitmproxy end of a pipe to
a loopback server, so a test written against a socket runs through the pipe as well."""

from __future__ import annotations

import asyncio
from typing import Any

from mitmproxy import connection
from mitmproxy.proxy import events

from addon.patches.loopback_pipe import MitmEnd, Pipe
from addon.upstream.server import LoopbackServer

_readers: set[asyncio.Task[Any]] = set()
"""The stand-ins for mitmproxy's reader tasks, kept until they end."""


class Layers:
    """What the pipe hands to mitmproxy, kept: each `DataReceived` as it came, and a reader fed
    with them (ended, as mitmproxy's reader task would, when the server closes its side)."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.drains = 0
        self.reader = asyncio.StreamReader()

    async def server_event(self, event: events.Event) -> None:
        assert isinstance(event, events.DataReceived), event
        self.received.append(event.data)
        self.reader.feed_data(event.data)

    async def drain_writers(self) -> None:
        self.drains += 1


class Writer:
    """The mitmproxy end's writing half, shaped as an asyncio `StreamWriter` for a test client."""

    def __init__(self, end: MitmEnd) -> None:
        self.end = end
        self.transport = self

    def write(self, data: bytes) -> None:
        self.end.write(data)

    async def drain(self) -> None:
        await self.end.drain()

    def close(self) -> None:
        self.end.close()

    def abort(self) -> None:
        self.end.close()


def pipe_to(server: LoopbackServer) -> tuple[Pipe, Layers]:
    """A pipe from a stand-in for mitmproxy to `server`, accepted by it (as
    `ConnectionHandler.open_connection` does once patched), with mitmproxy's reader task."""
    layers = Layers()
    address = ("127.0.0.1", server.port)
    accept = server.accepting(address)
    assert accept is not None, "the server does not take its own address"
    pipe = Pipe(layers, connection.Server(address=address))
    accept(pipe.server, pipe.server)

    async def read_to_the_end() -> None:  # mitmproxy's `handle_connection`, for this pipe
        while data := await pipe.mitm.read(65535):
            layers.reader.feed_data(data)
        layers.reader.feed_eof()

    _readers.add(task := asyncio.get_running_loop().create_task(read_to_the_end()))
    task.add_done_callback(_readers.discard)
    return pipe, layers


def connect(server: LoopbackServer) -> tuple[asyncio.StreamReader, Writer]:
    pipe, layers = pipe_to(server)
    return layers.reader, Writer(pipe.mitm)
