"""Anthropic's error types (docs/anthropic.md "Errors"): `{"type": "error", "error": {"type",
"message"}}`, as an HTTP error body or as an `error` event inside a stream."""

from __future__ import annotations

import json
from typing import Any

from translators.wire.upstream_errors import ErrorTable, Failure, describe

ERRORS = ErrorTable(
    status_of={"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
               "permission_error": 403, "not_found_error": 404, "conflict_error": 409,
               "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
               "timeout_error": 504, "overloaded_error": 529},
    code_of={"overloaded_error": "server_is_overloaded", "billing_error": "insufficient_quota"},
    default_status=400,
)


def failure(error: Any, status: int | None = None) -> Failure:
    """The `error` object; an event's status is its type's."""
    error = error if isinstance(error, dict) else {}
    kind = str(error.get("type") or ("api_error" if status is None else "error"))
    message = error.get("message") or ("upstream error" if status is None else "")
    if not isinstance(message, str):
        message = json.dumps(message)
    return describe(ERRORS, message, status=status, error_type=kind)
