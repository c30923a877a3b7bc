"""The Messages encoder on hand-built IR events: stop reasons, usage, thinking, tool calls, web
search, failures, exactly one end, and the bound on what it holds."""

from __future__ import annotations

import pytest

from tests.translators.messages_client.recordings import sse_events
from tests.translators.messages_client.sdk import validate_stream
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.features.naming import ToolIndex, ToolRef
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.messages_client import MessagesEncoder
from translators.messages_client.stream import MAX_OUTPUT_CHARS


def encoder(**fields) -> MessagesEncoder:
    return MessagesEncoder(model="claude-opus-5-5", report=Report(), new_id=sequential_ids(), **fields)


def stream(events: list[ev.Event], **fields) -> bytes:
    enc = encoder(**fields)
    return enc.encode(events) + enc.finish()


def answer(*events: ev.Event, reason: str = "stop", detail: str | None = None) -> list[ev.Event]:
    return [ev.Started(), *events, ev.Finished(reason, detail)]


@pytest.mark.parametrize(
    ("reason", "stop_reason"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("max_output_tokens", "max_tokens"),
        ("content_filter", "refusal"),
        ("pause_turn", "pause_turn"),
        ("context_length_exceeded", "model_context_window_exceeded"),
    ],
)
def test_each_finish_is_its_stop_reason(reason: str, stop_reason: str) -> None:
    message, _ = validate_stream(stream(answer(ev.TextDelta(0, "hi"), ev.TextDone(0), reason=reason)))
    assert message.stop_reason == stop_reason


def test_a_stop_sequence_names_the_sequence() -> None:
    message, _ = validate_stream(stream(answer(ev.TextDelta(0, "a"), reason="stop_sequence", detail="END")))
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "END")


def test_a_turn_that_called_a_tool_stops_for_it_even_when_the_upstream_said_stop() -> None:
    events = answer(ev.ToolCallStarted(0, "call_1", "Bash"), ev.ToolCallDone(0, '{"command":"ls"}'))
    message, _ = validate_stream(stream(events))
    assert message.stop_reason == "tool_use"
    assert [(b.id, b.name, b.input) for b in message.content] == [("call_1", "Bash", {"command": "ls"})]


def test_usage_counts_cache_reads_and_writes_apart_from_input_tokens() -> None:
    usage = ev.Usage(input_tokens=1000, output_tokens=50, cached_tokens=600, cache_write_tokens=100)
    message, _ = validate_stream(stream([ev.Started(), usage, ev.TextDelta(0, "a"), ev.Finished("stop")]))
    assert (
        message.usage.input_tokens,
        message.usage.cache_read_input_tokens,
        message.usage.cache_creation_input_tokens,
        message.usage.output_tokens,
    ) == (300, 600, 100, 50)


def test_writes_for_an_hour_are_said_apart_as_anthropic_says_them() -> None:
    usage = ev.Usage(input_tokens=1000, output_tokens=5, cached_tokens=600, cache_write_tokens=300,
                     cache_write_1h_tokens=200)
    message, _ = validate_stream(stream([ev.Started(), usage, ev.TextDelta(0, "a"), ev.Finished("stop")]))
    assert message.usage.cache_creation is not None
    assert (message.usage.cache_creation.ephemeral_5m_input_tokens,
            message.usage.cache_creation.ephemeral_1h_input_tokens) == (100, 200)
    plain = ev.Usage(input_tokens=1000, output_tokens=5, cached_tokens=600, cache_write_tokens=300)
    message, _ = validate_stream(stream([ev.Started(), plain, ev.TextDelta(0, "a"), ev.Finished("stop")]))
    assert message.usage.cache_creation is None  # nothing written for an hour: as before


def test_input_tokens_known_at_the_start_are_in_message_start() -> None:
    events = sse_events(
        stream([ev.Started(), ev.Usage(input_tokens=42), ev.TextDelta(0, "a"), ev.Finished("stop")])
    )
    assert events[0][1]["message"]["usage"]["input_tokens"] == 42


def test_text_and_thinking_blocks_stream_in_order_with_the_signature_last() -> None:
    state = VendorState(dialect="anthropic", signature="EqQB", text="hmm")
    events = answer(
        ev.ReasoningDelta(0, "hm"),
        ev.ReasoningDelta(0, "m"),
        ev.ReasoningDone(0, state),
        ev.TextDelta(1, "hi"),
        ev.TextDone(1),
    )
    data = stream(events)
    kinds = [(p.get("delta") or p.get("content_block") or {}).get("type") for _, p in sse_events(data)]
    assert kinds[1:5] == ["thinking", "thinking_delta", "thinking_delta", "signature_delta"]
    message, _ = validate_stream(data)
    assert [
        (b.type, getattr(b, "thinking", None), getattr(b, "signature", None)) for b in message.content
    ] == [("thinking", "hmm", "EqQB"), ("text", None, None)]


def test_redacted_reasoning_is_one_redacted_thinking_block() -> None:
    message, _ = validate_stream(
        stream(answer(ev.ReasoningDone(0, VendorState(dialect="anthropic", redacted="opaque"))))
    )
    assert [(b.type, b.data) for b in message.content] == [("redacted_thinking", "opaque")]


def test_arguments_given_whole_are_one_input_json_delta() -> None:
    data = stream(answer(ev.ToolCallStarted(0, "c1", "Read"), ev.ToolCallDone(0, '{"path": "a"}')))
    deltas = [p["delta"] for name, p in sse_events(data) if name == "content_block_delta"]
    assert deltas == [{"type": "input_json_delta", "partial_json": '{"path": "a"}'}]


def test_a_web_search_of_another_vendor_is_a_server_tool_pair_carrying_its_state() -> None:
    state = VendorState(dialect="gemini", blocks=[{"toolCall": {"id": "1"}}])
    search = ev.WebSearch(0, "news", ["https://a.example/"], state=state)
    message, _ = validate_stream(stream(answer(search, ev.TextDelta(1, "found"))))
    use, result, said = message.content
    assert (use.type, use.name, use.input) == ("server_tool_use", "web_search", {"query": "news"})
    assert (result.type, result.tool_use_id, [r.url for r in result.content]) == (
        "web_search_tool_result",
        use.id,
        ["https://a.example/"],
    )
    assert said.text == "found"


def test_a_failure_mid_stream_is_one_error_event_and_the_end() -> None:
    data = stream(
        [
            ev.Started(),
            ev.TextDelta(0, "par"),
            ev.Failed("rate_limit_exceeded", "slow down"),
            ev.TextDelta(0, "ignored"),
            ev.Finished("stop"),
        ]
    )
    message, error = validate_stream(data)
    assert error == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "slow down"},
        "request_id": None,
    }
    assert message is not None and message.content[0].text == "par"


@pytest.mark.parametrize(
    ("code", "error_type"),
    [
        ("server_is_overloaded", "overloaded_error"),
        ("context_length_exceeded", "invalid_request_error"),
        ("server_error", "api_error"),
        ("upstream_protocol_error", "api_error"),
        ("invalid_api_key", "authentication_error"),
    ],
)
def test_failure_codes_are_anthropics_error_types(code: str, error_type: str) -> None:
    _, error = validate_stream(stream([ev.Started(), ev.Failed(code, "x")]))
    assert error["error"]["type"] == error_type


def test_an_upstream_that_never_finishes_still_ends_with_one_error() -> None:
    enc = encoder()
    data = enc.encode([ev.Started(), ev.TextDelta(0, "a")]) + enc.finish() + enc.finish()
    _, error = validate_stream(data)
    assert error["error"]["type"] == "api_error"
    assert enc.encode([ev.Finished("stop")]) == b""


def test_events_after_the_end_write_nothing_more() -> None:
    enc = encoder()
    first = enc.encode(answer(ev.TextDelta(0, "a")))
    assert enc.encode([ev.TextDelta(1, "late"), ev.Finished("stop")]) + enc.finish() == b""
    assert validate_stream(first)[0].content[0].text == "a"


def test_an_answer_past_the_bound_fails_once_and_holds_no_more() -> None:
    enc = encoder()
    chunk = "x" * (MAX_OUTPUT_CHARS // 4)
    data = enc.encode([ev.Started()] + [ev.TextDelta(0, chunk) for _ in range(6)] + [ev.Finished("stop")])
    _, error = validate_stream(data)
    assert error["error"]["type"] == "api_error"
    assert sum(len(c) for block in enc._open.values() for c in block.chunks) == 0
    assert len(data) < MAX_OUTPUT_CHARS + 10_000


def test_a_whole_answer_is_the_message_object() -> None:
    enc = encoder()
    enc.encode(answer(ev.Usage(input_tokens=10, output_tokens=3), ev.TextDelta(0, "hi")))
    message = enc.response()
    assert message == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-5-5",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 3,
        },
    }


def test_a_failed_whole_answer_is_the_error_body() -> None:
    enc = encoder()
    enc.encode([ev.Started(), ev.Failed("server_is_overloaded", "busy")])
    assert enc.response() == {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}


def test_ping_is_a_valid_event_until_the_end() -> None:
    enc = encoder()
    assert sse_events(enc.ping()) == [("ping", {"type": "ping"})]
    enc.encode(answer())
    assert enc.ping() == b""


def names(data: bytes) -> list[str]:
    return [name for name, _ in sse_events(data)]


def test_an_upstream_keep_alive_is_a_ping_after_the_message_opened() -> None:
    out = stream([ev.Started(), ev.KeepAlive(), ev.TextDelta(0, "hi"), ev.KeepAlive(), ev.Finished("stop")])
    assert names(out) == ["message_start", "ping", "content_block_start", "content_block_delta", "ping",
                          "content_block_stop", "message_delta", "message_stop"]
    validate_stream(out)


def test_a_keep_alive_before_the_upstream_began_is_a_ping_alone() -> None:
    out = stream([ev.KeepAlive(), ev.Started(), ev.TextDelta(0, "hi"), ev.Finished("stop")])
    assert names(out)[:2] == ["ping", "message_start"]
    validate_stream(out)


def test_a_keep_alive_after_the_end_writes_nothing() -> None:
    enc = encoder()
    enc.encode(answer())
    assert enc.encode([ev.KeepAlive()]) == b""


def test_a_tool_name_on_the_upstreams_wire_comes_back_as_the_clients_name() -> None:
    tools = ToolIndex()
    tools.add("mcp__docs_search", ToolRef(name="mcp__docs__search"))
    events = answer(ev.ToolCallStarted(0, "c1", "mcp__docs_search"), ev.ToolCallDone(0, "{}"))
    message, _ = validate_stream(stream(events, tools=tools))
    assert [block.name for block in message.content] == ["mcp__docs__search"]


def test_hidden_thinking_without_state_sends_no_block() -> None:
    events = answer(ev.ReasoningDelta(0, "private"), ev.ReasoningDone(0, None), ev.TextDelta(1, "hi"))
    message, _ = validate_stream(stream(events, show_thinking=False))
    assert [block.type for block in message.content] == ["text"]
    assert b"private" not in stream(events, show_thinking=False)


def test_hidden_thinking_with_state_is_a_block_of_its_signature_alone() -> None:
    state = VendorState(dialect="chat", text="private")
    events = answer(ev.ReasoningDelta(0, "private"), ev.ReasoningDone(0, state), ev.TextDelta(1, "hi"))
    message, _ = validate_stream(stream(events, show_thinking=False))
    thinking = message.content[0]
    assert (thinking.type, thinking.thinking) == ("thinking", "")
    assert thinking.signature.startswith("dgw1:")


def test_streamed_arguments_go_out_whole_at_the_end_of_the_call() -> None:
    events = answer(
        ev.ToolCallStarted(0, "c1", "Read"),
        ev.ToolCallDelta(0, '{"pa'),
        ev.ToolCallDelta(0, 'th": 1}'),
        ev.ToolCallDone(0),
    )
    deltas = [p["delta"] for name, p in sse_events(stream(events)) if name == "content_block_delta"]
    assert deltas == [{"type": "input_json_delta", "partial_json": '{"path": 1}'}]


@pytest.mark.parametrize("arguments", ["not json", "[1, 2]", '{"cut": '])
def test_arguments_that_are_no_json_object_reach_the_client_as_an_empty_input(arguments: str) -> None:
    enc = encoder()
    data = (
        enc.encode(answer(ev.ToolCallStarted(0, "c1", "Read"), ev.ToolCallDone(0, arguments))) + enc.finish()
    )
    message, _ = validate_stream(data)
    assert message.content[0].input == {}
    assert enc.report.notes == ["tool-call arguments were not a JSON object; the client gets an empty input"]
