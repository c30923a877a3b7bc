"""Error bodies in Anthropic's shape, with the status each type stands for."""

from __future__ import annotations

import pytest
from anthropic.types.shared import ErrorResponse

from translators.core.errors import MalformedRequest
from translators.messages_client import errors


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
