"""Bedrock's error types (docs/bedrock.md "Errors"): exception frames inside a ConverseStream, error
frames, and HTTP error bodies `{"message": ...}` (some front ends write `Message`) whose type rides
in the `x-amzn-ErrorType` header, which the translators do not get, or in a rest-json `__type`."""

from __future__ import annotations

import re
from typing import Any

from translators.wire.upstream_errors import ErrorTable, Failure, describe, text_of

ERRORS = ErrorTable(
    # exception / error type -> the HTTP status Bedrock gives it (service model)
    status_of={
        "validationexception": 400,
        "accessdeniedexception": 403,
        "resourcenotfoundexception": 404,
        "modeltimeoutexception": 408,
        "modelstreamerrorexception": 424,
        "modelerrorexception": 424,
        "throttlingexception": 429,
        "modelnotreadyexception": 429,
        "servicequotaexceededexception": 429,
        "internalserverexception": 500,
        "serviceunavailableexception": 503,
    },
    code_of={"serviceunavailableexception": "server_is_overloaded"},
    # Claude-on-Bedrock overflow wordings the shared pattern misses ("input length and `max_tokens`
    # exceed context limit: 187254 + 20000 > 200000", "Input is too long for requested model")
    overflow=re.compile(r"exceeds? context limit|too long for requested model", re.IGNORECASE),
)


def exception_failure(error_type: str, payload: Any) -> Failure:
    """An exception the service raised inside an HTTP 200 stream. `modelStreamErrorException`
    also carries the model's own status and message, which may name a context overflow."""
    body = payload if isinstance(payload, dict) else {}
    message = str(body.get("message") or body.get("Message") or "upstream error")
    if body.get("originalMessage"):
        message = f"{message} (model said: {body['originalMessage']})"
    return describe(ERRORS, message, error_type=error_type)


def frame_failure(headers: Any) -> Failure:
    """A transport-level error frame: code and message ride in its headers, not the payload."""
    code = str(headers.get(":error-code") or "error")
    return describe(ERRORS, str(headers.get(":error-message") or "upstream error"), error_type=code)


def body_failure(status: int, body: Any) -> Failure:
    if isinstance(body, dict) and isinstance(body.get("message") or body.get("Message"), str):
        message = body.get("message") or body.get("Message")
        # rest-json errors may name their type in `__type` ("...#ThrottlingException")
        kind = body.get("__type") if isinstance(body.get("__type"), str) else None
        return describe(ERRORS, message, status=status, error_type=kind,
                        label=kind.rsplit("#", 1)[-1] if kind else "")
    return describe(ERRORS, text_of(body), status=status)
