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
from tests.support import toy_dialect
from tests.support.loopback_http import Loopback, Received, RecordingHandler
from tests.translators.bedrock.frames import encode_frame, frame_offsets

STREAMS = {
    "anthropic": "text_after_tool_result.sse",
    "chat": "tool_call_single.sse",
    "gemini": "sse_text_after_function_response.sse",
    "bedrock": "converse_stream_text.eventstream",
    "responses": "function_call_gpt4o.sse",
}
"""The recorded stream each dialect answers with when nothing is planned."""
SAMPLES = {toy_dialect.NAME: toy_dialect.SAMPLE}
"""Dialects registered from tests/ (no recordings): what they answer, in their own wire."""
CONTENT_TYPE = {
    toy_dialect.NAME: "application/x-ndjson",
    "anthropic": "text/event-stream",
    "chat": "text/event-stream",
    "gemini": "text/event-stream",
    "bedrock": "application/vnd.amazon.eventstream",
    "responses": "text/event-stream",
}


def dialect_of(path: str) -> str:
    for name, sample in SAMPLES.items():
        if sample.is_mine(path):
            return name
    if path.startswith("/v1/messages"):
        return "anthropic"
    if "/chat/completions" in path:
        return "chat"
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return "gemini"
    if path.startswith("/model/"):
        return "bedrock"
    if path.split("?")[0].endswith("/responses"):
        return "responses"
    return "unknown"


def recording(dialect: str) -> Recording:
    return next(r for r in recordings_of(dialect) if r.name == STREAMS[dialect])


def events(dialect: str) -> list[bytes]:
    """The dialect's default recorded stream cut into whole events (frames for Bedrock)."""
    if dialect in SAMPLES:
        return list(SAMPLES[dialect].stream)
    data = recording(dialect).data
    if dialect == "bedrock":
        offsets = [*frame_offsets(data), len(data)]
        return [data[a:b] for a, b in itertools.pairwise(offsets)]
    sep = b"\r\n\r\n" if b"\r\n\r\n" in data else b"\n\n"
    return [block + sep for block in data.split(sep) if block.strip()]


def stream_data(dialect: str) -> bytes:
    """The dialect's default stream, whole."""
    return b"".join(SAMPLES[dialect].stream) if dialect in SAMPLES else recording(dialect).data


WHOLE = {
    toy_dialect.NAME: toy_dialect.SAMPLE.whole,
    "anthropic": {
        "id": "msg_whole",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Hello whole."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 2},
    },
    "chat": {
        "id": "chatcmpl-whole",
        "object": "chat.completion",
        "created": 1,
        "model": "deepseek-chat",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hello whole."}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    },
    "gemini": {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Hello whole."}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5},
    },
    "bedrock": {
        "output": {"message": {"role": "assistant", "content": [{"text": "Hello whole."}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
        "metrics": {"latencyMs": 1},
    },
    "responses": {
        "id": "resp_whole",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-5.5",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Hello whole.", "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "usage": {
            "input_tokens": 3,
            "output_tokens": 2,
            "total_tokens": 5,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    },
}
"""The whole (non-streamed) answer of each dialect."""


def wants_stream(dialect: str, path: str, body: Any) -> bool:
    if dialect in SAMPLES:
        return SAMPLES[dialect].wants_stream(body)
    if dialect == "gemini":
        return ":streamGenerateContent" in path
    if dialect == "bedrock":
        return path.endswith("/converse-stream")
    return isinstance(body, dict) and bool(body.get("stream"))


def error_body(dialect: str, status: int, message: str) -> tuple[dict[str, str], bytes]:
    """An error in the dialect's own shape (docs/anthropic.md "Errors"; docs/chat.md "Errors";
    docs/gemini.md "Errors"; docs/bedrock.md "Errors")."""
    if dialect in SAMPLES:
        return SAMPLES[dialect].error(status, message)
    if dialect == "anthropic":
        kind = {429: "rate_limit_error", 529: "overloaded_error", 500: "api_error"}.get(
            status, "invalid_request_error"
        )
        return {}, json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    if dialect == "gemini":
        state = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE", 500: "INTERNAL"}.get(
            status, "INVALID_ARGUMENT"
        )
        return {}, json.dumps({"error": {"code": status, "message": message, "status": state}}).encode()
    if dialect == "bedrock":
        kind = {
            429: "ThrottlingException",
            503: "ServiceUnavailableException",
            500: "InternalServerException",
        }.get(status, "ValidationException")
        return {
            "x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"
        }, json.dumps({"message": message}).encode()
    kind = {429: "rate_limit_exceeded", 500: "server_error"}.get(status, "invalid_request_error")
    return {}, json.dumps({"error": {"message": message, "type": kind, "code": kind}}).encode()


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
        handler.send_whole(200, headers, json.dumps(WHOLE[dialect]).encode())
        return
    if dialect == "unknown":
        body = json.dumps({"path": handler.path}).encode()
        handler.send_whole(200, {"content-type": "application/json"}, body)
        return
    chunks = events(dialect) if fault.kind != "huge" else _huge_stream(dialect, fault.size)
    content_type = CONTENT_TYPE.get(dialect, "text/event-stream")
    handler.start_chunked(200, {"content-type": content_type, **fault.headers})
    for i, chunk in enumerate(chunks):
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
    base = events(dialect)
    if dialect == "anthropic":
        yield from base[:3]  # message_start, content_block_start, ping
        for _ in range(size // len(piece)):
            delta = {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": piece},
            }
            yield f"event: content_block_delta\ndata: {json.dumps(delta)}\n\n".encode()
        yield from base[3:]
    elif dialect == "bedrock":
        yield base[0]
        for _ in range(size // len(piece)):
            payload = json.dumps({"contentBlockIndex": 0, "delta": {"text": piece}, "p": "abc"}).encode()
            yield encode_frame(
                {
                    ":event-type": "contentBlockDelta",
                    ":content-type": "application/json",
                    ":message-type": "event",
                },
                payload,
            )
        yield from base[1:]
    elif dialect in SAMPLES:
        yield from SAMPLES[dialect].huge(size, piece)
    else:
        raise ValueError(f"no huge stream for {dialect}")


class FaultUpstream(Loopback[Fault]):
    """`with FaultUpstream() as up:` -> `up.url`, `up.plan(Fault(...))`, `up.received`."""

    thread_name = "fault-upstream"

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        fault = self.next_plan() or Fault("stream")
        dialect = dialect_of(received.path)
        streamed = wants_stream(dialect, received.path, received.json)
        if fault.kind == "stream" and dialect in WHOLE and not streamed:
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
