"""A local provider for end-to-end tests: a threaded HTTP/1.1 server on 127.0.0.1:0.

It replays recorded provider streams (`tests/data/anthropic/*.sse`) with real chunked
transfer encoding, one flush per chunk and a small delay between chunks, so a proxy that buffers
the body is caught by timing. Every request is recorded. Replies are planned per request with
`plan()`; without a plan, a streaming request gets `stream()` of the default fixture and a
non-streaming one gets `message()`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.data import DATA

FIXTURES = (DATA / "anthropic")
DEFAULT_FIXTURE = "text_after_tool_result.sse"
"""Plain text turn, `end_turn` (claude-haiku-4-5, simonw/llm-anthropic)."""
TOOL_FIXTURE = "parallel_tool_use_no_args.sse"


def sse_events(name: str) -> list[bytes]:
    """The recorded stream split into whole SSE events (each ends with a blank line). A `.jsonl`
    fixture holds one data payload per line; its event name is the payload's `type`."""
    raw = (FIXTURES / name).read_bytes().replace(b"\r\n", b"\n")
    if name.endswith(".jsonl"):
        return [b"event: %s\ndata: %s\n\n" % (json.loads(line)["type"].encode(), line)
                for line in raw.splitlines() if line.strip()]
    return [block + b"\n\n" for block in raw.split(b"\n\n") if block.strip()]


def fixture_text(name: str) -> str:
    """The concatenated `text_delta`s of a recorded Anthropic stream: what the client must read."""
    text = []
    for event in sse_events(name):
        for line in event.decode().splitlines():
            if line.startswith("data:"):
                data = json.loads(line[5:])
                delta = data.get("delta") or {}
                if delta.get("type") == "text_delta":
                    text.append(delta["text"])
    return "".join(text)


@dataclass(frozen=True)
class Reply:
    """What to answer one request with."""

    kind: str
    """stream | json | error | cut | close (no answer at all) | cut_body (half a JSON body)"""
    status: int = 200
    fixture: str = DEFAULT_FIXTURE
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.03
    """Seconds between chunks."""
    cut_after: int = 0
    """For `cut`: whole events sent before the connection is dropped (mid-event)."""
    chunked: bool = True
    """False: the stream goes out with a content-length (which the proxy must not pass on)."""
    chunks: tuple[bytes, ...] = ()
    """For `stream`: these body chunks instead of the Anthropic fixture's (any dialect)."""
    content_type: str = "text/event-stream"


def stream(fixture: str = DEFAULT_FIXTURE, delay: float = 0.03, chunked: bool = True) -> Reply:
    return Reply("stream", fixture=fixture, delay=delay, chunked=chunked)


def message(text: str = "Hello from the local upstream.") -> Reply:
    body = {"id": "msg_local01", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 7}}
    return Reply("json", body=json.dumps(body).encode(), headers={"content-type": "application/json"})


def error(status: int, kind: str, text: str, headers: dict[str, str] | None = None) -> Reply:
    """An Anthropic-shaped error body (docs.claude.com/en/api/errors)."""
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return Reply("error", status=status, body=json.dumps(body).encode(),
                 headers={"content-type": "application/json", **(headers or {})})


def cut(after: int = 4, fixture: str = DEFAULT_FIXTURE) -> Reply:
    return Reply("cut", fixture=fixture, cut_after=after)


def raw_stream(chunks: list[bytes], content_type: str = "text/event-stream", delay: float = 0.03,
               cut_after: int = 0) -> Reply:
    """Any dialect's stream, already split into the chunks to send; `cut_after` > 0 sends only
    that many chunks, then half a chunk, then drops the connection."""
    return Reply("cut" if cut_after else "stream", chunks=tuple(chunks), content_type=content_type,
                 delay=delay, cut_after=cut_after)


def json_reply(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply("json" if status < 400 else "error", status=status, body=json.dumps(body).encode(),
                 headers={"content-type": "application/json", **(headers or {})})


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes
    started: float
    finished: float | None = None
    """time.monotonic() once the last byte of the answer was written (None for a cut)."""

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        received = Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                            body, time.monotonic())
        self.server.owner._record(received)
        reply = self.server.owner._next(received)
        try:
            self._answer(reply, received)
        except OSError:
            self.close_connection = True

    do_GET = do_POST

    def _answer(self, reply: Reply, received: Received) -> None:
        if reply.kind == "close":  # the request was read; the connection goes away unanswered
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.kind == "cut_body":
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body[: len(reply.body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.kind in ("json", "error"):
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
            received.finished = time.monotonic()
            return
        self.send_response(200)
        self.send_header("content-type", reply.content_type)
        self.send_header("cache-control", "no-cache")
        if not reply.chunked:
            chunks = list(self._chunks(reply))
            self.send_header("content-length", str(sum(map(len, chunks))))
            self.end_headers()
            for i, chunk in enumerate(chunks):
                time.sleep(reply.delay if i else 0)
                self.wfile.write(chunk)
                self.wfile.flush()
            received.finished = time.monotonic()
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for i, chunk in enumerate(self._chunks(reply)):
            time.sleep(reply.delay if i else 0)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        if reply.kind == "cut":
            # a chunk announced as 64 bytes, 16 sent, then the connection goes away
            self.wfile.write(b"40\r\nevent: content_b")
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        received.finished = time.monotonic()

    @staticmethod
    def _chunks(reply: Reply) -> Iterator[bytes]:
        if reply.chunks:
            yield from reply.chunks[: reply.cut_after] if reply.kind == "cut" else reply.chunks
            return
        events = sse_events(reply.fixture)
        if reply.kind == "cut":
            events = events[: reply.cut_after]
        for event in events:
            # split each event in two so the translator must join partial events
            middle = len(event) // 2
            yield event[:middle]
            yield event[middle:]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: Upstream, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.owner = owner


Guard = Callable[[Received], "Reply | None"]


class Upstream:
    """`with Upstream() as up:` -> `up.url`, `up.plan(reply, ...)`, `up.received`.

    `guard(received)` may turn a request away (e.g. a bad signature) before any plan is used;
    `default(received)` answers when nothing is planned (default: Anthropic replies)."""

    def __init__(self, port: int = 0, guard: Guard | None = None,
                 default: Callable[[Received], Reply] | None = None) -> None:
        self._lock = threading.Lock()
        self._plans: list[Reply] = []
        self._received: list[Received] = []
        self.guard = guard
        self._default = default
        self._server = _Server(self, port)
        self._thread = threading.Thread(target=self._server.serve_forever, name="upstream", daemon=True)

    def __enter__(self) -> Upstream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def reset(self) -> None:
        """Forget plans and received requests (between tests sharing one server)."""
        with self._lock:
            self._plans.clear()
            self._received.clear()

    def plan(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order."""
        with self._lock:
            self._plans.extend(replies)

    @property
    def received(self) -> list[Received]:
        with self._lock:
            return list(self._received)

    def _record(self, received: Received) -> None:
        with self._lock:
            self._received.append(received)

    def _next(self, received: Received) -> Reply:
        if self.guard is not None and (refused := self.guard(received)) is not None:
            return refused
        with self._lock:
            if self._plans:
                return self._plans.pop(0)
        if self._default is not None:
            return self._default(received)
        wants_stream = isinstance(received.json, dict) and received.json.get("stream")
        return stream() if wants_stream else message()
