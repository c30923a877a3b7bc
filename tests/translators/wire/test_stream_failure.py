"""translators/wire/stream_failure.py: the event that ends a client's stream when the gateway fails
inside it, in each client dialect, judged by that client's SDK types."""

from __future__ import annotations

import json

from anthropic.types.shared import ErrorResponse
from openai.types.responses import ResponseFailedEvent

from translators import client_dialects
from translators.core.ids import sequential_ids
from translators.wire.stream_failure import MESSAGES_TERMINALS, has_terminal

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


def test_a_responses_client_with_nothing_yet_gets_a_fresh_response_id() -> None:
    speaks = client_dialects.get("responses")
    _, payload = _payload(speaks.stream_error(b"", "boom", also_sent=0, now=0, new_id=sequential_ids()))
    assert ResponseFailedEvent.model_validate(payload).response.id == "resp_1"


def test_a_messages_client_gets_one_anthropic_error_event_of_type_api_error() -> None:
    speaks = client_dialects.get("messages")
    event = speaks.stream_error(b"event: message_start\ndata: {}\n\n", "boom", also_sent=4, now=0,
                                new_id=sequential_ids())
    name, payload = _payload(event)
    assert name == "error"
    error = ErrorResponse.model_validate(payload)
    assert (error.type, error.error.type, error.error.message) == ("error", "api_error", "boom")


def test_each_client_dialect_names_the_events_that_end_its_stream() -> None:
    stop = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    assert client_dialects.get("messages").stream_terminals == MESSAGES_TERMINALS
    assert has_terminal(stop, MESSAGES_TERMINALS)
    assert has_terminal(b"event: error\ndata: {}\n\n", MESSAGES_TERMINALS)
    assert not has_terminal(stop)  # a Responses stream does not end there
    quoted = b'event: content_block_stop\ndata: {"note":"event: error"}\n\n'
    assert not has_terminal(quoted, MESSAGES_TERMINALS)  # only an `event:` line counts
