"""What a Messages client sends that crosses to an Anthropic upstream as it came: `top_k`,
`stop_sequences`, a tool result's `is_error`, a tool's `input_examples` (docs/anthropic.md
"Request"; docs/claude-code.md "The decoder's fields"), and the stop sequence that ended the answer
coming back (docs/anthropic.md "Streaming")."""

from __future__ import annotations

import json

from tests.translators.bodies import body as responses_body
from tests.translators.bodies import user as responses_user
from tests.translators.messages_client.messages import assistant, body, tool, tool_result, tool_use, user
from tests.translators.messages_client.recordings import sse_events
from tests.translators.messages_client.sdk import validate_stream
from tests.translators.streamcheck import assert_chunking_invariant
from translators import stream_translator, translate_request, translate_response
from translators.core.ids import sequential_ids
from translators.wire.sse import encode_event

MODEL = "claude-sonnet-4-5"
"""A Claude that takes a thinking budget: without `thinking` in the request it does not think."""


def anthropic(request_body: dict) -> object:
    return translate_request(request_body, "anthropic", MODEL, client="messages")


def test_top_k_and_stop_sequences_go_as_they_came() -> None:
    translation = anthropic(body(top_k=40, stop_sequences=["END", "\n\nHuman:"]))
    assert translation.body["top_k"] == 40
    assert translation.body["stop_sequences"] == ["END", "\n\nHuman:"]
    assert translation.dropped == []


def test_top_k_is_dropped_when_claude_thinks() -> None:
    # "Thinking isn't compatible with temperature, top_p, or top_k modifications"
    thinking = {"type": "enabled", "budget_tokens": 2048}
    translation = anthropic(body(top_k=40, max_tokens=16000, thinking=thinking))
    assert "thinking" in translation.body and "top_k" not in translation.body
    assert translation.dropped == ["top_k"]


def test_no_stop_sequences_send_none() -> None:
    translation = anthropic(body(stop_sequences=[]))
    assert "stop_sequences" not in translation.body and "top_k" not in translation.body


def test_an_error_tool_result_keeps_is_error() -> None:
    translation = anthropic(body(user("q"), assistant(tool_use("t1", "Bash")),
                                 user(tool_result("t1", "exit 1", is_error=True)), tools=[tool("Bash")]))
    result = translation.body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert result["content"][0]["text"] == "exit 1"


def test_a_tool_result_that_is_no_error_has_no_flag() -> None:
    translation = anthropic(body(user("q"), assistant(tool_use("t1", "Bash")), user(tool_result("t1", "ok")),
                                 tools=[tool("Bash")]))
    assert "is_error" not in translation.body["messages"][-1]["content"][0]


def test_input_examples_go_with_their_tool() -> None:
    examples = [{"x": "a.txt"}, {"x": "b.txt"}]
    translation = anthropic(body(tools=[tool("Read", input_examples=examples), tool("Write")]))
    assert translation.body["tools"][0]["input_examples"] == examples
    assert "input_examples" not in translation.body["tools"][1]
    assert translation.dropped == []


# -- the stop sequence back -----------------------------------------------------------------------

PING = encode_event("ping", {"type": "ping"})


def stream(stop_reason: str = "end_turn", stop_sequence: str | None = None, keep_alive: bytes = b"") -> bytes:
    return b"".join([
        encode_event("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        keep_alive,
        encode_event("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}}),
        encode_event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": "one two"}}),
        encode_event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        encode_event("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": stop_reason, "stop_sequence": stop_sequence}, "usage": {"output_tokens": 3}}),
        encode_event("message_stop", {"type": "message_stop"}),
    ])


def message_delta(data: bytes) -> dict:
    return next(payload for name, payload in sse_events(data) if name == "message_delta")["delta"]


def test_the_matched_stop_sequence_reaches_a_messages_client() -> None:
    translation = anthropic(body(stop_sequences=["three"]))
    translator = stream_translator("anthropic", translation, new_id=sequential_ids())
    out = translator.feed(stream("stop_sequence", "three")) + translator.close()
    assert message_delta(out) == {"stop_reason": "stop_sequence", "stop_sequence": "three"}


def test_a_stop_sequence_ends_a_responses_clients_answer_as_completed() -> None:
    translation = translate_request(responses_body(responses_user("hi")), "anthropic", MODEL)
    translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
    out = translator.feed(stream("stop_sequence", "three")) + translator.close()
    assert b"event: response.completed" in out


# -- keep-alives ----------------------------------------------------------------------------------

def through(translation: object, data: bytes) -> bytes:
    translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
    return translator.feed(data) + translator.close()


def test_anthropics_ping_reaches_a_messages_client_as_a_ping() -> None:
    out = through(anthropic(body()), stream(keep_alive=PING))
    assert [name for name, _ in sse_events(out)][:3] == ["message_start", "ping", "content_block_start"]
    validate_stream(out)


def test_an_sse_comment_from_anthropic_is_a_ping_too() -> None:
    out = through(anthropic(body()), stream(keep_alive=b": keep-alive\n\n"))
    assert [name for name, _ in sse_events(out)].count("ping") == 1


def test_a_ping_writes_nothing_for_a_responses_client() -> None:
    translation = translate_request(responses_body(responses_user("hi")), "anthropic", MODEL)
    assert through(translation, stream(keep_alive=PING + b": x\n\n")) == through(translation, stream())


def test_a_whole_answer_names_its_stop_sequence_too() -> None:
    translation = anthropic(body(stop_sequences=["three"], stream=False))
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
              "content": [{"type": "text", "text": "one two"}], "stop_reason": "stop_sequence",
              "stop_sequence": "three", "usage": {"input_tokens": 5, "output_tokens": 3}}
    raw = json.dumps(answer).encode()
    message = translate_response("anthropic", translation, raw, new_id=sequential_ids())
    assert (message["stop_reason"], message["stop_sequence"]) == ("stop_sequence", "three")


def test_pings_and_comments_give_the_same_bytes_in_any_chunking() -> None:
    data = stream("stop_sequence", "three", keep_alive=PING + b": keep-alive\n\n")
    out = assert_chunking_invariant("anthropic", anthropic(body(stop_sequences=["three"])), data)
    assert [name for name, _ in sse_events(out)].count("ping") == 2


# -- pause_turn ---------------------------------------------------------------------------------

def test_pause_turn_reaches_a_messages_client_as_pause_turn() -> None:
    """Anthropic paused a long server-tool turn: the client is told so, and sends the turn again
    to go on (docs/anthropic.md "Streaming"), which `end_turn` would never make it do."""
    out = through(anthropic(body()), stream("pause_turn"))
    assert message_delta(out) == {"stop_reason": "pause_turn", "stop_sequence": None}
    message, error = validate_stream(out)
    assert error is None and message is not None and message.stop_reason == "pause_turn"


def test_a_whole_answer_keeps_pause_turn_too() -> None:
    translation = anthropic(body(stream=False))
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
              "content": [{"type": "text", "text": "searching"}], "stop_reason": "pause_turn",
              "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 3}}
    raw = json.dumps(answer).encode()
    message = translate_response("anthropic", translation, raw, new_id=sequential_ids())
    assert message["stop_reason"] == "pause_turn"


def test_pause_turn_completes_a_responses_clients_answer_with_a_note() -> None:
    translation = translate_request(responses_body(responses_user("hi")), "anthropic", MODEL)
    translator = stream_translator("anthropic", translation, new_id=sequential_ids(), clock=lambda: 0)
    out = translator.feed(stream("pause_turn")) + translator.close()
    assert b"event: response.completed" in out and b"response.incomplete" not in out
    assert any("pause_turn" in note for note in translator.report.notes)
