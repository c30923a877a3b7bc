"""addon/serve/websocket/relay.py: one HTTP answer of the gateway as the socket's text frames."""

from __future__ import annotations

import json
from typing import Any

import pytest

from addon.serve.websocket.relay import Relay

ITEM = {"type": "message", "id": "msg_1", "role": "assistant",
        "content": [{"type": "output_text", "text": "hi"}]}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "ls", "arguments": "{}"}


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"event: %s\ndata: %s\n\n" % (e["type"].encode(), json.dumps(e).encode()) for e in events)


CREATED = {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}
DONE_ITEM = {"type": "response.output_item.done", "output_index": 0, "item": ITEM}
DELTA = {"type": "response.output_text.delta", "delta": "h"}
COMPLETED = {"type": "response.completed",
             "response": {"id": "resp_1", "status": "completed", "output": [ITEM]}}


def relay() -> tuple[Relay, list[dict[str, Any]]]:
    frames: list[dict[str, Any]] = []
    return Relay(lambda text: frames.append(json.loads(text)), max_bytes=1 << 20), frames


def test_each_sse_event_is_one_frame_whatever_the_chunking() -> None:
    r, frames = relay()
    r.headers(200, "text/event-stream; charset=utf-8", None)
    body = sse(CREATED, DELTA, DONE_ITEM, COMPLETED)
    for i in range(len(body)):
        r.data(body[i:i + 1])
    r.end(None)
    assert frames == [CREATED, DELTA, DONE_ITEM, COMPLETED]
    assert (r.completed, r.output) == ("resp_1", [ITEM])


def test_an_error_answer_is_one_error_event_with_its_status_and_retry_after() -> None:
    r, frames = relay()
    r.headers(429, "application/json", "3")
    error = {"type": "rate_limit_error", "code": "rate_limit_exceeded", "message": "slow down", "param": None}
    r.data(json.dumps({"error": error}).encode())
    r.end(None)
    assert frames == [{"type": "error", "status": 429, "error": error, "headers": {"retry-after": "3"}}]
    assert r.completed is None


def test_a_stream_cut_before_completed_ends_with_a_5xx_error_event() -> None:
    r, frames = relay()
    r.headers(200, "text/event-stream", None)
    r.data(sse(CREATED, DELTA))
    r.end("server disconnected")
    assert frames[:2] == [CREATED, DELTA]
    assert frames[2]["type"] == "error" and frames[2]["status"] >= 500
    assert "server disconnected" in frames[2]["error"]["message"]
    assert r.completed is None


def test_a_failed_stream_is_relayed_as_it_is_and_ends_the_request() -> None:
    r, frames = relay()
    r.headers(200, "text/event-stream", None)
    failed = {"type": "response.failed", "response": {"id": "resp_1", "error": {"code": "server_error"}}}
    r.data(sse(CREATED, failed, DELTA))
    r.end(None)
    assert frames == [CREATED, failed]
    assert r.completed is None


def test_an_interrupt_completes_the_answer_with_the_items_the_client_got_whole() -> None:
    r, frames = relay()
    r.headers(200, "text/event-stream", None)
    r.data(sse(CREATED, {"type": "response.output_item.done", "item": CALL}, DELTA))
    r.interrupt(now=1_700_000_000)
    r.data(sse(DONE_ITEM, COMPLETED))  # what the upstream still sent
    r.end("cancelled")
    assert [f["type"] for f in frames] == ["response.created", "response.output_item.done",
                                           "response.output_text.delta", "response.completed"]
    final = frames[-1]["response"]
    assert (final["id"], final["status"], final["output"]) == ("resp_1", "incomplete", [CALL])
    assert (r.completed, r.output) == ("resp_1", [CALL])


def test_the_terminal_event_waits_for_the_end_of_the_flow() -> None:
    """Over HTTP the body ends after the gateway's `response` hook (the turn stored); a socket
    client must not see the end of an answer earlier."""
    r, frames = relay()
    r.headers(200, "text/event-stream", None)
    r.data(sse(CREATED, DONE_ITEM, COMPLETED))
    assert frames == [CREATED, DONE_ITEM]
    r.end(None)
    assert frames == [CREATED, DONE_ITEM, COMPLETED]


def test_an_event_the_session_does_not_keep_is_relayed_unread_byte_for_byte(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The gateway's encoder writes `{"type":...` first: a delta goes on without a JSON parse; only
    the events the session keeps are parsed (docs/websocket.md "Where the socket is served")."""
    from addon.serve.websocket import relay as relay_module
    from translators.wire import wirejson

    parsed: list[bytes] = []
    original = wirejson.loads

    def loads(data: bytes | str) -> Any:
        parsed.append(data if isinstance(data, bytes) else data.encode())
        return original(data)

    monkeypatch.setattr(relay_module.wirejson, "loads", loads)
    events = (CREATED, DELTA, DELTA, DONE_ITEM, COMPLETED)
    compact = [json.dumps(e, separators=(",", ":")).encode() for e in events]
    frames: list[bytes] = []
    r = Relay(frames.append, max_bytes=1 << 20)
    r.headers(200, "text/event-stream", None)
    r.data(b"".join(b"event: x\ndata: %s\n\n" % c for c in compact))
    r.end(None)
    assert frames == compact
    assert (r.response_id, r.completed, r.output) == ("resp_1", "resp_1", [ITEM])
    assert [json.loads(p)["type"] for p in parsed] == ["response.created", "response.output_item.done",
                                                       "response.completed"]
