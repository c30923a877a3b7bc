"""The two ends of the proxy benchmark, on loopback in one asyncio loop: an upstream that streams a
long Anthropic answer, paced, with a `perf_counter_ns` stamp in every text delta, and a client that
notes when each stamp arrives (same machine, same monotonic clock)."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field

from bench.fixtures import answer_delta, answer_head, answer_tail, answer_word

STAMP = re.compile(rb"@@T(\d{20})@@")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class Listening:
    """A loopback server of the benchmark: `start` listens on a free port (`port`), `stop` ends
    it; the subclass answers each connection in `_serve`."""

    port: int
    _server: asyncio.Server | None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


@dataclass
class Upstream(Listening):
    deltas: int
    interval_s: float
    port: int = 0
    requests: list[int] = field(default_factory=list)
    """Body size of every request received."""
    heavy: tuple[bytes, list[bytes]] | None = None
    """(marker, chunks): a request whose body holds the marker is answered with these chunks, at once
    (bench/stall.py's heavy answer) instead of the paced stamped stream."""
    _server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            body = await reader.readexactly(int(length[1])) if length else b""
            self.requests.append(len(body))
            if self.heavy is not None and self.heavy[0] in body:
                await self._answer_with(writer, self.heavy[1])
            else:
                await self._answer(writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the gateway's reachability probe connects and leaves
        finally:
            writer.close()

    async def _answer_with(self, writer: asyncio.StreamWriter, chunks: list[bytes]) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                     b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n")
        for data in chunks:
            writer.write(_chunk(data))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def _answer(self, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                     b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n")
        for data in answer_head():
            writer.write(_chunk(data))
        await writer.drain()
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i in range(self.deltas):
            delay = start + i * self.interval_s - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            writer.write(_chunk(answer_delta(f"@@T{time.perf_counter_ns():020d}@@{answer_word(i)}")))
            await writer.drain()
        for data in answer_tail(self.deltas):
            writer.write(_chunk(data))
        writer.write(b"0\r\n\r\n")
        await writer.drain()


@dataclass(frozen=True, slots=True)
class Turn:
    status: int
    latencies_ns: list[int]
    """Per stamped event, on its first arrival: client read time minus upstream write time."""
    body: bytes
    wall_ns: int
    stamps_ns: list[int] = field(default_factory=list)
    """The upstream's write time of each event in `latencies_ns`, in the same order."""


async def turn(port: int, body: bytes, timeout_s: float, stop: asyncio.Event | None = None) -> Turn:
    """One Codex turn through the proxy: POST /v1/responses, read the stream to the end (or, with
    `stop`, until it is set)."""
    start = time.perf_counter_ns()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /v1/responses HTTP/1.1\r\nhost: api.openai.com\r\ncontent-type: application/json\r\n"
                 b"accept: text/event-stream\r\nauthorization: Bearer sk-bench\r\nconnection: close\r\n"
                 b"content-length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    latencies: list[int] = []
    stamps: list[int] = []
    seen: set[bytes] = set()
    buf = bytearray()
    pos = 0
    try:
        async with asyncio.timeout(timeout_s):
            while data := await reader.read(65536):
                now = time.perf_counter_ns()
                buf += data
                for match in STAMP.finditer(buf, pos):
                    pos = match.end()
                    if match[1] not in seen:  # later events (output_text.done, ...) repeat the text
                        seen.add(match[1])
                        stamps.append(int(match[1]))
                        latencies.append(now - stamps[-1])
                if buf.endswith(b"\r\n0\r\n\r\n") or (stop is not None and stop.is_set()):
                    break
    finally:
        writer.close()
    status = int(buf[9:12]) if buf.startswith(b"HTTP/1.1 ") else 0
    wall_ns = time.perf_counter_ns() - start
    return Turn(status=status, latencies_ns=latencies, body=bytes(buf), wall_ns=wall_ns, stamps_ns=stamps)
