"""translators/responses_client/errors.py: the Responses client's error shapes, judged by the openai
SDK's types: the event that ends its stream when the gateway fails inside it (docs/design.md
"Errors"), the error body of every proxy answer."""

from __future__ import annotations

import json

from openai.types.responses import ResponseFailedEvent

from translators import client_dialects
from translators.core.ids import sequential_ids
from translators.responses_client import errors
from translators.wire.stream_failure import has_terminal

SENT = (b'event: response.created\ndata: {"type":"response.created","response":{"id":"resp_abc",'
        b'"model":"gpt-5.5"},"sequence_number":0}\n\n'
        b'event: response.in_progress\ndata: {"type":"response.in_progress"}\n\n')


def _payload(event: bytes) -> tuple[str, dict]:
    head, data = event.decode().split("\n", 1)
    assert event.endswith(b"\n\n") and data.startswith("data: ")
    return head.removeprefix("event: "), json.loads(data.removeprefix("data: "))


def test_a_responses_client_gets_a_failed_event_continuing_its_response() -> None:
    speaks = client_dialects.get("responses")
    event = speaks.stream_error(SENT, "boom", also_sent=3, now=1_700_000_000.5, new_id=sequential_ids())
    name, payload = _payload(event)
    failed = ResponseFailedEvent.model_validate(payload)
    assert name == failed.type == "response.failed"
    assert (failed.response.id, failed.response.model) == ("resp_abc", "gpt-5.5")
    assert failed.sequence_number == 2 + 3  # two events in `sent`, three more sent but not kept
    assert failed.response.created_at == 1_700_000_000
    assert failed.response.error is not None and failed.response.error.message == "boom"
    assert has_terminal(event, speaks.stream_terminals)


def test_a_responses_client_with_nothing_yet_gets_a_fresh_response_id() -> None:
    speaks = client_dialects.get("responses")
    _, payload = _payload(speaks.stream_error(b"", "boom", also_sent=0, now=0, new_id=sequential_ids()))
    assert ResponseFailedEvent.model_validate(payload).response.id == "resp_1"


def test_its_stream_ends_at_completed_incomplete_or_failed() -> None:
    assert client_dialects.get("responses").stream_terminals == errors.TERMINALS
    assert not has_terminal(b'event: message_stop\ndata: {}\n\n', errors.TERMINALS)


def test_an_error_body_keeps_its_status_code_and_param() -> None:
    speaks = client_dialects.get("responses")
    body = speaks.error_body(413, "request_too_large", "too big", "input")
    assert body == {"error": {"type": "invalid_request_error", "code": "request_too_large",
                              "message": "too big", "param": "input"}}
    assert speaks.error_status(413, body) == 413
    assert speaks.error_body(503, "store_unavailable", "down")["error"]["type"] == "server_error"
