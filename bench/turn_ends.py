"""The two ends of bench/hooks.py's turn, on loopback in the bench's own asyncio loop: an upstream
that answers every request at once with a recorded stream and stamps when the request arrived, and
two clients (raw bytes, the openai SDK) that stamp when the turn started and ended. Every stamp is
`perf_counter_ns`, CLOCK_MONOTONIC, the clock bench/hook_timer.py reads inside mitmdump."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.loopback import Listening
from bench.workloads import CODEX_DIR, REPO, long_request

ANSWERS = REPO / "tests" / "data" / "anthropic"
SSE_BREAK = re.compile(rb"(?<=\n\n)")


def largest_request() -> Path:
    """The largest real Codex request in tests/data/codex."""
    return max(CODEX_DIR.glob("request_*.json"), key=lambda p: p.stat().st_size)


def codex_request(long: bool = False) -> tuple[bytes, list[tuple[str, str]]]:
    """The largest real Codex request (`long`: bench/workloads.py's 216-item session built from
    the real ones instead), and the headers Codex sent with its first captured request
    (request_headers.txt block [1]) minus the framing ones, which the client writes itself."""
    body = long_request() if long else largest_request().read_bytes()
    lines = (CODEX_DIR / "request_headers.txt").read_text().split("\n# [2]")[0].splitlines()
    headers = []
    for line in lines:
        name, sep, value = line.partition(": ")
        if sep and not line.startswith(("#", "POST ")) and name.lower() not in ("host", "content-length"):
            headers.append((name, value))
    return body, headers


def anthropic_answer() -> list[bytes]:
    """The longest recorded Anthropic stream, one chunk per event."""
    return [c for c in SSE_BREAK.split((ANSWERS / answer_name()).read_bytes()) if c.strip()]


def answer_name() -> str:
    return max(ANSWERS.glob("*.sse"), key=lambda p: p.stat().st_size).name


def _short(line: str) -> str:
    name, sep, value = line.partition(": ")
    if name.lower() in ("authorization", "x-api-key"):
        return f"{name}: <{len(value)} chars>"
    return f"{name}{sep}{value[:40]}{'...' if len(value) > 40 else ''}"


def dechunk(raw: bytes) -> bytes:
    """The body of an HTTP/1.1 chunked answer (head included in `raw`)."""
    body = raw[raw.index(b"\r\n\r\n") + 4:]
    out, pos = bytearray(), 0
    while True:
        end = body.index(b"\r\n", pos)
        size = int(body[pos:end].split(b";")[0], 16)
        if not size:
            return bytes(out)
        out += body[end + 2:end + 2 + size]
        pos = end + 2 + size + 2


# -- the upstream -----------------------------------------------------------------------------------

@dataclass
class Seen:
    head_ns: int
    body_ns: int
    written_ns: int
    size: int
    connection: int


@dataclass
class AnswerServer(Listening):
    """Answers every POST with `chunks`, all at once, as a chunked SSE body; keeps the connection
    when `keepalive`, else closes it (as bench/loopback.py does). `GET /v1/models` gets a 404
    (the gateway's capabilities fetch, when asked to fetch)."""

    chunks: list[bytes]
    keepalive: bool = False
    port: int = 0
    seen: list[Seen] = field(default_factory=list)
    connections: int = 0
    head: str = ""
    """The head of the first request, its header values after the first 40 characters left out."""
    _server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        connection = self.connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                head_ns = time.perf_counter_ns()
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                body = await reader.readexactly(int(length[1])) if length else b""
                body_ns = time.perf_counter_ns()
                if not self.head:
                    lines = head.decode("latin-1").split("\r\n")
                    self.head = " | ".join(_short(line) for line in lines if line)
                if not head.startswith(b"POST "):
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    await writer.drain()
                    return
                close = b"" if self.keepalive else b"connection: close\r\n"
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                             b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n%s\r\n" % close)
                for data in self.chunks:
                    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                self.seen.append(Seen(head_ns, body_ns, time.perf_counter_ns(), len(body), connection))
                if not self.keepalive:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the gateway's reachability probe connects and leaves; a kept connection ends
        finally:
            writer.close()


# -- the clients ------------------------------------------------------------------------------------

@dataclass
class ClientTurn:
    start_ns: int
    end_ns: int
    status: int
    received: int
    """Bytes of the answer's body the client read (raw), or events it parsed (sdk)."""
    body: bytes = b""


async def raw_turn(port: int, body: bytes, headers: list[tuple[str, str]], encoding: str | None,
                   timeout_s: float) -> ClientTurn:
    """Codex's request in one write on a new connection (`connection: close`), read to the end."""
    start = time.perf_counter_ns()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = [("content-encoding", encoding)] if encoding else []
    head = "".join(f"{k}: {v}\r\n" for k, v in [*headers, *extra, ("host", f"127.0.0.1:{port}"),
                                                 ("connection", "close"),
                                                 ("content-length", str(len(body)))])
    writer.write(b"POST /v1/responses HTTP/1.1\r\n" + head.encode() + b"\r\n" + body)
    buf = bytearray()
    try:
        async with asyncio.timeout(timeout_s):
            while data := await reader.read(65536):
                buf += data
                if buf.endswith(b"\r\n0\r\n\r\n"):
                    break
    finally:
        writer.close()
    end = time.perf_counter_ns()
    status = int(buf[9:12]) if buf.startswith(b"HTTP/1.1 ") else 0
    return ClientTurn(start, end, status, len(buf), bytes(buf))


def sdk_client(port: int) -> Any:
    import openai

    return openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-bench", max_retries=0)


async def sdk_turn(client: Any, body: dict[str, Any], timeout_s: float) -> ClientTurn:
    """The same request through the openai SDK, streamed, every event parsed."""
    rest = {k: v for k, v in body.items() if k not in ("model", "stream")}
    start = time.perf_counter_ns()
    events = 0
    async with asyncio.timeout(timeout_s):
        stream = await client.responses.create(model=body["model"], stream=True, extra_body=rest)
        async for _ in stream:
            events += 1
    return ClientTurn(start, time.perf_counter_ns(), 200, events)
