"""Errors in Anthropic's shape for a Messages client (docs/claude-code.md "Errors"):
`{"type": "error", "error": {"type": ..., "message": ...}}`, as an HTTP body or as an `error`
event inside a stream, with the status each type stands for (the anthropic SDK raises its own
exception class per status: `BadRequestError` for 400, `RateLimitError` for 429,
`InternalServerError` for 5xx, and retries 408, 409, 429 and 5xx)."""

from __future__ import annotations

from typing import Any

from translators.core.errors import TranslatorError
from translators.core.ids import IdFactory
from translators.wire.sse import encode_event

STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""Anthropic's error types and their HTTP statuses (docs/anthropic.md "Errors"): the types the
anthropic SDK's `ErrorObject` lists (a 413 is an `invalid_request_error`, as every other 4xx
without a type of its own)."""

_TYPE_OF_STATUS = {status: kind for kind, status in STATUS_OF_TYPE.items()}
_TYPE_OF_STATUS.update({408: "timeout_error", 502: "api_error", 503: "overloaded_error"})

TYPE_OF_CODE = {
    "invalid_request": "invalid_request_error",
    "invalid_request_error": "invalid_request_error",
    "unsupported_request": "invalid_request_error",
    "unsupported_feature": "invalid_request_error",
    "context_length_exceeded": "invalid_request_error",
    "invalid_prompt": "invalid_request_error",
    "invalid_api_key": "authentication_error",
    "insufficient_quota": "billing_error",
    "usage_not_included": "permission_error",
    "permission_denied": "permission_error",
    "model_not_found": "not_found_error",
    "rate_limit_exceeded": "rate_limit_error",
    "server_is_overloaded": "overloaded_error",
    "timeout": "timeout_error",
}
"""The gateway's error codes (the Responses codes every upstream decoder speaks,
translators/wire/upstream_errors.py) -> Anthropic's type; any other code is an `api_error`."""


def type_for_status(status: int) -> str:
    if status in _TYPE_OF_STATUS:
        return _TYPE_OF_STATUS[status]
    return "invalid_request_error" if 400 <= status < 500 else "api_error"


def type_for_code(code: str) -> str:
    return TYPE_OF_CODE.get(code, "api_error")


def body(error_type: str, message: str) -> dict[str, Any]:
    """The error object Anthropic sends, as a body or as the payload of an `error` event."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def for_status(status: int, message: str) -> dict[str, Any]:
    """An HTTP error body for `status` (an upstream's failure re-said for the client)."""
    return body(type_for_status(status), message)


def refusal(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    """A request the gateway will not send (the decoder's `MalformedRequest` /
    `UnsupportedFeature`, 400) -> status and body; the field at fault leads the message."""
    message = exc.message
    if exc.param and not message.startswith(exc.param):
        message = f"{exc.param}: {message}"
    return exc.status, body(type_for_status(exc.status), message)


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    """The proxy's own error or an upstream's, re-said: Anthropic's type for `status` (the gateway's
    `code` and `param` have no place in Anthropic's shape)."""
    del code, param
    return for_status(status, message)


def client_status(status: int, body: dict[str, Any]) -> int:
    """Anthropic says `overloaded_error` with 529 (docs/claude-code.md "Errors"): the SDK and Claude
    Code retry it as such; other types keep the status they were written for."""
    kind = body.get("error", {}).get("type") if isinstance(body.get("error"), dict) else None
    return STATUS_OF_TYPE["overloaded_error"] if kind == "overloaded_error" else status


def answer_status(answer: dict[str, Any]) -> int:
    """The status of a whole answer: a `Message` is 200, an error body its type's status."""
    if answer.get("type") != "error" or not isinstance(answer.get("error"), dict):
        return 200
    return STATUS_OF_TYPE.get(str(answer["error"].get("type")), 500)


TERMINALS = ("message_stop", "error")
"""The events that end an Anthropic Messages stream: `message_stop`, or one `error` after which
Anthropic sends nothing more (docs/claude-code.md "Events out")."""


def stream_error(sent: bytes, message: str, *, also_sent: int, now: float, new_id: IdFactory) -> bytes:
    """Anthropic's mid-stream failure: one `error` event, `api_error` (a gateway fault, which the
    anthropic SDK raises as an `APIStatusError` and Claude Code reports), whatever came before."""
    del sent, also_sent, now, new_id  # an `error` event carries no id, number or time
    return encode_event("error", body("api_error", message))


def overloaded(sent: bytes, message: str, now: float) -> bytes:
    """The `error` event that ends a stream when every upstream attempt failed after the gateway's
    pings went out: `overloaded_error`, which Claude Code retries (docs/pools.md)."""
    del sent, now
    return encode_event("error", body("overloaded_error", message))


PING = encode_event("ping", {"type": "ping"})
"""Anthropic's keep-alive event, which its SDKs skip wherever it comes (docs/pools.md "Keep-alives")."""
