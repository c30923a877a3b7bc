"""What a Messages client sends that the Responses API has no field for (`top_k`,
`stop_sequences`, `input_examples`: reported; a failed tool's result: marked in its text), and the
Responses upstream's keep-alives coming back as pings (docs/claude-code.md "The Responses
upstream", "Keep-alives")."""

from __future__ import annotations

import json
from typing import Any

from tests.translators.messages_client.messages import assistant, body, tool, tool_result, tool_use, user
from tests.translators.messages_client.recordings import sse_events
from tests.translators.messages_client.sdk import validate_stream
from translators import Translation, stream_translator, translate_request
from translators.core.ids import sequential_ids


def responses(request_body: dict[str, Any]) -> Translation:
    return translate_request(request_body, "responses", "gpt-5.2", client="messages")


def test_top_k_and_stop_sequences_are_reported() -> None:
    translation = responses(body(top_k=40, stop_sequences=["END"]))
    assert "top_k" not in translation.body and "stop" not in translation.body
    assert translation.dropped == ["top_k", "stop_sequences"]


def test_input_examples_are_reported() -> None:
    translation = responses(body(tools=[tool("Read", input_examples=[{"x": "a"}])]))
    assert translation.dropped == ["tools[0].input_examples"]


def test_a_failed_tools_output_says_so_in_its_text() -> None:
    translation = responses(body(user("q"), assistant(tool_use("t1", "Bash")),
                                 user(tool_result("t1", "exit 1", is_error=True)), tools=[tool("Bash")]))
    output = next(i for i in translation.body["input"] if i["type"] == "function_call_output")
    assert output["output"] == "Error: exit 1"
    assert translation.dropped == []


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def answer(keep_alive: bytes) -> bytes:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    done = {**message, "content": [{"type": "output_text", "text": "hi"}]}
    return b"".join([
        sse({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        keep_alive,
        sse({"type": "response.output_item.added", "output_index": 0, "item": message},
            {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "hi"},
            {"type": "response.output_item.done", "output_index": 0, "item": done},
            {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}),
    ])


def pings(keep_alive: bytes) -> int:
    translator = stream_translator("responses", responses(body()), new_id=sequential_ids())
    out = translator.feed(answer(keep_alive)) + translator.close()
    validate_stream(out)
    return [name for name, _ in sse_events(out)].count("ping")


def test_a_keepalive_event_is_a_ping() -> None:
    assert pings(sse({"type": "keepalive", "sequence_number": 1})) == 1


def test_an_sse_comment_is_a_ping() -> None:
    assert pings(b": keep-alive\n\n") == 1


def test_no_keep_alive_no_ping() -> None:
    assert pings(b"") == 0
