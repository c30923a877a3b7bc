"""Error bodies in Anthropic's shape, with the status each type stands for."""

from __future__ import annotations

import json

import pytest
from anthropic.types.shared import ErrorResponse

from translators import client_dialects
from translators.core.errors import MalformedRequest
from translators.core.ids import sequential_ids
from translators.messages_client import errors
from translators.wire.stream_failure import has_terminal


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (402, "billing_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "invalid_request_error"),
        (422, "invalid_request_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (502, "api_error"),
        (503, "overloaded_error"),
        (504, "timeout_error"),
        (529, "overloaded_error"),
    ],
)
def test_each_status_is_its_error_type_in_a_body_the_sdk_reads(status: int, error_type: str) -> None:
    body = errors.for_status(status, "why")
    assert ErrorResponse.model_validate(body).error.type == error_type
    assert body == {"type": "error", "error": {"type": error_type, "message": "why"}}


@pytest.mark.parametrize("error_type", sorted(errors.STATUS_OF_TYPE))
def test_every_type_maps_back_to_its_own_status(error_type: str) -> None:
    assert errors.type_for_status(errors.STATUS_OF_TYPE[error_type]) == error_type


def test_a_refused_request_is_a_400_naming_the_field() -> None:
    status, body = errors.refusal(MalformedRequest("must be an integer", param="max_tokens"))
    assert status == 400
    assert body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: must be an integer"},
    }


def test_a_messages_client_gets_one_anthropic_error_event_of_type_api_error() -> None:
    speaks = client_dialects.get("messages")
    event = speaks.stream_error(b"event: message_start\ndata: {}\n\n", "boom", also_sent=4, now=0,
                                new_id=sequential_ids())
    head, data = event.decode().split("\n", 1)
    assert head == "event: error" and event.endswith(b"\n\n")
    error = ErrorResponse.model_validate(json.loads(data.removeprefix("data: ")))
    assert (error.type, error.error.type, error.error.message) == ("error", "api_error", "boom")
    assert has_terminal(event, speaks.stream_terminals)


def test_its_stream_ends_at_message_stop_or_an_error_event() -> None:
    assert client_dialects.get("messages").stream_terminals == errors.TERMINALS == ("message_stop", "error")


def test_the_proxys_own_errors_are_said_in_anthropics_shape_an_overload_with_529() -> None:
    speaks = client_dialects.get("messages")
    body = speaks.error_body(413, "request_too_large", "too big", "input")
    assert body == {"type": "error", "error": {"type": "invalid_request_error", "message": "too big"}}
    assert speaks.error_status(413, body) == 413
    overloaded = speaks.error_body(503, "server_is_overloaded", "busy")
    assert speaks.error_status(503, overloaded) == 529
