"""What every local test upstream shares: a threaded HTTP/1.1 server on 127.0.0.1 that records each
request and asks its owner how to answer, and the writes an answer is made of.

The upstreams differ only in how they choose an answer: `fake_upstream.py` runs a script,
`tests/addon/e2e/upstream.py` replays planned recorded streams, `tests/reliability/fault_upstream.py`
breaks the framing on purpose. Each subclasses `Loopback` (the server's life, what it received,
what it was told to answer) and writes through a `RecordingHandler` (reading a request, writing
whole and chunked bodies, dropping the connection).

Every one of them is strict (docs/strict-fakes.md): before its owner answers, a request to a
vendor's model endpoint goes through that vendor's validator (`tests/support/strict/`), and one the
real service refuses gets the service's own refusal instead. What the fake's answers hand out
(thinking signatures, thought signatures, encrypted reasoning) is kept in `Loopback.issued`, so
that what comes back can be checked as the vendor checks it.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

from tests.support import strict


@dataclass
class Received:
    """One request as an upstream received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    """time.monotonic() once the last byte of the answer was written (None: not, or cut)."""
    sent: int = 0
    """Chunks of a streamed answer written so far (an upstream that counts them): read while it
    streams, it tells how far the upstream got by a given point of the test, without a clock."""
    refused: tuple[int, str] | None = None
    """(status, body) of the vendor's refusal this strict fake answered instead of its owner."""

    @property
    def json(self) -> Any:
        """The body as JSON; None when it is empty or not JSON."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name.lower(), default)


class RecordingHandler(BaseHTTPRequestHandler):
    # HTTP/1.1 so that chunked answers and keep-alive behave like a real API server's
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean; the recorded requests are the log

    def setup(self) -> None:
        super().setup()
        self.wfile = self.tee = _Tee(self.wfile)

    def handle_request(self) -> None:
        received = self.read_request()
        owner = self.server.owner
        self.tee.begin(lambda written: owner.observe(received, written))
        try:
            try:
                refusal = owner.refusal(received)
            except Exception:  # a validator's own bug must show up in the test, not hang the client
                refusal = owner.broken_validator(received)
            if refusal is not None:
                status, headers, body = refusal
                received.refused = (status, body.decode("utf-8", "replace"))
                self.send_whole(status, headers, body)
                received.finished = time.monotonic()
            else:
                owner.answer(self, received)
        except OSError:  # the client hung up mid-answer
            self.close_connection = True
        finally:
            owner.observe(received, self.tee.take())

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_CONNECT = handle_request

    def read_request(self) -> Received:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            body = self._read_chunked()
        else:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
        received = Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.server.owner.record(received)
        return received

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers, up to the blank line that ends the body
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline()  # the CRLF after each chunk

    # -- answers ---------------------------------------------------------------------------
    def send_head(self, status: int, headers: dict[str, str]) -> None:
        """The status line and these headers; the body is the caller's to write."""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()

    def send_whole(self, status: int, headers: dict[str, str], body: bytes) -> None:
        """A body with a content-length (unless the headers already give one)."""
        if "content-length" not in {name.lower() for name in headers}:
            headers = {**headers, "content-length": str(len(body))}
        self.send_head(status, headers)
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def start_chunked(self, status: int, headers: dict[str, str]) -> None:
        self.send_head(status, {**headers, "transfer-encoding": "chunked"})

    def send_chunk(self, data: bytes) -> None:
        """One chunk, flushed, so the client really sees the chunks one by one."""
        if data:  # a zero-length chunk would end the chunked body early
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def end_chunked(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def drop(self, reset: bool = False) -> None:
        """Go away mid-answer: a FIN after what was sent, or with `reset` an RST, as a crashed
        upstream's connection dies."""
        self.wfile.flush()
        self.close_connection = True
        if reset:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            self.connection.shutdown(socket.SHUT_RDWR)


class _Tee:
    """The handler's writer, keeping a copy of what one answer wrote (up to `LIMIT` bytes: the
    start of a huge answer is where anything it hands out is). A write that may carry something the
    vendor hands out (a signature, redacted or encrypted content), and the one after it (where the
    rest of a value cut in two goes), is shown to `on_issue` before it goes out: the client cannot
    send it back before the fake has kept it."""

    LIMIT = 4 << 20
    MARKERS = (b"ignature", b"edacted", b"encrypted_content")

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._kept: list[bytes] = []
        self._size = 0
        self._marked = False
        self._on_issue: Callable[[bytes], None] | None = None

    def begin(self, on_issue: Callable[[bytes], None] | None = None) -> None:
        self._kept, self._size, self._marked, self._on_issue = [], 0, False, on_issue

    def take(self) -> bytes:
        data, self._kept, self._size, self._on_issue = b"".join(self._kept), [], 0, None
        return data

    def write(self, data: bytes) -> int:
        if self._size < self.LIMIT:
            self._kept.append(bytes(data))
            self._size += len(data)
        marked = any(marker in data for marker in self.MARKERS)
        if (marked or self._marked) and self._on_issue is not None:
            self._on_issue(b"".join(self._kept))
        self._marked = marked
        written: int = self._inner.write(data)
        return written

    def flush(self) -> None:
        self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def answer_body(raw: bytes) -> tuple[str, bytes]:
    """(content type, body) of an HTTP/1.1 answer as written: the head dropped, a chunked body
    joined (what a cut answer sent before the cut)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    fields = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip().decode("latin-1")
    if "chunked" not in fields.get(b"transfer-encoding", "").lower():
        return fields.get(b"content-type", ""), body
    parts, rest = [], body
    while rest:
        size_line, sep, rest = rest.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
        except ValueError:
            break
        if not sep or size == 0:
            break
        parts.append(rest[:size])
        rest = rest[size + 2:]
    return fields.get(b"content-type", ""), b"".join(parts)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    """socketserver's listen backlog of 5 drops connections when 50 arrive at once; a real API
    server accepts them, and a proxy facing a dropped one rightly answers 502."""

    def __init__(self, owner: Loopback[Any], port: int) -> None:
        super().__init__(("127.0.0.1", port), RecordingHandler)
        self.owner = owner


class Loopback[Plan]:
    """`with Sub() as up:` -> `up.url`, `up.port`, `up.received`, `up.plan(...)`. A subclass
    answers each request in `answer(handler, received)`, writing through the handler, usually
    from the next planned answer (`next_plan()`: a reply, a fault...) or its own default."""

    thread_name: ClassVar[str] = "upstream"

    def __init__(self, port: int = 0) -> None:
        self.lock = threading.Lock()
        self._received: list[Received] = []
        self._plans: list[Plan] = []
        self.strictness = strict.Strictness()
        """How strict this fake is (`strict.Strictness`): set it before the request it applies to."""
        self.issued = strict.Issued()
        """What this fake's answers handed out; `issue()` adds what an earlier session's did."""
        self.validator_errors: list[str] = []
        """Tracebacks of validator failures (each answered with a 500)."""
        self._server = _Server(self, port)
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.thread_name, daemon=True)

    def __enter__(self) -> Self:
        strict.warm()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def received(self) -> list[Received]:
        """A snapshot of every request received so far, in arrival order."""
        with self.lock:
            return list(self._received)

    def record(self, received: Received) -> None:
        with self.lock:
            self._received.append(received)

    def forget_received(self) -> None:
        with self.lock:
            self._received.clear()

    def plan(self, *answers: Plan) -> None:
        """Answer the next requests with these, in order."""
        with self.lock:
            self._plans.extend(answers)

    def forget_plans(self) -> None:
        """Forget answers planned but not used (a test that failed before its request)."""
        with self.lock:
            self._plans.clear()

    def next_plan(self) -> Plan | None:
        with self.lock:
            return self._plans.pop(0) if self._plans else None

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        raise NotImplementedError

    # -- strictness ---------------------------------------------------------------------------
    def refusal(self, received: Received) -> strict.Refusal | None:
        """The real service's refusal of this request, if it would refuse it."""
        with self.lock:
            issued = self.issued.copy()
        return strict.check(received.method, received.path, received.headers, received.body,
                            issued=issued, strictness=self.strictness)

    def broken_validator(self, received: Received) -> strict.Refusal:
        with self.lock:
            self.validator_errors.append(traceback.format_exc())
        return 500, {"content-type": "text/plain"}, b"strict fake: its validator failed (validator_errors)"

    def observe(self, received: Received, written: bytes) -> None:
        """Keep what this answer handed out (see `issued`)."""
        if strict.vendor_of(received.method, received.path) is None or not written:
            return
        try:
            content_type, body = answer_body(written)
            found = strict.issued_from(received.method, received.path, content_type, body)
        except Exception:  # a broken answer (a fault test's) hands out nothing; a reader bug shows
            with self.lock:
                self.validator_errors.append(traceback.format_exc())
            return
        with self.lock:
            self.issued.add(found)

    def issue(self, issued: strict.Issued) -> None:
        """Count these as handed out by this fake (a history recorded from a session before the test)."""
        with self.lock:
            self.issued.add(issued)

    @property
    def refusals(self) -> list[str]:
        """Every refusal this strict fake answered, in order: the vendor's words."""
        return [r.refused[1] for r in self.received if r.refused is not None]
