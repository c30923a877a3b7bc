"""A local upstream that misbehaves on request: a threaded HTTP/1.1 server on 127.0.0.1:0.

It speaks every dialect the gateway targets, telling them apart by the request path, and by
default answers a stream request with that dialect's recorded stream (`recorded.py`), sent as
chunked transfer encoding one event per chunk. `plan(fault)` makes the next request misbehave:

- `slow_start`: wait before the status line; `stall`: stop for a while after some events;
- `cut`: send some events, half of the next, then drop the connection (RST);
- `status`: an HTTP error in the dialect's own error shape, with extra headers (retry-after);
- `huge`: a well-formed stream whose text is megabytes long; `huge_error`: a big HTML 500.

`GarbageServer` answers every connection with bytes that are neither HTTP nor TLS.
It shares its server with the other local upstreams (`tests/support/loopback_http.py`): those
script well-formed answers; this one breaks the framing itself.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.reliability.recorded import Recording, recordings_of
from tests.support import conformance
from tests.support.loopback_http import Loopback, Received, RecordingHandler
from tests.translators.bedrock.frames import frame_offsets
from translators import dialect as dialects


def dialect_of(path: str) -> str:
    """The registered dialect whose path this is (its conformance data says), else `unknown`."""
    for name in dialects.names():
        if conformance.of(name).is_mine(path):
            return name
    return "unknown"


def recording(dialect: str) -> Recording:
    return next(r for r in recordings_of(dialect) if r.name == conformance.of(dialect).default_stream)


def events(dialect: str) -> list[bytes]:
    """The dialect's default recorded stream cut into whole events (frames for a binary framing);
    a dialect without recordings gives its own events."""
    given = conformance.of(dialect).stream
    if given:
        return list(given)
    found = recording(dialect)
    data = found.data
    if found.framing == "eventstream":
        offsets = [*frame_offsets(data), len(data)]
        return [data[a:b] for a, b in itertools.pairwise(offsets)]
    sep = b"\r\n\r\n" if b"\r\n\r\n" in data else b"\n\n"
    return [block + sep for block in data.split(sep) if block.strip()]


def stream_data(dialect: str) -> bytes:
    """The dialect's default stream, whole."""
    given = conformance.of(dialect).stream
    return b"".join(given) if given else recording(dialect).data


def wants_stream(dialect: str, path: str, body: Any) -> bool:
    if dialect == "unknown":
        return conformance.asks_stream(path, body)
    return conformance.of(dialect).wants_stream(path, body)


def error_body(dialect: str, status: int, message: str) -> tuple[dict[str, str], bytes]:
    """An error in the dialect's own shape (its conformance data: docs/anthropic.md "Errors";
    docs/chat.md "Errors"; docs/gemini.md "Errors"; docs/bedrock.md "Errors"); an unknown
    path gets OpenAI's."""
    if dialect == "unknown":
        return conformance.of("responses").error(status, message)
    return conformance.of(dialect).error(status, message)


@dataclass(frozen=True)
class Fault:
    kind: str
    """stream | slow_start | stall | cut | status | body | huge | huge_error (and `whole`: the
    default answer to a request that did not ask for a stream)"""
    seconds: float = 0.0
    after: int = 2
    """Events sent before a stall or a cut."""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    """Extra headers of the answer (for `status`, `body`, `stream` and `whole`)."""
    message: str = "upstream says no"
    size: int = 0
    """Bytes of text for `huge`, of body for `huge_error`."""
    body: bytes = b""
    """For `body`: sent as it is, with `status`, `headers` and a JSON content type."""
    holding: threading.Event = field(default_factory=threading.Event, compare=False)
    """Set while a slow start or a stall holds the answer back: a test reads it as each event
    arrives, to tell what the client got during the hold from what came after it."""
    held: threading.Event = field(default_factory=threading.Event, compare=False)
    """Set once the hold began: the fault was served."""


def _hold(fault: Fault) -> None:
    fault.held.set()
    fault.holding.set()
    time.sleep(fault.seconds)
    fault.holding.clear()


def _write(handler: RecordingHandler, dialect: str, fault: Fault) -> None:
    if fault.kind == "slow_start":
        _hold(fault)
    if fault.kind == "status":
        headers, body = error_body(dialect, fault.status, fault.message)
        headers = {"content-type": "application/json", **headers, **fault.headers}
        handler.send_whole(fault.status, headers, body)
        return
    if fault.kind == "body":
        handler.send_whole(fault.status, {"content-type": "application/json", **fault.headers}, fault.body)
        return
    if fault.kind == "huge_error":
        body = b"<html><body>" + b"overloaded " * (fault.size // 11) + b"</body></html>"
        handler.send_whole(500, {"content-type": "text/html"}, body)
        return
    if fault.kind == "whole":
        headers = {"content-type": "application/json", **fault.headers}
        handler.send_whole(200, headers, json.dumps(conformance.of(dialect).whole).encode())
        return
    if dialect == "unknown":
        body = json.dumps({"path": handler.path}).encode()
        handler.send_whole(200, {"content-type": "application/json"}, body)
        return
    chunks = events(dialect) if fault.kind != "huge" else _huge_stream(dialect, fault.size)
    content_type = conformance.of(dialect).content_type
    handler.start_chunked(200, {"content-type": content_type, **fault.headers})
    for i, chunk in enumerate(chunks):
        if fault.kind == "stall" and i == max(fault.after - 1, 0):
            # the hold is said to begin before the last event ahead of it is sent: a client that
            # gets that event at once sees it during the hold, whatever the threads' order
            fault.held.set()
            fault.holding.set()
        if fault.kind == "stall" and i == fault.after:
            _hold(fault)
        if fault.kind == "cut" and i == fault.after:
            half = chunk[: len(chunk) // 2]
            handler.wfile.write(b"%x\r\n%s" % (len(chunk), half))  # announced whole, sent half
            handler.drop(reset=True)
            return
        handler.send_chunk(chunk)
    handler.end_chunked()


def _huge_stream(dialect: str, size: int) -> Iterator[bytes]:
    """The default stream with `size` bytes of extra text in 64 KB deltas, before the finish."""
    piece = "0123456789abcdef" * 4096
    huge = conformance.of(dialect).huge
    if huge is None:
        raise ValueError(f"no huge stream for {dialect}")
    yield from huge(events(dialect), size, piece)


class FaultUpstream(Loopback[Fault]):
    """`with FaultUpstream() as up:` -> `up.url`, `up.plan(Fault(...))`, `up.received`."""

    thread_name = "fault-upstream"

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        fault = self.next_plan() or Fault("stream")
        dialect = dialect_of(received.path)
        streamed = wants_stream(dialect, received.path, received.json)
        if fault.kind == "stream" and dialect != "unknown" and not streamed:
            fault = Fault("whole", headers=fault.headers)
        _write(handler, dialect, fault)


class GarbageServer:
    """Accepts connections and answers each with bytes that are neither HTTP nor a TLS record."""

    def __init__(self, reply: bytes = b"\x00\xffgarbage, not TLS\r\n\r\n" * 4) -> None:
        self._reply = reply
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="garbage-upstream", daemon=True)
        self.connections = 0

    def __enter__(self) -> GarbageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(1)
                try:
                    conn.recv(4096)
                    conn.sendall(self._reply)
                except OSError:
                    pass
