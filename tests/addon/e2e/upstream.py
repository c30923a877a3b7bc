"""A local provider for end-to-end tests: a threaded HTTP/1.1 server on 127.0.0.1:0.

It replays recorded provider streams (`tests/data/anthropic/*.sse`) with real chunked
transfer encoding, one flush per chunk and a small delay between chunks, so a proxy that buffers
the body is caught: its client gets the first event only after the upstream wrote the last chunk
(`assert_streamed_through` counts the chunks written). Every request is recorded. Replies are
planned per request with `plan()`; without a plan, a streaming request gets `stream()` of the
default fixture and a non-streaming one gets `message()`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.data import DATA
from tests.support.loopback_http import Loopback, Received, RecordingHandler
from tests.support.wait import until

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


def assert_streamed_through(events: Iterable[Any], first_type: str, upstream: Upstream) -> None:
    """The client read its first `first_type` event before the upstream had written the end of
    its (slow) answer: the proxy passed the stream on instead of buffering it. Counted in the
    upstream's chunks (`Received.sent`), so a slow machine cannot make it pass or fail."""
    written_then = None
    for event in events:
        if written_then is None and event.type == first_type:
            written_then = upstream.received[-1].sent
    (received,) = upstream.received
    until(lambda: received.finished is not None, "the upstream to write the end of its answer")
    assert written_then is not None, f"no {first_type} event"
    assert written_then < received.sent, (
        f"the proxy buffered the stream: the client's first {first_type} came after all "
        f"{received.sent} upstream chunks")


def _write(handler: RecordingHandler, reply: Reply, received: Received) -> None:
    if reply.kind == "close":  # the request was read; the connection goes away unanswered
        handler.drop()
        return
    if reply.kind == "cut_body":
        handler.send_head(200, {"content-type": "application/json", "content-length": str(len(reply.body))})
        handler.wfile.write(reply.body[: len(reply.body) // 2])
        handler.drop()
        return
    if reply.kind in ("json", "error"):
        handler.send_whole(reply.status, reply.headers, reply.body)
        received.finished = time.monotonic()
        return
    headers = {"content-type": reply.content_type, "cache-control": "no-cache"}
    if not reply.chunked:
        chunks = list(_chunks(reply))
        handler.send_head(200, {**headers, "content-length": str(sum(map(len, chunks)))})
        for i, chunk in enumerate(chunks):
            time.sleep(reply.delay if i else 0)
            handler.wfile.write(chunk)
            handler.wfile.flush()
            received.sent += 1
        received.finished = time.monotonic()
        return
    handler.start_chunked(200, headers)
    for i, chunk in enumerate(_chunks(reply)):
        time.sleep(reply.delay if i else 0)
        handler.send_chunk(chunk)
        received.sent += 1
    if reply.kind == "cut":
        # a chunk announced as 64 bytes, 16 sent, then the connection goes away
        handler.wfile.write(b"40\r\nevent: content_b")
        handler.drop()
        return
    handler.end_chunked()
    received.finished = time.monotonic()


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


Guard = Callable[[Received], "Reply | None"]


class Upstream(Loopback[Reply]):
    """`with Upstream() as up:` -> `up.url`, `up.plan(reply, ...)`, `up.received`.

    `guard(received)` may turn a request away (e.g. a bad signature) before any plan is used;
    `default(received)` answers when nothing is planned (default: Anthropic replies)."""

    def __init__(self, port: int = 0, guard: Guard | None = None,
                 default: Callable[[Received], Reply] | None = None) -> None:
        self.guard = guard
        self._default = default
        super().__init__(port)

    def reset(self) -> None:
        """Forget plans and received requests (between tests sharing one server)."""
        self.forget_plans()
        self.forget_received()

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        _write(handler, self._next(received), received)

    def _next(self, received: Received) -> Reply:
        if self.guard is not None and (refused := self.guard(received)) is not None:
            return refused
        if (planned := self.next_plan()) is not None:
            return planned
        if self._default is not None:
            return self._default(received)
        wants_stream = isinstance(received.json, dict) and received.json.get("stream")
        return stream() if wants_stream else message()
