"""addon/serve/streaming.py: the stream callable, driven the way mitmproxy's HTTP layer drives it."""

from __future__ import annotations

import itertools
import json

from anthropic.types.shared import ErrorResponse
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from addon.serve.streaming import SEND_PIECE, StreamHook, pieces, scrub_parts
from tests.addon.conftest import sse_events
from tests.data import DATA
from tests.translators.messages_client.sdk import validate_stream
from translators import client_dialects, stream_translator, translate_request

RAW = ((DATA / "anthropic") / "text_after_tool_result.sse").read_bytes()
EVENTS = TypeAdapter(ResponseStreamEvent)


def _translator():
    counter = itertools.count()
    translation = translate_request({"model": "gpt-5.5", "input": "hi", "stream": True}, "anthropic", None)
    return stream_translator("anthropic", translation, new_id=lambda prefix: f"{prefix}_{next(counter)}",
                             clock=lambda: 1_700_000_000)


def _drive(hook: StreamHook, chunks: list[bytes]) -> bytes:
    out = b""
    for chunk in [*chunks, b""]:
        result = hook(chunk)
        assert result != b"", "b'' mid-stream would end an HTTP/1.1 chunked body"
        out += result if isinstance(result, bytes) else b"".join(result)
    return out


class Raising:
    """A translator that breaks on the n-th feed (or on close)."""

    def __init__(self, fail_on: int | None = 1, fail_close: bool = False, first: bytes = b"") -> None:
        self.calls, self.fail_on, self.fail_close, self.first = 0, fail_on, fail_close, first
        self.report = None

    def feed(self, data: bytes) -> bytes:
        self.calls += 1
        if self.calls == self.fail_on:
            raise ValueError("translator bug")
        return self.first if self.calls == 1 else b""

    def close(self) -> bytes:
        if self.fail_close:
            raise RuntimeError("close bug")
        return b""

    def feed_parts(self, data: bytes) -> list[bytes]:
        return [out] if (out := self.feed(data)) else []

    def close_parts(self) -> list[bytes]:
        return [out] if (out := self.close()) else []


def test_nothing_to_send_is_an_empty_list_never_empty_bytes() -> None:
    hook = StreamHook(_translator())
    assert hook(RAW[:5]) == []


def test_output_does_not_depend_on_chunk_boundaries() -> None:
    whole = _drive(StreamHook(_translator()), [RAW])
    byte_by_byte = _drive(StreamHook(_translator()), [RAW[i:i + 1] for i in range(len(RAW))])
    assert whole == byte_by_byte


def test_every_event_parses_as_a_typed_openai_event() -> None:
    events = [EVENTS.validate_python(event) for event in sse_events(_drive(StreamHook(_translator()), [RAW]))]
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_hook_keeps_the_upstream_bytes_and_what_the_client_got() -> None:
    hook = StreamHook(_translator())
    sent = _drive(hook, [RAW[:700], RAW[700:]])
    assert bytes(hook.upstream) == RAW
    assert bytes(hook.client) == sent


def test_end_is_idempotent() -> None:
    hook = StreamHook(_translator())
    _drive(hook, [RAW])
    assert hook(b"") == []
    assert hook.end() == b""


def test_translator_exception_ends_the_stream_with_response_failed() -> None:
    created = b'event: response.created\ndata: {"response":{"id":"resp_abc","model":"gpt-5.5"}}\n\n'
    hook = StreamHook(Raising(fail_on=2, first=created))
    out = _drive(hook, [b"one", b"two", b"three"])
    events = sse_events(out)
    assert [e.get("type", "response.created") for e in events] == ["response.created", "response.failed"]
    failed = EVENTS.validate_python(events[-1])
    assert failed.response.id == "resp_abc"
    assert failed.response.model == "gpt-5.5"
    assert failed.sequence_number == 1
    assert "translator bug" in failed.response.error.message
    assert "ValueError" in hook.error
    assert bytes(hook.upstream) == b"onetwothree"  # later chunks are still kept for the record


def test_translator_exception_on_the_first_chunk_still_gives_a_parseable_failure() -> None:
    out = _drive(StreamHook(Raising(fail_on=1)), [b"x"])
    (failed,) = sse_events(out)
    assert EVENTS.validate_python(failed).type == "response.failed"


def test_exception_in_close_ends_with_response_failed() -> None:
    out = _drive(StreamHook(Raising(fail_on=None, fail_close=True)), [b"x"])
    assert [e["type"] for e in sse_events(out)] == ["response.failed"]


def test_exception_after_a_terminal_event_adds_no_second_one() -> None:
    completed = b'event: response.completed\ndata: {"type":"response.completed"}\n\n'
    hook = StreamHook(Raising(fail_on=2, first=completed))
    out = _drive(hook, [b"a", b"b"])
    assert out == completed


def test_cut_mid_stream_closes_the_translator_with_response_failed() -> None:
    hook = StreamHook(_translator())
    first = hook(RAW[:600])
    tail = hook.cut("upstream connection lost mid-stream")
    events = sse_events((first if isinstance(first, bytes) else b"") + tail)
    assert events[-1]["type"] == "response.failed"
    assert hook.error == "upstream connection lost mid-stream"
    assert hook(b"") == []  # the end call that may follow adds nothing


def test_cut_with_a_broken_translator_still_gives_response_failed() -> None:
    hook = StreamHook(Raising(fail_on=None, fail_close=True))
    tail = hook.cut("lost")
    assert json.loads(tail.split(b"data: ")[1])["type"] == "response.failed"


# -- a Messages client (Claude Code) gets Anthropic's own mid-stream failure ----------------------

MESSAGES = client_dialects.get("messages")


def _messages_translator():
    counter = itertools.count()
    turn = {"model": "claude-opus-5-5", "max_tokens": 1000, "stream": True,
            "messages": [{"role": "user", "content": "hi"}]}
    translation = translate_request(turn, "anthropic", None, client="messages")
    return stream_translator("anthropic", translation, new_id=lambda prefix: f"{prefix}_{next(counter)}",
                             clock=lambda: 1_700_000_000)


def _sent(result: bytes | list) -> bytes:
    return result if isinstance(result, bytes) else b"".join(result)


def test_a_messages_clients_stream_ends_with_one_anthropic_error_event_and_nothing_after() -> None:
    hook = StreamHook(_messages_translator(), speaks=MESSAGES)
    sent = _sent(hook(RAW[:1100]))
    assert b"event: message_start\n" in sent and b"Charles" in sent
    hook.translator = Raising(fail_on=1)  # the next chunk breaks the translator
    for chunk in (RAW[1100:1500], RAW[1500:], b""):
        sent += _sent(hook(chunk))
    message, error = validate_stream(sent)  # every event the SDK's, exactly one end, and it is last
    assert message is not None and message.model == "claude-opus-5-5"
    assert error is not None and error["error"]["type"] == "api_error"
    assert "translator bug" in error["error"]["message"]
    assert b"response." not in sent
    assert bytes(hook.upstream) == RAW  # the rest is still kept for the saved flow


def test_a_messages_clients_stream_broken_on_its_first_chunk_is_one_error_event() -> None:
    out = _drive(StreamHook(Raising(fail_on=1), speaks=MESSAGES), [b"x", b"y"])
    (event,) = [line for line in out.split(b"\n") if line.startswith(b"event: ")]
    assert event == b"event: error"
    assert ErrorResponse.model_validate(sse_events(out)[0]).error.type == "api_error"


def test_a_messages_clients_stream_cut_with_a_broken_translator_ends_with_an_error_event() -> None:
    tail = StreamHook(Raising(fail_on=None, fail_close=True), speaks=MESSAGES).cut("lost")
    assert tail.startswith(b"event: error\n")
    assert sse_events(tail)[0]["error"]["message"].endswith("RuntimeError('close bug')")


def test_a_messages_client_that_has_its_message_stop_gets_no_error_after_it() -> None:
    stop = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    assert _drive(StreamHook(Raising(fail_on=2, first=stop), speaks=MESSAGES), [b"a", b"b"]) == stop


def test_a_messages_terminal_past_the_kept_bound_still_counts_as_sent() -> None:
    stop = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    hook = StreamHook(Raising(fail_on=2, first=stop), speaks=MESSAGES, max_kept=8)
    assert _drive(hook, [b"a", b"b"]) == stop
    assert hook.client_dropped == len(stop)


# -- what the saved flow keeps (addon/work/limits.py) --------------------------------------------------

def _text_stream(deltas: int, size: int) -> list[bytes]:
    """An Anthropic text answer of `deltas` events of `size` characters each, one chunk per event."""
    def event(payload: dict) -> bytes:
        return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()

    head = [event({"type": "message_start", "message": {"id": "msg_1", "model": "claude-haiku-4-5",
                                                         "usage": {"input_tokens": 1, "output_tokens": 0}}}),
            event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})]
    delta = event({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "x" * size}})
    tail = [event({"type": "content_block_stop", "index": 0}),
            event({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 9}}),
            event({"type": "message_stop"})]
    return [*head, *[delta] * deltas, *tail]


def test_a_long_stream_reaches_the_client_whole_while_the_saved_copy_stops_at_the_bound() -> None:
    chunks = _text_stream(2000, 1000)
    hook = StreamHook(_translator(), max_kept=64 * 1024)
    sent = _drive(hook, chunks)
    payloads = sse_events(sent)
    assert payloads[-1]["type"] == "response.completed"
    assert sum(len(p["delta"]) for p in payloads if p["type"] == "response.output_text.delta") == 2000 * 1000
    assert len(hook.upstream) == 64 * 1024 and len(hook.client) <= 64 * 1024
    assert hook.upstream_dropped == len(b"".join(chunks)) - 64 * 1024
    assert hook.client_dropped == len(sent) - len(hook.client)
    note = hook.cut_note()
    assert note is not None and "gateway_max_kept_bytes=65536" in note
    assert hook.saved_client().startswith(bytes(hook.client))
    assert b": gateway: cut here" in hook.saved_client() and b": gateway: cut here" in hook.saved_upstream()


def test_a_stream_within_the_bound_is_kept_whole_without_a_marker() -> None:
    chunks = _text_stream(5, 10)
    hook = StreamHook(_translator(), max_kept=1024 * 1024)
    sent = _drive(hook, chunks)
    assert hook.saved_client() == sent and hook.saved_upstream() == b"".join(chunks)
    assert hook.cut_note() is None


def test_a_failure_after_the_bound_continues_the_numbering_of_everything_sent() -> None:
    chunks = _text_stream(300, 100)
    hook = StreamHook(_translator(), max_kept=4096)
    sent = b"".join(x if isinstance(x, bytes) else b"".join(x) for x in map(hook, chunks[:-3]))
    hook.translator = Raising(fail_on=1)  # the next chunk breaks the translator
    out = hook(chunks[-3])
    sent += out if isinstance(out, bytes) else b"".join(out)
    payloads = sse_events(sent)
    assert payloads[-1]["type"] == "response.failed"
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))


def test_dropped_output_is_counted_by_its_event_lines_and_terminal_events() -> None:
    from addon.serve.streaming import events_in, has_terminal

    written = (b"event: response.output_text.delta\ndata: {\"delta\":\"event: response.completed\"}\n\n"
               b"event: response.output_text.done\ndata: {}\n\n")
    assert events_in(written) == 2 and events_in(b"data: x\n\n") == 0
    terminals = client_dialects.get("responses").stream_terminals
    assert not has_terminal(written, terminals)  # the name inside a data line is no event line
    assert has_terminal(written + b"event: response.completed\ndata: {}\n\n", terminals)
    assert has_terminal(b"event: response.failed", terminals)
    assert not has_terminal(b"event: response.completed_later\ndata: {}\n\n", terminals)


# -- a long text goes out in pieces, never copied by the hook ---------------------------------------

def test_small_parts_go_out_as_one_chunk_and_a_long_one_as_views_of_itself() -> None:
    long = b'"' + b"g" * (SEND_PIECE * 2 + 10) + b'"'
    out = pieces([b"event: a\n", b"data: 1\n\n", b"event: b\ndata: ", long, b"}\n\n"])
    assert out[0] == b"event: a\ndata: 1\n\nevent: b\ndata: "
    views = out[1:4]
    assert all(isinstance(v, memoryview) and v.obj is long and len(v) <= SEND_PIECE for v in views)
    assert b"".join(views) == long and out[4:] == [b"}\n\n"]


def test_a_giant_text_reaches_the_client_whole_its_json_written_once_and_repeated_by_reference() -> None:
    """A 3 MiB delta and the four done events that repeat it: every piece of the text the hook
    hands mitmproxy is a view of one written string (asyncio copies what is left of a queued
    bytes chunk at every partial send: docs/design.md "Limits")."""
    chunks = _text_stream(1, 3 * SEND_PIECE)
    hook = StreamHook(_translator(), max_kept=1024)
    sent: list[bytes | memoryview] = []
    for chunk in [*chunks, b""]:
        out = hook(chunk)
        sent += out if isinstance(out, list) else [out]
    payloads = sse_events(b"".join(sent))
    assert [p["type"] for p in payloads][-1] == "response.completed"
    assert payloads[-1]["response"]["output"][0]["content"][0]["text"] == "x" * 3 * SEND_PIECE
    owners = {id(piece.obj) for piece in sent if isinstance(piece, memoryview)}
    assert len(owners) == 1  # one JSON string of the text, sent as views five times
    assert sum(len(p) for p in sent if isinstance(p, memoryview)) >= 5 * 3 * SEND_PIECE
    assert all(len(piece) <= SEND_PIECE for piece in sent)


def test_a_secret_in_a_repeated_long_text_is_scrubbed_in_every_repetition() -> None:
    secret = "sk-ant-api03-" + "s" * 40
    long = ('"' + "t" * 100 + secret + '"').encode()
    clean = scrub_parts([b"event: x\ndata: ", long, b"}\n\n", b"event: y\ndata: ", long, b"}"], (secret,))
    assert secret.encode() not in b"".join(clean) and clean[1] is clean[4]


def test_first_token_at_is_stamped_when_content_goes_out_not_the_opening_events() -> None:
    """docs/metrics.md "Time to first token": the opening `response.created` goes out before any
    content; the stamp waits for the first chunk that carries some."""
    hook = StreamHook(_translator())
    blocks = [block + b"\n\n" for block in RAW.replace(b"\r\n", b"\n").split(b"\n\n") if block.strip()]
    start = next(n for n, block in enumerate(blocks) if b"message_start" in block)
    assert hook(b"".join(blocks[:start + 1])) != []  # response.created went out
    assert hook.first_token_at is None and hook.timing() == {}
    _drive(hook, blocks[start + 1:])
    assert hook.first_token_at is not None
    assert hook.timing() == {"first_token_at": hook.first_token_at}
